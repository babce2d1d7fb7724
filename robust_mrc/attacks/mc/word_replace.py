"""WordReplace for multiple choice (Si et al. 2021 (AdvRACE), appendix A.1), model-free.

The paper ran SememePSO against RoBERTa (model-dependent) and notes that *random* replacement by
a candidate word is the model-free variant; this is that variant. What it changes: a share
``rate`` (default 0.1) of the non-stopword words of the passage (and of the question with
``question=true``) is replaced by one of their ``k`` nearest words (random choice among them,
``k=1`` = always the nearest), in the nearest-word backend (``vectors=``: a vector file,
"counter-fitted", "wordnet" or "auto"). Case is kept.

What it promises: options and label untouched. None when no word has a neighbour.
"""

from __future__ import annotations

import functools

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.editing import match_case
from robust_mrc.data.text import WORD_RE
from robust_mrc.papers import cite


def replace_words(text: str, rng, nb, rate: float, k: int, protect=None) -> tuple[str, int, list[tuple[int, int, int]]]:
    """Replace ``rate`` of the eligible words of ``text`` by near words; ``protect(start, end)``
    (optional) keeps a word as it is.

    Returns the new text, the number replaced and the edits (start, end, length delta) in the
    original text's coordinates, sorted by start.
    """
    spans, eligible = _words(text)
    if protect is not None:
        eligible = [(s, e, w) for s, e, w in eligible if not protect(s, e)]
        target = round(rate * len([1 for s, e, w in spans if not protect(s, e)]))
    else:
        target = round(rate * len(spans))
    if target <= 0 or not eligible:
        return text, 0, []
    nb.prefetch([w for _, _, w in eligible])
    order = list(range(len(eligible)))
    rng.shuffle(order)
    chosen: dict[int, str] = {}
    for j in order:
        if len(chosen) >= target:
            break
        s, e, w = eligible[j]
        cands = [c for c in nb.neighbours(w.lower(), max(k, 1)) if c.isalpha() and c != w.lower()]
        if not cands:
            continue
        new = cands[0] if k <= 1 else rng.choice(cands[:k])
        chosen[j] = match_case(w, new)
    parts, last, edits = [], 0, []
    for j in sorted(chosen):
        s, e, w = eligible[j]
        parts.append(text[last:s])
        parts.append(chosen[j])
        edits.append((s, e, len(chosen[j]) - (e - s)))
        last = e
    parts.append(text[last:])
    return "".join(parts), len(chosen), edits


@functools.lru_cache(maxsize=256)
def _words(text: str) -> tuple[tuple, tuple]:
    """(every word (start, end, word) of ``text``, those that may be replaced: alphabetic, three
    letters or more, no stopword); once per text (the questions of a passage share it)."""
    spans = tuple((m.start(), m.end(), m.group()) for m in WORD_RE.finditer(text))
    return spans, tuple((s, e, w) for s, e, w in spans if w.isalpha() and len(w) > 2 and w.lower() not in R.STOPWORDS)


@register
class WordReplace(Attack):
    name = "word_replace"
    task = "mc"
    paper = cite("advrace")
    description = "replace a share of passage words by random near neighbours (a stand-in for AdvRACE's SememePSO WordReplace)"
    method = "stand-in"  # AdvRACE appendix A.1 searched replacements with SememePSO against RoBERTa

    @classmethod
    def defaults(cls):
        return {"rate": 0.1, "k": 5, "question": False, "vectors": None}

    def resources(self) -> dict[str, str]:
        return {"neighbours": R.describe(R.neighbours(self.vectors))}

    def apply(self, ex, rng):
        nb = R.neighbours(self.vectors)
        passage, n, _ = replace_words(ex.passage, rng, nb, float(self.rate), int(self.k))
        question, nq = ex.question, 0
        if self.question:
            question, nq, _ = replace_words(ex.question, rng, nb, float(self.rate), int(self.k))
        if n + nq == 0:
            return None
        return ex.replace(attack=self.name, detail=f"{n} passage and {nq} question words replaced", passage=passage, question=question)
