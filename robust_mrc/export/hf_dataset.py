"""Examples as a Hugging Face ``datasets`` dataset people can share, with its dataset card.

:func:`write_dataset` fills a directory ``DIR``::

    dataset_dict.json, <split>/...          DatasetDict.save_to_disk: datasets.load_from_disk(DIR)
    data/<split>-00000-of-00001.parquet     the same rows as parquet (the hub's layout; the card's
                                            ``configs`` point here: load_dataset(DIR) reads them)
    README.md                               the dataset card (YAML metadata, then what was done)
    (and the other text files it is given, e.g. stats.json)

Columns: multiple choice in the RACE hub layout (``example_id, article, question, options,
answer``: a letter), span QA in the SQuAD hub layout (``id, title, context, question,
answers{text, answer_start}``), both with ``edits`` (``[{attack, detail}]``): reading ``DIR`` or
the parquet file back (``format=hf_dataset``, :mod:`robust_mrc.data.readers.hf_dataset`) gives
every field of every example, edits included, and :func:`write_dataset` checks that it does
before anything is moved into place. The directory is written beside ``DIR`` under a temporary
name and renamed: a reader never sees half a dataset. A ``DIR`` that this function wrote before
is replaced; any other existing ``DIR`` is refused (:func:`export_problem`).

:func:`check_guarantees` checks what an attacked set promises against the clean one on the rows
as written, and :func:`dataset_card` writes the card from a plain mapping (source data, attack,
parameters, resources, seed, fingerprint, counts, the checks).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import LETTERS, MCExample, SpanExample
from robust_mrc.data.readers._common import Collector
from robust_mrc.data.readers.hf_dataset import iter_hf_dataset

CARD = "README.md"
MARKERS = ("dataset_dict.json", CARD)  # what a directory written by write_dataset holds
WRITTEN = (*MARKERS, "data", "stats.json")  # with its split directories: all a directory it replaces may hold
MC_COLUMNS = ("example_id", "article", "question", "options", "answer", "edits")
SPAN_COLUMNS = ("id", "title", "context", "question", "answers", "edits")
_COLUMN_DOCS = {
    "mc": {
        "example_id": "the example's id (unique)",
        "article": "the passage (DREAM: the dialogue's turns, one a line)",
        "question": "the question",
        "options": "the options, 2-5",
        "answer": "the correct option's letter, A-E",
        "edits": "what the attack changed: [{attack, detail}] (empty where it could not change the example)",
    },
    "span": {
        "id": "the example's id (unique)",
        "title": "the article's title",
        "context": "the context",
        "question": "the question",
        "answers": "the gold answers: {text: [...], answer_start: [...]}, character offsets into the context (none: unanswerable)",
        "edits": "what the attack changed: [{attack, detail}] (empty where it could not change the example)",
    },
}


class DatasetExportError(UserError, ValueError):
    """A dataset that cannot be written as asked, or that would not read back as written."""


def task_of(examples: Sequence) -> str:
    return "mc" if isinstance(examples[0], MCExample) else "span"


def features(task: str):
    """The ``datasets.Features`` of the columns (the hub's RACE / SQuAD types, plus ``edits``)."""
    from datasets import Features, List, Value

    edits = List({"attack": Value("string"), "detail": Value("string")})
    if task == "mc":
        return Features(
            {
                "example_id": Value("string"),
                "article": Value("string"),
                "question": Value("string"),
                "options": List(Value("string")),
                "answer": Value("string"),
                "edits": edits,
            }
        )
    return Features(
        {
            "id": Value("string"),
            "title": Value("string"),
            "context": Value("string"),
            "question": Value("string"),
            "answers": {"text": List(Value("string")), "answer_start": List(Value("int32"))},
            "edits": edits,
        }
    )


def example_row(ex: MCExample | SpanExample) -> dict:
    edits = [{"attack": e.attack, "detail": e.detail} for e in ex.edits]
    if isinstance(ex, MCExample):
        return {
            "example_id": ex.id,
            "article": ex.passage,
            "question": ex.question,
            "options": list(ex.options),
            "answer": LETTERS[ex.label],
            "edits": edits,
        }
    return {
        "id": ex.id,
        "title": ex.title,
        "context": ex.context,
        "question": ex.question,
        "answers": {"text": [a.text for a in ex.answers], "answer_start": [a.start for a in ex.answers]},
        "edits": edits,
    }


def parquet_name(split: str) -> str:
    return f"data/{split}-00000-of-00001.parquet"


def export_problem(out: str | Path, inputs: Sequence[str | Path | None]) -> str | None:
    """Why ``out`` must not be written as a dataset directory by a command reading ``inputs``, or
    None: one of the inputs, or a directory holding one; a file; a directory that holds anything
    but a dataset :func:`write_dataset` wrote (a git clone of a hub repository: its ``.git``)."""
    target = Path(out).expanduser()
    resolved = target.resolve()
    for source in inputs:
        if source in (None, ""):
            continue
        src = Path(str(source)).expanduser().resolve()
        if src == resolved or resolved in src.parents:
            return f"out={out} holds the input {source}: writing it would destroy the input; give another directory"
    if target.exists() and not target.is_dir():
        return f"out={out} is a file: format=hf writes a directory (the dataset, its parquet file and its card); give a new directory"
    if target.is_dir() and any(target.iterdir()):
        ours = all((target / m).is_file() for m in MARKERS)
        other = sorted(p.name for p in target.iterdir() if p.name not in WRITTEN and not (p / "state.json").is_file())
        if not ours or other:
            shown = f" ({', '.join(other[:5])})" if other else ""
            return (
                f"out={out} is a directory that holds other files{shown}: give a new directory (format=hf replaces only a dataset it wrote)"
            )
    return None


def write_dataset(
    examples: Sequence[MCExample | SpanExample],
    out: str | Path,
    *,
    split: str = "test",
    files: Callable[[list[dict], str], Mapping[str, str]],
) -> Path:
    """Write ``examples`` to the directory ``out`` (see the module doc); ``files(rows, sha256)``
    gives the text files beside the data, by name, the card ``README.md`` among them, from the rows
    as written to the parquet file (read back from it) and the SHA-256 of its bytes. Returns ``out``."""
    import datasets

    examples = list(examples)
    if not examples:
        raise DatasetExportError(f"no examples to write to {out}")
    task = task_of(examples)
    wanted = MCExample if task == "mc" else SpanExample
    seen: set[str] = set()
    for ex in examples:
        if not isinstance(ex, wanted):
            raise DatasetExportError(f"one dataset holds one task: {type(ex).__name__} {ex.id!r} among {wanted.__name__}s")
        if ex.id in seen:
            raise DatasetExportError(f"duplicate example id {ex.id!r}: a dataset's ids are unique")
        seen.add(ex.id)
    if not split or any(c in split for c in "/\\") or split.startswith("."):
        raise DatasetExportError(f"split={split!r}: a split is a plain name such as test")
    if problem := export_problem(out, []):
        raise DatasetExportError(problem)
    out = Path(out).expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    bars = datasets.is_progress_bar_enabled()
    try:
        datasets.disable_progress_bars()
        ds = datasets.Dataset.from_list([example_row(ex) for ex in examples], features=features(task), split=datasets.Split(split))
        datasets.DatasetDict({split: ds}).save_to_disk(str(tmp))
        parquet = tmp / parquet_name(split)
        parquet.parent.mkdir(parents=True)
        ds.to_parquet(str(parquet))
        for source in (tmp, parquet):  # every field back, edits included, from both
            _same(examples, list(iter_hf_dataset(source, split, Collector(source, strict=True))), out / source.relative_to(tmp))
        import pyarrow.parquet as pq

        texts = files(pq.read_table(parquet).to_pylist(), hashlib.sha256(parquet.read_bytes()).hexdigest())
        if CARD not in texts:
            raise DatasetExportError(f"a dataset needs its card, {CARD}")
        for name, content in texts.items():
            (tmp / name).write_text(content, encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a shared dataset is readable
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if bars:
            datasets.enable_progress_bars()
    return out


def _same(examples: Sequence, back: Sequence, where: Path) -> None:
    if len(back) != len(examples):
        raise DatasetExportError(f"{where}: {len(back)} examples read back, {len(examples)} written")
    for a, b in zip(examples, back):
        if a != b or a.edits != b.edits:
            raise DatasetExportError(f"{where}: example {a.id!r} does not read back as written ({b!r})")


def _swap_in(tmp: Path, out: Path) -> None:
    """Rename ``tmp`` to ``out``; an ``out`` already there (a dataset written before) is set aside
    first and removed once the new one is in place."""
    if not out.exists():
        os.replace(tmp, out)
        return
    old = out.parent / f".{out.name}.{uuid.uuid4().hex[:8]}.old"
    os.replace(out, old)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


# ----------------------------------------------------------------------------- guarantees


def check_guarantees(clean: Sequence, rows: Sequence[Mapping[str, Any]], task: str) -> list[dict]:
    """What an attacked set promises, checked on its ``rows`` as written against the ``clean``
    examples they were made from: ``[{check, held, of, note}]``. A check every row must pass
    (the ids, the answer) raises :class:`DatasetExportError` naming the first row that fails it."""
    if len(rows) != len(clean):
        raise DatasetExportError(f"{len(rows)} rows written for {len(clean)} clean examples")
    key = "example_id" if task == "mc" else "id"
    for row, ex in zip(rows, clean):
        if row[key] != ex.id:
            raise DatasetExportError(
                f"row {row[key]!r} stands where the clean example {ex.id!r} is: the ids and their order are the source's"
            )
    n = len(rows)
    checks = [{"check": "ids and their order are those of the source data", "held": n, "of": n, "note": ""}]
    if task == "mc":
        return checks + _mc_checks(clean, rows)
    return checks + _span_checks(clean, rows)


def _mc_checks(clean: Sequence[MCExample], rows: Sequence[Mapping[str, Any]]) -> list[dict]:
    n = len(rows)
    same_label = grown = 0
    for row, ex in zip(rows, clean):
        options = list(row["options"])
        letter = str(row["answer"])
        if not 2 <= len(options) <= 5 or letter not in LETTERS[: len(options)]:
            raise DatasetExportError(
                f"row {ex.id!r}: answer {letter!r} with {len(options)} options (expected 2-5 options and a letter among them)"
            )
        if options[LETTERS.index(letter)] != ex.answer:
            raise DatasetExportError(
                f"row {ex.id!r}: the labelled option {options[LETTERS.index(letter)]!r} is not the clean answer {ex.answer!r}"
            )
        if len(options) not in (len(ex.options), len(ex.options) + 1):
            raise DatasetExportError(f"row {ex.id!r}: {len(options)} options, the clean example has {len(ex.options)}")
        grown += len(options) == len(ex.options) + 1
        same_label += LETTERS.index(letter) == ex.label
    return [
        {"check": "the labelled option is the clean example's answer, word for word", "held": n, "of": n, "note": ""},
        {
            "check": "2-5 options, as many as the clean example's or one more (an added option)",
            "held": n,
            "of": n,
            "note": f"{grown} with one more",
        },
        {
            "check": "the label's index is the clean example's",
            "held": same_label,
            "of": n,
            "note": "" if same_label == n else "the others: the answer moved by an inserted option, its text kept (above)",
        },
    ]


def _span_checks(clean: Sequence[SpanExample], rows: Sequence[Mapping[str, Any]]) -> list[dict]:
    n = len(rows)
    answers = same_text = 0
    for row, ex in zip(rows, clean):
        texts, starts = list(row["answers"]["text"]), list(row["answers"]["answer_start"])
        if len(texts) != len(starts) or len(texts) != len(ex.answers):
            raise DatasetExportError(
                f"row {ex.id!r}: {len(texts)} answer texts and {len(starts)} starts, the clean example has {len(ex.answers)}"
            )
        for text, start in zip(texts, starts):
            if start < 0 or row["context"][start : start + len(text)] != text:
                raise DatasetExportError(f"row {ex.id!r}: the answer {text!r} is not at its answer_start {start} in the context")
        answers += len(texts)
        same_text += texts == [a.text for a in ex.answers]
    return [
        {"check": "every answer span is at its answer_start in the context", "held": answers, "of": answers, "note": "answers"},
        {"check": "as many answers as the clean example (none: unanswerable)", "held": n, "of": n, "note": ""},
        {
            "check": "the answer texts are the clean example's",
            "held": same_text,
            "of": n,
            "note": "" if same_text == n else "the others: the answer noised with the context (spare=none), at its new offset",
        },
    ]


# ----------------------------------------------------------------------------- the card


def _size_category(n: int) -> str:
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < bound:
            return name
    return "1M<n<10M"


def _language(rows: Sequence[Mapping[str, Any]], task: str) -> str:
    """``zh`` when most letters of the first passages are CJK ideographs (DuReader), else ``en``."""
    text = "".join(str(r["article" if task == "mc" else "context"])[:2000] for r in rows[:50])
    letters = [c for c in text if c.isalpha()]
    cjk = sum("\u4e00" <= c <= "\u9fff" for c in letters)
    return "zh" if letters and cjk / len(letters) > 0.3 else "en"


def _code(value: Any) -> str:
    return "`" + json.dumps(value, ensure_ascii=False, default=str).replace("`", "'") + "`"


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def dataset_card(meta: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], checks: Sequence[Mapping[str, Any]], sha256: str) -> str:
    """The README.md of an exported attacked set: the hub's YAML metadata block, then the source
    data, the attack (paper, every parameter with the defaults resolved, resources), seed, epoch,
    fingerprint, counts, the checks (:func:`check_guarantees`), the parquet file's ``sha256`` and how
    to load it.

    ``meta``: ``title, name`` (the directory's), ``task, split, source{data, format, examples, limit}, pool (or None),
    attack{name, method, description, papers[{cite, title, venue, url}], params, given},
    resources, environment, seed, epoch, fingerprint, fingerprint_note, counts{examples, changed,
    unchanged, dropped}, search (or None), command``."""
    import yaml

    task, split, attack = meta["task"], meta["split"], meta["attack"]
    parquet = parquet_name(split)
    header = {
        "pretty_name": meta["title"],
        "language": [_language(rows, task)],
        "license": "unknown",
        "task_categories": ["multiple-choice" if task == "mc" else "question-answering"],
        "task_ids": ["multiple-choice-qa" if task == "mc" else "extractive-qa"],
        "size_categories": [_size_category(len(rows))],
        "tags": ["robust-mrc", "adversarial", attack["name"].replace("_", "-")],
        "configs": [{"config_name": "default", "data_files": [{"split": split, "path": parquet}]}],
    }
    source, counts = meta["source"], meta["counts"]
    paper = "; ".join(p["cite"] for p in attack["papers"]) or "no paper"
    name = meta["name"]
    lines = [
        "---",
        yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=1000).rstrip(),
        "---",
        "",
        f"# {meta['title']}",
        "",
        f"The examples of `{source['data']}` attacked by **{attack['name']}** of {paper}, made with robust-mrc "
        "(`robust-mrc attacks apply ... format=hf`): every example attacked once; "
        + (
            f"where the attack could not change one ({counts['unchanged']} here), the clean example is kept."
            if not counts["dropped"]
            else f"those the attack could not change ({counts['dropped']}) are left out."
        ),
        "",
        "## Source data",
        "",
        f"- data: `{source['data']}` (read as `{source['format']}`; {source['examples']} examples"
        + (f", the first {source['limit']}: limit={source['limit']}" if source.get("limit") else "")
        + ")",
        "- the text is the source data's: its license and terms apply (`license: unknown` above)",
    ]
    if meta.get("pool"):
        lines.append(f"- pool (the examples pool and bank attacks draw on; in the fingerprint): {meta['pool']}")
    lines += [
        "",
        "## Attack",
        "",
        f"- attack: `{attack['name']}` ({'the paper' + chr(39) + 's method' if attack['method'] == 'paper' else attack['method']}): "
        f"{attack['description']}",
    ]
    for p in attack["papers"]:
        link = f" {p['url']}" if p.get("url") else ""
        lines.append(f"- paper: {p['cite']}: *{p['title']}*, {p['venue']}.{link}")
    lines += [
        f"- seed: {meta['seed']}, epoch: {meta['epoch']} (each example's draws hash seed, epoch, example id and attack name)",
        "",
        "| parameter | value | given |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {k} | {_cell(_code(v))} | {'yes' if k in attack['given'] else 'default'} |" for k, v in attack["params"].items()] or [
        "| (none) | | |"
    ]
    lines += ["", "Resources (what the attacked text depends on besides code, parameters and seed):", ""]
    resources = {**meta["resources"], **{f"environment: {k}": v for k, v in meta["environment"].items()}}
    lines += [f"- {k}: {_cell(v)}" for k, v in resources.items()] or ["- none"]
    if meta.get("search"):
        lines += ["", f"Model-in-the-loop search: {_cell(_code(meta['search']))}"]
    lines += [
        "",
        "## Fingerprint",
        "",
        f"`{meta['fingerprint']}`: {meta['fingerprint_note']}",
        "",
        "## Counts",
        "",
        "| examples | changed | unchanged (the attack could not change them) | left out |",
        "| --- | --- | --- | --- |",
        f"| {counts['examples']} | {counts['changed']} | {counts['unchanged']} | {counts['dropped']} |",
        "",
        "## Checks on the written data",
        "",
        "Checked on the rows of the parquet file against the clean examples before this card was written; "
        "the `save_to_disk` directory and the parquet file both read back as the attacked examples, every field and edit.",
        "",
        "| check | held | of | note |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {_cell(c['check'])} | {c['held']} | {c['of']} | {_cell(c['note'])} |" for c in checks]
    lines += ["", "## Columns", "", f"`{parquet}`, SHA-256 `{sha256}`:", "", "| column | meaning |", "| --- | --- |"]
    lines += [f"| `{k}` | {v} |" for k, v in _COLUMN_DOCS[task].items()]
    lines += [
        "",
        "## Use",
        "",
        "```python",
        "import datasets",
        f'ds = datasets.load_from_disk("{name}")["{split}"]  # this directory',
        f'ds = datasets.load_dataset("parquet", data_files="{name}/{parquet}")["train"]',
        "```",
        "",
        "Evaluated with robust-mrc, as the clean split of `data=hf_local` (span QA: add `task=span`), "
        "its examples are this set's, and so are a model's predictions:",
        "",
        "```bash",
        f"python evaluate.py ckpt_path=run/checkpoints/best.ckpt data=hf_local data.{split}={name} split={split}",
        "```",
        "",
        "Made again by:",
        "",
        "```bash",
        meta["command"],
        "```",
        "",
    ]
    return "\n".join(lines)
