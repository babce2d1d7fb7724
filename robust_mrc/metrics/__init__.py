"""Span QA metrics that reproduce the official scripts, by registry name.

* ``squad_v1`` (alias ``squad``, what ``metric: squad`` of the configs means) -- SQuAD
  ``evaluate-v1.1.py``; ``squad_v2`` -- SQuAD ``evaluate-v2.0.py`` (for data with unanswerable
  questions); ``dureader`` -- DuReader_robust's official ``evaluate.py``. See
  :mod:`robust_mrc.metrics.squad` and :mod:`robust_mrc.metrics.dureader` for the rules and how they
  were checked (every case of ``../shared/data/metric_oracles/``).
* Corpus scorers (:func:`get_span_metric`) take ``predictions: {id: text}`` and
  ``references: {id: [gold texts]}`` and return ``{"exact_match": %, "f1": %}`` averaged over
  **every question of the references**: a missing prediction scores 0, extra ids are ignored.
* :func:`question_exact_match` -- whether one answer is right under a metric (the diagnostics'
  "correct"); :func:`answer_key` -- the normalization that metric's EM compares.
* :mod:`robust_mrc.metrics.adversarial` -- Jia & Liang's grouped scores of adversarial sets.
* ``robust-mrc metrics DATA_FILE PREDICTIONS_JSON`` -- the official scripts' command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from robust_mrc.metrics.common import SpanMetric, corpus_scores
from robust_mrc.metrics.dureader import DUREADER, dureader_scores
from robust_mrc.metrics.squad import SQUAD_V1, SQUAD_V2, normalize_answer, squad_scores, squad_v1_scores, squad_v2_scores

__all__ = [
    "METRIC_ALIASES",
    "SCORERS",
    "SPAN_METRICS",
    "SpanMetric",
    "answer_key",
    "corpus_scores",
    "dureader_scores",
    "span_metric",
    "get_span_metric",
    "normalize_answer",
    "question_exact_match",
    "question_f1",
    "squad_scores",
    "squad_v1_scores",
    "squad_v2_scores",
]

SCORERS: dict[str, SpanMetric] = {s.name: s for s in (SQUAD_V1, SQUAD_V2, DUREADER)}
#: other names accepted for a scorer
METRIC_ALIASES: dict[str, str] = {"squad": "squad_v1"}

#: the corpus scorer of every accepted name (aliases included)
SPAN_METRICS: dict[str, Callable[..., dict[str, float]]] = {
    "squad": squad_scores,
    "squad_v1": squad_v1_scores,
    "squad_v2": squad_v2_scores,
    "dureader": dureader_scores,
}


def span_metric(name: str) -> SpanMetric:
    """The scorer called ``name`` (``squad_v1``/``squad``, ``squad_v2`` or ``dureader``)."""
    try:
        return SCORERS[METRIC_ALIASES.get(name, name)]
    except (KeyError, TypeError):
        raise ValueError(f"unknown span metric {name!r}; expected one of {sorted(SPAN_METRICS)}") from None


def get_span_metric(name: str) -> Callable[..., dict[str, float]]:
    """The corpus scorer called ``name``: ``(predictions, references) -> {"exact_match": %, "f1": %}``."""
    span_metric(name)  # the error message for unknown names
    return SPAN_METRICS[name]


def question_exact_match(metric: str, pred: str, golds: Sequence[str] | str) -> float:
    """The EM (0.0 or 1.0) of one prediction against its gold texts under ``metric``, with that
    scorer's rules for empty and unscorable golds (squad: no gold means ``[""]``; dureader: 0)."""
    return span_metric(metric).exact_match(str(pred), _golds(golds))


def question_f1(metric: str, pred: str, golds: Sequence[str] | str) -> float:
    """The F1 in [0, 1] of one prediction against its gold texts under ``metric``."""
    return span_metric(metric).f1(str(pred), _golds(golds))


def answer_key(metric: str) -> Callable[[str], str]:
    """``answer -> comparable key`` of ``metric``: two answers with the same key get the same EM."""
    return span_metric(metric).normalize


def _golds(golds: Sequence[str] | str | None) -> list[str]:
    if golds is None:
        return []
    return [golds] if isinstance(golds, str) else [str(g) for g in golds]
