"""SQuAD v2.0 figures of a reader that may answer "no answer": the tuned null threshold and the
HasAns / NoAns breakdown.

* :func:`best_threshold` -- the idea of ``evaluate-v2.0.py``'s ``best_f1_thresh`` (written from its
  documented behaviour, not copied): each question has a no-answer score ``d`` (here: null score
  minus best span score, the HF ``run_qa.py`` score difference); with threshold ``t`` a question
  is answered ``""`` when ``d > t``, else with its span. The candidates are the questions' ``d``
  values; the one giving the highest total F1 wins, the smallest on ties. Two differences from the
  script, on purpose: questions with equal ``d`` switch together (the script can return a
  threshold in the middle of a tie, which its own rule ``d > t`` cannot apply), and when
  answering no question at all is best the threshold returned lies just below the smallest ``d``
  (the script returns 0.0 there, which answers some).
* :func:`tune_threshold` -- the same from predictions: span answers, score differences, gold
  answers, scored by the task's scorer (:func:`robust_mrc.metrics.span_metric`).
* :func:`has_ans_no_ans` -- ``HasAns_em``, ``HasAns_f1`` (questions with a gold answer) and
  ``NoAns_em``, ``NoAns_f1`` (questions without), in percent, as ``evaluate-v2.0.py`` reports
  ``HasAns_exact`` / ``HasAns_f1`` / ``NoAns_exact`` / ``NoAns_f1``; a group without questions is
  left out, as there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["best_threshold", "has_ans_no_ans", "tune_threshold"]


def best_threshold(diffs: Sequence[float], answered: Sequence[float], abstained: Sequence[float]) -> tuple[float, float]:
    """``(threshold, total)``: the threshold among ``diffs`` maximising the total score where
    question ``i`` scores ``answered[i]`` when ``diffs[i] <= threshold`` and ``abstained[i]``
    otherwise (see the module doc). ``+inf`` differences are never answered, ``-inf`` always;
    with no finite difference the threshold is 0.0."""
    total = sum(a for d, a in zip(diffs, answered) if d == -math.inf)
    total += sum(b for d, b in zip(diffs, abstained) if not d == -math.inf)
    finite = sorted((d, a - b) for d, a, b in zip(diffs, answered, abstained) if math.isfinite(d))
    if not finite:
        return 0.0, total
    best, threshold = total, math.nextafter(finite[0][0], -math.inf)
    i = 0
    while i < len(finite):
        d = finite[i][0]
        while i < len(finite) and finite[i][0] == d:
            total += finite[i][1]
            i += 1
        if total > best:
            best, threshold = total, d
    return threshold, best


def tune_threshold(
    span_answers: Mapping[str, str], diffs: Mapping[str, float], references: Mapping[str, Iterable[str]], metric: str = "squad_v2"
) -> tuple[float, float]:
    """``(threshold, F1 in percent)`` tuned on the questions of ``references`` (``{id: gold
    texts}``; unanswerable: ``[]``): ``span_answers[id]`` is the best span, ``diffs[id]`` its
    null score minus its span score; F1 by ``metric``'s scorer. A question without a prediction
    scores 0 either way."""
    from robust_mrc.metrics import span_metric

    scorer = span_metric(metric)
    ids = [i for i in references if i in span_answers]
    golds = {i: [str(g) for g in references[i]] for i in ids}
    answered = [scorer.f1(span_answers[i], golds[i]) for i in ids]
    abstained = [scorer.f1("", golds[i]) for i in ids]
    threshold, total = best_threshold([float(diffs[i]) for i in ids], answered, abstained)
    return threshold, 100.0 * total / len(references) if references else 0.0


def has_ans_no_ans(predictions: Mapping[str, str], references: Mapping[str, Iterable[str]], metric: str = "squad_v2") -> dict[str, float]:
    """``HasAns_em/f1`` and ``NoAns_em/f1`` (percent) over the questions of ``references`` with
    and without gold answers; a group without questions is left out."""
    from robust_mrc.metrics import span_metric

    scorer = span_metric(metric)
    refs = {i: [str(g) for g in golds] for i, golds in references.items()}
    out: dict[str, float] = {}
    for name, group in (("HasAns", {i: g for i, g in refs.items() if g}), ("NoAns", {i: g for i, g in refs.items() if not g})):
        if group:
            scores = scorer.scores(predictions, group)
            out[f"{name}_em"], out[f"{name}_f1"] = float(scores["exact_match"]), float(scores["f1"])
    return out
