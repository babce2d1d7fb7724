"""Calibration of model confidence (Wu et al. 2021, Figure 2): :func:`high_confidence_error_rate` (high-
vs low-confidence misclassifications), :func:`reliability_bins` (equal-width bins and the expected
calibration error) and :func:`plot_reliability`. The confidence measures themselves are in
:mod:`robust_mrc.metrics.confidence`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robust_mrc.diagnostics.figures import new_figure, save_png

__all__ = ["high_confidence_error_rate", "plot_reliability", "reliability_bins"]


def _as_arrays(conf, correct) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(conf, dtype=np.float64).reshape(-1)
    ok = np.asarray(correct, dtype=bool).reshape(-1)
    if len(c) != len(ok):
        raise ValueError(f"{len(c)} confidences but {len(ok)} correctness flags")
    return c, ok


def high_confidence_error_rate(conf, correct, threshold: float = 0.9, *, among: str = "errors") -> float:
    """The share of high-confidence misclassifications (``conf >= threshold`` and wrong).

    ``among="errors"`` (default, Wu et al. 2021, Figure 2: misclassifications split into high and low
    confidence): divided by the number of wrong predictions -- "how many of the model's errors
    were made confidently"; 0.0 when there is no error. ``among="all"``: divided by the number of
    examples; 0.0 for no example.
    """
    c, ok = _as_arrays(conf, correct)
    wrong = ~ok
    high_wrong = int((wrong & (c >= threshold)).sum())
    if among == "errors":
        denom = int(wrong.sum())
    elif among == "all":
        denom = len(c)
    else:
        raise ValueError(f"among={among!r}: expected 'errors' or 'all'")
    return high_wrong / denom if denom else 0.0


def reliability_bins(conf, correct, n_bins: int = 10) -> dict[str, Any]:
    """Reliability diagram data and the expected calibration error (JSON-ready).

    ``n_bins`` equal-width bins over [0, 1]: bin b holds ``b/n_bins <= conf < (b+1)/n_bins``, the
    last bin also ``conf == 1`` (confidences are clipped to [0, 1] first). Returns::

        {"n": examples, "n_bins": n_bins, "ece": float, "bins": [
            {"lo": float, "hi": float, "count": int,
             "mean_conf": float | None, "accuracy": float | None}, ...]}

    ``mean_conf`` / ``accuracy`` are ``None`` for an empty bin. ``ece = sum_b (count_b / n) *
    |accuracy_b - mean_conf_b|`` over the non-empty bins (0.0 for no example).
    """
    if n_bins < 1:
        raise ValueError("n_bins must be >= 1")
    c, ok = _as_arrays(conf, correct)
    c = np.clip(c, 0.0, 1.0)
    idx = np.minimum(np.floor(c * n_bins).astype(np.int64), n_bins - 1)
    n = len(c)
    bins, ece = [], 0.0
    for b in range(n_bins):
        sel = idx == b
        count = int(sel.sum())
        if count:
            mean_conf, acc = float(c[sel].mean()), float(ok[sel].mean())
            ece += count / n * abs(acc - mean_conf)
        else:
            mean_conf = acc = None
        bins.append({"lo": b / n_bins, "hi": (b + 1) / n_bins, "count": count, "mean_conf": mean_conf, "accuracy": acc})
    return {"n": n, "n_bins": n_bins, "ece": float(ece), "bins": bins}


def plot_reliability(bins: Mapping[str, Any] | Sequence[Mapping[str, Any]], path: str | Path, *, title: str | None = None) -> Path:
    """PNG reliability diagram: accuracy per confidence bin (bars) against the diagonal.

    ``bins`` is the dict :func:`reliability_bins` returns (its ECE goes into the title) or its
    ``"bins"`` list. Empty bins are drawn as gaps; the count of each bin is written above it.
    """
    if isinstance(bins, Mapping):
        rows, ece = list(bins["bins"]), bins.get("ece")
    else:
        rows, ece = list(bins), None
    fig, ax = new_figure(4.4, 4.0)
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="perfect calibration")
    first = min((j for j, x in enumerate(rows) if x["count"]), default=None)
    for i, r in enumerate(rows):
        if not r["count"]:
            continue
        lo, hi = r["lo"], r["hi"]
        ax.bar(
            lo,
            r["accuracy"],
            width=hi - lo,
            align="edge",
            color="tab:blue",
            edgecolor="black",
            alpha=0.75,
            label="accuracy" if i == first else None,
        )
        ax.text((lo + hi) / 2, min(r["accuracy"] + 0.02, 0.97), str(r["count"]), ha="center", fontsize=6)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    head = title or "Reliability"
    ax.set_title(f"{head} (ECE {ece:.3f})" if ece is not None else head)
    ax.legend(fontsize=7, loc="upper left")
    return save_png(fig, path)
