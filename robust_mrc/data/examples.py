"""Typed, immutable examples: the one currency every room of robust-mrc trades in.

Readers produce them, attacks return new ones (never mutate), datamodules tokenize them.

* :class:`MCExample` -- multiple choice (RACE style): passage, question, 2-5 options, label.
* :class:`SpanExample` -- span QA (SQuAD style): context, question, gold answers with
  character offsets into the context.

Both carry ``edits``: a record of what attacks changed (attack name + a short description), so
that reports and W&B sample tables can show it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

MIN_OPTIONS = 2
MAX_OPTIONS = 5
LETTERS = "ABCDE"


class ExampleError(ValueError):
    """An example that violates its own invariants (label out of range, offset off the text)."""


@dataclass(frozen=True)
class Edit:
    """One change an attack made to an example."""

    attack: str
    detail: str = ""


@dataclass(frozen=True)
class MCExample:
    id: str
    passage: str
    question: str
    options: tuple[str, ...]
    label: int
    edits: tuple[Edit, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        n = len(self.options)
        if not MIN_OPTIONS <= n <= MAX_OPTIONS:
            raise ExampleError(f"example {self.id!r}: {n} options, expected {MIN_OPTIONS}-{MAX_OPTIONS}")
        if not 0 <= self.label < n:
            raise ExampleError(f"example {self.id!r}: label {self.label} out of range for {n} options")

    @property
    def answer(self) -> str:
        return self.options[self.label]

    @property
    def answer_letter(self) -> str:
        return LETTERS[self.label]

    def replace(self, *, attack: str | None = None, detail: str = "", **changes) -> MCExample:
        """A copy with ``changes`` applied; with ``attack`` an :class:`Edit` is recorded."""
        if attack is not None:
            changes["edits"] = self.edits + (Edit(attack, detail),)
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class Answer:
    """A gold answer: its text and the character offset where it starts in the context."""

    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass(frozen=True)
class SpanExample:
    id: str
    context: str
    question: str
    answers: tuple[Answer, ...]
    title: str = ""
    edits: tuple[Edit, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "answers", tuple(self.answers))
        for a in self.answers:
            if a.start < 0 or self.context[a.start : a.end] != a.text:
                raise ExampleError(f"example {self.id!r}: answer {a.text!r} is not at offset {a.start} of the context")

    @property
    def is_impossible(self) -> bool:
        """SQuAD v2.0 unanswerable question."""
        return not self.answers

    @property
    def answer_texts(self) -> list[str]:
        return [a.text for a in self.answers]

    def replace(self, *, attack: str | None = None, detail: str = "", **changes) -> SpanExample:
        if attack is not None:
            changes["edits"] = self.edits + (Edit(attack, detail),)
        return dataclasses.replace(self, **changes)


Example = MCExample | SpanExample


# ----------------------------------------------------------------------------- serialisation
def example_to_dict(ex: MCExample | SpanExample) -> dict:
    """An example as a JSON-able dict (its kind under ``type``); :func:`example_from_dict` reads it back."""
    d = dataclasses.asdict(ex)
    d["type"] = "mc" if isinstance(ex, MCExample) else "span"
    return d


def example_from_dict(d: dict) -> MCExample | SpanExample:
    d = dict(d)
    kind = d.pop("type")
    edits = tuple(Edit(**e) for e in d.pop("edits", ()))
    if kind == "mc":
        return MCExample(**d, edits=edits)
    answers = tuple(Answer(**a) for a in d.pop("answers"))
    return SpanExample(**d, answers=answers, edits=edits)


def examples_digest(examples: Iterable[MCExample | SpanExample]) -> str:
    """A digest of ``examples`` (content and order): what cache keys record of a set of examples."""
    h = hashlib.blake2b(digest_size=12)
    for ex in examples:
        h.update(json.dumps(example_to_dict(ex), sort_keys=True, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()
