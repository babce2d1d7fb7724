"""Diverse distractors from a ranked candidate list: the DG selection rule of Si et al. 2021
(AdvRACE), section 3.2.

The paper: beam search with k = 50, "select the top 3 among them so that their Jaccard distance
between each other is larger than 0.5"; the project's note (``reference-algorithms.md``, "Distractor
Generation (DG)"): take beam 1, then later beams whose token-set Jaccard similarity to every kept
one is below 0.5, and fall back to beams 2 and 3. :func:`select_diverse` is that rule, the one both
DG paths use: the model-free retrieval (:func:`~robust_mrc.attacks.mc.distractors.retrieve_distractors`,
whose ranked options are its "beam") and the bank built from the project's generator
(:mod:`robust_mrc.banks.dg`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from robust_mrc.data.text import jaccard, normalize

MAX_SIMILARITY = 0.5


# the candidates come from one pool (the retrieval stand-in) or a bank: the same options again and again
_normalized = functools.lru_cache(maxsize=100_000)(normalize)


def token_set(text: str) -> set[str]:
    """The words of ``text`` after :func:`~robust_mrc.data.text.normalize` (case and punctuation dropped)."""
    return set(_normalized(text).split())


def select_diverse(candidates: Sequence[str], n: int, *, exclude: Iterable[str] = (), max_similarity: float = MAX_SIMILARITY) -> list[str]:
    """Up to ``n`` of ``candidates`` (ranked, best first), returned as given (not stripped):

    1. candidates that are empty after normalisation, equal (normalised) to one of ``exclude``
       (the correct answer; the question's own options where wanted), or to an earlier candidate
       are dropped;
    2. the first remaining candidate is kept; then, in rank order, each one whose token-set Jaccard
       similarity to *every* kept one is below ``max_similarity``;
    3. while fewer than ``n`` are kept, the remaining candidates fill up in rank order (beams 2, 3,
       ... of the paper's fallback), so the result is shorter than ``n`` only when fewer than ``n``
       candidates survive step 1.

    The kept ones come in the order they were kept (the diverse ones first, then the fallback)."""
    if n <= 0:
        return []
    seen = {_normalized(x) for x in exclude}
    pool: list[str] = []
    for cand in candidates:
        key = _normalized(cand)
        if key and key not in seen:
            seen.add(key)
            pool.append(cand)
    if not pool:
        return []
    kept = [pool[0]]
    for cand in pool[1:]:
        if len(kept) == n:
            break
        if all(jaccard(token_set(cand), token_set(k)) < max_similarity for k in kept):
            kept.append(cand)
    for cand in pool[1:]:  # fall back to the next beams in rank order
        if len(kept) == n:
            break
        if cand not in kept:
            kept.append(cand)
    return kept
