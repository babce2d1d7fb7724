"""Option pools (magnet, extra_option, model-free DG) and distractor banks (DE / DG from a model).

A pool is a list of candidate options, each with where it came from (question, example id and a
fingerprint of its passage), so that an attack never takes an option from the same passage or one
identical to an option of the question it attacks. Build one from examples, from any data file the
readers can load, or from a plain text file (one option a line) / JSONL (``{"option": ...}``).

A distractor bank maps an example id to new distractors: JSONL lines
``{"id": ..., "distractors": [...]}`` or a JSON object ``{id: [...]}``; :func:`write_bank` writes
the JSONL layout. :func:`load_bank` checks every record (an id, a list of strings) and
:func:`check_bank_coverage` the ids against the questions to attack; a mistake is a
:class:`BankFileError` naming the file, the line and the record.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import reprlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import normalize
from robust_mrc.data.writers import atomic_write_text

log = logging.getLogger(__name__)


def passage_key(passage: str) -> str:
    return hashlib.blake2b(" ".join(passage.split()).encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class PoolEntry:
    option: str
    question: str = ""
    source_id: str = ""
    passage: str = ""  # passage_key of the source passage ("" when unknown)


class OptionPool:
    """Candidate options in a fixed order (the order of the source; duplicates dropped)."""

    def __init__(self, entries: Iterable[PoolEntry]):
        seen, kept = set(), []
        for e in entries:
            key = (normalize(e.option), e.passage)
            if not normalize(e.option) or key in seen:
                continue
            seen.add(key)
            kept.append(e)
        self.entries: list[PoolEntry] = kept

    def __len__(self) -> int:
        return len(self.entries)

    @classmethod
    def from_examples(cls, examples: Iterable[MCExample], wrong_only: bool = False) -> OptionPool:
        entries = []
        for ex in examples:
            key = passage_key(ex.passage)
            for i, opt in enumerate(ex.options):
                if wrong_only and i == ex.label:
                    continue
                entries.append(PoolEntry(opt, ex.question, ex.id, key))
        return cls(entries)

    @classmethod
    def from_strings(cls, options: Iterable[str]) -> OptionPool:
        return cls(PoolEntry(str(o)) for o in options)

    @classmethod
    def from_file(cls, path: str | Path) -> OptionPool:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"option pool {path} does not exist")
        if path.suffix == ".txt":
            return cls.from_strings(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        if path.suffix == ".jsonl":
            first = next((line for line in path.open(encoding="utf-8") if line.strip()), "")
            try:
                rec = json.loads(first)
            except json.JSONDecodeError:
                rec = {}
            if isinstance(rec, dict) and ("option" in rec or "text" in rec) and "options" not in rec:
                opts = []
                for line in path.open(encoding="utf-8"):
                    if line.strip():
                        r = json.loads(line)
                        opts.append(r.get("option", r.get("text", "")))
                return cls.from_strings(opts)
        from robust_mrc.data.readers import load_examples

        examples = [e for e in load_examples(path) if isinstance(e, MCExample)]
        return cls.from_examples(examples)


_POOL_CACHE: dict[str, OptionPool] = {}


def describe_source(source) -> str:
    """A pool or bank for an attack's resources: a file with the digest of its bytes, a path that
    names no file as it is, anything else as what was given in memory and its size."""
    if isinstance(source, (str, Path)):
        if Path(source).is_file():
            from robust_mrc.core.files import file_digest

            return f"{source} ({file_digest(source)})"
        return str(source)
    return f"given in memory ({type(source).__name__} of {len(source)})"


def describe_pool(pool, pool_examples: Iterable | None, drawn: str = "options of the context's {n} examples") -> str:
    """What :func:`pool_for` draws from, for an attack's resources: ``pool`` (:func:`describe_source`),
    else the examples beside the attack (``drawn``, ``{n}`` their number), else "none"."""
    if pool is not None:
        return describe_source(pool)
    if pool_examples is not None:
        return drawn.format(n=len(list(pool_examples)))
    return "none"


def pool_for(pool, pool_examples: Iterable[MCExample] | None) -> OptionPool | None:
    """The pool an attack draws from: its ``pool=`` parameter (a file, a list, an
    :class:`OptionPool`), else the options of ``pool_examples`` (the training set, or the input of
    the attacks command), else None."""
    resolved = resolve_pool(pool)
    if resolved is None and pool_examples is not None:
        resolved = OptionPool.from_examples(pool_examples)
    return resolved


def resolve_pool(pool) -> OptionPool | None:
    """An :class:`OptionPool` from a pool, a path, a list of examples or a list of strings."""
    if pool is None or isinstance(pool, OptionPool):
        return pool
    if isinstance(pool, (str, Path)):
        key = str(Path(pool).resolve())
        if key not in _POOL_CACHE:
            _POOL_CACHE[key] = OptionPool.from_file(pool)
        return _POOL_CACHE[key]
    items = list(pool)
    if all(isinstance(x, MCExample) for x in items):
        return OptionPool.from_examples(items)
    if all(isinstance(x, str) for x in items):
        return OptionPool.from_strings(items)
    raise TypeError("pool must be an OptionPool, a file path, a list of MCExample or a list of strings")


_BANK_CACHE: dict[str, tuple[tuple[int, int], dict[str, tuple[str, ...]]]] = {}  # path: (size and mtime, bank)
_COVERAGE_WARNED: set[tuple[str, str, int, int]] = set()
BANK_RECORD = '{"id": ..., "distractors": ["...", ...]}'


class BankFileError(UserError, ValueError):
    """A distractor bank that cannot be used as it is: the message names the file, the line and the
    record id, or the ids that do not match."""


def load_bank(bank) -> dict[str, tuple[str, ...]] | None:
    """A distractor bank ``{example id: distractors}`` from a dict or a JSON / JSONL file, every
    record checked by :func:`bank_entry`; a mistake is a :class:`BankFileError`."""
    if bank is None:
        return None
    if isinstance(bank, dict):
        return dict(bank_entry("the distractor bank given in memory", k, v) for k, v in bank.items())
    path = Path(bank)
    if not path.is_file():
        raise BankFileError(
            f"distractor bank {path} does not exist (bank= takes a file of robust-mrc banks de or robust-mrc banks dg, auto or none)"
        )
    key, stat = str(path.resolve()), path.stat()
    signature = (stat.st_size, stat.st_mtime_ns)  # a file changed since it was read is read again
    if key in _BANK_CACHE and _BANK_CACHE[key][0] == signature:
        return _BANK_CACHE[key][1]
    out = dict(_bank_records(path))
    _BANK_CACHE[key] = (signature, out)
    return out


def _bank_records(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """``(id, distractors)`` of each record of the bank file ``path``, in file order."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise BankFileError(
            f"distractor bank {path}: byte {err.start} is not UTF-8 text; a bank is JSONL, one {BANK_RECORD} a line"
        ) from None
    if path.suffix == ".json" and text.lstrip().startswith("{"):
        data = _bank_json(path, text, 0)
        return [bank_entry(f"distractor bank {path}", k, v) for k, v in data.items()]
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        rec = _bank_json(path, line, n - 1)
        where = f"distractor bank {path}, line {n}"
        if not isinstance(rec, dict) or "id" not in rec or "distractors" not in rec:
            raise BankFileError(f"{where}: a bank record is an object {BANK_RECORD}, got {_shown(rec)}")
        records.append(bank_entry(where, rec["id"], rec["distractors"]))
    return records


