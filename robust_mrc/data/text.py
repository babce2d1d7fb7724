"""Text helpers of every room: words and tokens with their spans, normalisation for comparing
answers and options, Jaccard overlap, a question written as a statement. (The attacks' editing
helpers, which need word lists: :mod:`robust_mrc.attacks.editing`.)"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*|\d+(?:[.,:]\d+)*")
TOKEN_RE = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*|\d+(?:[.,:]\d+)*|[^\sA-Za-z\d]")


def words(text: str) -> list[str]:
    return WORD_RE.findall(text)


def word_spans(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in WORD_RE.finditer(text)]


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def normalize(text: str) -> str:
    """Lower case, punctuation dropped, white space collapsed: to compare options."""
    return " ".join(re.findall(r"\w+", text.lower()))


def as_statement(text: str) -> str:
    """Capitalised, ending with a full stop (a question mark becomes a full stop)."""
    text = " ".join(text.split())
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = text.rstrip(" ?")
    if not text:
        return text
    if text[-1] not in ".!\"'":
        text += "."
    return text[0].upper() + text[1:]
