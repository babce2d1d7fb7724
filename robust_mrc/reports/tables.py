"""Plain-text tables that are also valid Markdown."""

from __future__ import annotations

from typing import Any


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table (also valid Markdown); None reads ``-``."""
    if not rows:
        return ""
    cols = list(rows[0])
    cells = [[f"{r[c]:.4f}" if isinstance(r[c], float) else "-" if r[c] is None else str(r[c]) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = lambda vals: "| " + " | ".join(v.ljust(w) for v, w in zip(vals, widths)) + " |"  # noqa: E731
    return "\n".join([line(cols), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, cells)]) + "\n"
