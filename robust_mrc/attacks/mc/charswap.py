"""CharSwap for multiple choice (Si et al. 2021 (AdvRACE), section 3.4).

What it changes: key words get two adjacent inner letters swapped (first and last letters never
move). Only words of 4+ letters that are not stopwords or digits: every such word of the question,
and (by default, the paper's behaviour) every such word of the passage that also occurs in the
question or the options (same lower-case form or same stem). When the two letters are equal, one
retry at another position. ``question_only=true`` gives the behaviour of the authors' committed
script (passage untouched).

What it promises: options and label untouched. Returns None when no word could be changed.
"""

from __future__ import annotations

import random

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.data.text import WORD_RE
from robust_mrc.papers import cite


def swap_inner(word: str, rng: random.Random) -> str:
    """Swap two adjacent inner letters of ``word`` (len >= 4); retry once when they are equal."""
    for _ in range(2):
        i = rng.randint(1, len(word) - 3)
        if word[i] != word[i + 1]:
            return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word


def _eligible(word: str) -> bool:
    return len(word) >= 4 and word.isalpha() and word.lower() not in R.STOPWORDS


def _swap_words(text: str, rng: random.Random, keep) -> tuple[str, int]:
    parts, last, n = [], 0, 0
    for m in WORD_RE.finditer(text):
        w = m.group()
        if _eligible(w) and keep(w):
            new = swap_inner(w, rng)
            if new != w:
                parts.append(text[last : m.start()])
                parts.append(new)
                last = m.end()
                n += 1
    parts.append(text[last:])
    return "".join(parts), n


@register
class CharSwapMC(Attack):
    name = "charswap"
    task = "mc"
    paper = cite("advrace")
    description = "swap two adjacent inner letters of the key words of question and passage"

    @classmethod
    def defaults(cls):
        return {"question_only": False}

    def apply(self, ex, rng):
        question, nq = _swap_words(ex.question, rng, lambda w: True)
        passage, npas = ex.passage, 0
        if not self.question_only:
            keys = set()
            for text in (ex.question, *ex.options):
                for w in WORD_RE.findall(text):
                    low = w.lower()
                    if low not in R.STOPWORDS and w.isalpha():
                        keys.add(low)
                        keys.add("\0" + R.stem(low))
            passage, npas = _swap_words(ex.passage, rng, lambda w: w.lower() in keys or ("\0" + R.stem(w.lower())) in keys)
        if nq + npas == 0:
            return None
        return ex.replace(
            attack=self.name,
            detail=f"{nq} question and {npas} passage words swapped",
            question=question,
            passage=passage,
        )
