"""Span QA metrics: SQuAD (English, token F1) and DuReader (Chinese, character LCS F1).

Both scorers take ``predictions: {id: text}`` and ``references: {id: [gold texts]}`` and return
``{"exact_match": %, "f1": %}`` over the predicted ids.
"""

from __future__ import annotations

from collections.abc import Callable

from robust_mrc.metrics.dureader import dureader_scores
from robust_mrc.metrics.squad import squad_scores

__all__ = ["SPAN_METRICS", "dureader_scores", "get_span_metric", "squad_scores"]

SPAN_METRICS: dict[str, Callable[..., dict[str, float]]] = {
    "squad": squad_scores,
    "dureader": dureader_scores,
}


def get_span_metric(name: str) -> Callable[..., dict[str, float]]:
    """The corpus scorer called ``name``: "squad" or "dureader"."""
    try:
        return SPAN_METRICS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown span metric {name!r}; expected one of {sorted(SPAN_METRICS)}"
        ) from None
