"""Generation of the embedded synthetic data: passages, multiple-choice items, span examples and
disjoint splits (see the package docstring)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from robust_mrc.data.examples import MAX_OPTIONS, MIN_OPTIONS, Answer, MCExample, SpanExample
from robust_mrc.data.synthetic.vocabulary import (
    ATTRIBUTE_NAMES,
    ATTRIBUTES,
    CLOZE_RATE,
    COLOURS,
    CONTAINERS,
    FILLER_SLOTS,
    FILLER_WORDS,
    FILLERS,
    FRUITS,
    MAX_DECOYS,
    MAX_FACTS,
    MAX_WORDS_GOAL,
    MIN_WORDS,
    NAMES,
    Attribute,
)


# ----------------------------------------------------------------------------- generation
@dataclass(frozen=True)
class _Fact:
    attr: str
    entity: str
    value: str
    extra: str
    sentence: str
    value_offset: int  # where the value starts inside ``sentence``


def _fill(template: str, entity: str, value: str, extra: str) -> str:
    return template.format(e=entity, v=value, x=extra)


def _make_fact(attr: Attribute, entity: str, value: str, extra: str) -> _Fact:
    prefix = attr.fact.split("{v}")[0]
    offset = len(prefix.format(e=entity, x=extra))
    sentence = _fill(attr.fact, entity, value, extra)
    assert sentence[offset : offset + len(value)] == value
    return _Fact(attr.name, entity, value, extra, sentence, offset)


class _Passage:
    """Draws entities and values without repetition inside one passage."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: dict[str, list[str]] = {}  # pool group -> values already in the passage
        self.people: list[str] = []
        self.facts: list[_Fact] = []
        self.attrs_of: dict[str, list[str]] = {}

    def _draw(self, group: str, pool: tuple[str, ...]) -> str:
        used = self.used.setdefault(group, [])
        if len(used) >= len(pool):  # unreachable with num_facts <= MAX_FACTS
            raise RuntimeError(f"synthetic generator ran out of distinct {group} values")
        value = self.rng.choice(pool)
        while value in used:
            value = self.rng.choice(pool)
        used.append(value)
        return value

    def new_person(self) -> str:
        name = self._draw("name", NAMES)
        self.people.append(name)
        return name

    def new_container(self) -> str:
        colour = self._draw("colour", COLOURS)
        return f"{colour} {self.rng.choice(CONTAINERS)}"

    def add(self, attr: Attribute, *, reuse: bool = False) -> _Fact:
        entity = None
        if attr.kind == "person":
            if reuse:
                candidates = [p for p in self.people if attr.name not in self.attrs_of.get(p, [])]
                if candidates:
                    entity = self.rng.choice(candidates)
            if entity is None:
                entity = self.new_person()
            extra = ""
        else:
            entity = self.new_container()
            extra = self.rng.choice(FRUITS)
        value = self._draw(attr.pool_group, attr.pool)
        fact = _make_fact(attr, entity, value, extra)
        self.facts.append(fact)
        self.attrs_of.setdefault(entity, []).append(attr.name)
        return fact

    def decoy(self, attr: Attribute, template: str) -> tuple[str, str]:
        """A sentence naming a fresh value of ``attr``'s pool in another relation, and the value.
        Its person is one of the passage's people half of the time (then the question's entity
        may say something else of that value type), else a new one."""
        value = self._draw(attr.pool_group, attr.pool)
        entity = ""
        if "{e}" in template:
            entity = self.rng.choice(self.people) if self.people and self.rng.random() < 0.5 else self.new_person()
        return template.format(e=entity, v=value, x=self.rng.choice(FRUITS)), value

    def filler(self, template: str) -> str | None:
        rng = self.rng
        slots = FILLER_SLOTS[template]
        n_names = ("n1" in slots) + ("n2" in slots)
        if len(self.people) < n_names:
            return None
        values = {}
        if n_names == 2:
            values["n1"], values["n2"] = rng.sample(self.people, 2)
        elif n_names == 1:
            values["n1"] = rng.choice(self.people)
        for slot in slots:
            if slot not in values:
                values[slot] = rng.choice(FILLER_WORDS[slot])
        return template.format(**values)


