"""Character and word noise for span QA (Wu et al. 2021, section 3.1).

The paper: "we do not perturb the context that contains the answer span". So by default
(``spare="span"``) everything but the gold answer spans may change, the rest of the answer's
sentence included; ``spare="sentence"`` leaves every sentence that holds a gold answer untouched
(what paraphrasing does, since it works per sentence);
``spare="none"`` noises the answers too, at the same rate, and each gold answer becomes the noised
text at its (moved) offsets.

Why ``spare="none"`` exists: a *training* copy that spares the answer leaves the answer as the one
clean stretch of a noised context, and a model trained on such copies learns to pick clean text
(measured in docs/results.md: a char_noise-trained MiniLM scored F1 80.1 on the
noised dev set against 72.7 on the clean one). The test sets keep the paper's rule
(``spare="span"``); the training configs of this project use ``spare="none"`` (robust_mrc/conf/attack).

* ``char_noise``: ``rate`` (25 %) of the non-space characters outside the spared regions are
  replaced by a Unicode look-alike (homoglyphs from Unicode's ``intentional.txt``, see
  ``resources/homoglyphs.py``). One code point for one, so offsets do not move. Only characters
  with a look-alike can be chosen (29 letters with intentional.txt), so the share reached can be
  lower on a text with few of them.
* ``word_noise``: ``rate`` (25 %) of the words outside the spared regions are replaced by their
  nearest word in a distributional space (``vectors=``: a GloVe file, the paper's choice; default
  ``$ROBUST_MRC_VECTORS``, else the offline MiniLM's input embeddings); words without a neighbour (stopwords,
  words of one or two letters, unknown words) are skipped, so the share reached can be lower.

What they promise: every gold answer text is byte-identical (with ``spare="sentence"``, every
sentence that holds one; with ``spare="none"``, the answer is the noised text where it was, a word
that is only partly inside an answer is never replaced); each answer_start still points at its
text (moved by the length changes before it). None when nothing changed.
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.mc.word_replace import replace_words
from robust_mrc.attacks.span.common import SPARE, protector, remap_answers, spared_regions, straddles_an_answer
from robust_mrc.papers import cite


class _Noise(Attack):
    def __init__(self, **params):
        super().__init__(**params)
        if self.params["spare"] not in SPARE:
            raise ValueError(f"attack {self.name!r}: spare must be one of {', '.join(SPARE)}, got {self.params['spare']!r}")


@register
class CharNoise(_Noise):
    name = "char_noise"
    task = "span"
    paper = cite("wu")
    description = "replace 25% of the characters outside the gold answers by homoglyphs"

    @classmethod
    def defaults(cls):
        return {"rate": 0.25, "spare": "span"}

    def resources(self) -> dict[str, str]:
        return {"homoglyphs": R.homoglyph_source()}

    def apply(self, ex, rng):
        table = R.homoglyphs()
        text = ex.context
        free = [True] * len(text)
        for s, e in spared_regions(ex, self.spare, self.name):
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
        context = "".join(chars)  # one code point for one: no offset moves
        answers = remap_answers(ex.answers, [], context)
        return ex.replace(attack=self.name, detail=f"{k} characters", context=context, answers=answers)


@register
class WordNoise(_Noise):
    name = "word_noise"
    task = "span"
    paper = cite("wu")
    description = "replace 25% of the words outside the gold answers by their nearest neighbour"

    @classmethod
    def defaults(cls):
        return {"rate": 0.25, "vectors": None, "spare": "span"}

    def resources(self) -> dict[str, str]:
        return {"neighbours": R.describe(R.neighbours(self.vectors, "distributional"))}

    def apply(self, ex, rng):
        spared = protector(ex, spared_regions(ex, self.spare, self.name))
        straddles = straddles_an_answer(ex)

        def protect(s: int, e: int) -> bool:
            return spared(s, e) or straddles(s, e)

        nb = R.neighbours(self.vectors, "distributional")
        context, n, edits = replace_words(ex.context, rng, nb, float(self.rate), 1, protect=protect)
        if n == 0:
            return None
        return ex.replace(attack=self.name, detail=f"{n} words", context=context, answers=remap_answers(ex.answers, edits, context))
