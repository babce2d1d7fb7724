"""AddSent, AddOneSent and AddSentMod for span QA (Jia & Liang 2017), without CoreNLP.

What they change: the context only: one distracting sentence is added. It is built in three
rule-based steps (a POS tagger -- spaCy where installed, else a heuristic; ``tagger=`` -- spaCy's
dependency parser and regular expressions stand in for CoreNLP's NER and parses), one module each,
and then checked, since no crowd worker fixes its grammar here (the paper's step 4):

1. :mod:`.alter` -- alter the question: special swaps (largest<->smallest, US<->UK, ...), WordNet
   antonyms (first synset, single words, in use) of nouns and adjectives, nearest words for
   proper nouns (one per name), acronyms and capitalised adjectives, years moved back and another
   first digit for other numbers, a fixed name per entity type as fall-back. A candidate whose
   stem is a prefix of the original's (or the reverse), that already occurs in the question, or
   that WordNet relates to the word (synonym, hypernym, holonym) is rejected. A question with no
   content word changed outside its wh-phrase is not attacked.
2. :mod:`.fakes` -- fake answers of the gold answer's type by ordered rules (every match kept, best
   first): year - 25 (ranges in order), dates, numbers (1000 < n < 2500: n - 75, else another
   first digit), number words, abbreviations, organisation, location, person (from the answer and
   the question's wh-word), proper-noun phrase, then by the POS of the answer's head (keeping its
   determiner), and a catch-all noun.
3. :mod:`.syntax` (with the spaCy parser: the question's dependency parse, its word order undone,
   the answer in the wh-phrase's gap) and :mod:`.statement` (+ :mod:`.grammar`; one rule per
   question shape, "what/which NP VP?" -> "The NP of A VP", "when did X V?" -> "X V-ed in A",
   ...) -- turn altered question + fake answer into declarative sentences.
4. :mod:`.fluency` -- repair what rules can (a/an, a doubled word, year ranges, agreement with a
   subject the attack wrote) and judge the rest from spaCy's parse (one verb root with a subject,
   agreement, nothing dangling).

:mod:`.attacks` makes the candidates (``variants`` alterations x ``fakes`` fake answers x the
statement rules), ranks them (those the check passes first) and holds the attacks:

* ``addsent``: model-free, the best-ranked candidate (the first the check passes); with a model
  (``search``), the candidate among those that pass (else the best-scored) that hurts it most, as
  the paper picks among its crowd-fixed sentences.
* ``addonesent``: one of the candidates that pass (else of the best-scored) at random: the paper's
  model-free adversary.
* ``addsentmod``: other fake answers, and the sentence is *prepended* (answer offsets shift).
``position`` = end | start | random (a sentence boundary not inside an answer) overrides where the
sentence goes. Without the parser (spaCy absent, ``tagger=heuristic``, ``grammar=false``) nothing
is checked and the candidates keep the order they were made in.

What they promise: every gold ``answer_start`` still points at its text; the added sentence never
contains a gold answer (case-insensitive); None when no sentence can be built.
"""

from robust_mrc.attacks.span.addsent.alter import alter_question
from robust_mrc.attacks.span.addsent.attacks import AddOneSent, AddSentMod, AddSentSpan, candidate_sentences
from robust_mrc.attacks.span.addsent.fakes import fake_answers
from robust_mrc.attacks.span.addsent.statement import declarative

__all__ = ["AddOneSent", "AddSentMod", "AddSentSpan", "alter_question", "candidate_sentences", "declarative", "fake_answers"]
