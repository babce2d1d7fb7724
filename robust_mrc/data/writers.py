"""Writers: examples out to the file layouts the readers read, atomically.

``write_examples(examples, path, format)`` with ``format`` one of ``race_jsonl``,
``race_original`` (a single ``{"data": [...]}`` file), ``dream``, ``squad``. The file is written
to a temporary file in the same directory and moved into place with :func:`os.replace`, so a
reader never sees half a file. A path ending in ``.gz`` is gzipped.

Reading back what was written gives equal examples (``edits`` are not stored). Questions are
grouped by passage: examples whose ids are ``<passage id>-<k>`` and share a passage text become
one passage (RACE original, DREAM). Ids that the passage layout would not give back are stored
explicitly (``question_ids`` in RACE original, a per-question ``id`` in DREAM), so ids always
round-trip. Grouping keeps the order of first appearance of each passage; examples of one
passage interleaved with others come back next to each other.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import LETTERS, MCExample, SpanExample

WRITE_FORMATS = ("race_jsonl", "race_original", "dream", "squad")

_SUFFIX_ID = re.compile(r"^(.*)-(\d+)$")


def write_examples(examples: Iterable[MCExample | SpanExample], path: str | Path, format: str) -> None:
    """Write ``examples`` to ``path`` in ``format`` (atomically)."""
    if format not in WRITE_FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(WRITE_FORMATS)}")
    examples = list(examples)
    if not examples:
        raise ValueError(f"write_examples: no examples to write to {path}")
    wanted = SpanExample if format == "squad" else MCExample
    for ex in examples:
        if not isinstance(ex, wanted):
            raise TypeError(f"format {format!r} writes {wanted.__name__}s, got {type(ex).__name__} ({getattr(ex, 'id', '?')!r})")
    counts = Counter(ex.id for ex in examples)
    if len(counts) != len(examples):
        dup = next(i for i, n in counts.items() if n > 1)
        raise ValueError(f"write_examples: duplicate example id {dup!r}")
    if format == "race_jsonl":
        text = "".join(_dumps(_race_row(ex), indent=None) + "\n" for ex in examples)
    elif format == "race_original":
        text = _dumps({"version": "robust-mrc", "data": _race_passages(examples)})
    elif format == "dream":
        text = _dumps(_dream_dialogues(examples))
    else:
        text = _dumps(_squad(examples))
    data = text.encode("utf-8")
    if str(path).lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """UTF-8 ``text`` through :func:`atomic_write_bytes`: never half a file."""
    atomic_write_bytes(path, text.encode("utf-8"))
    return Path(path)


class OutputWriteError(UserError, OSError):
    """A file that cannot be written (read-only directory, full disk); the message names the
    directory. ``errno`` is the one of the failure."""

    def __init__(self, path: str | Path, error: OSError):
        self.path = Path(path)
        self.directory = self.path.parent
        super().__init__(error.errno, write_problem(self.path, error))

    def __str__(self) -> str:
        return self.strerror


def write_problem(path: Path, error: OSError) -> str:
    """What went wrong writing ``path``, in the user's words."""
    where = path.parent
    if error.errno == errno.ENOSPC or error.errno == errno.EDQUOT:
        return f"cannot write {path}: no space left on the disk holding {where} (free some space or write elsewhere)"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"cannot write {path}: the directory {where} is not writable ({error.strerror}); write elsewhere or fix its permissions"
    if error.errno in (errno.ENOTDIR, errno.EEXIST) and not where.is_dir():
        blocker = next((p for p in (where, *where.parents) if p.exists()), where)
        return f"cannot write {path}: {blocker} is a file, not a directory"
    return f"cannot write {path}: {error.strerror or error}"


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then :func:`os.replace` it into place.
    A failure (read-only directory, full disk) is an :class:`OutputWriteError` naming the directory,
    and leaves no temporary file behind."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise OutputWriteError(path, err) from err
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError) and not isinstance(err, OutputWriteError):
            raise OutputWriteError(path, err) from err
        raise


