"""The clock of the plain progress lines in logs: ``H:MM:SS``, shared by training / evaluation
(:class:`robust_mrc.trainer.callbacks.LogProgress`) and the model-in-the-loop search
(:func:`robust_mrc.attacks.search.run_search`). No heavy imports: the attacks layer uses it."""

from __future__ import annotations


def clock(seconds: float) -> str:
    """``3725.4`` -> ``"1:02:05"`` (hours not wrapped at a day; negative counts as 0)."""
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
