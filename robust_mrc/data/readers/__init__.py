"""Readers: data files (or hub data sets) in, typed examples out.

    >>> examples = load_examples("../shared/data/race/race_middle_validation.jsonl")
    >>> examples.format, len(examples), examples.skipped.total

Formats (``format=``):

* ``"race_jsonl"`` -- one question a line (the hub layout of RACE): :mod:`.race`
* ``"race_original"`` -- the RACE release (a directory of passage files) or ``{"data": [...]}``
* ``"dream"`` -- DREAM's ``[turns, questions, id]`` list: :mod:`.dream`
* ``"squad"`` -- SQuAD v1.1/v2.0 JSON, plain or gzipped (DuReader_robust too): :mod:`.squad`
* ``"hf_dataset"`` -- a ``datasets`` dataset on disk (a ``save_to_disk`` directory or a
  ``.parquet`` file) in the RACE or SQuAD hub layout, such as an attacked set exported by
  ``robust-mrc attacks apply format=hf``: :mod:`.hf_dataset`
* ``"hub_race"``, ``"hub_squad"`` -- ``datasets.load_dataset`` (``ehovy/race``, ``rajpurkar/squad``)
* ``"auto"`` -- detected from the path and the contents (local files and datasets on disk, plus
  the hub names above when no such file exists).

A format given explicitly must match the file: a file that is recognisably another format is an
error naming both. Files are read whole, gunzipped as a stream, and refused past a cap
(``max_bytes``, else ``ROBUST_MRC_MAX_DATA_BYTES``, else 2 GiB). Example ids must be unique
within one read (a duplicate is a bad record naming both places); see ``docs/bad-inputs.md``
for every check.

With ``strict=True`` (the default) the first bad record raises a :class:`DataFormatError` that
names the file and the record; with ``strict=False`` bad records are skipped, counted by reason
in ``result.skipped`` (a :class:`SkipReport`) and logged. Problems with the file as a whole
(missing, not JSON, unknown layout) always raise.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from robust_mrc.data.errors import DataFormatError, HubUnavailableError, SkipReport
from robust_mrc.data.examples import MCExample, SpanExample
from robust_mrc.data.readers._common import (
    NESTED_TOO_DEEPLY,
    Collector,
    ExampleList,
    may_hold_surrogates,
    parse_json,
    type_name,
)
from robust_mrc.data.readers._files import max_data_bytes, read_text
from robust_mrc.data.readers.dream import iter_dream
from robust_mrc.data.readers.hf_dataset import is_dataset_source, iter_hf_dataset
from robust_mrc.data.readers.hub import RACE_HUB, SQUAD_HUB, SQUAD_V2_HUB, iter_hub_race, iter_hub_squad
from robust_mrc.data.readers.race import (
    iter_race_directory,
    iter_race_jsonl,
    iter_race_original_json,
    iter_race_rows,
)
from robust_mrc.data.readers.squad import iter_squad

__all__ = [
    "FORMATS",
    "DATASET_FORMATS",
    "FILE_FORMATS",
    "HUB_FORMATS",
    "DataFormatError",
    "ExampleList",
    "HubUnavailableError",
    "SkipReport",
    "detect_format",
    "load_examples",
]

FILE_FORMATS = ("race_jsonl", "race_original", "dream", "squad")
DATASET_FORMATS = ("hf_dataset",)
HUB_FORMATS = ("hub_race", "hub_squad")
FORMATS = ("auto",) + FILE_FORMATS + DATASET_FORMATS + HUB_FORMATS

_HUB_NAMES = {RACE_HUB: "hub_race", SQUAD_HUB: "hub_squad", SQUAD_V2_HUB: "hub_squad"}
_UNKNOWN = f"unknown format: not RACE, DREAM or SQuAD; pass format= one of {', '.join(FILE_FORMATS)}"
_LAYOUTS = {
    "race_jsonl": "RACE rows, one JSON object a line (example_id, article, question, options, answer)",
    "race_original": "RACE passages (id, article, questions, options, answers)",
    "dream": "DREAM dialogues ([turns, questions, id] lists)",
    "squad": "SQuAD articles (data[].paragraphs[].qas)",
    "hf_dataset": "a Hugging Face datasets dataset (a save_to_disk directory or a parquet file)",
}


def _stem_suffix(path: Path) -> str:
    """The suffix that tells the layout, ignoring a trailing ``.gz``."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _first_json_line(text: str) -> Any:
    for line in text.split("\n"):
        if line.strip():
            try:
                return json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return None
    return None


