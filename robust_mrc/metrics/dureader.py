"""Chinese span EM and F1 as DuReader_robust's official ``evaluate.py`` (LIC2020 baseline) gives them.

Written from the script's documented rules (``../shared/docs/reference-algorithms.md``, section
DuReader_robust; not copied) and checked case by case against
``../shared/data/metric_oracles/dureader_zh.jsonl``: 2,092 (prediction, golds) cases whose scores
were produced by running the official script unchanged; ``tests/metrics/test_span_metrics.py`` reproduces every
``dr_em`` and ``dr_f1`` to 1e-9.

* :func:`normalize_dureader` -- lower case, then remove only the characters of the script's own
  list (:data:`PUNCTUATION`): ASCII ``: _ ` ( ) , |`` and ``，。：？！“”；’《》·、「」（）－～『』``.
  ASCII ``.!?"';-%~``, "…", "‘" and every kind of space stay.
* :func:`tokenize_dureader` -- each CJK ideograph (:func:`is_cjk`) and each "=" is a token of its
  own; each maximal run of other characters (Latin letters, digits, spaces, kana, other
  punctuation) is one token: "2018年6月" -> ``["2018", "年", "6", "月"]``, "a b" -> ``["a b"]``.
* :func:`exact_match` -- the normalized strings are equal (so "。" and "，" match: both vanish).
* :func:`f1` -- ``l`` = the longest common *contiguous* run of tokens; 0 when ``l`` is 0 (also
  when both sides normalize to nothing), else the harmonic mean of ``l / len(pred tokens)`` and
  ``l / len(gold tokens)``. "XP" against "XPE" scores 0 (different tokens).
* A question's score is the maximum over its gold answers; with no gold answer EM and F1 are 0
  (the script finds no matching gold; its F1 would fail on an empty maximum).

The CJK set (:data:`CJK_RANGES`) is the common definition of CJK ideographs (the Unified
Ideographs, Extensions A-E, the Compatibility Ideographs and their supplement). The oracle cases
decide what matters in practice: CJK symbols and punctuation (U+3000-U+303F, e.g. the ideographic
space), full-width forms (U+FF00-U+FFEF, e.g. "２０１８") and kana must be *outside* the set (each
of these three additions breaks oracle lines), and "=" must be a token of its own ("a=" against
"a=b" scores F1 0.8; without it four oracle lines fail). The oracles cannot tell the extension
blocks apart (their one extension ideograph stands beside a Unified Ideograph, where it is a
one-character token whether it is in the set or not).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from robust_mrc.metrics.common import SpanMetric, corpus_scores

__all__ = [
    "CJK_RANGES",
    "DUREADER",
    "PUNCTUATION",
    "dureader_scores",
    "exact_match",
    "f1",
    "is_cjk",
    "longest_common_substring",
    "normalize_dureader",
    "normalize_zh",
    "tokenize_dureader",
]

#: the characters the official script removes (its "……" entry is two characters long and so
#: never equals one character: "…" is kept)
PUNCTUATION = frozenset(":_`(),|，。：？！“”；’《》·、「」（）－～『』")

#: code point ranges (inclusive) whose characters are tokens of their own
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0x3400, 0x4DBF),  # Extension A
    (0x20000, 0x2A6DF),  # Extension B
    (0x2A700, 0x2B73F),  # Extension C
    (0x2B740, 0x2B81F),  # Extension D
    (0x2B820, 0x2CEAF),  # Extension E
    (0xF900, 0xFAFF),  # Compatibility Ideographs
    (0x2F800, 0x2FA1F),  # Compatibility Ideographs Supplement
)
_SINGLE_TOKEN_CHARS = frozenset("=")


def normalize_dureader(s: str) -> str:
    """Lower case, then drop the characters of :data:`PUNCTUATION` (nothing else)."""
    return "".join(ch for ch in s.lower() if ch not in PUNCTUATION)


#: another name for :func:`normalize_dureader` (the official normalization)
normalize_zh = normalize_dureader


def is_cjk(ch: str) -> bool:
    """Whether the character lies in one of :data:`CJK_RANGES`."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in CJK_RANGES)


def tokenize_dureader(s: str) -> list[str]:
    """Tokens of an (already normalized) string: CJK characters and "=" alone, runs of the rest."""
    tokens: list[str] = []
    run = ""
    for ch in s:
        if is_cjk(ch) or ch in _SINGLE_TOKEN_CHARS:
            if run:
                tokens.append(run)
                run = ""
            tokens.append(ch)
        else:
            run += ch
    if run:
        tokens.append(run)
    return tokens


def longest_common_substring(a: Sequence, b: Sequence) -> int:
    """Length of the longest common contiguous run of ``a`` and ``b`` (strings or token lists)."""
    if not a or not b:
        return 0
    best = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def exact_match(pred: str, gold: str) -> float:
    """1.0 when the normalized strings are equal, else 0.0."""
    return float(normalize_dureader(pred) == normalize_dureader(gold))


def f1(pred: str, gold: str) -> float:
    """F1 from the longest common token run of one pair; 0.0 when no token is shared."""
    p, g = tokenize_dureader(normalize_dureader(pred)), tokenize_dureader(normalize_dureader(gold))
    common = longest_common_substring(p, g)
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def _question_em(pred: str, golds: Sequence[str]) -> float:
    return max((exact_match(pred, g) for g in golds), default=0.0)


def _question_f1(pred: str, golds: Sequence[str]) -> float:
    return max((f1(pred, g) for g in golds), default=0.0)


DUREADER = SpanMetric("dureader", "DuReader_robust evaluate.py", _question_em, _question_f1, normalize_dureader)


def dureader_scores(predictions: Mapping[str, str], references: Mapping[str, Iterable[str] | str]) -> dict[str, float]:
    """``{"exact_match": %, "f1": %}`` of the official script: the mean over every question of
    ``references`` (``{id: gold texts}``); a missing prediction scores 0, extra ids are ignored."""
    return corpus_scores(predictions, references, _question_em, _question_f1)
