"""Chinese span metrics as in DuReader_robust / CMRC 2018: character-level EM and F1.

* :func:`normalize_zh` -- lowercase, drop whitespace and punctuation (ASCII, full-width and CJK).
* :func:`exact_match` -- equal normalized strings.
* :func:`f1` -- from the longest common substring ``l`` of the normalized strings:
  precision ``l / len(pred)``, recall ``l / len(gold)``, their harmonic mean.
* :func:`dureader_scores` -- the same shape as :func:`robust_mrc.metrics.squad.squad_scores`:
  ``{"exact_match": %, "f1": %}`` over the ids present in the predictions, max over references.

As in the SQuAD metrics, an empty gold list means no answer: the correct prediction is ``""``;
when either side normalizes to nothing, the scores are 1 if both do and 0 otherwise.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Iterable, Mapping

from robust_mrc.metrics.squad import corpus_scores, metric_max_over_ground_truths

__all__ = ["dureader_scores", "exact_match", "f1", "longest_common_substring", "metric_max_over_ground_truths", "normalize_zh"]

# Symbols (Unicode category S*) that the Chinese evaluation scripts treat as punctuation;
# category P* characters (，。、；：？！“”‘’《》「」『』（）【】…… · and the like) are dropped anyway.
_EXTRA = frozenset(string.punctuation) | frozenset("～＋＝＜＞｜＾｀￥＄￣〜")


def _is_dropped(ch: str) -> bool:
    return ch.isspace() or ch in _EXTRA or unicodedata.category(ch).startswith("P")


def normalize_zh(s: str) -> str:
    """Lowercase and remove whitespace and punctuation, character by character."""
    return "".join(ch for ch in s.lower() if not _is_dropped(ch))


def longest_common_substring(a: str, b: str) -> int:
    """Length of the longest common contiguous substring of ``a`` and ``b``."""
    if not a or not b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    best = 0
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0] * (len(b) + 1)
        for j, cb in enumerate(b, 1):
            if ca == cb:
                v = prev[j - 1] + 1
                cur[j] = v
                if v > best:
                    best = v
        prev = cur
    return best


def exact_match(pred: str, gold: str) -> float:
    return float(normalize_zh(pred) == normalize_zh(gold))


def f1(pred: str, gold: str) -> float:
    p, g = normalize_zh(pred), normalize_zh(gold)
    if not p or not g:
        return float(p == g)
    lcs = longest_common_substring(p, g)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(p), lcs / len(g)
    return 2 * precision * recall / (precision + recall)


def dureader_scores(
    predictions: Mapping[str, str], references: Mapping[str, Iterable[str] | str]
) -> dict[str, float]:
    """``{"exact_match": %, "f1": %}`` over the ids in ``predictions`` (0.0 for none).

    A predicted id missing from ``references`` raises ``KeyError``.
    """
    return corpus_scores(predictions, references, exact_match, f1)
