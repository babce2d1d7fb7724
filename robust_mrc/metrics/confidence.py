"""Model confidence (Wu et al. 2021, section 4.3), pure numpy: used by the span decoder and the
diagnostics.

* Span QA: ``confidence = 1 - (H_n(start) + H_n(end)) / 2`` where ``H_n(p) = H(p) / log n`` is the
  entropy of the start (end) distribution over the ``n`` valid context tokens, normalized by its
  maximum ``log n``: a one-hot distribution gives confidence 1, a uniform one 0. The distributions
  are the softmax of the logits **restricted to the valid tokens** (question, special and padding
  tokens are masked out before the softmax). ``n == 1`` gives confidence 1 (a single choice is
  certain); ``n == 0`` (no context token) gives 0.
* Span QA from top probabilities only (the paper's approximation for models that only report the
  probability of the chosen start and end token): the remaining mass ``1 - p`` is spread evenly
  over the other ``n - 1`` tokens, see :func:`flat_rest_confidence`.
* Multiple choice: the top option probability (:func:`mc_confidence`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["flat_rest_confidence", "mc_confidence", "normalized_entropy", "span_confidence"]


def normalized_entropy(logits, mask=None) -> np.ndarray | float:
    """``H(softmax(logits[mask])) / log n`` over the last axis, ``n`` = valid entries.

    ``logits``: ``(L,)`` or ``(..., L)``; ``mask``: booleans of the same (broadcastable) shape,
    True = valid (default: all valid). Masked entries get probability 0. ``n == 1`` -> 0.0;
    ``n == 0`` -> 1.0 (nothing is known). If every valid logit is ``-inf`` the distribution is
    taken as uniform over the valid entries. Returns a float for 1-D input, else an array ``(...)``.
    """
    x = np.asarray(logits, dtype=np.float64)
    valid = np.ones(x.shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), x.shape)
    valid = valid & ~np.isnan(x)
    n = valid.sum(axis=-1)
    z = np.where(valid, x, -np.inf)
    top = z.max(axis=-1, keepdims=True) if x.shape[-1] else np.full(x.shape[:-1] + (1,), -np.inf)
    posinf = top == np.inf  # rows with +inf logits: the mass is spread evenly over those entries
    z = np.where(posinf, np.where(np.isposinf(z), 0.0, -np.inf), z)
    top = np.where(posinf, 0.0, top)
    degenerate = ~np.isfinite(top)  # every valid logit -inf (or none valid): uniform over the valid
    z = np.where(degenerate & valid, 0.0, z)
    top = np.where(degenerate, 0.0, top)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        e = np.exp(z - top)
        p = e / e.sum(axis=-1, keepdims=True)
        plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        h = -plogp.sum(axis=-1)
        logn = np.log(np.maximum(n, 1))
        hn = np.where(n > 1, h / np.where(n > 1, logn, 1.0), 0.0)
    hn = np.where(n == 0, 1.0, np.clip(hn, 0.0, 1.0))
    return float(hn) if np.ndim(hn) == 0 else hn


def span_confidence(start_logits, end_logits, mask=None) -> np.ndarray | float:
    """Wu et al. 2021's span confidence ``1 - (H_n(start) + H_n(end)) / 2`` (see the module docstring).

    ``start_logits``, ``end_logits``: ``(L,)`` for one window or ``(B, L)`` for a batch of
    windows; ``mask``: True on the context tokens that may start or end an answer (same shape or
    broadcastable; default all). Returns a float in [0, 1] for 1-D input, an array ``(B,)``
    otherwise. ``n == 1`` -> 1.0, ``n == 0`` -> 0.0.
    """
    hs = normalized_entropy(start_logits, mask)
    he = normalized_entropy(end_logits, mask)
    conf = 1.0 - (np.asarray(hs) + np.asarray(he)) / 2.0
    return float(conf) if np.ndim(conf) == 0 else conf


def _flat_rest_entropy(p: float, n: int) -> float:
    if n <= 1:
        return 0.0
    p = min(max(float(p), 0.0), 1.0)
    rest = 1.0 - p
    h = 0.0
    if p > 0:
        h -= p * math.log(p)
    if rest > 0:
        h -= rest * math.log(rest / (n - 1))
    return min(max(h / math.log(n), 0.0), 1.0)


def flat_rest_confidence(p_start: float, p_end: float, n: int) -> float:
    """Span confidence from the probabilities of the chosen start and end tokens only.

    Wu et al. 2021's approximation: the start (end) distribution puts ``p`` on the chosen token and
    ``(1 - p) / (n - 1)`` on each of the other ``n - 1`` context tokens; then
    ``1 - (H_n(start) + H_n(end)) / 2`` as in :func:`span_confidence`. ``n <= 1`` -> 1.0
    (``n == 0`` included: with top probabilities there is always a chosen token).
    """
    if n <= 1:
        return 1.0
    return 1.0 - (_flat_rest_entropy(p_start, n) + _flat_rest_entropy(p_end, n)) / 2.0


def mc_confidence(probs) -> np.ndarray | float:
    """Top option probability: ``max(probs)`` over the last axis (float for one example, an
    array for a ``(B, options)`` batch; NaN entries, e.g. padding, are ignored)."""
    p = np.asarray(probs, dtype=np.float64)
    if p.shape[-1] == 0:
        raise ValueError("mc_confidence needs at least one option probability")
    top = np.nanmax(np.where(np.isnan(p), -np.inf, p), axis=-1)
    return float(top) if np.ndim(top) == 0 else top
