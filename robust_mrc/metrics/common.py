"""What every span metric shares: the :class:`SpanMetric` record and corpus averaging.

A scorer scores one question from its prediction and its gold answer texts (``em``, ``f1``: 0/1
and [0, 1]); :func:`corpus_scores` turns those into the official scripts' corpus figures:

* the average runs over **all questions of the references** (in percent);
* a question without a prediction scores 0 (``evaluate-v1.1.py``: "Unanswered question ... will
  receive score 0");
* predictions for ids that are not in the references are ignored (the scripts loop over the
  data set, never over the predictions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["QuestionScore", "SpanMetric", "corpus_scores", "gold_list", "question_scores"]

#: ``(prediction, gold answer texts) -> score`` of one question
QuestionScore = Callable[[str, Sequence[str]], float]

References = Mapping[str, Iterable[str] | str]


@dataclass(frozen=True)
class SpanMetric:
    """One official scorer: per-question EM and F1, the answer normalization its EM compares.

    ``normalize(a) == normalize(b)`` is exactly when the scorer's EM of ``a`` against the gold
    ``b`` is 1 (for a gold the scorer does not drop), so two answers with the same key are
    scored alike; the diagnostics compare answers by this key.
    """

    name: str
    reproduces: str
    exact_match: QuestionScore
    f1: QuestionScore
    normalize: Callable[[str], str]

    def scores(self, predictions: Mapping[str, str], references: References) -> dict[str, float]:
        """``{"exact_match": %, "f1": %}`` by :func:`corpus_scores`."""
        return corpus_scores(predictions, references, self.exact_match, self.f1)


def gold_list(golds: Iterable[str] | str) -> list[str]:
    """The gold answer texts as a list (a single string is one gold answer)."""
    return [golds] if isinstance(golds, str) else [str(g) for g in golds]


def question_scores(
    predictions: Mapping[str, str],
    references: References,
    exact_match: QuestionScore,
    f1: QuestionScore,
) -> dict[str, tuple[float, float]]:
    """``{id: (em, f1)}`` of the answered questions, in the order of ``references``; unanswered
    questions are absent, predictions for ids not in ``references`` ignored."""
    out: dict[str, tuple[float, float]] = {}
    for qid, golds in references.items():
        if qid in predictions:
            pred, gold = predictions[qid], gold_list(golds)
            out[qid] = (float(exact_match(pred, gold)), float(f1(pred, gold)))
    return out


def corpus_scores(
    predictions: Mapping[str, str],
    references: References,
    exact_match: QuestionScore,
    f1: QuestionScore,
) -> dict[str, float]:
    """``{"exact_match": %, "f1": %}``: means over every id of ``references`` (a missing
    prediction scores 0, extra predictions are ignored); 0.0 for empty references."""
    if not references:
        return {"exact_match": 0.0, "f1": 0.0}
    scored = question_scores(predictions, references, exact_match, f1)
    n = len(references)
    return {
        "exact_match": 100.0 * sum(em for em, _ in scored.values()) / n,
        "f1": 100.0 * sum(f for _, f in scored.values()) / n,
    }
