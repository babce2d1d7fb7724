"""Cloze questions (RACE style): the one rule that puts an option into a question's blank.

The model's input (:mod:`robust_mrc.datamodules.mc`) and the attacks' sentences built from a
question and an option (:mod:`robust_mrc.attacks.mc`) both call :func:`fill_blank`, so the model
sees the same text the attacks reason about.

A blank is a run of underscores, possibly split by spaces: ``_``, ``____`` and ``_ _ _`` are one
blank each. Only the first blank is filled: RACE questions with two blanks (6 of the 805 cloze
questions of RACE-M validation, e.g. "Her favorite food is _ and _ .") have options that hold
both answers ("noodles; meat"), which then stand at the first blank while the second stays ``_``.
"""

from __future__ import annotations

import re

BLANK_RE = re.compile(r"_+(?:\s*_+)*")


def has_blank(question: str) -> bool:
    """True when the question has a cloze blank."""
    return BLANK_RE.search(question) is not None


def fill_blank(question: str, option: str) -> str:
    """The question with ``option`` (stripped) in place of its first blank; without a blank, the
    question and the option joined by one space."""
    option = option.strip()
    if has_blank(question):
        return BLANK_RE.sub(lambda _: option, question, count=1)
    return f"{question.rstrip()} {option}".lstrip()
