"""Fidelity statistics: what an attack does to a data set, beside the figures its paper publishes.

    robust-mrc attacks stats attack=addsent data=race_middle_validation.jsonl limit=150

:func:`fidelity_stats` runs an attack over examples (the same copies ``apply`` writes: one
``example_rng(seed, epoch, id, attack)`` each) and measures the statistics the paper states for
it, each beside the paper's figure (:data:`PAPER_FIGURES`):

* AddSent (multiple choice, Si et al. 2021 section 3.3): the share of questions whose first
  sentence needed the "not" step (paper: 28.9 %), the share of replacement words that are WordNet
  synonyms of the word they replace (NLTK's synsets, not the attack's own reader; target 0), the
  share of person names replaced by a person name, replacements per sentence, the share with an
  antonym;
* CharSwap (Si et al. 2021 section 3.4): the share of words altered (paper: 7.1 %);
* distractor extraction (Si et al. 2021 section 3.1): token Jaccard of the new options with the
  answer and with each other, the share of questions whose every wrong option is new, the share
  of new options found in the passage;
* span AddSent, AddOneSent, AddSentMod (Jia & Liang 2017; the paper's crowd workers fixed every
  sentence's grammar, so it states no figure): the share of questions attacked, and of the
  sentences chosen the share that a rule repaired (by repair), that spaCy's parse check passed,
  and that were chosen from candidates none of which passed (``addsent_span_stats``);
* every attack: the share of examples changed and of words altered (``attack_stats``).

``robust-mrc attacks stats ... sample=500`` measures a random sample of the data
(``random.Random(sample_seed).sample``) instead of its first ``limit`` examples.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Sequence

from robust_mrc.attacks.apply import attack_example
from robust_mrc.attacks.base import Attack, example_rng
from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import TOKEN_RE, WORD_RE, jaccard, normalize
from robust_mrc.papers import cite

# (attack, task) -> statistic -> (the paper's figure, where it is stated)
PAPER_FIGURES: dict[tuple[str, str], dict[str, tuple[float, str]]] = {
    ("addsent", "mc"): {
        "share_not_step": (0.289, f"{cite('advrace')}, section 3.3"),
        "share_synonym_replacements": (0.0, "the rule: a replacement flips the meaning"),
        "share_names_to_names": (1.0, f"{cite('advrace')}, Figure 1: Everett -> Zimmerman"),
    },
    ("charswap", "mc"): {"share_words_altered": (0.071, f"{cite('advrace')}, section 3.4")},
}


@functools.lru_cache(maxsize=200_000)
def _nltk_senses(word: str) -> frozenset[str]:
    from robust_mrc.attacks import resources as R

    return frozenset(s.name() for s in R.wordnet().synsets(word.lower()))


def wordnet_synonyms(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` share a synset, read with NLTK's WordNet reader."""
    return bool(_nltk_senses(a) & _nltk_senses(b))


