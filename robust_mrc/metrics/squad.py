"""SQuAD exact match and F1, with the behaviour of the official v1.1 / v2.0 evaluation scripts.

* :func:`normalize_answer` -- lowercase, drop punctuation, drop the articles a/an/the,
  collapse whitespace.
* :func:`exact_match`, :func:`f1` -- one prediction against one gold answer, in [0, 1]; F1 is
  token-level with multiset (``Counter``) overlap. When either side normalizes to no tokens,
  both scores are 1 if the other side is empty too and 0 otherwise (SQuAD v2.0 no-answer rule).
* :func:`metric_max_over_ground_truths` -- the best score over the gold answers; an empty gold
  list means the question has no answer, i.e. the one correct prediction is ``""``.
* :func:`squad_scores` -- corpus-level percentages over the ids present in ``predictions``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

__all__ = ["exact_match", "f1", "metric_max_over_ground_truths", "normalize_answer", "squad_scores"]

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s: str) -> str:
    """Lowercase, remove punctuation, remove articles, collapse whitespace (official order)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCTUATION)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(pred: str, gold: str) -> float:
    """1.0 when the normalized strings are equal, else 0.0."""
    return float(normalize_answer(pred) == normalize_answer(gold))


def f1(pred: str, gold: str) -> float:
    """Token-level F1 of the normalized strings (multiset overlap)."""
    pred_tokens = normalize_answer(pred).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def metric_max_over_ground_truths(
    fn: Callable[[str, str], float], pred: str, golds: Iterable[str]
) -> float:
    """``max(fn(pred, g) for g in golds)``; no gold answers means the correct answer is ``""``."""
    golds = list(golds)
    if not golds:
        golds = [""]
    return max(fn(pred, g) for g in golds)


def _references_for(references: Mapping[str, Iterable[str] | str], qid: str) -> list[str]:
    golds = references[qid]
    return [golds] if isinstance(golds, str) else list(golds)


def corpus_scores(
    predictions: Mapping[str, str],
    references: Mapping[str, Iterable[str] | str],
    em_fn: Callable[[str, str], float],
    f1_fn: Callable[[str, str], float],
) -> dict[str, float]:
    """Mean EM and F1 in percent over the ids of ``predictions`` (shared by the span metrics)."""
    missing = [qid for qid in predictions if qid not in references]
    if missing:
        shown = ", ".join(repr(q) for q in missing[:5])
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise KeyError(
            f"{len(missing)} predicted id(s) have no reference answers: {shown}{more}"
        )
    if not predictions:
        return {"exact_match": 0.0, "f1": 0.0}
    em_total = f1_total = 0.0
    for qid, pred in predictions.items():
        golds = _references_for(references, qid)
        em_total += metric_max_over_ground_truths(em_fn, pred, golds)
        f1_total += metric_max_over_ground_truths(f1_fn, pred, golds)
    n = len(predictions)
    return {"exact_match": 100.0 * em_total / n, "f1": 100.0 * f1_total / n}


def squad_scores(
    predictions: Mapping[str, str], references: Mapping[str, Iterable[str] | str]
) -> dict[str, float]:
    """``{"exact_match": %, "f1": %}`` over the ids in ``predictions`` (0.0 for none).

    ``references`` maps every predicted id to its gold answer texts (``[]`` for a SQuAD v2.0
    unanswerable question, whose correct prediction is ``""``). Ids that are in the references
    but not predicted are ignored; a predicted id without references raises ``KeyError``.
    """
    return corpus_scores(predictions, references, exact_match, f1)
