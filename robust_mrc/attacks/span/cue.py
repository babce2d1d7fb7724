"""The AddSent cue probe for span QA: AddSent's sentence pointing *at* the gold answer.

Jia & Liang 2017's AddSent adds a sentence made from the altered question and a fake answer: it
resembles the question but answers something else, so a model trained on it can learn "the added
sentence never holds the answer" instead of reading. ``addsent_cue`` builds the sentence the same
way (the same statement rules, repairs and grammar check:
:func:`~robust_mrc.attacks.span.addsent.attacks.best_statement`) from the question **unaltered**
and the **gold** answer, and puts it where ``addsent`` puts
its sentence (``position=end``, appended; ``start`` / ``random`` as AddSent's). A model that reads
finds the answer stated once more and holds or gains; one that learnt to avoid the added sentence
falls: the set is a probe for that shortcut, not an attack (reports keep it out of the attack
average and show it in their "shortcut" column).

What it promises: the gold answers are the original ones, every ``answer_start`` moved with the
insertion and still pointing at its text. With ``answer=passage`` (the probe) the new occurrence of
the answer in the added sentence is not listed: the probe asks whether the model still takes the
answer the passage gave, and SQuAD's scorers compare answer texts, so a prediction of the new
occurrence scores the same. With ``answer=added`` (a training copy, ``attack.balance``) the added
sentence's occurrence is listed first, the span a reader trains on, and the passage's follow: a cue
copy that kept the passage's span as its target would teach once more that the added sentence never
holds the answer. None when the example has no non-empty answer, or no statement keeps its text
(a repair changed it).
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.editing import insert_at
from robust_mrc.attacks.span.addsent.attacks import best_statement, uses_parser
from robust_mrc.attacks.span.common import insert_sentence, insertion_point
from robust_mrc.data.examples import Answer
from robust_mrc.papers import cite

#: addsent_cue's ``answer``: which span leads the gold answers
ANSWERS = ("passage", "added")


def cue_sentence(question: str, answer: str, tagger=None, grammar: bool = True) -> str:
    """AddSent's declarative sentence made from ``question`` as it is and ``answer``."""
    return best_statement(question, answer, tagger, grammar)


@register
class AddSentCue(Attack):
    name = "addsent_cue"
    task = "span"
    paper = cite("jia_liang")
    probe = True
    method = "probe"  # the project's construction, built like the paper's attack
    description = "cue probe built like AddSent: a sentence made from the unaltered question and the gold answer, appended"

    def __init__(self, **params):
        super().__init__(**params)
        if self.answer not in ANSWERS:
            raise ValueError(f"attack {self.name!r}: answer must be one of {', '.join(ANSWERS)}, got {self.answer!r}")

    @classmethod
    def defaults(cls):
        # position: end (appended, as addsent) | start | random; tagger: auto | spacy | heuristic;
        # answer: passage (the gold spans as they were) | added (the added sentence's span first);
        # grammar: prefer the statement spaCy's parse judges grammatical, as addsent does
        return {"position": "end", "tagger": None, "answer": "passage", "grammar": True}

    def resources(self) -> dict[str, str]:
        return {"tagger": R.tagger_name(self.tagger), "grammar": "parse check" if uses_parser(self.tagger, self.grammar) else "none"}

    def apply(self, ex, rng):
        answer = ex.answers[0].text.strip() if ex.answers else ""
        if not answer:
            return None
        sentence = cue_sentence(ex.question, answer, self.tagger, self.grammar)
        if not sentence:
            return None
        pos = insertion_point(ex, self.position, rng)
        new = insert_sentence(ex, sentence, pos, self.name, sentence)
        if self.answer == "passage":
            return new
        at = insert_at(ex.context, pos, sentence)[1]  # where insert_sentence put the (stripped) sentence
        return stated_answer_first(new, sentence.strip(), at, answer)


def stated_answer_first(ex, sentence: str, at: int, answer: str):
    """``ex`` with the ``answer`` stated in its added ``sentence`` (at offset ``at`` of its
    context) listed first among its answers, as the sentence writes it (capitalised at its start),
    the passage's after it; ``ex`` as it is when the sentence does not hold the answer's text."""
    offset = sentence.find(answer)
    if offset < 0:
        offset = sentence.lower().find(answer.lower())
    if offset < 0:
        return ex
    start = at + offset
    return ex.replace(answers=(Answer(ex.context[start : start + len(answer)], start), *ex.answers))
