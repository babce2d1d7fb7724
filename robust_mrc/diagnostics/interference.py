"""Magnet options (Lin, Zou & Ding 2021): interference scores of irrelevant options, ranking, pool
file, plot.

Lin, Zou & Ding 2021 score every option on its own, ``S(o)`` = the multiple-choice head's logit of
(passage, question + o). For question i with its own options ``o_i1 .. o_iJ`` and an irrelevant
pool option ``o_ak``::

    T_ik = 1  if  max_j S(o_ij) < S(o_ak)  else 0          (strict: a tie does not interfere)
    T_k  = (1/N) * sum_i T_ik

i.e. the share of questions whose answer the model would change to pool option k if k were added
to its options. This module generalizes the average to the *counted* pairs (i, k):

* a pair is counted unless the caller's ``mask`` is False there, the caller's ``exclude`` is True
  there, the pool score ``scores_pool[i, k]`` is NaN (not scored), or question i has no valid own
  score (a row of padding only);
* ``T_k = (number of counted pairs with max_j S(o_ij) < S(o_ak)) / (number of counted pairs)`` for
  option k, and NaN when option k has no counted pair.

With no mask and no missing scores this is exactly the paper's ``1/N`` average. The mask is how the
paper's pool constraints are applied per question (the option must come from another passage and
must not be identical to one of the question's own options): build it with
:func:`pool_exclusion_mask` and pass it as ``exclude=`` (or its negation,
:func:`pool_admissible_mask`, as ``mask=``).

Files: :func:`write_ranked_pool` writes the ranked pool in the two formats that
:meth:`robust_mrc.attacks.pools.OptionPool.from_file` (the ``pool`` parameter of the ``magnet``,
``extra_option`` and ``augmented_option`` attacks) reads:

* ``*.jsonl`` -- one JSON object a line, best first: ``{"option": str, "T": float | null,
  "rank": int}`` (``rank`` from 1; ``T`` null when it is NaN). The loader reads ``"option"`` and
  ignores the other keys.
* ``*.txt`` -- one option a line, best first, nothing else (the loader takes each whole stripped
  line as an option, so scores cannot be written there); white space inside an option, line breaks
  included, is collapsed to single spaces and options that are empty after that are left out.

The loader drops options that its normalization (lower case, word characters only) makes empty
or duplicates of an earlier line, so a pool file may load with fewer entries than it has lines.

:func:`plot_sorted_scores` draws Lin, Zou & Ding 2021, Figure 2: the interference scores sorted in
decreasing order against the rank of the option, one curve per model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from robust_mrc.data.writers import atomic_write_text
from robust_mrc.diagnostics.figures import new_figure, save_png

__all__ = [
    "interference_scores",
    "plot_sorted_scores",
    "pool_admissible_mask",
    "pool_exclusion_mask",
    "rank_pool",
    "read_ranked_pool",
    "write_ranked_pool",
]


def interference_scores(
    scores_own,
    scores_pool,
    mask=None,
    *,
    exclude=None,
    return_counts: bool = False,
):
    """Interference score ``T_k`` of every pool option (see the module docstring).

    Args:
        scores_own: ``(N, J)`` scores ``S(o_ij)`` of each question's own options; padding slots
            (questions with fewer than J options) hold ``-inf`` or NaN.
        scores_pool: ``(N, K)`` scores ``S(o_ak)`` of every pool option with every question;
            NaN = not scored (the pair is not counted).
        mask: optional boolean ``(N, K)`` (or broadcastable); True = the pair is counted.
        exclude: optional boolean ``(N, K)`` (or broadcastable); True = the pair is not counted
            (e.g. :func:`pool_exclusion_mask`). Both may be given; they combine.
        return_counts: also return the per-option numerator and denominator.

    Returns:
        ``T`` as a float array ``(K,)`` in [0, 1], NaN for an option with no counted pair;
        with ``return_counts``, ``(T, hits, counted)`` where ``hits`` and ``counted`` are int
        arrays ``(K,)`` (useful to merge screenings done in chunks: ``T = hits / counted``).
    """
    own = np.asarray(scores_own, dtype=np.float64)
    pool = np.asarray(scores_pool, dtype=np.float64)
    if own.ndim != 2 or pool.ndim != 2:
        raise ValueError(f"scores_own and scores_pool must be 2-D, got shapes {own.shape} and {pool.shape}")
    if own.shape[0] != pool.shape[0]:
        raise ValueError(f"{own.shape[0]} questions in scores_own but {pool.shape[0]} in scores_pool")
    n, k = pool.shape
    valid_own = ~np.isnan(own) & (own != -np.inf)
    best = np.where(valid_own, own, -np.inf).max(axis=1) if own.shape[1] else np.full(n, -np.inf)
    row_ok = valid_own.any(axis=1)
    counted = ~np.isnan(pool) & row_ok[:, None]
    if mask is not None:
        counted &= np.broadcast_to(np.asarray(mask, dtype=bool), (n, k))
    if exclude is not None:
        counted &= ~np.broadcast_to(np.asarray(exclude, dtype=bool), (n, k))
    with np.errstate(invalid="ignore"):
        hits = (best[:, None] < pool) & counted
    hit_count = hits.sum(axis=0)
    denom = counted.sum(axis=0)
    T = np.full(k, np.nan)
    np.divide(hit_count, denom, out=T, where=denom > 0)
    if return_counts:
        return T, hit_count.astype(np.int64), denom.astype(np.int64)
    return T


def _default_normalize(text: str) -> str:
    # the normalization OptionPool uses to drop duplicate options: same notion of "identical"
    from robust_mrc.data.text import normalize

    return normalize(text)


def pool_exclusion_mask(
    own_options: Sequence[Sequence[str]],
    pool_options: Sequence[str],
    *,
    normalize: Callable[[str], str] | None = None,
    own_sources: Sequence[str] | None = None,
    pool_sources: Sequence[str] | None = None,
) -> np.ndarray:
    """Boolean ``(N, K)``: True where pool option k must not be used with question i.

    A pair is excluded when the normalized pool option equals one of the question's own normalized
    options (the paper: "none of the options in O_A was identical to any of the original options").
    ``normalize`` defaults to :func:`robust_mrc.data.text.normalize` (lower case, word
    characters only, white space collapsed), the rule :class:`~robust_mrc.attacks.pools.OptionPool`
    uses for duplicates. With ``own_sources`` (one key per question, e.g. a passage key) and
    ``pool_sources`` (one per pool option), a pair is also excluded when both keys are non-empty
    and equal (the paper: the option must come from a question about another passage).
    """
    norm = normalize or _default_normalize
    n, k = len(own_options), len(pool_options)
    excluded = np.zeros((n, k), dtype=bool)
    where: dict[str, list[int]] = {}
    for j, opt in enumerate(pool_options):
        where.setdefault(norm(opt), []).append(j)
    for i, opts in enumerate(own_options):
        for opt in opts:
            cols = where.get(norm(opt))
            if cols:
                excluded[i, cols] = True
    if (own_sources is None) != (pool_sources is None):
        raise ValueError("give both own_sources and pool_sources, or neither")
    if own_sources is not None:
        if len(own_sources) != n or len(pool_sources) != k:
            raise ValueError(f"own_sources needs {n} keys and pool_sources {k}")
        by_source: dict[str, list[int]] = {}
        for j, src in enumerate(pool_sources):
            if src:
                by_source.setdefault(src, []).append(j)
        for i, src in enumerate(own_sources):
            cols = by_source.get(src) if src else None
            if cols:
                excluded[i, cols] = True
    return excluded


def pool_admissible_mask(own_options: Sequence[Sequence[str]], pool_options: Sequence[str], **kwargs) -> np.ndarray:
    """``~pool_exclusion_mask(...)``: True where the pair may be counted (pass as ``mask=``)."""
    return ~pool_exclusion_mask(own_options, pool_options, **kwargs)


def rank_pool(options: Sequence[str], T) -> list[tuple[str, float]]:
    """``[(option, T_k), ...]`` by decreasing ``T_k``; ties keep the pool order; NaN scores last."""
    scores = np.asarray(T, dtype=np.float64).reshape(-1)
    if len(options) != len(scores):
        raise ValueError(f"{len(options)} options but {len(scores)} scores")
    order = sorted(range(len(scores)), key=lambda j: (bool(np.isnan(scores[j])), -scores[j] if not np.isnan(scores[j]) else 0.0, j))
    return [(options[j], float(scores[j])) for j in order]


def _one_line(option: str) -> str:
    return " ".join(str(option).split())


def write_ranked_pool(path: str | Path, ranked: Sequence[tuple[str, float]], top: int | None = None) -> Path:
    """Write ``ranked`` (from :func:`rank_pool`, best first; the first ``top`` only when given)
    atomically as ``.jsonl`` (option, T, rank) or ``.txt`` (options only); see the module
    docstring for both formats. Any other suffix raises ``ValueError`` (the pool loader would not
    read it as a list of options)."""
    path = Path(path)
    rows = list(ranked)[: top if top is not None else None]
    if path.suffix == ".jsonl":
        lines = []
        for r, (opt, t) in enumerate(rows, 1):
            t = float(t)
            lines.append(json.dumps({"option": str(opt), "T": None if math.isnan(t) else t, "rank": r}, ensure_ascii=False))
        return atomic_write_text(path, "".join(line + "\n" for line in lines))
    if path.suffix == ".txt":
        opts = [_one_line(opt) for opt, _ in rows]
        return atomic_write_text(path, "".join(o + "\n" for o in opts if o))
    raise ValueError(f"{path}: a ranked pool is written as .jsonl (options with scores) or .txt (options only)")


def read_ranked_pool(path: str | Path) -> list[tuple[str, float]]:
    """The ``[(option, T), ...]`` of a file written by :func:`write_ranked_pool` (file order;
    ``T`` is NaN for a ``.txt`` file or a null score)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        out = []
        for line in text.splitlines():
            if line.strip():
                rec = json.loads(line)
                t = rec.get("T")
                out.append((rec["option"], float("nan") if t is None else float(t)))
        return out
    return [(line.strip(), float("nan")) for line in text.splitlines() if line.strip()]


def plot_sorted_scores(T, path: str | Path, *, title: str | None = None) -> Path:
    """PNG of the interference scores sorted in decreasing order (Lin, Zou & Ding 2021, Figure 2).

    ``T`` is one score array or a mapping ``{model name: scores}`` (one curve each); NaN scores
    are left out. The x axis is the rank of the option, the y axis ``T_k`` in [0, 1].
    """
    curves = dict(T) if isinstance(T, Mapping) else {"": T}
    fig, ax = new_figure()
    for name, scores in curves.items():
        s = np.asarray(scores, dtype=np.float64).reshape(-1)
        s = np.sort(s[~np.isnan(s)])[::-1]
        ax.plot(np.arange(1, len(s) + 1), s, label=name or None, linewidth=1.2)
    ax.set_xlabel("pool option (sorted by interference score)")
    ax.set_ylabel("interference score $T_k$")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title or "Interference scores of the option pool")
    ax.grid(alpha=0.3)
    if any(curves):
        ax.legend(fontsize=8)
    return save_png(fig, path)
