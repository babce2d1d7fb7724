"""Multiple choice as span QA, to train the DE span extractor (Si et al. 2021 (AdvRACE), section
3.1; the "Distractor Extraction (DE)" note of ``reference-algorithms.md``, step 1).

Training data: the correct option is inserted into the passage at a random word position, and the
span example's answer is the inserted text at that offset. A word position is the start of a
white-space separated token of the passage, or its end: the option goes before that token,
followed by one space (at the end: after one space). Which position is drawn by
``example_rng(seed, 0, example id, "de_span_data")``: the same seed gives the same file in any
process. The option is inserted with its white space collapsed; the question is the MC question as
it is, cloze questions with their ``_`` blank included (the blank is the one place the model can
learn to fill: the span it learns to find is what would fill it).

Query data (extraction): the unmodified passage and question, with no answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from robust_mrc.attacks.base import example_rng
from robust_mrc.banks import BankError
from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.data.text import normalize
from robust_mrc.data.writers import write_examples

SALT = "de_span_data"
_TOKEN = re.compile(r"\S+")


def insertion_points(passage: str) -> list[int]:
    """Character offsets where an option may be inserted: each token start, and the end."""
    return [m.start() for m in _TOKEN.finditer(passage)] + [len(passage)]


def insert_answer(ex: MCExample, seed: int) -> SpanExample | None:
    """``ex`` as a span example whose answer is its correct option inserted at a random word
    position; None when the option has no word or the question is blank (no training signal; a
    SQuAD reader refuses a blank question)."""
    option = " ".join(ex.answer.split())
    if not normalize(option) or not ex.question.strip():
        return None
    points = insertion_points(ex.passage)
    pos = points[example_rng(seed, 0, ex.id, SALT).randrange(len(points))]
    if pos < len(ex.passage):
        context = ex.passage[:pos] + option + " " + ex.passage[pos:]
        start = pos
    else:
        sep = "" if not ex.passage or ex.passage[-1].isspace() else " "
        context = ex.passage + sep + option
        start = len(ex.passage) + len(sep)
    return SpanExample(id=ex.id, context=context, question=ex.question, answers=(Answer(option, start),))


def query_example(ex: MCExample) -> SpanExample:
    """The unmodified passage and question of ``ex`` as a span example with no answer."""
    return SpanExample(id=ex.id, context=ex.passage, question=ex.question, answers=())


def span_training_data(examples: Iterable[MCExample], seed: int) -> tuple[list[SpanExample], Counter]:
    """The span examples of :func:`insert_answer` and a count of the examples skipped, by reason."""
    out, skipped = [], Counter()
    for ex in examples:
        span = insert_answer(ex, seed)
        if span is None:
            skipped["blank question" if not ex.question.strip() else "answer without a word"] += 1
        else:
            out.append(span)
    return out, skipped


def write_span_data(examples: Iterable[MCExample], path: str | Path, seed: int) -> dict:
    """Write the span training data of ``examples`` as a SQuAD v1.1 file (atomically); return
    ``{"examples": n, "skipped": {reason: n}}``."""
    spans, skipped = span_training_data(examples, seed)
    if not spans:
        raise BankError(f"{path}: none of the multiple-choice examples gives a span example ({dict(skipped)})")
    write_examples(spans, path, "squad")
    return {"examples": len(spans), "skipped": dict(skipped)}
