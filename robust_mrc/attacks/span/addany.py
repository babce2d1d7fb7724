"""AddAny and AddCommon for span QA (Jia & Liang 2017, section 3.2): word sequences found by local
search against the model; and ``random_words``, AddCommon's model-free stand-in.

The search (:meth:`_WordSearch.search`, driven by :func:`robust_mrc.attacks.search.run_search`):

1. ``words`` (10) words drawn at random from the ``vocabulary`` (1000) most common English words
   (the paper: the Brown corpus; here the most frequent lemmas of WordNet's SemCor counts, a part
   of the Brown corpus, see ``resources.common_words``), appended to the paragraph as one sentence.
2. ``epochs`` (6) epochs of greedy coordinate search; each epoch visits the positions in a random
   order; at each position the candidates are ``candidates`` (20) random common words plus every
   word of the question (AddCommon: common words only); each candidate sequence is added to the
   paragraph and the model queried for its distribution over answers (a softmax over its n-best
   span scores); the position takes the word that minimises the expected F1 of that distribution
   (kept when no candidate does better).
3. It returns as soon as the model's argmax answer has F1 0. When it has not stopped after
   ``restart_epoch`` (3) epochs, ``restarts`` (4) more random sequences join and are searched in
   parallel (the paper's schedule).
4. ``budget`` caps the model queries per example (the paper's schedule can issue ~5,000); when it
   is spent the search returns the best sequence so far (lowest expected F1).

What they promise: answer offsets right (the sentence is appended); no tried sequence contains a
gold answer (such candidates are skipped). Neither has a model-free form: their ``apply`` raises
:class:`AttackUnavailable`. ``random_words`` is the model-free stand-in under its own name: the
search's initial random sequence only (``words`` random common words appended), no model queried.
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, AttackUnavailable, register
from robust_mrc.attacks.span.common import contains_answer, insert_sentence, insertion_point
from robust_mrc.data.text import WORD_RE
from robust_mrc.metrics import question_f1
from robust_mrc.papers import cite


def expected_f1(prediction, golds, metric: str = "squad_v1") -> float:
    """``sum p(a) F1(a, golds)`` over the model's n-best answers ``a`` (0 for no answer)."""
    return sum(p * question_f1(metric, text, golds) for text, p in prediction.nbest)


def argmax_f1(prediction, golds, metric: str = "squad_v1") -> float:
    return question_f1(metric, prediction.answer, golds)


def random_sequence(ex, vocab, n: int, rng) -> list[str] | None:
    """``n`` words drawn from ``vocab``, redrawn (up to 20 times) while they contain a gold answer; None
    when every draw did."""
    for _ in range(20):
        words = [rng.choice(vocab) for _ in range(n)]
        if not contains_answer(" ".join(words), ex):
            return words
    return None


def question_words(question: str) -> list[str]:
    """The question's words, first occurrence of each (case-insensitive), in order."""
    seen, out = set(), []
    for w in WORD_RE.findall(question):
        if w.lower() not in seen:
            seen.add(w.lower())
            out.append(w)
    return out


