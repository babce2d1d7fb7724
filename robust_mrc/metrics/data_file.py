"""The inputs of the scoring command, read as the official scripts read them.

Only the question ids and gold answer texts of a SQuAD-layout file are read (``data`` ->
``paragraphs`` -> ``qas`` -> ``id``, ``answers[].text``, ``is_impossible``): no context, no offsets,
so gold answers that are empty or only punctuation are legal, as they are for the official scripts.
The project's readers (which check offsets) are deliberately not used; their cap on a file's bytes
(after gunzip: ``ROBUST_MRC_MAX_DATA_BYTES``, else 2 GiB) applies, and every problem is a
:class:`ScoringInputError` naming the file.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path
from typing import Any

from robust_mrc.core.errors import UserError
from robust_mrc.core.json_input import PARSE_FAILURES, json_failure
from robust_mrc.data.readers._files import MAX_BYTES_ENV, max_data_bytes

__all__ = ["ScoringInputError", "read_predictions", "read_references"]

_GZIP_MAGIC = b"\x1f\x8b"


class ScoringInputError(UserError, ValueError):
    """A data or prediction file the scoring command cannot use (the message says why)."""


def _cap(path: Path, what: str) -> int:
    """The cap on a file's bytes (after gunzip): the data readers' (``ROBUST_MRC_MAX_DATA_BYTES``, else 2 GiB)."""
    try:
        return max_data_bytes()
    except ValueError as err:
        raise ScoringInputError(f"cannot read {what} {path}: {err}") from None


def _too_large(path: Path, what: str, cap: int, gunzipped: bool) -> ScoringInputError:
    return ScoringInputError(
        f"{what} {path}: more than {cap:,} bytes{' once gunzipped' if gunzipped else ''}, the cap on one file; "
        f"if the file is genuine, raise it with {MAX_BYTES_ENV}=<bytes, e.g. 8GiB>"
    )


def _read_capped(path: Path, what: str) -> bytes:
    """The bytes of ``path``, gunzipped as a stream when it starts with the gzip magic bytes; an
    error past the cap (:func:`_cap`), found before more than the cap is read."""
    cap = _cap(path, what)
    with open(path, "rb") as f:
        gunzip = f.read(2) == _GZIP_MAGIC
        f.seek(0)
        if not gunzip and os.fstat(f.fileno()).st_size > cap:
            raise _too_large(path, what, cap, False)
        raw = (gzip.GzipFile(fileobj=f, mode="rb") if gunzip else f).read(cap + 1)
    if len(raw) > cap:
        raise _too_large(path, what, cap, gunzip)
    return raw


def _load_json(path: Path, what: str) -> Any:
    if not path.exists():
        raise ScoringInputError(f"{what} {path}: no such file")
    try:
        raw = _read_capped(path, what)
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise ScoringInputError(f"{what} {path}: not a readable gzip file ({err})") from None
    except OSError as err:  # a folder, no permission
        raise ScoringInputError(f"{what} {path}: {json_failure(err)}") from None
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except PARSE_FAILURES as err:
        raise ScoringInputError(f"{what} {path}: {json_failure(err)}") from None


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _expect(cond: bool, path: Path, where: str, what: str) -> None:
    if not cond:
        raise ScoringInputError(f"data file {path}: {where}: {what} (expected the SQuAD JSON layout)")


def read_references(path: str | Path) -> tuple[dict[str, list[str]], bool]:
    """``({question id: gold answer texts} in file order, whether any question has
    "is_impossible": true)`` from a SQuAD-layout JSON file, plain or gzipped.

    Raises :class:`ScoringInputError` naming the file and the record for a missing file, bad
    JSON, a broken layout or a duplicated question id.
    """
    path = Path(path)
    doc = _load_json(path, "data file")
    _expect(isinstance(doc, dict) and isinstance(doc.get("data"), list), path, "top level", 'no "data" list')
    references: dict[str, list[str]] = {}
    impossible = False
    for a, article in enumerate(doc["data"]):
        _expect(isinstance(article, dict) and isinstance(article.get("paragraphs"), list), path, f"data[{a}]", 'no "paragraphs" list')
        for p, paragraph in enumerate(article["paragraphs"]):
            where = f"data[{a}].paragraphs[{p}]"
            _expect(isinstance(paragraph, dict) and isinstance(paragraph.get("qas"), list), path, where, 'no "qas" list')
            for q, qa in enumerate(paragraph["qas"]):
                where_q = f"{where}.qas[{q}]"
                _expect(isinstance(qa, dict) and isinstance(qa.get("id"), (str, int)), path, where_q, 'no "id"')
                answers = qa.get("answers", [])
                _expect(
                    isinstance(answers, list) and all(isinstance(x, dict) and isinstance(x.get("text"), str) for x in answers),
                    path,
                    f"{where_q} (id {qa['id']})",
                    '"answers" is not a list of {"text": ...} objects',
                )
                qid = str(qa["id"])
                _expect(qid not in references, path, where_q, f"question id {qid!r} appears twice")
                references[qid] = [x["text"] for x in answers]
                impossible = impossible or qa.get("is_impossible") is True
    if not references:
        raise ScoringInputError(f'data file {path}: no questions (no "qas" entry in its "data" list): nothing to score')
    return references, impossible


def read_predictions(path: str | Path) -> dict[str, str]:
    """``{question id: answer text}`` from a JSON object file; raises :class:`ScoringInputError`
    when the file is missing, not JSON, not an object or has a non-string answer."""
    path = Path(path)
    preds = _load_json(path, "predictions file")
    if not isinstance(preds, dict):
        raise ScoringInputError(
            f"predictions file {path}: a JSON {_json_type(preds)} where an object {{question id: answer text}} is expected"
        )
    for qid, text in preds.items():
        if not isinstance(text, str):
            raise ScoringInputError(
                f"predictions file {path}: the answer of {qid!r} is a JSON {_json_type(text)}, not a string "
                f"(write {{question id: answer text}})"
            )
    return preds