@dataclass(frozen=True)
class _Item:
    passage: str
    question: str
    answer: str
    answer_start: int
    distractors: tuple[str, ...]  # the other same-type values: rival facts', then decoys'
    attr: str


def _generate(rng: random.Random, *, n_same: int, cloze: bool, n_decoys: int = 0) -> _Item:
    attr = ATTRIBUTES[rng.choice(ATTRIBUTE_NAMES)]
    p = _Passage(rng)
    same = [p.add(attr) for _ in range(n_same)]
    others = [a for a in ATTRIBUTE_NAMES if a != attr.name]
    for _ in range(rng.randint(1, 2)):
        p.add(ATTRIBUTES[rng.choice(others)], reuse=rng.random() < 0.5)
    target = rng.choice(same)
    decoys = [p.decoy(attr, t) for t in rng.sample(attr.decoys, n_decoys)] if n_decoys else []

    sentences: list[str] = [f.sentence for f in p.facts] + [text for text, _ in decoys]
    words = sum(len(s.split()) for s in sentences)
    goal = rng.randint(MIN_WORDS, MAX_WORDS_GOAL)
    fillers = list(FILLERS)
    rng.shuffle(fillers)
    n_fillers = 0
    for template in fillers:
        if n_fillers and words >= goal:
            break
        text = p.filler(template)
        if text is not None:
            sentences.append(text)
            words += len(text.split())
            n_fillers += 1
    rng.shuffle(sentences)

    passage = " ".join(sentences)
    start = 0
    for s in sentences:
        if s == target.sentence:
            break
        start += len(s) + 1
    start += target.value_offset
    assert passage[start : start + len(target.value)] == target.value

    template = attr.cloze if cloze else rng.choice(attr.questions)
    question = _fill(template, target.entity, "", target.extra)
    distractors = tuple(f.value for f in same if f is not target) + tuple(v for _, v in decoys)
    return _Item(passage, question, target.value, start, distractors, attr.name)


def _check_facts(num_facts: int, num_decoys: int = 0) -> None:
    if not isinstance(num_facts, int) or not 1 <= num_facts <= MAX_FACTS:
        raise ValueError(f"num_facts must be an int in 1..{MAX_FACTS}, got {num_facts!r}")
    if not isinstance(num_decoys, int) or not 0 <= num_decoys <= MAX_DECOYS:
        raise ValueError(f"num_decoys must be an int in 0..{MAX_DECOYS}, got {num_decoys!r}")
    if num_facts + num_decoys > MAX_FACTS:
        raise ValueError(f"num_facts + num_decoys must be at most {MAX_FACTS}, got {num_facts} + {num_decoys}")


