"""Character and word noise for span QA (seed 004, Wu et al.).

* ``char_noise``: ``rate`` (25 %) of the characters of the context outside the answer sentences are
  replaced by Unicode look-alikes (homoglyphs; one code point for one, so offsets do not move).
  The share is of the non-space characters outside the answer sentences; only letters and digits
  with a look-alike can be chosen.
* ``word_noise``: ``rate`` (25 %) of the words outside the answer sentences are replaced by their
  nearest word in the nearest-word backend (``vectors=``); words without a neighbour (stopwords,
  short words, unknown words) are skipped, so the share reached can be lower.

What they promise: every sentence that holds a gold answer is byte-identical; each answer_start
still points at its text (moved by the length changes before it). None when nothing changed.
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.mc.word_replace import replace_words
from robust_mrc.attacks.span.common import answer_sentences, protector, shift_answers


@register
class CharNoise(Attack):
    name = "char_noise"
    task = "span"
    paper = "004 Wu et al."
    description = "replace 25% of the characters outside the answer sentences by homoglyphs"

    @classmethod
    def defaults(cls):
        return {"rate": 0.25}

    def apply(self, ex, rng):
        table = R.homoglyphs()
        protected = answer_sentences(ex)
        text = ex.context
        free = [True] * len(text)
        for s, e in protected:
            for i in range(s, min(e, len(text))):
                free[i] = False
        n_chars = sum(1 for i, ch in enumerate(text) if free[i] and not ch.isspace())
        cands = [i for i, ch in enumerate(text) if free[i] and ch in table]
        k = min(len(cands), round(float(self.rate) * n_chars))
        if k <= 0:
            return None
        chosen = sorted(rng.sample(cands, k))
        chars = list(text)
        for i in chosen:
            chars[i] = table[chars[i]]
        return ex.replace(attack=self.name, detail=f"{k} characters", context="".join(chars))


@register
class WordNoise(Attack):
    name = "word_noise"
    task = "span"
    paper = "004 Wu et al."
    description = "replace 25% of the words outside the answer sentences by their nearest neighbour"

    @classmethod
    def defaults(cls):
        return {"rate": 0.25, "vectors": None}

    def apply(self, ex, rng):
        nb = R.neighbours(self.vectors)
        context, n, edits = replace_words(ex.context, rng, nb, float(self.rate), 1, protect=protector(ex))
        if n == 0:
            return None
        return ex.replace(attack=self.name, detail=f"{n} words", context=context,
                          answers=shift_answers(ex.answers, edits))
