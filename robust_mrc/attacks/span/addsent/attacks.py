"""The AddSent attacks for span QA: the candidate sentences and the registered attack classes.

A candidate is step 3's declarative sentence (:mod:`.statement`) built from step 1's altered
question (:mod:`.alter`) and one of step 2's fake answers (:mod:`.fakes`), tidied into a statement;
candidates that contain a gold answer are dropped.
"""

from __future__ import annotations

import re

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.span.addsent.alter import alter_question
from robust_mrc.attacks.span.addsent.fakes import fake_answers
from robust_mrc.attacks.span.addsent.statement import declarative
from robust_mrc.attacks.span.common import contains_answer, insert_sentence, insertion_point
from robust_mrc.data.text import as_statement
from robust_mrc.metrics import question_f1
from robust_mrc.papers import cite


def _clean(sentence: str) -> str:
    sentence = re.sub(r"\s+'s\b", "'s", sentence)
    return as_statement(sentence)


def candidate_sentences(ex, mod: bool = False, variants: int = 2, vectors=None, tagger=None, fakes: int = 2) -> list[str]:
    """Adversarial sentences for ``ex`` (``variants`` alterations of the question x the first
    ``fakes`` fake answers), canonical first; none contains a gold answer."""
    if not ex.answers:
        return []
    out = []
    fake_list = fake_answers(ex.answers[0].text, ex.question, mod=mod, tagger=tagger)
    for v in range(variants):
        toks, changed = alter_question(ex.question, variant=v, vectors=vectors, tagger=tagger)
        if not changed:
            continue
        for fake in fake_list[:fakes]:
            sent = _clean(declarative(toks, fake, tagger))
            if sent and sent not in out and not contains_answer(sent, ex):
                out.append(sent)
    return out


class _AddSentBase(Attack):
    task = "span"
    paper = cite("jia_liang")
    _mod = False
    _random = False
    _default_position = "end"

    @classmethod
    def defaults(cls):
        # tagger: auto | spacy | heuristic (None: $ROBUST_MRC_TAGGER, else auto)
        # variants x fakes: the candidates the model-in-the-loop search tries (alterations x fake answers)
        return {"position": cls._default_position, "vectors": None, "tagger": None, "variants": 3, "fakes": 3, "metric": "squad_v1"}

    def resources(self) -> dict[str, str]:
        return {"neighbours": R.describe(R.neighbours(self.vectors, "distributional")), "tagger": R.tagger_name(self.tagger)}

    def apply(self, ex, rng):
        cands = candidate_sentences(ex, mod=self._mod, vectors=self.vectors, tagger=self.tagger)
        if not cands:
            return None
        sentence = rng.choice(cands) if self._random else cands[0]
        pos = insertion_point(ex, self.position, rng)
        return insert_sentence(ex, sentence, pos, self.name, sentence)

    def search(self, ex, rng):
        """The model-in-the-loop choice: every candidate sentence (``variants`` alterations x
        ``fakes`` fake answers, rule-made) added to the paragraph, the model run on each, the one
        whose argmax answer has the lowest F1 kept (ties: the earlier candidate, the canonical one
        first). Jia & Liang 2017 choose the same way among up to five crowd-edited versions of one
        sentence; the candidates here are not crowd-edited."""
        cands = candidate_sentences(
            ex, mod=self._mod, variants=int(self.variants), vectors=self.vectors, tagger=self.tagger, fakes=int(self.fakes)
        )
        if not cands:
            return None
        pos = insertion_point(ex, self.position, rng)
        examples = [insert_sentence(ex, c, pos, self.name, c) for c in cands]
        preds = yield examples
        golds = ex.answer_texts
        scores = [question_f1(self.metric, p.answer, golds) for p in preds]
        return examples[min(range(len(examples)), key=scores.__getitem__)]


@register
class AddSentSpan(_AddSentBase):
    name = "addsent"
    description = "append a rule-made sentence: altered question + fake answer of the same type"


@register
class AddOneSent(_AddSentBase):
    name = "addonesent"
    _random = True
    description = "append one random candidate AddSent sentence (model-free)"


@register
class AddSentMod(_AddSentBase):
    name = "addsentmod"
    _mod = True
    _default_position = "start"
    description = "prepend an AddSent sentence built with other fake answers"
