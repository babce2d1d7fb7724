"""Hugging Face hub readers: ``ehovy/race`` and ``rajpurkar/squad`` / ``rajpurkar/squad_v2``.

Rows are converted with the same record converters as the local files, so that a hub split and
the same split read from a file give equal examples. When the hub cannot be reached (offline,
no network) a one-line :class:`HubUnavailableError` says so and points at the local readers; the
hub is probed first (:func:`robust_mrc.core.hub.hub_reachable`, at most 2 s), and when it does not
answer the data set is read from the local ``datasets`` cache in offline mode, with no retries. The
row converters (:func:`race_table`, :func:`squad_table`) also read a ``datasets`` dataset on disk
(:mod:`.hf_dataset`), with its ``edits`` column where there is one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from robust_mrc.core.hub import HUB_PROBE_SECONDS, hub_endpoint, hub_reachable, offline_mode
from robust_mrc.data.errors import DataFormatError, HubUnavailableError
from robust_mrc.data.examples import Edit, MCExample, SpanExample
from robust_mrc.data.readers._common import Collector, RecordError, keep, unique_ids
from robust_mrc.data.readers.race import RowRepeats, example_from_row
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
    unreachable = not offline_mode() and not hub_reachable()
    try:
        with _offline(unreachable):
            return datasets.load_dataset(name, subset, split=split)
    except Exception as e:  # noqa: BLE001 - classify, then re-raise with our message
        if _is_offline_error(e):
            host, port = hub_endpoint()
            detail = (
                f"no connection to {host}:{port} within {HUB_PROBE_SECONDS:g} s, and not in the local cache" if unreachable else _short(e)
            )
            raise HubUnavailableError(name, detail, local_hint) from None
        raise DataFormatError(name, None, f"cannot load from the hub: {type(e).__name__}: {_short(e)}") from e


@contextlib.contextmanager
def _offline(on: bool) -> Iterator[None]:
    """``datasets`` and ``huggingface_hub`` in offline mode while ``on`` (the local cache only, no
    request and so no retries), as ``HF_HUB_OFFLINE=1`` would set them."""
    if not on:
        yield
        return
    import datasets
    from huggingface_hub import constants

    saved = datasets.config.HF_HUB_OFFLINE, constants.HF_HUB_OFFLINE
    datasets.config.HF_HUB_OFFLINE = constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        datasets.config.HF_HUB_OFFLINE, constants.HF_HUB_OFFLINE = saved


def iter_hub_race(name: str, subset: str | None, split: str | None, collector: Collector) -> Iterator[MCExample]:
    ds = load_hub(name or RACE_HUB, subset or "all", split, "data=race_local data.train=<file> data.validation=<file>")
    yield from race_table(f"{name or RACE_HUB}[{split}]", ds, collector)


def iter_hub_squad(name: str, subset: str | None, split: str | None, collector: Collector) -> Iterator[SpanExample]:
    ds = load_hub(name or SQUAD_HUB, subset, split, "data=squad_local data.train=<file> data.validation=<file>")
    # hub rows carry no is_impossible flag: in SQuAD v2.0 no answers means unanswerable
    yield from squad_table(f"{name or SQUAD_HUB}[{split}]", ds, collector, unanswerable=(name or SQUAD_HUB) != SQUAD_HUB)


def edits_of(row: Any) -> tuple[Edit, ...]:
    """The ``edits`` column of a row (``[{attack, detail}]``, what an export writes); none when absent."""
    raw = row.get("edits")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RecordError(f"wrong type: 'edits' is {type(raw).__name__}, expected a list of {{attack, detail}}")
    edits = []
    for j, edit in enumerate(raw):
        if not isinstance(edit, dict) or not isinstance(edit.get("attack"), str) or not isinstance(edit.get("detail") or "", str):
            raise RecordError(f"wrong type: edits[{j}] is not an object with the strings attack and detail")
        edits.append(Edit(edit["attack"], edit.get("detail") or ""))
    return tuple(edits)


def race_table(where: str, rows: Iterable[dict], collector: Collector) -> Iterator[MCExample]:
    """Rows of the RACE hub layout (``example_id, article, question, options, answer``; ``edits``
    where present): a passage's ``example_id`` repeated on its questions becomes ``<id>-<k>``."""
    rows = list(rows)
    raw = [str(r.get("example_id")) if isinstance(r.get("example_id"), (str, int)) else None for r in rows]
    repeats = RowRepeats()  # an id on two passages, a whole row twice: as in a jsonl file
    for i, (row, ex_id, raw_id) in enumerate(zip(rows, unique_ids(raw), raw)):
        record = f"row {i} (example_id {raw_id})"
        try:
            if ex_id is None:
                raise RecordError("missing field: 'example_id'")
            example, remarks = example_from_row(ex_id, row)
            problem = repeats.problem(raw_id, record, example)
            if problem:
                raise RecordError(problem)
            edits = edits_of(row)
        except RecordError as e:
            collector.bad(where, record, e.reason)
            continue
        if edits:
            example = example.replace(edits=edits)
        if keep(collector, where, record, example, remarks):
            yield example


