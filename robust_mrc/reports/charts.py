"""Inline SVG charts for ``report.html``: bars with intervals (the drop per set) and dots per seed
with their mean and interval (a comparison's policies x sets). Plain strings, no plotting library,
every label escaped; each mark carries its number in ``data-value`` and a ``<title>`` tooltip."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

ROW = 22  # pixels per bar or policy row
LABEL = 170  # pixels for the row labels
PLOT = 360  # pixels for the plot area


def _num(x: float) -> str:
    return f"{x:.4f}"


def _scale(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min([0.0, *values]), max([0.0, *values])
    if math.isclose(lo, hi):
        hi = lo + 1.0
    pad = 0.05 * (hi - lo)
    return lo - (pad if lo < 0 else 0.0), hi + pad


def _open(title: str, width: int, height: int) -> list[str]:
    """The start of a chart: the ``<svg>`` element and its title."""
    return [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="14" class="title">{escape(title)}</text>',
    ]


def _close(lo: float, hi: float, axis: str, height: int) -> list[str]:
    """The end of a chart: the value axis's two ends and its name under the plot."""
    y = height - 6
    return [
        f'<text x="{LABEL}" y="{y}" class="tick">{_num(lo)}</text>',
        f'<text x="{LABEL + PLOT}" y="{y}" text-anchor="end" class="tick">{_num(hi)}</text>',
        f'<text x="{LABEL + PLOT / 2}" y="{y}" text-anchor="middle" class="tick">{escape(axis)}</text>',
        "</svg>",
    ]


def _whisker(ci: Sequence[float], x, y: float, half: float) -> str:
    """An interval ``ci`` at height ``y``: a line between end marks ``2 * half`` high."""
    a, b = x(ci[0]), x(ci[1])
    return (
        f'<path class="whisker" data-lo="{_num(ci[0])}" data-hi="{_num(ci[1])}" '
        f'd="M{a:.1f},{y - half}v{2 * half}M{a:.1f},{y}H{b:.1f}M{b:.1f},{y - half}v{2 * half}"/>'
    )


def _tip(name: str, what: str, ci: Sequence[float] | None) -> str:
    return f"{name}: {what}" + (f" (95% CI {_num(ci[0])} to {_num(ci[1])})" if ci else "")


def bar_chart(rows: Sequence[tuple[str, float, Sequence[float] | None]], *, title: str, axis: str, higher_is_worse: bool = True) -> str:
    """Horizontal bars, one per ``(label, value, interval or None)``, from zero, with the interval
    as a whisker; ``axis`` names the value; bars on the worse side of zero red, the others green
    (``higher_is_worse``: a drop; else a shortcut score). Empty string without rows."""
    rows = [(str(label), float(v), list(ci) if ci else None) for label, v, ci in rows]
    if not rows:
        return ""
    lo, hi = _scale([x for _, v, ci in rows for x in (v, *(ci or ()))])
    x = lambda v: LABEL + (v - lo) / (hi - lo) * PLOT  # noqa: E731
    height = ROW * len(rows) + 46
    parts = _open(title, LABEL + PLOT + 70, height)
    parts.append(f'<line x1="{x(0):.1f}" y1="20" x2="{x(0):.1f}" y2="{height - 24}" class="zero"/>')
    for i, (label, v, ci) in enumerate(rows):
        y = 24 + i * ROW
        left, right = sorted((x(0), x(v)))
        parts.append(f'<text x="{LABEL - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>')
        good = " neg" if (v < 0) == higher_is_worse else ""
        tip = escape(_tip(label, f"{axis} {_num(v)}", ci))
        parts.append(
            f'<rect class="bar{good}" x="{left:.1f}" y="{y + 3}" width="{max(right - left, 0.5):.1f}" '
            f'height="{ROW - 8}" data-label="{escape(label)}" data-value="{_num(v)}"><title>{tip}</title></rect>'
        )
        if ci:
            parts.append(_whisker(ci, x, y + ROW / 2 - 1, 4))
        parts.append(f'<text x="{LABEL + PLOT + 6}" y="{y + 14}" class="value">{_num(v)}</text>')
    return "".join(parts + _close(lo, hi, axis, height))


def dot_chart(title: str, rows: Sequence[tuple[str, Sequence[float], Sequence[float] | None]], *, axis: str) -> str:
    """One panel: a row per ``(name, values, interval or None)``; each value a dot, their mean a
    bar with the interval as a whisker. Empty string without rows."""
    rows = [(str(n), [float(v) for v in vals], list(ci) if ci else None) for n, vals, ci in rows if vals]
    if not rows:
        return ""
    values = [x for _, vals, ci in rows for x in (*vals, *(ci or ()))]
    if min(values) >= 0:  # dots near a common level read better on their own range than from zero
        span = max(values) - min(values) or 1.0
        lo, hi = min(values) - 0.1 * span, max(values) + 0.1 * span
    else:
        lo, hi = _scale(values)
    x = lambda v: LABEL + (v - lo) / (hi - lo) * PLOT  # noqa: E731
    height = ROW * len(rows) + 46
    parts = _open(title, LABEL + PLOT + 20, height)
    for i, (name, vals, ci) in enumerate(rows):
        y = 24 + i * ROW + ROW / 2
        mean = sum(vals) / len(vals)
        parts.append(f'<text x="{LABEL - 6}" y="{y + 4}" text-anchor="end">{escape(name)}</text>')
        if ci:
            parts.append(_whisker(ci, x, y, 5))
        parts.append(
            f'<rect class="mean" x="{x(mean) - 1.5:.1f}" y="{y - 8}" width="3" height="16" data-value="{_num(mean)}">'
            f"<title>{escape(_tip(name, f'mean {_num(mean)} of {len(vals)}', ci))}</title></rect>"
        )
        for v in vals:
            dot = f'<circle class="dot" cx="{x(v):.1f}" cy="{y}" r="3.5" data-value="{_num(v)}">'
            parts.append(f"{dot}<title>{escape(f'{name}: {_num(v)}')}</title></circle>")
    return "".join(parts + _close(lo, hi, axis, height))
