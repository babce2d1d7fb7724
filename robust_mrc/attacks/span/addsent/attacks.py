"""The AddSent attacks for span QA: the candidate sentences, their grammar check, and the registered
attack classes.

A candidate is a declarative sentence (step 3) built from one of step 1's altered questions
(:mod:`.alter`, ``variants`` of them) and one of step 2's fake answers (:mod:`.fakes`, the first
``fakes``): with the spaCy parser, first the statements of :mod:`.syntax` (the question's
dependency parse), then the one of :mod:`.statement`'s shape rules. Each is joined into text,
repaired by rule (:func:`.fluency.repair`: a/an, a doubled word, year ranges and years kept
plausible) and, with the parser, parsed: a verb that disagrees with a subject holding a word the
attack put in (the fake answer's, an altered one) is made to agree, and :func:`.fluency.problems` names what a crowd worker would still fix.
Candidates that hold a gold answer, whose altered question changed no content word outside its
wh-phrase, or that open with a verb, adjective or adverb fake answer as their subject, are dropped.

The candidates are ranked: those the check passed first, then by :func:`.fluency.score`; ties keep
the order they were made in (alteration, fake answer, statement rule). Without the parser (spaCy
absent, ``tagger=heuristic`` or ``grammar=false``) nothing is checked and the order is the
order made.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.span.addsent import fluency
from robust_mrc.attacks.span.addsent.alter import alter_question, content_changed
from robust_mrc.attacks.span.addsent.fakes import NOT_NOUNS, fake_answers
from robust_mrc.attacks.span.addsent.grammar import join_tokens, question_tokens
from robust_mrc.attacks.span.addsent.statement import declarative
from robust_mrc.attacks.span.addsent.syntax import statements as parsed_statements
from robust_mrc.attacks.span.common import contains_answer, insert_sentence, insertion_point
from robust_mrc.data.text import as_statement
from robust_mrc.metrics import question_f1
from robust_mrc.papers import cite


class Candidate(NamedTuple):
    """One candidate sentence: as inserted (``sentence``), as the rules made it (``raw``), the
    repairs that changed it, the problems the parse found (None: not checked) and their score
    (0: passed, or not checked)."""

    sentence: str
    raw: str
    repairs: tuple[str, ...]
    problems: tuple[str, ...] | None
    score: int

    @property
    def passed(self) -> bool | None:
        """Whether the grammar check passed it; None when it was not checked."""
        return None if self.problems is None else not self.problems


def _clean(sentence: str) -> str:
    """Space-joined tokens as a statement: punctuation and 's joined, capitalised, a full stop."""
    sentence = as_statement(re.sub(r"\s+'s\b", "'s", join_tokens(sentence)))
    if sentence.endswith(('"', "'")) and sentence[-2:-1] not in (".", "!", "?"):
        sentence += "."  # a closing quotation mark ends the quote, not the sentence
    return sentence


def uses_parser(tagger=None, grammar: bool = True) -> bool:
    """Whether the candidates are parsed and checked: ``grammar`` and the spaCy tagger in use."""
    return bool(grammar) and R.resolve_tagger(tagger) == "spacy"


def statements(tokens: list[str], answer: str, tagger=None, parse=None) -> list[str]:
    """The raw statements of the question ``tokens`` answered by ``answer``: :mod:`.syntax`'s from
    ``parse`` (the original question's, one token per token; None: none), then :mod:`.statement`'s
    (empty tokens, words an alteration took out, left out)."""
    out = parsed_statements(parse, tokens, answer) if parse is not None else []
    return [*out, declarative([t for t in tokens if t], answer, tagger)]


def check(raws: list[str], marks: list, parser: bool) -> list[Candidate]:
    """The raw sentences tidied, repaired and (``parser``) parsed and judged; ``marks``: for each,
    the words the attack put in (a subject holding one decides its verb's number)."""
    tidy = [_clean(r) for r in raws]
    repaired = [fluency.repair(t) for t in tidy]
    if not parser:
        return [Candidate(s, t, rep, None, 0) for t, (s, rep) in zip(tidy, repaired)]
    from robust_mrc.attacks.resources.spacy_tagger import parse_texts

    parses = parse_texts([s for s, _ in repaired])
    agreed = [fluency.repair_agreement(s, p, m) for (s, _), p, m in zip(repaired, parses, marks)]
    again = dict(zip([a for a in agreed if a], parse_texts([a for a in agreed if a])))
    out = []
    for t, (s, rep), p, a in zip(tidy, repaired, parses, agreed):
        if a:
            s, p, rep = a, again[a], (*rep, "agreement")
        found = fluency.problems(p)
        out.append(Candidate(s, t, rep, found, fluency.score(found)))
    return out


