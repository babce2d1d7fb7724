"""Shared machinery of the readers: file access, JSON parsing, strict/skip bookkeeping.

Every problem is reported as a :class:`DataFormatError` that names the file and, for a bad
record, the record. Reasons have the form ``"short reason: details"``; :class:`SkipReport`
groups skipped records by the text before the colon.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from robust_mrc.data.errors import DataFormatError, SkipReport
from robust_mrc.data.examples import LETTERS, MAX_OPTIONS, MIN_OPTIONS, ExampleError

GZIP_MAGIC = b"\x1f\x8b"


class RecordError(Exception):
    """A bad record, raised by the record converters; the reader adds file and record name."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ExampleList(list):
    """The examples a reader returned, with what it skipped and where they came from."""

    def __init__(self, items: Iterable = (), *, source: str = "", format: str = "",
                 skipped: SkipReport | None = None):
        super().__init__(items)
        self.source = source
        self.format = format
        self.skipped = skipped if skipped is not None else SkipReport(source)

    def __repr__(self) -> str:
        return (f"ExampleList({len(self)} examples from {self.source!r}, format={self.format!r}, "
                f"skipped={self.skipped.total})")


class Collector:
    """Strict: raise on the first bad record. Not strict: count it in a :class:`SkipReport`."""

    def __init__(self, source: str | Path, strict: bool):
        self.strict = strict
        self.report = SkipReport(str(source))

    def bad(self, path: str | Path, record: str | int | None, reason: str) -> None:
        error = DataFormatError(path, record, reason)
        if self.strict:
            raise error from None
        self.report.add(error)


# ----------------------------------------------------------------------------- file access


def read_text(path: Path) -> str:
    """The decoded text of ``path``, gunzipped when it starts with the gzip magic bytes."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise DataFormatError(path, None, "file not found: no such file") from None
    except IsADirectoryError:
        raise DataFormatError(path, None, "is a directory: expected a file") from None
    except OSError as e:
        raise DataFormatError(path, None, f"cannot read file: {e.strerror or e}") from None
    if raw.startswith(GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (gzip.BadGzipFile, EOFError, zlib.error, OSError) as e:
            raise DataFormatError(path, None, f"corrupt gzip file: {e}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataFormatError(
            path, None, f"not UTF-8 text: undecodable byte at offset {e.start} ({e.reason})"
        ) from None
    if not text.strip():
        raise DataFormatError(path, None, "empty file: no records")
    return text


def parse_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataFormatError(
            path, None, f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from None
    except RecursionError:
        raise DataFormatError(path, None, "invalid JSON: nested too deeply") from None


def parse_json_lines(path: Path, text: str, collector: Collector) -> list[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line; bad lines go to the collector."""
    rows = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, json.loads(line)))
        except json.JSONDecodeError as e:
            collector.bad(path, f"line {lineno}", f"invalid JSON: {e.msg} at column {e.colno}")
        except RecursionError:
            collector.bad(path, f"line {lineno}", "invalid JSON: nested too deeply")
    return rows


# ----------------------------------------------------------------------------- field checks


def type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def field(record: Any, key: str, kind: type | tuple[type, ...], what: str = "") -> Any:
    """``record[key]``, checked to be of ``kind``; a :class:`RecordError` otherwise."""
    if not isinstance(record, dict):
        raise RecordError(f"wrong type: expected a JSON object, got {type_name(record)}")
    if key not in record:
        raise RecordError(f"missing field: {key!r}")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = what or (kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind))
        raise RecordError(f"wrong type: {key!r} is {type_name(value)}, expected {expected}")
    return value


def id_field(record: Any, key: str) -> str:
    """An id: a string, or an integer turned into one."""
    return str(field(record, key, (str, int), "a string"))


def string_list(values: Any, key: str) -> list[str]:
    if not isinstance(values, (list, tuple)):
        raise RecordError(f"wrong type: {key!r} is {type_name(values)}, expected a list of strings")
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise RecordError(f"wrong type: {key}[{i}] is {type_name(v)}, expected a string")
    return list(values)


def check_options(options: Any, key: str = "options") -> list[str]:
    options = string_list(options, key)
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise RecordError(
            f"bad option count: {len(options)} option(s), expected {MIN_OPTIONS}-{MAX_OPTIONS}"
        )
    return options


def letter_label(answer: Any, n_options: int) -> int:
    """The index of an answer letter ("A".."E") among ``n_options`` options."""
    if not isinstance(answer, str):
        raise RecordError(f"wrong type: answer is {type_name(answer)}, expected a letter A-E")
    letter = answer.strip().upper()
    if len(letter) != 1 or letter not in LETTERS[:n_options]:
        raise RecordError(
            f"answer out of range: {answer!r} with {n_options} options "
            f"(expected one of {', '.join(LETTERS[:n_options])})"
        )
    return LETTERS.index(letter)


def build(cls, **kwargs):
    """``cls(**kwargs)``, with an :class:`ExampleError` turned into a :class:`RecordError`."""
    try:
        return cls(**kwargs)
    except ExampleError as e:
        raise RecordError(f"invalid example: {e}") from None


def unique_ids(raw_ids: list[str | None]) -> list[str | None]:
    """Deterministic unique ids: an id used once stays; a shared one gets ``-<k>``, k = 0, 1, ...

    ``None`` entries (records without a usable id) stay ``None``. A generated id that clashes
    with another id gets a further ``-<j>`` suffix.
    """
    counts = Counter(i for i in raw_ids if i is not None)
    used = {i for i, n in counts.items() if n == 1}
    seen: Counter = Counter()
    out: list[str | None] = []
    for raw in raw_ids:
        if raw is None:
            out.append(None)
            continue
        if counts[raw] == 1:
            out.append(raw)
            continue
        candidate = f"{raw}-{seen[raw]}"
        seen[raw] += 1
        j = 0
        base = candidate
        while candidate in used:
            candidate = f"{base}-{j}"
            j += 1
        used.add(candidate)
        out.append(candidate)
    return out