def _detect_json(path: Path, obj: Any) -> str:
    if isinstance(obj, dict):
        data = obj.get("data")
        if isinstance(data, list) and "article" not in obj:
            first = next((d for d in data if isinstance(d, dict)), None)
            if first is None:
                raise DataFormatError(path, None, f"{_UNKNOWN} (the 'data' list has no objects)")
            if "paragraphs" in first:
                return "squad"
            if "article" in first or "questions" in first:
                return "race_original"
            raise DataFormatError(path, None, f"{_UNKNOWN} (data[0] has keys {sorted(first)[:8]})")
        if "article" in obj and "questions" in obj:
            return "race_original"
        if "example_id" in obj and "article" in obj:
            return "race_jsonl"
        raise DataFormatError(path, None, f"{_UNKNOWN} (an object with keys {sorted(obj)[:8]})")
    if isinstance(obj, list):
        first = obj[0] if obj else None
        if isinstance(first, list) and len(first) == 3 and isinstance(first[0], list) and isinstance(first[1], list):
            return "dream"
        if isinstance(first, dict) and "example_id" in first:
            return "race_jsonl"  # unusual, but unambiguous: a JSON list of hub rows
        raise DataFormatError(path, None, f"{_UNKNOWN} (a list whose first item is {type_name(first)})")
    raise DataFormatError(path, None, f"{_UNKNOWN} (a JSON {type_name(obj)})")


