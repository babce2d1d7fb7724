"""Small numbers for robustness reports: relative drop under attack and prediction flip rate."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

__all__ = ["flip_rate", "record_correct", "relative_drop"]


def relative_drop(clean: float, attacked: float) -> float:
    """``(clean - attacked) / clean``: the share of the clean score lost under attack (negative
    when the attack helps); 0.0 when ``clean`` is 0. Scale-free: percentages or fractions alike."""
    clean, attacked = float(clean), float(attacked)
    return (clean - attacked) / clean if clean else 0.0


def flip_rate(
    clean_preds: Mapping[str, Any],
    attacked_preds: Mapping[str, Any],
    normalize: str | Callable[[Any], Hashable] | None = "auto",
) -> float:
    """Share of the ids present in both dicts whose prediction differs after the attack (0.0 when
    no id is shared). Predictions are compared as in
    :func:`robust_mrc.diagnostics.dpr.different_prediction_ratio` (``normalize`` likewise)."""
    from robust_mrc.diagnostics.dpr import different_prediction_ratio

    return different_prediction_ratio(clean_preds, attacked_preds, None, normalize)["dpr"]


def record_correct(record: Mapping[str, Any], metric: str = "squad_v1") -> bool | None:
    """Whether a module's prediction record is right: multiple choice ``pred == label``; span QA
    the exact match of ``pred`` against ``golds`` under the task's scorer ``metric`` (``squad_v1``
    / ``squad``, ``squad_v2`` or ``dureader``, see :func:`robust_mrc.metrics.question_exact_match`;
    with its rules for an empty gold list). ``None`` for a record with neither ``label`` nor
    ``golds``."""
    if "label" in record:
        return int(record["pred"]) == int(record["label"])
    if "golds" in record:
        from robust_mrc.metrics import question_exact_match

        return question_exact_match(metric, str(record["pred"]), record["golds"] or []) == 1.0
    return None
