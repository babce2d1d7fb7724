"""Hugging Face hub readers: ``ehovy/race`` and ``rajpurkar/squad`` / ``rajpurkar/squad_v2``.

Rows are converted with the same record converters as the local files, so that a hub split and
the same split read from a file give equal examples. When the hub cannot be reached (offline,
no network) a one-line :class:`HubUnavailableError` says so and points at the local readers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from robust_mrc.data.errors import DataFormatError, HubUnavailableError
from robust_mrc.data.examples import MCExample, SpanExample
from robust_mrc.data.readers._common import Collector, RecordError, keep, unique_ids
from robust_mrc.data.readers.race import example_from_row
from robust_mrc.data.readers.squad import example_from_qa

RACE_HUB = "ehovy/race"
SQUAD_HUB = "rajpurkar/squad"
SQUAD_V2_HUB = "rajpurkar/squad_v2"

# exception class names (anywhere in the cause chain) that mean "the hub could not be reached"
_OFFLINE_NAMES = {
    "OfflineModeIsEnabled",
    "LocalEntryNotFoundError",
    "ConnectError",
    "ConnectTimeout",
    "ReadTimeout",
    "Timeout",
    "TimeoutException",
    "NetworkError",
    "MaxRetryError",
    "NameResolutionError",
}


def _is_offline_error(error: BaseException) -> bool:
    seen = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, (ConnectionError, TimeoutError)):
            return True
        if any(cls.__name__ in _OFFLINE_NAMES for cls in type(e).__mro__):
            return True
        e = e.__cause__ or e.__context__
    return False


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def load_hub(name: str, subset: str | None, split: str | None, local_hint: str) -> Any:
    """``datasets.load_dataset(name, subset, split=split)``, with clear errors."""
    if split is None:
        raise ValueError(f"data set {name!r}: give a split (e.g. split='validation') to read it from the hub")
    try:
        import datasets
    except ImportError as e:  # pragma: no cover - datasets is a dependency
        raise RuntimeError(f"data set {name!r}: the 'datasets' package is needed to read from the hub") from e
    try:
        return datasets.load_dataset(name, subset, split=split)
    except Exception as e:  # noqa: BLE001 - classify, then re-raise with our message
        if _is_offline_error(e):
            raise HubUnavailableError(name, _short(e), local_hint) from None
        raise DataFormatError(name, None, f"cannot load from the hub: {type(e).__name__}: {_short(e)}") from e


def iter_hub_race(name: str, subset: str | None, split: str | None, collector: Collector) -> Iterator[MCExample]:
    ds = load_hub(name or RACE_HUB, subset or "all", split, "data=race_local data.train=<file> data.validation=<file>")
    where = f"{name or RACE_HUB}[{split}]"
    raw = [str(i) if isinstance(i, (str, int)) else None for i in ds["example_id"]]
    for i, (row, ex_id, raw_id) in enumerate(zip(ds, unique_ids(raw), raw)):
        record = f"row {i} (example_id {raw_id})"
        try:
            if ex_id is None:
                raise RecordError("missing field: 'example_id'")
            example, remarks = example_from_row(ex_id, row)
        except RecordError as e:
            collector.bad(where, record, e.reason)
            continue
        if keep(collector, where, record, example, remarks):
            yield example


def iter_hub_squad(name: str, subset: str | None, split: str | None, collector: Collector) -> Iterator[SpanExample]:
    ds = load_hub(name or SQUAD_HUB, subset, split, "data=squad_local data.train=<file> data.validation=<file>")
    where = f"{name or SQUAD_HUB}[{split}]"
    for i, row in enumerate(ds):
        record = f"row {i} (id {row.get('id')})"
        try:
            answers = row.get("answers") or {}
            qa = {
                "id": row.get("id"),
                "question": row.get("question"),
                "answers": [{"text": t, "answer_start": s} for t, s in zip(answers.get("text") or [], answers.get("answer_start") or [])],
            }
            # hub rows carry no is_impossible flag: in SQuAD v2.0 no answers means unanswerable
            qa["is_impossible"] = not qa["answers"] and (name or SQUAD_HUB) != SQUAD_HUB
            context = row.get("context")
            if not isinstance(context, str):
                raise RecordError(f"wrong type: 'context' is {type(context).__name__}, expected a string")
            example = example_from_qa(qa, context, row.get("title") or "")
        except RecordError as e:
            collector.bad(where, record, e.reason)
            continue
        if keep(collector, where, record, example):
            yield example
