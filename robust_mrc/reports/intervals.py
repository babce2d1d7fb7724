"""95 % confidence intervals of a set's score: a seeded bootstrap over its questions.

The per-question score is what the set's metric averages: multiple choice 1 / 0 for ``pred ==
label`` (``acc``, a fraction); span QA the question's EM or F1 under the task's scorer, in percent
(``em`` / ``f1``, as :func:`robust_mrc.metrics.question_exact_match` / :func:`question_f1` give
them, times 100). Their mean is the set's reported value (plain sets; an adversarial file's grouped
``adv_*`` scores are not this mean and get no interval of their own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

RESAMPLES = 1000
_CHUNK = 100  # resamples drawn at a time (memory: CHUNK x questions indices)


def question_scores(records: Mapping[str, Mapping[str, Any]], primary: str, metric: str = "squad_v1") -> list[float] | None:
    """The per-question scores behind ``primary`` (``acc``, ``em`` or ``f1``), in record order;
    None when the records carry no label or golds (nothing to score)."""
    from robust_mrc.metrics import question_exact_match, question_f1

    scores = []
    for r in records.values():
        if primary == "acc" and "label" in r:
            scores.append(float(int(r["pred"]) == int(r["label"])))
        elif primary in ("em", "f1") and "golds" in r:
            score = question_f1 if primary == "f1" else question_exact_match
            scores.append(100.0 * score(metric, str(r["pred"]), r["golds"] or []))
        else:
            return None
    return scores


def bootstrap_ci(scores: Sequence[float], resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95) -> list[float]:
    """``[lo, hi]``: the percentile interval of the mean of ``scores`` over ``resamples`` bootstrap
    resamples (questions drawn with replacement, ``numpy.random.default_rng(seed)``); ``[x, x]``
    for a single question, ``[0.0, 0.0]`` for none."""
    values = np.asarray(scores, dtype=np.float64)
    n = len(values)
    if n == 0:
        return [0.0, 0.0]
    rng = np.random.default_rng(seed)
    means = []
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        means.append(values[rng.integers(0, n, size=(size, n))].mean(axis=1))
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(np.concatenate(means), [tail, 100 - tail])
    return [float(lo), float(hi)]
