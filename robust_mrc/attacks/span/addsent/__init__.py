"""AddSent, AddOneSent and AddSentMod for span QA (Jia & Liang 2017), without CoreNLP.

What they change: the context only: one distracting sentence is added. It is built in three
rule-based steps (a POS tagger -- spaCy where installed, else a heuristic; ``tagger=`` -- and
regular expressions over the question's shape stand in for CoreNLP's NER and parses; no
crowdworker fixes grammar), one module each:

1. :mod:`.alter` -- alter the question: special swaps (largest<->smallest, US<->UK, ...), WordNet
   antonyms (first synset, single words) of nouns and adjectives, nearest words for proper nouns,
   another first digit for numbers, a fixed name per entity type as fall-back. A candidate whose
   stem is a prefix of the original's (or the reverse) or that already occurs in the question is
   rejected. Nothing changed: None.
2. :mod:`.fakes` -- fake answers of the gold answer's type by ordered rules (every match kept, best
   first): year - 25, dates, numbers (1000 < n < 2500: n - 75, else another first digit), number
   words, abbreviations, organisation, location, person (from the answer and the question's
   wh-word), proper-noun phrase, then by the POS of the answer's head (keeping its determiner),
   and a catch-all noun.
3. :mod:`.statement` (+ :mod:`.grammar`) -- turn altered question + fake answer into a declarative
   sentence: one rule per question shape ("what/which NP VP?" -> "The NP of A VP", "when did X
   V?" -> "X V-ed in A", ...), picked from a table by the question's first word.

:mod:`.attacks` holds the candidate sentences and the attacks:

* ``addsent``: the canonical sentence (the paper then picks the candidate that hurts the model
  most, which needs model queries: the project's evaluation can do that on top).
* ``addonesent``: one of the candidate sentences (variants of the alteration and fake answer) at
  random: the paper's model-free adversary.
* ``addsentmod``: other fake answers, and the sentence is *prepended* (answer offsets shift).
``position`` = end | start | random (a sentence boundary not inside an answer) overrides where the
sentence goes.

What they promise: every gold ``answer_start`` still points at its text; the added sentence never
contains a gold answer (case-insensitive); None when no sentence can be built.
"""

from robust_mrc.attacks.span.addsent.alter import alter_question
from robust_mrc.attacks.span.addsent.attacks import AddOneSent, AddSentMod, AddSentSpan, candidate_sentences
from robust_mrc.attacks.span.addsent.fakes import fake_answers
from robust_mrc.attacks.span.addsent.statement import declarative

__all__ = ["AddOneSent", "AddSentMod", "AddSentSpan", "alter_question", "candidate_sentences", "declarative", "fake_answers"]