def best_statement(question: str, answer: str, tagger=None, grammar: bool = True) -> str:
    """The statement of ``question`` as it is, answered by ``answer`` (the cue probe's sentence):
    the best-ranked of its candidates (:func:`statements`, checked as AddSent's are) that still
    holds ``answer``; "" when none does."""
    toks = question_tokens(question)
    parser = uses_parser(tagger, grammar)
    parse = None
    if parser:
        from robust_mrc.attacks.resources.spacy_tagger import parse as parse_tokens

        parse = parse_tokens(tuple(toks))
    raws = list(dict.fromkeys(statements(toks, answer, tagger, parse)))
    marks = {w for w in answer.split() if w.lower() not in R.STOPWORDS}
    held = [c for c in check(raws, [marks] * len(raws), parser) if answer.lower() in c.sentence.lower()]
    return sorted(held, key=lambda c: -c.score)[0].sentence if held else ""


def candidates(
    ex, mod: bool = False, variants: int = 2, vectors=None, tagger=None, fakes: int = 2, grammar: bool = True, first_passing: bool = False
) -> list[Candidate]:
    """The candidate sentences of ``ex`` ranked best first (see the module); none holds a gold
    answer. ``first_passing``: stop at the first candidate the check passes (the same first
    candidate, fewer parses)."""
    if not ex.answers:
        return []
    parser = uses_parser(tagger, grammar)
    toks = question_tokens(ex.question)
    parse = None
    if parser:
        from robust_mrc.attacks.resources.spacy_tagger import parse as parse_tokens

        parse = parse_tokens(tuple(toks))
    fake_list = fake_answers(ex.answers[0].text, ex.question, mod=mod, tagger=tagger)[:fakes]
    raws: list[tuple[str, set[str]]] = []
    seen: set[str] = set()
    for v in range(variants):
        alt, changed = alter_question(toks, variant=v, vectors=vectors, tagger=tagger)
        if not changed or not content_changed(toks, alt, tagger):
            continue
        altered = {a for a, t in zip(alt, toks) if a != t}
        for fake in fake_list:
            for raw in statements(alt, fake, tagger, parse):
                key = " ".join(raw.split())
                if fake.lower() in NOT_NOUNS and key.lower().startswith(fake.lower()):
                    continue  # "Jumped was happening to ...": a verb or adjective as the subject
                if key and key not in seen:
                    seen.add(key)
                    raws.append((raw, {m for m in altered | set(fake.split()) if m.lower() not in R.STOPWORDS}))
    out: list[Candidate] = []
    step = 4 if first_passing and parser else len(raws)
    for k in range(0, len(raws), max(step, 1)):
        batch = raws[k : k + step]
        for c in check([r for r, _ in batch], [f for _, f in batch], parser):
            if c.sentence and not contains_answer(c.sentence, ex) and c.sentence not in (o.sentence for o in out):
                out.append(c)
        if first_passing and any(c.passed for c in out):
            break
    return sorted(out, key=lambda c: -c.score)  # stable: ties keep the order made


class _Question(NamedTuple):
    """What :func:`candidates` reads of an example (its question and gold answers): a cache key."""

    question: str
    answers: tuple


@R.depends_on_resources
@functools.lru_cache(maxsize=20_000)
def _candidates_of(q: _Question, mod, variants, vectors, tagger, fakes, grammar, first_passing) -> tuple[Candidate, ...]:
    return tuple(candidates(q, mod, variants, vectors, tagger, fakes, grammar, first_passing))


def candidate_sentences(
    ex, mod: bool = False, variants: int = 2, vectors=None, tagger=None, fakes: int = 2, grammar: bool = True
) -> list[str]:
    """The candidate sentences of ``ex``, best first (:func:`candidates`)."""
    return [c.sentence for c in candidates(ex, mod, variants, vectors, tagger, fakes, grammar)]


