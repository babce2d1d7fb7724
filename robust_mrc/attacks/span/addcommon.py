"""AddCommon for span QA (seed 001, Jia & Liang), model-free.

AddAny/AddCommon search a 10-word sequence that minimises the model's F1 (model queries). Without
a model, this adds the *initial* sequence of AddCommon: ``words`` (10) random common English words
(the most frequent WordNet/SemCor lemmas; see resources.common_words), as one sentence, at the
``position`` (end by default). The model-guided search belongs to evaluation, which has a model.

What it promises: answer offsets right; the sentence contains no gold answer (resampled up to 20
times, else None).
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.span.common import contains_answer, insert_sentence, insertion_point


@register
class AddCommon(Attack):
    name = "addcommon"
    task = "span"
    paper = "001 Jia & Liang"
    description = "add a sentence of 10 random common English words (no model)"

    @classmethod
    def defaults(cls):
        return {"words": 10, "position": "end", "vocabulary": 1000}

    def apply(self, ex, rng):
        vocab = R.common_words(int(self.vocabulary))
        for _ in range(20):
            sentence = " ".join(rng.choice(vocab) for _ in range(int(self.words)))
            if not contains_answer(sentence, ex):
                break
        else:
            return None
        pos = insertion_point(ex, self.position, rng)
        return insert_sentence(ex, sentence, pos, self.name, sentence)
