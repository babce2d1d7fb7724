"""Grouped worst-case scores of adversarial sets with variants (Jia & Liang 2017, AddSent/AddOneSent).

Their published files hold each original SQuAD question (id: 24 hex digits, no "-") and its
adversarial variants (id ``<original id>-<suffix>``, the paragraph plus one distracting sentence);
their evaluator scores the set by original question, not question by question. The rules, as its
code behaves (written from that behaviour, not copied):

* group: ``original_of(id)`` -- by default the part before the first "-"
  (:func:`original_id`); the questions of a group are its original and its variants;
* ``orig_exact_match`` / ``orig_f1``: the original question's score, summed over the groups whose
  original is in the file (a missing prediction scores 0), divided by the number of **groups**;
* ``adv_exact_match`` / ``adv_f1``: per group the answered variant with the **lowest F1** -- on a
  tie the first in file order keeps its place -- and the EM of that same variant; the original
  stands in only when no variant of the group has a prediction; a group with no answered member
  scores 0; averaged over the groups;
* in percent, like the official scripts.

A group whose original is absent from the file still counts in both denominators (its original
contributes 0 to ``orig_*``), as in Jia & Liang's evaluator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from robust_mrc.metrics import span_metric
from robust_mrc.metrics.common import question_scores

__all__ = ["adversarial_scores", "choose_adversaries", "grouped_scores", "original_id"]

OriginalOf = Callable[[str], str]


def original_id(qid: str, sep: str = "-") -> str:
    """The id of the original question of ``qid``: the text before the first ``sep``; an id
    without ``sep`` is an original question itself. (SQuAD and DuReader ids contain no "-".)"""
    return qid.partition(sep)[0]


def _groups(question_ids: Iterable[str], original_of: OriginalOf) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for qid in question_ids:
        groups.setdefault(original_of(qid), []).append(qid)
    return groups


def choose_adversaries(
    question_ids: Iterable[str],
    scores: Mapping[str, tuple[float, float]],
    original_of: OriginalOf = original_id,
) -> dict[str, str | None]:
    """``{original id: the id whose (em, f1) is the group's adversarial score}`` in first-seen
    order: the answered variant with the lowest F1 (the first in ``question_ids`` order on ties),
    else the original when it is answered, else ``None``.

    ``question_ids``: every question of the set in data file order; ``scores``: ``{id: (em, f1)}``
    of the answered questions (absent = no prediction).
    """
    chosen: dict[str, str | None] = {}
    for orig, members in _groups(question_ids, original_of).items():
        best: str | None = None
        for qid in members:
            if qid != orig and qid in scores and (best is None or scores[qid][1] < scores[best][1]):
                best = qid
        if best is None and orig in members and orig in scores:
            best = orig
        chosen[orig] = best
    return chosen


def grouped_scores(
    question_ids: Iterable[str],
    scores: Mapping[str, tuple[float, float]],
    original_of: OriginalOf = original_id,
) -> dict[str, float]:
    """``orig_exact_match``, ``orig_f1``, ``adv_exact_match``, ``adv_f1`` (percent, over the groups;
    see the module docstring) from per-question ``(em, f1)``; all 0.0 for an empty set."""
    question_ids = list(question_ids)
    chosen = choose_adversaries(question_ids, scores, original_of)
    n = len(chosen)
    if n == 0:
        return {"orig_exact_match": 0.0, "orig_f1": 0.0, "adv_exact_match": 0.0, "adv_f1": 0.0}
    present = set(question_ids)
    originals = [scores[o] for o in chosen if o in present and o in scores]
    adversaries = [scores[q] for q in chosen.values() if q is not None]
    return {
        "orig_exact_match": 100.0 * sum(em for em, _ in originals) / n,
        "orig_f1": 100.0 * sum(f for _, f in originals) / n,
        "adv_exact_match": 100.0 * sum(em for em, _ in adversaries) / n,
        "adv_f1": 100.0 * sum(f for _, f in adversaries) / n,
    }


def adversarial_scores(
    predictions: Mapping[str, str],
    references: Mapping[str, Iterable[str] | str],
    metric: str = "squad_v1",
    original_of: OriginalOf = original_id,
) -> dict[str, float]:
    """All the figures of an adversarial set: ``exact_match`` and ``f1`` over every question (as
    the plain scorer gives them) and the grouped ``orig_*`` / ``adv_*`` scores.

    ``references``: ``{id: gold texts}`` in the data file's order (the order breaks F1 ties);
    ``metric``: the per-question scorer (Jia & Liang used SQuAD v1.1).
    """
    scorer = span_metric(metric)
    scores = question_scores(predictions, references, scorer.exact_match, scorer.f1)
    return {**scorer.scores(predictions, references), **grouped_scores(references, scores, original_of)}
