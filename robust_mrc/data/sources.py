"""From a ``data`` config to examples per split: synthetic, local files, or hub names."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import MCExample, SpanExample

log = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")


class DataConfigError(UserError, ValueError):
    """A ``data`` config that cannot be used as asked (wrong task, missing file)."""


def _group_key(example) -> str:
    return example.passage if isinstance(example, MCExample) else example.context


def holdout_split(examples: list, fraction: float, seed: int) -> tuple[list, list]:
    """Split off ``fraction`` of the examples *by passage* (no passage on both sides), by hashing."""
    keep, held = [], []
    for ex in examples:
        digest = hashlib.blake2b(f"{seed}\0{_group_key(ex)}".encode(), digest_size=8).digest()
        (held if int.from_bytes(digest, "big") / 2**64 < fraction else keep).append(ex)
    return keep, held


def check_task(data_cfg: Mapping[str, Any], task: str) -> None:
    data_task = data_cfg.get("task")
    if data_task and data_task != task:
        raise DataConfigError(
            f"data={data_cfg.get('name')} is a {data_task!r} data set but task={task!r}: add task={data_task} to the command line"
        )


def load_splits(data_cfg: Mapping[str, Any], task: str, seed: int = 0) -> dict[str, list]:
    """Examples for train / validation / test (a split may be empty)."""
    check_task(data_cfg, task)
    source = data_cfg["source"]  # the keys read here: the data option over its definition (robust_mrc/core/settings.py)
    if source == "synthetic":
        from robust_mrc.data.synthetic import synthetic_splits

        kwargs = dict(data_cfg.get("generator") or {})
        # data.seed (the synthetic options set it), else the run seed
        data_seed = data_cfg.get("seed")
        splits = synthetic_splits(
            task, int(data_cfg.n_train), int(data_cfg.n_val), int(data_cfg.n_test), int(seed if data_seed is None else data_seed), **kwargs
        )
    elif source in ("local", "hub"):
        splits = {split: _read_split(data_cfg, split) for split in SPLITS}
        for split, examples in splits.items():
            _check_not_all_skipped(data_cfg, split, examples)
    else:
        raise DataConfigError(f"data.source={source!r}: expected synthetic, local or hub")
    holdout = float(data_cfg["holdout"] or 0.0)
    if holdout and not splits.get("validation"):
        splits["train"], splits["validation"] = holdout_split(splits["train"], holdout, seed=int(data_cfg["holdout_seed"]))
        log.info("validation: %d examples held out from train by passage", len(splits["validation"]))
    expected = MCExample if task == "mc" else SpanExample
    for split, examples in splits.items():
        if examples and not isinstance(examples[0], expected):
            raise DataConfigError(
                f"data={data_cfg.get('name')} {split}: got {type(examples[0]).__name__}, task={task} needs {expected.__name__}"
            )
    for split in SPLITS:
        splits.setdefault(split, [])
    return splits


def _check_not_all_skipped(data_cfg: Mapping[str, Any], split: str, examples: list) -> None:
    """A split whose every record was bad (``strict=false``) is an error, not an empty split: an
    empty validation split would silently become a holdout of train."""
    report = getattr(examples, "skipped", None)
    if examples or report is None or not report.total:
        return
    reasons = ", ".join(f"{n} x {r}" for r, n in report.skipped.most_common())
    first = f"; first: {report.examples[0]}" if report.examples else ""
    raise DataConfigError(
        f"data.{split}={data_cfg.get(split)}: all {report.total} record(s) were skipped as bad "
        f"({reasons}){first}. Fix the file, or set data.{split}=null"
        + (" to hold out part of train instead" if split == "validation" and data_cfg.get("holdout") else "")
    )


def _read_split(data_cfg: Mapping[str, Any], split: str) -> list:
    from robust_mrc.data.readers import load_examples

    spec = data_cfg.get(split)
    if not spec:
        return []
    limit = data_cfg["limit"] or {}
    limit = limit.get(split) if isinstance(limit, Mapping) else limit
    strict = bool(data_cfg["strict"])
    if data_cfg["source"] == "hub":
        return load_examples(data_cfg["hub_name"], data_cfg["format"], split=spec, subset=data_cfg["subset"], strict=strict, limit=limit)
    path = Path(str(spec)).expanduser()
    if not path.exists():
        raise DataConfigError(
            f"data.{split}={spec}: no such file or directory (cwd {Path.cwd()}); set data.{split}=/path/to/file or data.{split}=null"
        )
    # split: the split of a datasets directory that holds several (format hf_dataset)
    return load_examples(path, data_cfg["format"], split=split, strict=strict, limit=limit, max_bytes=data_cfg["max_bytes"])