def _answer_lists(answers) -> tuple[list, list]:
    """``(texts, starts)`` of a row's ``answers`` in the SQuAD hub layout (``{text: [...],
    answer_start: [...]}``, lists of one length; none: ``{}`` or null); any other shape is a
    :class:`RecordError` naming it (a string would be read letter by letter, a list of objects is
    the SQuAD file layout, not the hub's)."""
    if answers is None:
        return [], []
    if not isinstance(answers, dict):
        raise RecordError(
            f"wrong type: 'answers' is {type(answers).__name__}, expected {{text: [...], answer_start: [...]}} (the SQuAD hub layout)"
        )
    texts, starts = answers.get("text"), answers.get("answer_start")
    texts = [] if texts is None else texts
    starts = [] if starts is None else starts
    for key, value, kind in (("text", texts, str), ("answer_start", starts, int)):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise RecordError(f"wrong type: 'answers.{key}' is {type(value).__name__}, expected a list of {kind.__name__}")
        bad = next((v for v in value if not isinstance(v, kind) or isinstance(v, bool)), None)
        if bad is not None or (kind is str and any(v is None for v in value)):
            raise RecordError(f"wrong type: 'answers.{key}' holds {bad!r} ({type(bad).__name__}), expected a list of {kind.__name__}")
    if len(texts) != len(starts):
        raise RecordError(f"'answers' holds {len(texts)} texts and {len(starts)} answer_start values: one of each per answer")
    return list(texts), list(starts)


def squad_table(where: str, rows: Iterable[dict], collector: Collector, unanswerable: bool) -> Iterator[SpanExample]:
    """Rows of the SQuAD hub layout (``id, title, context, question, answers{text, answer_start}``;
    ``edits`` where present); ``unanswerable``: a row without answers is a SQuAD v2.0 unanswerable
    question (else a bad record)."""
    for i, row in enumerate(rows):
        record = f"row {i} (id {row.get('id')})"
        try:
            texts, starts = _answer_lists(row.get("answers"))
            qa = {
                "id": row.get("id"),
                "question": row.get("question"),
                "answers": [{"text": t, "answer_start": s} for t, s in zip(texts, starts)],
            }
            qa["is_impossible"] = not qa["answers"] and unanswerable
            context = row.get("context")
            if not isinstance(context, str):
                raise RecordError(f"wrong type: 'context' is {type(context).__name__}, expected a string")
            example = example_from_qa(qa, context, row.get("title") or "")
            edits = edits_of(row)
        except RecordError as e:
            collector.bad(where, record, e.reason)
            continue
        if edits:
            example = example.replace(edits=edits)
        if keep(collector, where, record, example):
            yield example
