"""The attacks' text editing: sentence spans (abbreviations are no sentence end), insertion at a
sentence boundary with the answer offsets' shift, casing, content words and their stems."""

from __future__ import annotations

import functools
import re

from robust_mrc.attacks.resources import ABBREVIATIONS, STOPWORDS, stem
from robust_mrc.data.text import words

# a sentence ends after . ! ? (and closing quotes / brackets) followed by white space
_SENT_END_RE = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s)|\n\s*\n")


_WORD_BEFORE_DOT_RE = re.compile(r"(\w+)\.$")
_SPACES_RE = re.compile(r"\s*")  # \s: the characters str.isspace() takes
_NOT_SPACE_RE = re.compile(r"\S")
_SENT_END_START_RE = re.compile(r"[.!?\n]")  # the characters a sentence end (_SENT_END_RE) starts with


def _sentence_ends(text: str):
    """The matches of ``_SENT_END_RE.finditer(text)``, found faster: a match can start only at one
    of ``. ! ?`` or a line break, so the full pattern is tried there alone."""
    last = 0
    for c in _SENT_END_START_RE.finditer(text):
        if c.start() < last:
            continue
        m = _SENT_END_RE.match(text, c.start())
        if m is not None:
            yield m
            last = m.end()


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text``; they cover the text except white space between."""
    return list(_sentence_spans(text))


@functools.lru_cache(maxsize=512)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """:func:`sentence_spans`, once per text (the questions of a passage share it)."""
    spans, start = [], 0
    for m in _sentence_ends(text):
        end = m.end()
        if text[m.start()] == ".":
            before = _WORD_BEFORE_DOT_RE.search(text[max(0, m.start() - 12) : m.start() + 1])
            if before and (before.group(1).lower() in ABBREVIATIONS or len(before.group(1)) == 1):
                continue  # "Mrs. Green", "J. Smith": not a sentence end
        if _NOT_SPACE_RE.search(text, start, end):  # text[start:end].strip()
            spans.append((start, end))
        start = _SPACES_RE.match(text, end).end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    # strip leading white space of each span
    return tuple((_SPACES_RE.match(text, s, e).end(), e) for s, e in spans)


def sentence_boundaries(text: str) -> list[int]:
    """Positions where a new sentence may be inserted: each sentence start and the end of the text."""
    return list(_sentence_boundaries(text))


@functools.lru_cache(maxsize=512)
def _sentence_boundaries(text: str) -> tuple[int, ...]:
    spans = _sentence_spans(text)
    return tuple(sorted({s for s, _ in spans} | {len(text.rstrip())})) if spans else (0,)


def insert_at(text: str, pos: int, sentence: str) -> tuple[str, int, int]:
    """Insert ``sentence`` at boundary ``pos``; return (new text, offset of the sentence, shift).

    ``shift`` is how far every character at or after ``pos`` moved. White space is added so that
    the sentence is separated from its neighbours by one space.
    """
    sentence = sentence.strip()
    before, after = text[:pos], text[pos:]
    if not before.strip():  # at the start
        new = sentence + " " + text
        return new, 0, len(sentence) + 1
    if not after.strip():  # at the end
        sep = "" if before.endswith((" ", "\n")) else " "
        new = before + sep + sentence + after
        return new, len(before) + len(sep), len(sep) + len(sentence)
    # in the middle, at a sentence start (text[pos-1] is white space)
    new = before + sentence + " " + after
    return new, len(before), len(sentence) + 1


def match_case(template: str, word: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def content_words(text: str) -> list[str]:
    """Lower-case non-stopword words."""
    return [w.lower() for w in words(text) if w.lower() not in STOPWORDS]


def stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}
