"""Why a JSON file that a user gave cannot be read, in a few words, the same for every reader
(scoring files, evaluation and training results, exported model settings)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NESTED_TOO_DEEPLY = "invalid JSON: nested too deeply (more levels of [ and { than Python's recursion limit, about 1,000)"

#: what parsing the text of a JSON file raises (``json.loads`` of bytes or str)
PARSE_FAILURES = (UnicodeDecodeError, json.JSONDecodeError, RecursionError)
#: what reading and parsing a JSON file raises
READ_FAILURES = (OSError, *PARSE_FAILURES)


def json_failure(err: BaseException) -> str:
    """The reason ``err`` (one of :data:`READ_FAILURES`) gives, e.g. ``not valid JSON (Expecting
    value at line 1, column 5)``: the line and column, or the byte, to look at."""
    if isinstance(err, UnicodeDecodeError):
        return f"not UTF-8 text ({err.reason} at byte {err.start})"
    if isinstance(err, json.JSONDecodeError):
        return f"not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
    if isinstance(err, RecursionError):
        return NESTED_TOO_DEEPLY
    if isinstance(err, OSError):
        return f"cannot be read ({err.strerror or err})"
    raise TypeError(f"json_failure: {type(err).__name__} is not a failure to read JSON")


def read_json_file(path: Path, error: type[Exception], label: str | None = None, damaged: str | None = None) -> Any:
    """The JSON value in the UTF-8 file ``path``; when it cannot be read or parsed, ``error`` with
    ``"<label>: <reason>"`` (``label`` defaults to the path; ``damaged="results"`` writes a parse
    failure as ``"<label>: damaged results: <reason>"``)."""
    label = str(path) if label is None else label
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise error(f"{label}: {json_failure(err)}") from None
    except PARSE_FAILURES as err:
        what = f"damaged {damaged}: " if damaged else ""
        raise error(f"{label}: {what}{json_failure(err)}") from None
