"""The diagnosis set (Si et al. 2021 (AdvRACE), appendix D.2, Table 7).

What it changes: the passage. The question and its correct answer (filled into the ``_`` blank,
or appended) are inserted as one sentence at a random sentence boundary (``position=random``,
default), or at the ``start`` / ``end``. A model that reads gets an *easier* example; a model that
learnt AddSent's artefacts (inserted text is a trap) fails it.

What it promises: question, options and label unchanged.
"""

from __future__ import annotations

from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.editing import insert_at, sentence_boundaries
from robust_mrc.data.cloze import fill_blank, has_blank
from robust_mrc.data.text import as_statement
from robust_mrc.papers import cite


def choose_position(text: str, position: str, rng) -> int:
    bounds = sentence_boundaries(text)
    if position == "start":
        return 0
    if position == "end":
        return len(text)
    if position == "random":
        return rng.choice(bounds)
    raise ValueError(f"position must be 'start', 'end' or 'random', got {position!r}")


@register
class Diagnosis(Attack):
    name = "diagnosis"
    task = "mc"
    paper = cite("advrace")
    probe = True  # AddSent's cue probe: the inserted sentence holds the correct answer
    description = "insert the question filled with its correct answer into the passage (an easier example)"

    @classmethod
    def defaults(cls):
        return {"position": "random"}

    def apply(self, ex, rng):
        body = ex.question.strip()
        if body.endswith("?") and not has_blank(body):
            body = body[:-1].rstrip()
        sentence = as_statement(fill_blank(body, ex.answer))
        pos = choose_position(ex.passage, self.position, rng)
        passage, _, _ = insert_at(ex.passage, pos, sentence)
        return ex.replace(attack=self.name, detail=sentence, passage=passage)