def _detect(path: Path, text: str) -> tuple[str, Any]:
    """``(format, parsed JSON or None)`` for the file at ``path`` with contents ``text``."""
    if _stem_suffix(path) == ".jsonl":
        return "race_jsonl", None
    if text.lstrip()[:1] not in ("{", "["):
        raise DataFormatError(path, None, f"{_UNKNOWN} (the file is not JSON: it starts with {text.lstrip()[:20]!r})")
    try:
        obj = json.loads(text)
    except RecursionError:
        raise DataFormatError(path, None, NESTED_TOO_DEEPLY) from None
    except json.JSONDecodeError as e:
        first = _first_json_line(text)
        if e.msg == "Extra data" and isinstance(first, dict):
            if "example_id" in first or "article" in first:
                return "race_jsonl", None
            raise DataFormatError(path, None, f"{_UNKNOWN} (JSON lines with keys {sorted(first)[:8]})") from None
        raise DataFormatError(path, None, f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    return _detect_json(path, obj), obj


def detect_format(source: str | Path) -> str:
    """The format ``load_examples(source)`` would read ``source`` as."""
    path = Path(source)
    if is_dataset_source(path):
        return "hf_dataset"
    if path.is_dir():
        return "race_original"
    if not path.exists() and str(source) in _HUB_NAMES:
        return _HUB_NAMES[str(source)]
    return _detect(path, read_text(path))[0]


def _check_format(path: Path, fmt: str, text: str) -> Any:
    """The parsed JSON (or None) of a file read with an explicit ``fmt``; an error when the file is
    recognisably another format. A file of no recognisable format is left to ``fmt``'s reader,
    which names the record at fault."""
    try:
        found, obj = _detect(path, text)
    except DataFormatError:
        return None
    if found != fmt:
        raise DataFormatError(
            path,
            None,
            f"format mismatch: format={fmt} was asked, but the file holds {_LAYOUTS[found]}; "
            f"pass format={found} (data.format={found}) or format=auto",
        )
    return obj


def _iter_file(path: Path, fmt: str, collector: Collector, max_bytes: int | None, split: str | None) -> tuple[str, Iterator]:
    if fmt == "hf_dataset" or (fmt == "auto" and is_dataset_source(path)):
        return "hf_dataset", iter_hf_dataset(path, split, collector, max_bytes)
    if is_dataset_source(path):
        raise DataFormatError(
            path,
            None,
            f"format mismatch: format={fmt} was asked, but it is {_LAYOUTS['hf_dataset']}; pass format=hf_dataset or format=auto",
        )
    if path.is_dir():
        if fmt not in ("auto", "race_original"):
            raise DataFormatError(path, None, f"is a directory: format {fmt!r} reads a single file")
        return "race_original", iter_race_directory(path, collector, max_bytes)
    if not path.exists():
        raise DataFormatError(path, None, "file not found: no such file or directory")
    text = read_text(path, max_bytes)
    collector.check_texts = may_hold_surrogates(text)
    if fmt == "auto":
        fmt, obj = _detect(path, text)
    else:
        obj = _check_format(path, fmt, text)
    if fmt == "race_jsonl":
        if obj is not None:  # one JSON object, or a JSON list of rows: one row a line
            rows = list(enumerate(obj if isinstance(obj, list) else [obj], start=1))
            return fmt, iter_race_rows(path, rows, collector)
        return fmt, iter_race_jsonl(path, text, collector)
    if obj is None:
        obj = parse_json(path, text)
    if fmt == "race_original":
        return fmt, iter_race_original_json(path, obj, collector, default_id=path.name)
    if fmt == "dream":
        return fmt, iter_dream(path, obj, collector)
    if fmt == "squad":
        return fmt, iter_squad(path, obj, collector)
    raise AssertionError(fmt)  # pragma: no cover


def load_examples(
    source: str | Path,
    format: str = "auto",
    *,
    split: str | None = None,
    subset: str | None = None,
    strict: bool = True,
    limit: int | None = None,
    max_bytes: int | str | None = None,
) -> list[MCExample] | list[SpanExample]:
    """Read examples from a file, a RACE directory, or a hub data set.

    ``source``: a path, or for ``hub_*`` formats a hub name (``ehovy/race``, ``rajpurkar/squad``,
    ``rajpurkar/squad_v2``; empty for the default). ``split``: the hub's split, or the split of a
    ``datasets`` directory that holds several; ``subset``: for the hub only.
    ``limit``: keep the first ``limit`` examples (after skipping bad records; records past the
    limit are not checked). ``max_bytes``: the cap on a file's bytes after gunzip (an integer or
    "4GiB"; default :func:`max_data_bytes`). Returns an :class:`ExampleList` (a list) with
    ``.skipped`` (also the remarks on records kept), ``.source`` and ``.format``.
    """
    if format not in FORMATS:
        raise DataFormatError(source, None, f"unknown format {format!r}: expected one of {', '.join(FORMATS)}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    source_str = str(source) if source is not None else ""
    if format == "auto" and not Path(source_str).exists() and source_str in _HUB_NAMES:
        format = _HUB_NAMES[source_str]
    collector = Collector(source_str, strict)
    if format == "hub_race":
        fmt, items = format, iter_hub_race(source_str or RACE_HUB, subset, split, collector)
    elif format == "hub_squad":
        fmt, items = format, iter_hub_squad(source_str or SQUAD_HUB, subset, split, collector)
    else:
        if not source_str:
            raise ValueError("load_examples: no source path given")
        fmt, items = _iter_file(Path(source_str), format, collector, max_data_bytes(max_bytes), split)
    if limit is not None:
        items = itertools.islice(items, limit)
    result = ExampleList(items, source=source_str, format=fmt, skipped=collector.report)
    collector.report.log()
    if not len(result) and limit != 0 and not collector.report.total:  # (every record skipped: the caller names the split)
        raise DataFormatError(source_str, None, "no examples: the file holds no questions")
    return result
