"""What an attack changed in a text, as segments a report can mark.

:func:`diff_segments` cuts the attacked text into runs of unchanged and changed words against the
clean text (a word-level diff: inserted sentences, swapped characters show as their changed word,
replaced options as the whole option); :func:`overlay` adds the character spans a report
highlights besides (the gold answer, the predicted spans) as classes of the segments. Segments are
plain data, ``(text, classes)``: the HTML page and the W&B cells escape their text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

INSERTED = "ins"  # in the attacked text, not in the clean one
DELETED = "del"  # in the clean text only (shown struck through)

Segment = tuple[str, tuple[str, ...]]

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


def tokens(text: str) -> list[str]:
    """``text`` as words, whitespace runs and punctuation marks; joined, they give ``text`` back."""
    return _TOKENS.findall(text)


def diff_segments(clean: str, attacked: str) -> list[Segment]:
    """``attacked`` as segments against ``clean``: unchanged runs with no class, what the attack
    put in with :data:`INSERTED`, what it took out (clean text) with :data:`DELETED` just before
    what replaced it. Joining the segments that are not deleted gives ``attacked``."""
    if clean == attacked:
        return [(attacked, ())] if attacked else []
    a, b = tokens(clean), tokens(attacked)
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            _append(out, "".join(b[j1:j2]), ())
            continue
        removed, added = "".join(a[i1:i2]), "".join(b[j1:j2])
        if removed.strip():
            _append(out, removed, (DELETED,))
        if added:
            _append(out, added, (INSERTED,) if added.strip() else ())
    return out


def _append(out: list[Segment], text: str, classes: tuple[str, ...]) -> None:
    if not text:
        return
    if out and out[-1][1] == classes:
        out[-1] = (out[-1][0] + text, classes)
    else:
        out.append((text, classes))


def shown_text(segments: Sequence[Segment]) -> str:
    """The text the segments show (deleted runs left out): the attacked text."""
    return "".join(text for text, classes in segments if DELETED not in classes)


def overlay(segments: Sequence[Segment], spans: Sequence[tuple[int, int, str]]) -> list[Segment]:
    """``segments`` with each ``(start, end, class)`` span (character offsets into
    :func:`shown_text`) added as a class of the characters it covers; deleted runs keep their place."""
    spans = [(s, e, c) for s, e, c in spans if 0 <= s < e]
    if not spans:
        return list(segments)
    out: list[Segment] = []
    pos = 0
    for text, classes in segments:
        if DELETED in classes:
            _append(out, text, classes)
            continue
        cuts = sorted({0, len(text), *(min(max(b - pos, 0), len(text)) for s, e, _ in spans for b in (s, e))})
        for lo, hi in zip(cuts, cuts[1:]):
            extra = tuple(dict.fromkeys(c for s, e, c in spans if s < pos + hi and e > pos + lo))
            _append(out, text[lo:hi], classes + extra)
        pos += len(text)
    return out


def find_span(text: str, answer: str, near: int | None = None) -> tuple[int, int] | None:
    """Where ``answer`` occurs in ``text`` (the occurrence nearest ``near`` when given); None when
    it does not occur (or is empty)."""
    if not answer:
        return None
    starts = [m.start() for m in re.finditer(re.escape(answer), text)]
    if not starts:
        return None
    start = min(starts, key=lambda s: abs(s - near)) if near is not None else starts[0]
    return start, start + len(answer)
