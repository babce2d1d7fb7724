"""SQuAD exact match and F1 as the official ``evaluate-v1.1.py`` and ``evaluate-v2.0.py`` give them.

Written from the scripts' documented rules (not copied) and checked case by case against
``../shared/data/metric_oracles/squad_en.jsonl``: 2,114 (prediction, golds) cases whose per-question
scores were produced by running both official scripts unchanged; ``tests/metrics/test_span_metrics.py``
reproduces every ``v11_em``, ``v11_f1``, ``v20_em`` and ``v20_f1`` to 1e-9.

Shared by both versions:

* :func:`normalize_answer` -- lower case; remove every character of ``string.punctuation`` (ASCII
  only: curly quotes, dashes, full-width signs stay); replace the whole words a/an/the by a space;
  split on white space (``str.split``: Unicode spaces, tabs, newlines; not the zero-width space)
  and join with single spaces;
* :func:`exact_match` -- the normalized strings are equal; tokens are the normalized string split
  on spaces.

Where they differ:

* **v1.1** (:func:`f1`): F1 from the multiset overlap of the tokens, and 0 when no token is shared
  -- also when both sides normalize to nothing (EM of "," against "." is 1, its F1 is 0). The
  score of a question is the maximum over all its gold answers.
* **v2.0** (:func:`f1_v2`): when either side has no token, F1 is 1 if both have none, else 0; and
  before the maximum, gold answers that normalize to nothing are dropped, leaving ``[""]`` when
  none remains (the script's unanswerable questions): "," against the golds ``["."]`` scores
  EM 1 and F1 1.

An empty gold list (a question without answers) is read as ``[""]`` by both versions (v1.1 itself
cannot score it: its maximum over no gold answers fails). Corpus figures average over every
question of the references, a missing prediction scoring 0 (v1.1's rule; ``evaluate-v2.0.py``
instead leaves such a question out of the average, see :func:`squad_v2_scores`).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from robust_mrc.metrics.common import SpanMetric, corpus_scores

__all__ = [
    "SQUAD_V1",
    "SQUAD_V2",
    "exact_match",
    "f1",
    "f1_v2",
    "metric_max_over_ground_truths",
    "normalize_answer",
    "squad_scores",
    "squad_v1_scores",
    "squad_v2_scores",
]

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s: str) -> str:
    """Lowercase, remove ASCII punctuation, remove articles, collapse white space (official order)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCTUATION)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(pred: str, gold: str) -> float:
    """1.0 when the normalized strings are equal, else 0.0 (v1.1 and v2.0 alike)."""
    return float(normalize_answer(pred) == normalize_answer(gold))


def _overlap_f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    num_same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1(pred: str, gold: str) -> float:
    """v1.1 token F1 of one pair: multiset overlap, 0.0 when no token is shared (also when both
    sides normalize to nothing)."""
    return _overlap_f1(normalize_answer(pred).split(), normalize_answer(gold).split())


def f1_v2(pred: str, gold: str) -> float:
    """v2.0 token F1 of one pair: as :func:`f1`, but when either side has no token, 1.0 if both
    have none and 0.0 otherwise."""
    pred_tokens, gold_tokens = normalize_answer(pred).split(), normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    return _overlap_f1(pred_tokens, gold_tokens)


def metric_max_over_ground_truths(fn: Callable[[str, str], float], pred: str, golds: Iterable[str]) -> float:
    """``max(fn(pred, g) for g in golds)``; an empty gold list counts as ``[""]``."""
    return max(fn(pred, g) for g in (list(golds) or [""]))


def _v2_golds(golds: Sequence[str]) -> list[str]:
    """v2.0: gold answers that normalize to nothing are dropped; none left -> ``[""]``."""
    return [g for g in golds if normalize_answer(g)] or [""]


def _v1_em(pred: str, golds: Sequence[str]) -> float:
    return metric_max_over_ground_truths(exact_match, pred, golds)


def _v1_f1(pred: str, golds: Sequence[str]) -> float:
    return metric_max_over_ground_truths(f1, pred, golds)


def _v2_em(pred: str, golds: Sequence[str]) -> float:
    return max(exact_match(pred, g) for g in _v2_golds(golds))


def _v2_f1(pred: str, golds: Sequence[str]) -> float:
    return max(f1_v2(pred, g) for g in _v2_golds(golds))


SQUAD_V1 = SpanMetric("squad_v1", "SQuAD evaluate-v1.1.py", _v1_em, _v1_f1, normalize_answer)
SQUAD_V2 = SpanMetric("squad_v2", "SQuAD evaluate-v2.0.py", _v2_em, _v2_f1, normalize_answer)

_References = Mapping[str, Iterable[str] | str]


def squad_v1_scores(predictions: Mapping[str, str], references: _References) -> dict[str, float]:
    """``{"exact_match": %, "f1": %}`` of ``evaluate-v1.1.py``: the mean over every question of
    ``references`` (``{id: gold texts}``); a missing prediction scores 0, extra ids are ignored."""
    return corpus_scores(predictions, references, _v1_em, _v1_f1)


def squad_v2_scores(predictions: Mapping[str, str], references: _References) -> dict[str, float]:
    """``{"exact_match": %, "f1": %}`` with the per-question rules of ``evaluate-v2.0.py`` (no
    no-answer probability threshold); averaged like :func:`squad_v1_scores`. Gold lists that are
    empty or normalize to nothing make a question unanswerable: only ``""`` (or an answer that
    normalizes to nothing) is right.

    One difference from ``evaluate-v2.0.py`` on purpose: that script leaves a question without a
    prediction out of the average ("Missing prediction for ..."); here it scores 0, as in v1.1.
    With a prediction for every question (the normal case) the two agree."""
    return corpus_scores(predictions, references, _v2_em, _v2_f1)


#: ``metric: squad`` of the configs: SQuAD v1.1
squad_scores = squad_v1_scores
