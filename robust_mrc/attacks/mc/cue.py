"""Cue probes for multiple choice: the surface mark of an attack family put on the correct option.

An attack marks the wrong side: Distractor Extraction (Si et al. 2021 (AdvRACE), section 3.1)
makes the wrong options passage spans; magnet options (Lin, Zou & Ding 2021) make a wrong option one
written for another passage. A model trained on the attacked copies can learn the mark ("an option
copied from the passage is wrong", "an option the passage does not hold is wrong") instead of
reading. A cue probe builds the same mark on the gold side: a reader holds or gains, a model that
learnt the mark falls. Reports keep the probes out of the attack average and show each one's
score minus clean in their "shortcut" column. (AddSent's probe is ``diagnosis``: the question with
its correct answer written into the passage, placed like AddSent's sentences.)

* ``extraction_cue`` (built like ``de_lexical``, the model-free DE): the wrong options replaced by
  the passage spans :func:`~robust_mrc.attacks.mc.distractors.extract_spans` finds (windows sharing
  question stems, walked with the DE filtering rules), for questions whose correct option is itself
  a passage span (its normalized text occurs in the normalized passage as whole words): then every
  option is copied from the passage, the correct one included, and "copied from the passage" no
  longer tells the answer. Other questions, and those with fewer usable spans than wrong options
  (no backfilling with the originals, which would leave options that are not passage spans): None.
* ``magnet_cue``: the correct option made to look like a magnet option. Each option is scored on its
  own with the passage and the question, so what a model can see of a magnet (an option of another
  passage's question, :mod:`robust_mrc.attacks.mc.options`, always wrong in the attacked copies) is
  an option whose words the passage does not hold. The probe gives the correct option that look
  without changing its text: every passage word that shares a stem with a content word of the
  correct option is replaced by its nearest word (``vectors=``, the nearest-word backend of
  ``word_replace``; the first candidate whose stem is not one of the option's), so the passage states
  the same facts in other words and no longer holds the correct option's words, as it does not hold
  a magnet's. The wrong options keep their ties to the passage. None when no such word has a
  near word.

What they promise: the correct option's text is untouched and still at ``options[label]``; the
question is unchanged; ``extraction_cue`` changes only the wrong options, ``magnet_cue`` only the
passage.
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.editing import match_case, stems
from robust_mrc.attacks.mc.distractors import DELexical, _replace_wrong, extract_spans
from robust_mrc.data.text import WORD_RE, normalize
from robust_mrc.papers import cite


def is_passage_span(option: str, passage: str) -> bool:
    """Whether ``option``'s normalized text occurs in ``passage``'s as whole words."""
    norm = normalize(option)
    return bool(norm) and f" {norm} " in f" {normalize(passage)} "


def untie_words(text: str, tied: set[str], nb) -> tuple[str, int]:
    """``text`` with every word whose stem is in ``tied`` replaced by its nearest word in ``nb``
    whose stem is not (case kept; a word with none stays), and the number of words replaced."""
    parts, last, n, chosen = [], 0, 0, {}
    for m in WORD_RE.finditer(text):
        word = m.group()
        low = word.lower()
        if not word.isalpha() or low in R.STOPWORDS or R.stem(low) not in tied:
            continue
        if low not in chosen:
            chosen[low] = next((c for c in nb.neighbours(low, 10) if c.isalpha() and c not in R.STOPWORDS and R.stem(c) not in tied), None)
        if chosen[low] is None:
            continue
        parts += [text[last : m.start()], match_case(word, chosen[low])]
        last, n = m.end(), n + 1
    return "".join(parts) + text[last:], n


@register
class ExtractionCue(DELexical):
    """``de_lexical``'s spans and settings (``top``), put on the gold side."""

    name = "extraction_cue"
    probe = True
    method = "probe"  # the project's construction, built like the paper's attack
    description = (
        "cue probe built like DE (de_lexical): where the correct option is a passage span, the wrong options "
        "replaced by passage spans, so every option is copied from the passage"
    )

    def apply(self, ex, rng):
        if not is_passage_span(ex.answer, ex.passage):
            return None
        answer = normalize(ex.answer)
        spans = list({normalize(s): s for s in extract_spans(ex, int(self.top)) if normalize(s) != answer}.values())
        if len(spans) < len(ex.options) - 1:
            return None
        return _replace_wrong(ex, spans, self.name, "passage spans, the correct option one too")


@register
class MagnetCue(Attack):
    name = "magnet_cue"
    task = "mc"
    paper = cite("magnet")
    probe = True
    method = "probe"  # the project's construction, built like the paper's attack
    description = (
        "cue probe built like magnet options: the passage words the correct option shares replaced by near "
        "words, so the correct option, like a magnet, holds no word of the passage"
    )

    @classmethod
    def defaults(cls):
        return {"vectors": None}

    def resources(self) -> dict[str, str]:
        return {"neighbours": R.describe(R.neighbours(self.vectors))}

    def apply(self, ex, rng):
        tied = stems(ex.answer)
        if not tied:
            return None
        passage, n = untie_words(ex.passage, tied, R.neighbours(self.vectors))
        if n == 0:
            return None
        return ex.replace(
            attack=self.name, detail=f"{n} passage words sharing a stem with the correct option replaced by near words", passage=passage
        )