def _share(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _person_names(question: str) -> list[str]:
    """Capitalised words of the question that are in the names list and are not its first word
    unless followed by a verb-like lower-case word (a name opening a question: "Jack became ...")."""
    from robust_mrc.attacks import resources as R

    toks = TOKEN_RE.findall(question)
    return [t for i, t in enumerate(toks) if t[:1].isupper() and t.isalpha() and R.name_kinds(t) and t.lower() not in R.STOPWORDS]


def addsent_mc_stats(examples: Sequence, traces: Sequence) -> dict:
    """AddSent's statistics from its :meth:`~robust_mrc.attacks.mc.addsent.AddSentMC.trace` of each example."""
    from robust_mrc.attacks import resources as R

    questions = attacked = needed_not = with_antonym = 0
    replacements = synonym = 0
    names = names_to_names = 0
    changes_per_sentence: list[int] = []
    synonym_cases: list[str] = []
    steps: dict[str, int] = {}
    for ex, (out, sentences) in zip(examples, traces):
        questions += 1
        if out is None:
            continue
        attacked += 1
        first = sentences[0] if sentences else []
        needed_not += any(step == "not" for step, *_ in first)
        with_antonym += any(step == "antonym" for step, *_ in first)
        changes_per_sentence += [len(s) for s in sentences]
        for step, old, new in (change for sentence in sentences for change in sentence):
            steps[step] = steps.get(step, 0) + 1
            if step in ("noun", "name", "entity"):
                replacements += 1
                if R.has_wordnet() and wordnet_synonyms(old, new):
                    synonym += 1
                    synonym_cases.append(f"{old} -> {new}")
        person = set(_person_names(ex.question))
        for _step, old, new in first:
            if old in person:
                names += 1
                names_to_names += bool(R.name_kinds(new))
    return {
        "questions": questions,
        "attacked": attacked,
        "share_not_step": _share(needed_not, attacked),
        "share_antonym_step": _share(with_antonym, attacked),
        "replacement_words": replacements,
        "share_synonym_replacements": _share(synonym, replacements),
        "synonym_replacements": synonym_cases[:20],
        "person_names": names,
        "share_names_to_names": _share(names_to_names, names),
        "changes_per_sentence": round(sum(changes_per_sentence) / max(len(changes_per_sentence), 1), 2),
        # how many changes of each step (number, name, noun: a contrast-set member, entity: a WordNet instance,
        # antonym, not) over every sentence built
        "changes_by_step": dict(sorted(steps.items())),
    }


SPAN_ADDSENT = ("addsent", "addonesent", "addsentmod")


def addsent_span_stats(traces: Sequence) -> dict:
    """Span AddSent's statistics from its :meth:`~robust_mrc.attacks.span.addsent.attacks._AddSentBase.trace`
    of each example: ``(attacked or None, the chosen candidate, whether no candidate passed)``."""
    questions = len(traces)
    chosen = [c for out, c, _ in traces if out is not None]
    attacked = len(chosen)
    repaired = sum(bool(c.repairs) for c in chosen)
    checked = [c for c in chosen if c.passed is not None]
    by_repair: dict[str, int] = {}
    by_problem: dict[str, int] = {}
    for c in chosen:
        for r in c.repairs:
            by_repair[r] = by_repair.get(r, 0) + 1
        for p in c.problems or ():
            by_problem[p] = by_problem.get(p, 0) + 1
    return {
        "questions": questions,
        "attacked": attacked,
        "share_attacked": _share(attacked, questions),
        "share_repaired": _share(repaired, attacked),
        "repairs": dict(sorted(by_repair.items())),
        "grammar_checked": len(checked),
        "share_grammar_passed": _share(sum(bool(c.passed) for c in checked), len(checked)),
        "share_no_candidate_passed": _share(sum(fb for out, _, fb in traces if out is not None), len(checked)),
        "problems_left": dict(sorted(by_problem.items())),
    }


def de_stats(attacked_pairs: Sequence) -> dict:
    """Token Jaccard of the new options with the answer and each other; share fully replaced; share in the passage."""
    n = full = 0
    with_answer: list[float] = []
    pairwise: list[float] = []
    new_total = in_passage = 0
    for ex, new in attacked_pairs:
        n += 1
        wrong = [i for i in range(len(ex.options)) if i != ex.label]
        fresh = [new.options[i] for i in wrong if normalize(new.options[i]) != normalize(ex.options[i])]
        full += len(fresh) == len(wrong)
        ans = set(w.lower() for w in WORD_RE.findall(ex.answer))
        toks = [set(w.lower() for w in WORD_RE.findall(o)) for o in fresh]
        with_answer += [jaccard(t, ans) for t in toks]
        pairwise += [jaccard(a, b) for i, a in enumerate(toks) for b in toks[i + 1 :]]
        passage = " ".join(ex.passage.lower().split())
        new_total += len(fresh)
        in_passage += sum(" ".join(o.lower().split()) in passage for o in fresh)
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
    return {
        "share_all_wrong_options_new": _share(full, n),
        "answer_jaccard": mean(with_answer),
        "pairwise_jaccard": mean(pairwise),
        "share_new_options_in_passage": _share(in_passage, new_total),
    }


def _fields(ex) -> dict[str, str]:
    if isinstance(ex, MCExample):
        return {"passage": ex.passage, "question": ex.question, "options": " ".join(ex.options)}
    return {"passage": ex.context, "question": ex.question}


def _words(text: str) -> list[str]:
    return text.split()


def attack_stats(originals, attacked, failed: int, seconds: float | None = None) -> dict:
    """Share of examples changed, share of words altered, length change, number not attackable."""
    n = len(originals)
    changed = altered = total = added = 0
    lens_before: dict[str, float] = {}
    lens_after: dict[str, float] = {}
    for o, a in zip(originals, attacked):
        fo, fa = _fields(o), _fields(a)
        if fo != fa or (isinstance(o, MCExample) and o.label != a.label):
            changed += 1
        for key in fo:
            wo, wa = _words(fo[key]), _words(fa[key])
            lens_before[key] = lens_before.get(key, 0) + len(wo)
            lens_after[key] = lens_after.get(key, 0) + len(wa)
            total += len(wo)
            if wo == wa:
                continue
            sm = difflib.SequenceMatcher(None, wo, wa, autojunk=False)
            for tag, i1, i2, j1, j2 in sm.get_opcodes():
                if tag in ("replace", "delete"):
                    altered += i2 - i1
                if tag in ("replace", "insert"):
                    added += max(0, (j2 - j1) - (i2 - i1))
    mean = lambda d: {k: round(v / max(n, 1), 2) for k, v in d.items()}  # noqa: E731
    stats = {
        "examples": n,
        "changed": changed,
        "share_changed": round(changed / max(n, 1), 4),
        "not_attackable": failed,
        "share_words_altered": round(altered / max(total, 1), 4),
        "words_added_per_example": round(added / max(n, 1), 2),
        "mean_words_before": mean(lens_before),
        "mean_words_after": mean(lens_after),
        "length_change": {k: round((lens_after[k] - lens_before[k]) / max(n, 1), 2) for k in lens_before},
        "word_unit": "white-space separated tokens",
    }
    if seconds is not None:
        stats["seconds"] = round(seconds, 2)
        stats["examples_per_second"] = round(n / max(seconds, 1e-9), 1)
    return stats


def fidelity_stats(attack: Attack, examples: Sequence, seed: int = 0, epoch: int = 0) -> dict:
    """The statistics of ``attack`` on ``examples`` with the paper's figures beside them."""
    addsent = attack.task == "mc" and attack.name == "addsent"
    span_addsent = attack.task == "span" and attack.name in SPAN_ADDSENT
    if addsent or span_addsent:  # the attacked copies and what made them, from one run (the copies attack_example makes)
        traces = [attack.trace(ex, example_rng(seed, epoch, ex.id, attack.name)) for ex in examples]
        results = [(ex, False) if t[0] is None else (t[0], True) for ex, t in zip(examples, traces)]
    else:
        results = [attack_example(attack, ex, seed, epoch) for ex in examples]
    attacked = [new for new, _ in results]
    failed = sum(not ok for _, ok in results)
    stats = {"attack": attack.name, "task": attack.task, "provenance": attack.provenance()}
    stats.update(attack_stats(list(examples), attacked, failed))
    changed = [(ex, new) for ex, (new, ok) in zip(examples, results) if ok]
    if span_addsent:
        stats.update(addsent_span_stats(traces))
        stats["grammar"] = stats["provenance"]["resources"].get("grammar")
    if addsent:
        stats.update(addsent_mc_stats(examples, traces))
        stats["neighbours"] = stats["provenance"]["resources"].get("neighbours")
    if attack.task == "mc" and attack.name in ("distractor_extraction", "de_lexical"):
        stats.update(de_stats(changed))
    figures = PAPER_FIGURES.get((attack.name, attack.task), {})
    stats["paper_figures"] = {k: {"paper": v, "ours": stats.get(k), "source": src} for k, (v, src) in figures.items()}
    return stats