def _bank_json(path: Path, text: str, lines_before: int):
    """``text`` (the bank file's text from line ``lines_before + 1``) parsed as JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        line = lines_before + err.lineno
        raise BankFileError(
            f"distractor bank {path}, line {line}: not valid JSON ({err.msg}, column {err.colno}); a file cut short? make the bank again"
        ) from None
    except RecursionError:
        raise BankFileError(f"distractor bank {path}, line {lines_before + 1}: JSON nested too deeply for a bank record") from None


def bank_entry(where: str, ex_id, distractors) -> tuple[str, tuple[str, ...]]:
    """``(id, distractors)`` of one bank record read at ``where``: the id a string (or a whole
    number), the distractors a list of strings; else a :class:`BankFileError` naming ``where``."""
    if isinstance(ex_id, bool) or not isinstance(ex_id, (str, int)):
        raise BankFileError(f"{where}: the id is {_shown(ex_id)}; a bank record is {BANK_RECORD}")
    if isinstance(distractors, (list, tuple)) and all(isinstance(d, str) for d in distractors):
        return str(ex_id), tuple(distractors)
    if isinstance(distractors, (list, tuple)):
        got = "a list holding " + _shown(next(d for d in distractors if not isinstance(d, str)))
    else:
        got = _shown(distractors)
    raise BankFileError(f"{where}, id {str(ex_id)!r}: 'distractors' must be a list of strings, got {got}")


def _shown(value) -> str:
    """``value`` for a message: its JSON type and a short repr."""
    if value is None:
        return "null"
    kinds = {str: "a string", dict: "an object", list: "a list", bool: "a boolean", int: "a number", float: "a number"}
    return f"{kinds.get(type(value), type(value).__name__)} {reprlib.repr(value)}"


def check_bank_coverage(bank: dict[str, tuple[str, ...]], name: str, targets: Sequence, attack: str, command: str) -> None:
    """Whether the bank ``name`` holds records for the ``targets`` an ``attack`` will attack: none
    found is a :class:`BankFileError` showing both sides' ids (``command`` makes a bank for the
    data); some missing, one warning with the share found (once per process for the same bank and
    questions)."""
    ids = list(dict.fromkeys(ex.id for ex in targets))
    found = sum(ex_id in bank for ex_id in ids)
    if not ids or found == len(ids):
        return
    remedy = f"make a bank for this data ({command} data=... out=...)"
    if not bank:
        raise BankFileError(f"{attack}: distractor bank {name} holds no records; {remedy}")
    if not found:
        raise BankFileError(
            f"{attack}: distractor bank {name} covers none of the {len(ids)} questions it attacks: the bank's ids look like "
            f"{_first_ids(bank)}; the data's like {_first_ids(ids)}; {remedy}"
        )
    said = (attack, name, found, len(ids))
    if said in _COVERAGE_WARNED:  # the same attack built again for the same questions (training, then evaluation)
        return
    _COVERAGE_WARNED.add(said)
    missing = [ex_id for ex_id in ids if ex_id not in bank]
    log.warning(
        "%s: distractor bank %s covers %d of the %d questions it attacks (%.1f%%); the %d others (e.g. %s) are left as they are",
        attack,
        name,
        found,
        len(ids),
        100 * found / len(ids),
        len(missing),
        _first_ids(missing),
    )


def _first_ids(ids: Iterable[str], n: int = 3) -> str:
    shown = [repr(i) for i in itertools.islice(ids, n + 1)]
    return ", ".join(shown[:n]) + (", ..." if len(shown) > n else "")


def write_bank(bank: dict[str, Iterable[str]], path: str | Path) -> Path:
    """Write ``bank`` (``{example id: distractors}``, in its order) as JSONL lines
    ``{"id": ..., "distractors": [...]}``, atomically; :func:`load_bank` reads it back equal."""
    lines = [json.dumps({"id": str(k), "distractors": [str(d) for d in v]}, ensure_ascii=False) + "\n" for k, v in bank.items()]
    atomic_write_text(path, "".join(lines))
    return Path(path)