class _WordSearch(Attack):
    task = "span"
    paper = cite("jia_liang")
    _common_only = False

    @classmethod
    def defaults(cls):
        return {
            "words": 10,
            "position": "end",
            "vocabulary": 1000,
            "epochs": 6,
            "candidates": 20,
            "restart_epoch": 3,
            "restarts": 4,
            "budget": 2000,
            "metric": "squad_v1",
        }

    def _sequence(self, ex, vocab, rng) -> list[str] | None:
        return random_sequence(ex, vocab, int(self.words), rng)

    def search(self, ex, rng):
        golds = ex.answer_texts
        vocab = list(R.common_words(int(self.vocabulary)))
        if not golds or not vocab:
            return None
        extra = [] if self._common_only else question_words(ex.question)
        pos = insertion_point(ex, self.position, rng)

        def example(words):
            sentence = " ".join(words)
            return insert_sentence(ex, sentence, pos, self.name, sentence)

        def fits(words):
            return not contains_answer(" ".join(words), ex)

        budget = int(self.budget) if self.budget else None
        used = 0
        seqs: list[list[str]] = []
        values: list[float] = []

        def score(requests):  # -> (values, winner or None); ``requests``: candidate word lists
            nonlocal used
            if budget is not None:
                requests = requests[: max(0, budget - used)]
            if not requests:
                return [], None, requests
            preds = yield [example(w) for w in requests]
            used += len(requests)
            vals = [expected_f1(p, golds, self.metric) for p in preds]
            winner = next((w for w, p in zip(requests, preds) if argmax_f1(p, golds, self.metric) == 0.0), None)
            return vals, winner, requests

        first = self._sequence(ex, vocab, rng)
        if first is None:
            return None
        vals, winner, asked = yield from score([first])
        if winner is not None or not asked:
            return example(first)
        seqs, values = [first], vals
        for epoch in range(int(self.epochs)):
            if epoch == int(self.restart_epoch) and int(self.restarts) > 0:
                fresh = [s for s in (self._sequence(ex, vocab, rng) for _ in range(int(self.restarts))) if s is not None]
                vals, winner, asked = yield from score(fresh)
                if winner is not None:
                    return example(winner)
                seqs += asked
                values += vals
            orders = [rng.sample(range(len(s)), len(s)) for s in seqs]
            for step in range(int(self.words)):
                requests, owners = [], []
                for k, s in enumerate(seqs):
                    i = orders[k][step]
                    pool = rng.sample(vocab, min(int(self.candidates), len(vocab))) + extra
                    tried = {s[i].lower()}
                    for word in pool:
                        if word.lower() in tried:
                            continue
                        tried.add(word.lower())
                        cand = s[:i] + [word] + s[i + 1 :]
                        if fits(cand):
                            requests.append(cand)
                            owners.append(k)
                vals, winner, asked = yield from score(requests)
                if winner is not None:
                    return example(winner)
                for k, cand, v in zip(owners, asked, vals):
                    if v < values[k]:
                        seqs[k], values[k] = cand, v
                if budget is not None and used >= budget:
                    return example(seqs[min(range(len(seqs)), key=values.__getitem__)])
        return example(seqs[min(range(len(seqs)), key=values.__getitem__)])


@register
class AddAny(_WordSearch):
    name = "addany"
    description = "append 10 words chosen by local search against the model (common + question words; needs a checkpoint)"

    def apply(self, ex, rng):
        raise AttackUnavailable(
            "addany searches against a model: use it in an evaluation suite with a checkpoint "
            "(evaluate.py suite=squad_adv) or `robust-mrc attacks apply attack=addany ckpt=PATH ...`"
        )


@register
class AddCommon(_WordSearch):
    name = "addcommon"
    _common_only = True
    description = "append 10 common words chosen by local search against the model (common words only; needs a checkpoint)"

    def apply(self, ex, rng):
        raise AttackUnavailable(
            "addcommon searches against a model (Jia & Liang 2017's AddCommon): use it with model: true in an "
            "evaluation suite (evaluate.py suite=squad_adv, set addcommon_model) or `robust-mrc attacks "
            "apply attack=addcommon ckpt=PATH ...`; random_words appends 10 random common words without a model"
        )


@register
class RandomWords(Attack):
    name = "random_words"
    task = "span"
    paper = cite("jia_liang")
    method = "stand-in"
    description = "stand-in for AddCommon without a model: append 10 random common words (no search)"

    @classmethod
    def defaults(cls):
        return {"words": 10, "position": "end", "vocabulary": 1000}

    def resources(self) -> dict[str, str]:
        return {"words": f"{len(R.common_words(int(self.vocabulary)))} common words"}

    def apply(self, ex, rng):
        words = random_sequence(ex, R.common_words(int(self.vocabulary)), int(self.words), rng)
        if words is None:
            return None
        sentence = " ".join(words)
        pos = insertion_point(ex, self.position, rng)
        return insert_sentence(ex, sentence, pos, self.name, sentence)