def choice_pool(cands: list[Candidate], cap: int | None = None) -> tuple[list[Candidate], bool]:
    """The candidates an attack chooses among: those the check passed, else those of the best
    score (the fall-back, second value True); the first ``cap``. Unchecked candidates all pass."""
    if not cands:
        return [], False
    passed = [c for c in cands if c.passed is not False]
    pool = passed or [c for c in cands if c.score == cands[0].score]
    return pool[:cap] if cap else pool, not passed


class _AddSentBase(Attack):
    task = "span"
    paper = cite("jia_liang")
    _mod = False
    _random = False
    _default_position = "end"

    @classmethod
    def defaults(cls):
        # tagger: auto | spacy | heuristic (None: $ROBUST_MRC_TAGGER, else auto)
        # variants x fakes: the alterations x fake answers the candidates are made of (each with up
        #   to three statement rules), and how many candidates the model-in-the-loop search tries
        # grammar: prefer the candidates spaCy's parse judges grammatical (needs the spaCy tagger)
        return {
            "position": cls._default_position,
            "vectors": None,
            "tagger": None,
            "variants": 3,
            "fakes": 3,
            "metric": "squad_v1",
            "grammar": True,
        }

    def resources(self) -> dict[str, str]:
        grammar = (
            f"parse check ({R.tagger_name(self.tagger)} with its parser)"
            if uses_parser(self.tagger, self.grammar)
            else "none (no grammaticality preference: needs spaCy's parser, the spaCy tagger and grammar=true)"
        )
        return {
            "neighbours": R.describe(R.neighbours(self.vectors, "distributional")),
            "tagger": R.tagger_name(self.tagger),
            "grammar": grammar,
        }

    def _candidates(self, ex, first_passing: bool = False) -> list[Candidate]:
        """:func:`candidates` of ``ex``, worked out once per question, gold answers and settings in a
        process: they draw on nothing random, so a later epoch reuses them (a question's candidates
        cost tens of milliseconds of parsing; choosing among them, microseconds)."""
        settings = (self._mod, int(self.variants), self.vectors, self.tagger, int(self.fakes), bool(self.grammar), first_passing)
        return list(_candidates_of(_Question(ex.question, tuple(ex.answers)), *settings))

    def trace(self, ex, rng):
        """``(attacked example or None, the chosen Candidate or None, whether the choice fell back
        to unchecked-or-failed candidates)``: what :meth:`apply` does, with the choice's facts."""
        cands = self._candidates(ex, first_passing=not self._random)
        pool, fallback = choice_pool(cands)
        if not pool:
            return None, None, False
        chosen = rng.choice(pool) if self._random else pool[0]
        pos = insertion_point(ex, self.position, rng)
        return insert_sentence(ex, chosen.sentence, pos, self.name, chosen.sentence), chosen, fallback

    def apply(self, ex, rng):
        return self.trace(ex, rng)[0]

    def search(self, ex, rng):
        """The model-in-the-loop choice: the candidate sentences the grammar check passed (else
        those of the best score), at most ``variants`` x ``fakes`` of them, each added to the
        paragraph, the model run on each, the one whose argmax answer has the lowest F1 kept (ties:
        the better-ranked candidate). Jia & Liang 2017 choose the same way among up to five
        crowd-edited versions of one sentence; the candidates here are rule-made and rule-repaired."""
        pool, _ = choice_pool(self._candidates(ex), int(self.variants) * int(self.fakes))
        if not pool:
            return None
        pos = insertion_point(ex, self.position, rng)
        examples = [insert_sentence(ex, c.sentence, pos, self.name, c.sentence) for c in pool]
        preds = yield examples
        golds = ex.answer_texts
        scores = [question_f1(self.metric, p.answer, golds) for p in preds]
        return examples[min(range(len(examples)), key=scores.__getitem__)]


@register
class AddSentSpan(_AddSentBase):
    name = "addsent"
    description = "append a rule-made sentence: altered question + fake answer of the same type, the best-judged grammatical candidate"


@register
class AddOneSent(_AddSentBase):
    name = "addonesent"
    _random = True
    description = "append one random candidate AddSent sentence among those judged grammatical (model-free)"


@register
class AddSentMod(_AddSentBase):
    name = "addsentmod"
    _mod = True
    _default_position = "start"
    description = "prepend an AddSent sentence built with other fake answers"
