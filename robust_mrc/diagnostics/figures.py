"""Headless PNG figures shared by the diagnostics and the reports."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from robust_mrc.data.writers import atomic_write_bytes

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def new_figure(width: float = 5.0, height: float = 3.6) -> tuple[Any, Any]:
    """A matplotlib ``(figure, axes)`` on the Agg canvas, without pyplot (no global backend state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def save_png(fig: Any, path: str | Path, dpi: int = 120) -> Path:
    """Render ``fig`` to PNG bytes and write them atomically to ``path`` (parents created)."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    atomic_write_bytes(path, buf.getvalue())
    return Path(path)