def _option_range(num_options: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(num_options, int):
        lo = hi = num_options
    else:
        try:
            lo, hi = (int(x) for x in num_options)
        except (TypeError, ValueError):
            raise ValueError(f"num_options must be an int or a (low, high) pair, got {num_options!r}") from None
    if not MIN_OPTIONS <= lo <= hi <= MAX_OPTIONS:
        raise ValueError(f"num_options must lie in {MIN_OPTIONS}..{MAX_OPTIONS} (low <= high), got {num_options!r}")
    return lo, hi


def make_synthetic_mc(
    n: int,
    seed: int = 0,
    *,
    num_options: int | tuple[int, int] = 4,
    num_facts: int = 1,
    num_decoys: int = 3,
) -> list[MCExample]:
    """``n`` multiple-choice examples, ids ``synmc-<seed>-<i>``.

    ``num_options`` is a fixed count or an inclusive ``(low, high)`` range drawn per example.
    ``num_facts`` is the number of same-type facts in each passage (the answer's and its rivals',
    "Maria lives in Lisbon"), ``num_decoys`` the number of decoy sentences naming a value of the
    same type in another relation ("Tom flew to Oslo"); facts are added where the two together
    are fewer than the options. A passage also holds one or two facts of other types. The wrong
    options are drawn from the rival and decoy values, so every option appears in the passage; the
    label is uniform. The defaults (no rival, three decoys: find the question's relation) are
    learned by MiniLM in ~30 CPU steps; rivals (``num_facts=2``: bind entity and value) take
    100+ steps and do not always leave chance in a short run; ``num_facts=4, num_decoys=0``
    (binding only) did not within 400 steps.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    lo, hi = _option_range(num_options)
    _check_facts(num_facts, num_decoys)
    rng = random.Random(seed)
    out: list[MCExample] = []
    for i in range(n):
        k = rng.randint(lo, hi)
        n_same = max(num_facts, k - num_decoys, 1)
        item = _generate(rng, n_same=n_same, cloze=rng.random() < CLOZE_RATE, n_decoys=num_decoys)
        wrong = rng.sample(item.distractors, k - 1)
        label = rng.randrange(k)
        options = wrong[:label] + [item.answer] + wrong[label:]
        out.append(MCExample(f"synmc-{seed}-{i}", item.passage, item.question, tuple(options), label))
    return out


def make_synthetic_span(n: int, seed: int = 0, *, num_facts: int = 4) -> list[SpanExample]:
    """``n`` extractive examples, ids ``synspan-<seed>-<i>``.

    The single gold answer is the value's span; ``num_facts`` (at least 2 are used) same-type
    facts give distractor values of the answer's type in every context.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    _check_facts(num_facts)
    rng = random.Random(seed)
    out: list[SpanExample] = []
    for i in range(n):
        item = _generate(rng, n_same=max(num_facts, 2), cloze=False)
        out.append(
            SpanExample(
                f"synspan-{seed}-{i}",
                item.passage,
                item.question,
                (Answer(item.answer, item.answer_start),),
                title="synthetic",
            )
        )
    return out


_TASKS = {
    "mc": make_synthetic_mc,
    "multiple_choice": make_synthetic_mc,
    "span": make_synthetic_span,
}
_GENERATOR_ARGS = {make_synthetic_mc: ("num_options", "num_facts", "num_decoys"), make_synthetic_span: ("num_facts",)}


def synthetic_splits(task: str, n_train: int, n_val: int, n_test: int, seed: int, **generator: Any) -> dict[str, list]:
    """Disjoint ``{"train", "validation", "test"}`` lists for ``task`` ("mc" or "span").

    ``generator`` holds keyword arguments of the maker (``num_options``, ``num_facts``,
    ``num_decoys`` for "mc"; ``num_facts`` for "span"). Split ``k`` (1, 2, 3) is generated with seed
    ``seed * 1000 + k``, so ids differ across splits; an example whose (passage, question)
    already occurs in an earlier split is skipped and replaced by the next one of its stream.
    """
    try:
        make = _TASKS[task]
    except KeyError:
        raise ValueError(f"unknown synthetic task {task!r}; expected one of {sorted(_TASKS)}") from None
    allowed = _GENERATOR_ARGS[make]
    unknown = sorted(set(generator) - set(allowed))
    if unknown:
        raise ValueError(f"synthetic {task!r} data: unknown generator argument(s) {unknown}; expected {list(allowed)}")
    seen: set[tuple[str, str]] = set()
    splits: dict[str, list] = {}
    for k, (name, size) in enumerate((("train", n_train), ("validation", n_val), ("test", n_test)), 1):
        if size < 0:
            raise ValueError(f"{name} size must be >= 0, got {size}")
        split_seed = seed * 1000 + k
        want = size
        while True:
            pool = make(want, split_seed, **generator)
            kept = [ex for ex in pool if (_text(ex), ex.question) not in seen]
            if len(kept) >= size:
                break
            want += size - len(kept)
        kept = kept[:size]
        seen.update((_text(ex), ex.question) for ex in kept)
        splits[name] = kept
    return splits


def _text(ex: MCExample | SpanExample) -> str:
    return ex.passage if isinstance(ex, MCExample) else ex.context
