"""Shared machinery of the readers: file access, JSON parsing, strict/skip bookkeeping.

Every problem is reported as a :class:`DataFormatError` that names the file and, for a bad
record, the record. Reasons have the form ``"short reason: details"``; :class:`SkipReport`
groups skipped records by the text before the colon.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from robust_mrc.core.json_input import NESTED_TOO_DEEPLY
from robust_mrc.data.errors import DataFormatError, SkipReport
from robust_mrc.data.examples import LETTERS, MAX_OPTIONS, MIN_OPTIONS, ExampleError


class RecordError(Exception):
    """A bad record, raised by the record converters; the reader adds file and record name."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ExampleList(list):
    """The examples a reader returned, with what it skipped and where they came from."""

    def __init__(self, items: Iterable = (), *, source: str = "", format: str = "", skipped: SkipReport | None = None):
        super().__init__(items)
        self.source = source
        self.format = format
        self.skipped = skipped if skipped is not None else SkipReport(source)

    def __repr__(self) -> str:
        return f"ExampleList({len(self)} examples from {self.source!r}, format={self.format!r}, skipped={self.skipped.total})"


class Collector:
    """Strict: raise on the first bad record. Not strict: count it in a :class:`SkipReport`.

    Also the registry of example ids of one read: :meth:`claim` refuses an id used before.
    """

    def __init__(self, source: str | Path, strict: bool):
        self.strict = strict
        self.report = SkipReport(str(source))
        self.owners: dict[str, tuple[str, str]] = {}  # example id -> (file, record) that used it first
        self.check_texts = True  # False once the file's text is known to hold no surrogate escape

    def bad(self, path: str | Path, record: str | int | None, reason: str) -> None:
        error = DataFormatError(path, record, reason)
        if self.strict:
            raise error from None
        self.report.add(error)

    def note(self, path: str | Path, record: str, remark: str) -> None:
        """A record kept as it is, with a remark that the log shows (strict or not)."""
        self.report.note(f"{path}, {record}", remark)

    def claim(self, path: str | Path, record: str, ex_id: str) -> bool:
        """True when ``ex_id`` is new in this read; a duplicate is a bad record (named with both)."""
        owner = self.owners.get(ex_id)
        if owner is None:
            self.owners[ex_id] = (str(path), record)
            return True
        first = owner[1] if owner[0] == str(path) else f"{owner[0]}, {owner[1]}"
        self.bad(path, record, f"duplicate example id: {ex_id!r} is also the id of {first}")
        return False


# ----------------------------------------------------------------------------- JSON


def parse_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataFormatError(path, None, f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise DataFormatError(path, None, NESTED_TOO_DEEPLY) from None


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
            collector.bad(path, f"line {lineno}", NESTED_TOO_DEEPLY)
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
        raise RecordError(f"bad option count: {len(options)} option(s), expected {MIN_OPTIONS}-{MAX_OPTIONS}")
    return options


def letter_label(answer: Any, n_options: int) -> int:
    """The index of an answer letter ("A".."E") among ``n_options`` options."""
    if not isinstance(answer, str):
        raise RecordError(f"wrong type: answer is {type_name(answer)}, expected a letter A-E")
    letter = answer.strip().upper()
    if len(letter) != 1 or letter not in LETTERS[:n_options]:
        raise RecordError(f"answer out of range: {answer!r} with {n_options} options (expected one of {', '.join(LETTERS[:n_options])})")
    return LETTERS.index(letter)


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def may_hold_surrogates(text: str) -> bool:
    """False when the JSON ``text`` has no ``\\ud800``-``\\udfff`` escape, so no parsed string can
    hold a lone surrogate (UTF-8 decoding already refuses raw ones): one scan instead of one per field."""
    return _SURROGATE_ESCAPE.search(text) is not None


def check_text(value: str, name: str) -> None:
    """A :class:`RecordError` when ``value`` holds a lone UTF-16 surrogate: JSON allows an escape
    such as ``"\\ud800"`` without its pair, but such a string is not Unicode text (no tokenizer or
    UTF-8 writer takes it). Decided: an error naming the field, not a silent replacement."""
    m = _SURROGATE.search(value)
    if m:
        raise RecordError(
            f"lone surrogate: {name} has a lone UTF-16 surrogate \\u{ord(m.group()):04x} at character "
            f"{m.start()} (a broken \\u escape in the file); fix the text"
        )


def check_blank(value: str, name: str) -> None:
    if not value.strip():
        raise RecordError(f"blank {name}: the {name} is empty")


def check_mc(question: str, options: list[str], label: int) -> list[str]:
    """Checks of a multiple-choice record: a blank question or a blank correct option is an error;
    blank wrong options and repeated options are legal (the official RACE and DREAM files have a
    few) and come back as remarks for the log."""
    check_blank(question, "question")
    if not options[label].strip():
        raise RecordError(f"blank answer: the correct option {LETTERS[label]} is empty")
    remarks = []
    blank = [LETTERS[i] for i, o in enumerate(options) if not o.strip()]
    if blank:
        remarks.append(f"blank option: option(s) {', '.join(blank)} empty")
    seen: dict[str, int] = {}
    for i, o in enumerate(options):
        key = o.strip()
        if key and key in seen:
            answer = " (one of them the answer: the model scores both alike)" if label in (i, seen[key]) else ""
            remarks.append(f"repeated option: options {LETTERS[seen[key]]} and {LETTERS[i]} are both {key!r}{answer}")
        seen.setdefault(key, i)
    return remarks


def build(cls, check_texts: bool = True, **kwargs):
    """``cls(**kwargs)``, with an :class:`ExampleError` turned into a :class:`RecordError`; text
    fields with a lone surrogate are refused (:func:`check_text`) unless ``check_texts`` is False."""
    for name, value in kwargs.items() if check_texts else ():
        if isinstance(value, str):
            check_text(value, name)
        elif isinstance(value, tuple):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    check_text(item, f"{name}[{i}]")
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


def keep(collector: Collector, path: str | Path, record: str, example, remarks: Iterable[str] = ()) -> bool:
    """Register ``example``'s id (a duplicate is a bad record) and log its remarks: True to yield it."""
    if not collector.claim(path, record, example.id):
        return False
    for remark in remarks:
        collector.note(path, record, remark)
    return True