def check_writable(path: str | Path) -> None:
    """An :class:`OutputWriteError` when ``path`` could not be written (a read-only directory, a file
    in the way), found before any work: a probe file is made and removed in its directory, or in the
    nearest one that exists (directories still to make are not made; the error names the first of
    them). Nothing is left behind."""
    path = Path(path).expanduser()
    where = path.parent
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        if not where.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a directory")
        fd, probe = tempfile.mkstemp(dir=where, prefix=f".{path.name}.", suffix=".probe")
    except OSError as err:
        raise OutputWriteError(where / path.relative_to(where).parts[0], err) from err
    os.close(fd)
    os.unlink(probe)


def output_path_problem(out: str | Path, inputs: Sequence[str | Path | None]) -> str | None:
    """Why ``out`` must not be written by a command reading ``inputs``, or None: ``out`` is one of
    the inputs (the same file, however it is spelt), or an existing directory."""
    target = Path(out).expanduser()
    if target.is_dir():
        return f"out={out} is a directory: give a file name, e.g. out={target / 'attacked.jsonl'}"
    resolved = target.resolve()
    for source in inputs:
        if source not in (None, "") and Path(str(source)).expanduser().resolve() == resolved:
            return f"out={out} is the input file {source}: writing it would destroy the input; give another file name"
    return None


def _dumps(obj, indent: int | None = 1) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=indent)


def _race_row(ex: MCExample) -> dict:
    return {
        "example_id": ex.id,
        "article": ex.passage,
        "question": ex.question,
        "options": list(ex.options),
        "answer": LETTERS[ex.label],
    }


def _split_id(ex_id: str) -> str:
    """The passage id of an example id ``<passage id>-<k>`` (the whole id otherwise)."""
    m = _SUFFIX_ID.match(ex_id)
    return m.group(1) if m else ex_id


def _group(examples: Sequence[MCExample]) -> list[tuple[str, list[MCExample], bool]]:
    """``(passage id, examples, ids need storing)`` per passage, in order of first appearance.

    Examples are grouped by the passage id prefix of their ids and, within that, by passage text
    (an attacked copy of a passage is a passage of its own).
    """
    groups: dict[tuple[str, str], list[MCExample]] = {}
    for ex in examples:
        groups.setdefault((_split_id(ex.id), ex.passage), []).append(ex)
    out = []
    used: set[str] = set()
    for (pid, _), members in groups.items():
        name, n = pid, 1
        while name in used:
            n += 1
            name = f"{pid}~{n}"
        used.add(name)
        natural = [f"{name}-{k}" for k in range(len(members))]
        out.append((name, members, [ex.id for ex in members] != natural))
    return out


def _race_passages(examples: Sequence[MCExample]) -> list[dict]:
    passages = []
    for pid, members, store_ids in _group(examples):
        passage = {
            "id": pid,
            "article": members[0].passage,
            "questions": [ex.question for ex in members],
            "options": [list(ex.options) for ex in members],
            "answers": [LETTERS[ex.label] for ex in members],
        }
        if store_ids:
            passage["question_ids"] = [ex.id for ex in members]
        passages.append(passage)
    return passages


def _dream_dialogues(examples: Sequence[MCExample]) -> list:
    dialogues = []
    for pid, members, store_ids in _group(examples):
        questions = []
        for ex in members:
            answer = ex.options[ex.label]
            if sum(o.strip() == answer.strip() for o in ex.options) != 1:
                raise ValueError(
                    f"example {ex.id!r} cannot be written as DREAM: its answer text {answer!r} is "
                    "not unique among its options (DREAM stores the answer as text)"
                )
            entry = {"question": ex.question, "choice": list(ex.options), "answer": answer}
            if store_ids:
                entry["id"] = ex.id
            questions.append(entry)
        dialogues.append([members[0].passage.split("\n"), questions, pid])
    return dialogues


def _squad(examples: Sequence[SpanExample]) -> dict:
    articles: dict[str, dict[str, list[dict]]] = {}
    any_impossible = any(ex.is_impossible for ex in examples)
    for ex in examples:
        qa = {
            "id": ex.id,
            "question": ex.question,
            "answers": [{"text": a.text, "answer_start": a.start} for a in ex.answers],
        }
        if any_impossible:
            qa["is_impossible"] = ex.is_impossible
        articles.setdefault(ex.title, {}).setdefault(ex.context, []).append(qa)
    return {
        "version": "v2.0" if any_impossible else "1.1",
        "data": [
            {"title": title, "paragraphs": [{"context": c, "qas": qas} for c, qas in paragraphs.items()]}
            for title, paragraphs in articles.items()
        ],
    }


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
