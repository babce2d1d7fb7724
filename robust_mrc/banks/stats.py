"""Statistics of a distractor bank over the multiple-choice questions it is meant for (any bank:
DE or DG): coverage, novelty and similarity figures, each beside the same figure for the original
distractors.

A bank distractor is *usable* for a question when the attacks would put it in
(``_replace_wrong`` of ``robust_mrc.attacks.mc.distractors``): taken in bank order, it has a word,
differs (normalized: lower case, punctuation dropped) from the answer and from the usable ones
before it, and at most ``n_options - 1`` are taken. Similarities are token Jaccard similarities
of the normalized texts' word sets (the DG selection measure).

* ``questions``, ``in_bank`` (a record for the id), ``covered`` (at least one usable distractor);
* ``share_full``: share of the questions for which the bank fills every wrong option;
* ``new_per_question``: mean number of usable distractors (0 for a question not covered);
* ``same_as_original``: share of the usable distractors equal to one of the question's own
  original distractors (normalized);
* ``answer_jaccard``: mean similarity of each distractor with the question's answer;
* ``pairwise_jaccard``: per question with 2+ distractors the mean similarity over its pairs, then
  the mean over those questions;
* ``mean_words``: mean number of words of a distractor (and of the answers);
* ``distinct``: distinct distractors (normalized) per distractor over the whole bank; with
  ``most_common``, the commonest one and the share of covered questions it goes into. A generator
  that has not learnt to condition on the question writes the same few options everywhere
  (distinct near 0): :func:`collapse_warning` says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations

from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import jaccard, normalize


def usable_distractors(candidates: Sequence[str], ex: MCExample) -> list[str]:
    """The distractors of ``candidates`` the attacks would put into ``ex`` (see the module doc)."""
    seen = {normalize(ex.answer)}
    out = []
    for cand in candidates:
        key = normalize(cand)
        if key and key not in seen:
            out.append(cand.strip())
            seen.add(key)
        if len(out) == len(ex.options) - 1:
            break
    return out


def token_jaccard(a: str, b: str) -> float:
    return jaccard(set(normalize(a).split()), set(normalize(b).split()))


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


class _Measures:
    """Running lists of one kind of distractors (bank or original)."""

    def __init__(self) -> None:
        self.answer_sim: list[float] = []
        self.pairwise: list[float] = []
        self.words: list[float] = []
        self.texts: Counter = Counter()  # normalized distractor -> questions it goes into

    def add(self, distractors: Sequence[str], answer: str) -> None:
        self.texts.update({normalize(d) for d in distractors})
        self.answer_sim += [token_jaccard(d, answer) for d in distractors]
        self.words += [len(normalize(d).split()) for d in distractors]
        pairs = list(combinations(distractors, 2))
        if pairs:
            self.pairwise.append(sum(token_jaccard(a, b) for a, b in pairs) / len(pairs))


def bank_stats(bank: Mapping[str, Sequence[str]], examples: Sequence[MCExample]) -> dict:
    """The statistics of the module doc for ``bank`` (``{id: distractors}``) over ``examples``."""
    bank_m, orig_m = _Measures(), _Measures()
    in_bank = covered = full = same = 0
    new_counts: list[float] = []
    answer_words: list[float] = []
    for ex in examples:
        originals = [o for i, o in enumerate(ex.options) if i != ex.label]
        orig_m.add(originals, ex.answer)
        answer_words.append(len(normalize(ex.answer).split()))
        entry = bank.get(ex.id)
        in_bank += entry is not None
        new = usable_distractors(list(entry or ()), ex)
        new_counts.append(len(new))
        if not new:
            continue
        covered += 1
        full += len(new) == len(originals)
        own = {normalize(o) for o in originals}
        same += sum(normalize(d) in own for d in new)
        bank_m.add(new, ex.answer)
    n = len(examples)
    top = bank_m.texts.most_common(1)
    return {
        "questions": n,
        "in_bank": in_bank,
        "covered": covered,
        "share_full": round(full / n, 4) if n else None,
        "new_per_question": _mean(new_counts),
        "same_as_original": round(same / len(bank_m.words), 4) if bank_m.words else None,
        "answer_jaccard": {"bank": _mean(bank_m.answer_sim), "original": _mean(orig_m.answer_sim)},
        "pairwise_jaccard": {"bank": _mean(bank_m.pairwise), "original": _mean(orig_m.pairwise)},
        "mean_words": {"bank": _mean(bank_m.words), "original": _mean(orig_m.words), "answer": _mean(answer_words)},
        "distinct": {"bank": _distinct(bank_m), "original": _distinct(orig_m)},
        "most_common": {"text": top[0][0], "share_of_questions": round(top[0][1] / covered, 4)} if top else None,
        "similarity": "token Jaccard of normalized word sets",
    }


def _distinct(m: _Measures) -> float | None:
    return round(len(m.texts) / len(m.words), 4) if m.words else None


def collapse_warning(stats: Mapping, name: str = "bank") -> str | None:
    """A warning when the bank repeats itself (20 covered questions or more): under 10 % distinct
    distractors, or one distractor in more than a quarter of the questions (DREAM's own wrong
    options: 93 % distinct)."""
    distinct, top = (stats.get("distinct") or {}).get("bank"), stats.get("most_common")
    if distinct is None or top is None:
        return None
    if stats["covered"] >= 20 and (distinct < 0.1 or top["share_of_questions"] > 0.25):
        return (
            f"{name}: the distractors repeat themselves ({distinct:.1%} distinct; {top['text']!r} in "
            f"{top['share_of_questions']:.0%} of the questions): the model writing them does not condition on the "
            "question (train it longer, or use a pretrained seq2seq model such as t5-base on a GPU)"
        )
    return None


def format_stats(stats: Mapping, name: str = "bank") -> str:
    """One line of :func:`bank_stats` for a terminal."""
    if not stats["questions"]:
        return f"{name}: no questions"
    aj, pj, mw = stats["answer_jaccard"], stats["pairwise_jaccard"], stats["mean_words"]
    return (
        f"{name}: {stats['covered']}/{stats['questions']} questions covered, "
        f"{stats['share_full']:.1%} with every wrong option new, {stats['new_per_question']} new per question; "
        f"Jaccard with the answer {aj['bank']} (original {aj['original']}), "
        f"pairwise {pj['bank']} (original {pj['original']}); words {mw['bank']} (original {mw['original']}); "
        f"distinct {stats['distinct']['bank']} (original {stats['distinct']['original']})"
    )
