"""Embedded synthetic reading-comprehension data: no downloads, deterministic, learnable.

Every passage is a short story (about 40-65 words) about a few people and containers, built
from the word lists and sentence templates below::

    On Monday the weather was windy. Maria lives in Lisbon. Tom lives in Oslo. The red box
    holds seven apples. Tom and Maria met at the museum on Friday. Anna lives in Cairo. ...

and the question asks about one fact ("Where does Tom live?", or the cloze "Tom lives in _ .").
Values of the question's type appear elsewhere in the passage too, in two kinds of sentences:

* **rival facts** of the same relation about other entities ("Maria lives in Lisbon"): telling
  them apart means binding entity and value (the span set uses four such facts);
* **decoys** that name a value of the same type in another relation, often about the same people
  ("Tom flew to Paris for a wedding", "The train from Cairo was late"): telling them apart means
  reading the relation. The multiple-choice default is three decoys and no rival: a reading task
  that MiniLM learns on a CPU in about thirty steps (rivals are learned much later, see
  :func:`make_synthetic_mc`).

So every candidate answer occurs in the passage, and an answer can only be found by reading
which value the passage gives for the question's entity and relation. The vocabulary is small
(a few hundred words); half of the multiple-choice questions are clozes whose filled-in blank
repeats the fact sentence.

* :func:`make_synthetic_mc` -- :class:`MCExample`; the wrong options are the rivals' and decoys'
  values in the same passage.
* :func:`make_synthetic_span` -- :class:`SpanExample`; the answer is the value's span.
* :func:`synthetic_splits` -- disjoint train/validation/test lists.

Generation uses only ``random.Random(seed)`` over lists (never ``hash()`` or set order), so the
output is identical across processes and ``PYTHONHASHSEED``. Within one passage no value and no
entity occurs twice as a whole word, and no two entities share a value of the same attribute.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any

from robust_mrc.data.examples import MAX_OPTIONS, MIN_OPTIONS, Answer, MCExample, SpanExample

__all__ = [
    "ATTRIBUTES",
    "MAX_FACTS",
    "make_synthetic_mc",
    "make_synthetic_span",
    "synthetic_splits",
]

# ----------------------------------------------------------------------------- word lists
# Chosen so that no value is a whole word of another list (no "Rose" the person and "rose" the
# flower, no "Sydney" the person and Sydney the city), and jobs/animals start with a consonant
# ("works as a baker", "has a pet cat").

NAMES = (
    "Maria",
    "Tom",
    "Anna",
    "Peter",
    "Lucy",
    "David",
    "Sara",
    "James",
    "Emma",
    "Omar",
    "Nina",
    "Carlos",
    "Laura",
    "Ivan",
    "Mia",
    "Leo",
    "Hannah",
    "Samuel",
    "Olga",
    "Victor",
    "Julia",
    "Felix",
    "Grace",
    "Hugo",
    "Alice",
    "Paul",
    "Elena",
    "Mark",
    "Zoe",
    "Daniel",
)
CITIES = (
    "Lisbon",
    "Paris",
    "Berlin",
    "Madrid",
    "Rome",
    "Vienna",
    "Prague",
    "Dublin",
    "Oslo",
    "Warsaw",
    "Athens",
    "Cairo",
    "Tokyo",
    "Seoul",
    "Lima",
    "Toronto",
    "Boston",
    "Sydney",
    "Chicago",
    "Denver",
    "Milan",
    "Munich",
    "Zurich",
    "Helsinki",
)
JOBS = (
    "baker",
    "teacher",
    "doctor",
    "farmer",
    "pilot",
    "nurse",
    "driver",
    "painter",
    "writer",
    "dentist",
    "lawyer",
    "singer",
    "tailor",
    "butcher",
    "plumber",
    "chef",
    "banker",
    "barber",
    "builder",
    "poet",
)
ANIMALS = (
    "cat",
    "dog",
    "rabbit",
    "parrot",
    "hamster",
    "turtle",
    "horse",
    "goat",
    "snake",
    "pony",
    "duck",
    "mouse",
    "frog",
    "goldfish",
)
COLOURS = (
    "red",
    "blue",
    "green",
    "yellow",
    "black",
    "white",
    "pink",
    "purple",
    "brown",
    "grey",
    "silver",
)
COUNTS = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
AGES = tuple(str(n) for n in range(19, 80))
CONTAINERS = ("box", "bag", "basket", "bowl", "crate", "jar")
FRUITS = (
    "apples",
    "pears",
    "plums",
    "lemons",
    "peaches",
    "cherries",
    "grapes",
    "mangoes",
    "melons",
    "figs",
)

# Filler vocabulary: disjoint from every value list above.
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEATHER = ("sunny", "cloudy", "windy", "rainy", "cold", "warm", "foggy")
PLACES = ("market", "park", "library", "station", "museum", "harbour", "square", "garden")
CROWDS = ("busy", "quiet", "crowded", "empty", "noisy", "calm")
TIMES = ("morning", "afternoon", "evening")
EVENTS = ("concert", "festival", "parade", "party", "match", "fair")
BUILDINGS = ("church", "school", "castle", "hotel", "theatre", "bridge")


# ----------------------------------------------------------------------------- templates
@dataclass(frozen=True)
class _Attribute:
    """One kind of fact. ``{e}`` entity, ``{v}`` value, ``{x}`` extra slot (the fruit)."""

    name: str
    kind: str  # "person" or "container"
    pool: tuple[str, ...]
    pool_group: str  # values of one group never repeat in a passage (car and box colours)
    fact: str
    questions: tuple[str, ...]
    cloze: str
    # decoys: a value of the same pool in another relation ("Tom flew to Oslo"), never the fact's
    decoys: tuple[str, ...] = ()


_ATTRIBUTE_LIST = (
    _Attribute(
        "city",
        "person",
        CITIES,
        "city",
        "{e} lives in {v}.",
        ("Where does {e} live?", "In which city does {e} live?", "Which city is {e}'s home?"),
        "{e} lives in _ .",
        ("{e} flew to {v} for a wedding.", "{e} has never been to {v}.", "The train from {v} was late."),
    ),
    _Attribute(
        "job",
        "person",
        JOBS,
        "job",
        "{e} works as a {v}.",
        ("What is {e}'s job?", "What does {e} work as?", "What is the job of {e}?"),
        "{e} works as a _ .",
        ("{e}'s uncle is a {v}.", "{e} never wanted to be a {v}.", "The {v} of the town was on holiday."),
    ),
    _Attribute(
        "pet",
        "person",
        ANIMALS,
        "animal",
        "{e} has a pet {v}.",
        ("What pet does {e} have?", "Which animal is {e}'s pet?", "What kind of pet does {e} have?"),
        "{e} has a pet _ .",
        ("{e} is afraid of the neighbour's {v}.", "{e} saw a {v} in the park.", "The shop sold a {v} on Monday."),
    ),
    _Attribute(
        "car",
        "person",
        COLOURS,
        "colour",
        "{e} drives a {v} car.",
        ("What colour is {e}'s car?", "What colour car does {e} drive?", "Which colour is the car of {e}?"),
        "{e} drives a _ car .",
        ("{e} painted the fence {v}.", "{e} wore a {v} hat.", "The old bus was {v}."),
    ),
    _Attribute(
        "age",
        "person",
        AGES,
        "age",
        "{e} is {v} years old.",
        ("How old is {e}?", "What is the age of {e}?", "How many years old is {e}?"),
        "{e} is _ years old .",
        ("{e} has lived here for {v} years.", "{e} read {v} pages last night.", "The bridge was built {v} years ago."),
    ),
    _Attribute(
        "count",
        "container",
        COUNTS,
        "count",
        "The {e} holds {v} {x}.",
        ("How many {x} does the {e} hold?", "How many {x} are in the {e}?", "What number of {x} does the {e} hold?"),
        "The {e} holds _ {x} .",
        ("{e} sold {v} {x} at the market.", "There were {v} {x} on the table.", "{e} ate {v} {x} yesterday."),
    ),
)
ATTRIBUTES: dict[str, _Attribute] = {a.name: a for a in _ATTRIBUTE_LIST}
_ATTRIBUTE_NAMES = tuple(a.name for a in _ATTRIBUTE_LIST)

_FILLERS = (
    "On {day} the weather was {weather}.",
    "The {place} was {crowd} that {time}.",
    "Everyone in the town talked about the {event}.",
    "The {event} started late because it was {weather}.",
    "Nobody could find the key to the old {building}.",
    "Later that {time}, the streets near the {building} were {crowd}.",
    "A new {place} opened near the {building} last year.",
    "{n1} and {n2} met at the {place} on {day}.",
    "{n1} usually walks to the {place} after lunch.",
    "{n1} told a long story about the {event}.",
)

_FILLER_WORDS = {
    "day": DAYS,
    "weather": WEATHER,
    "place": PLACES,
    "crowd": CROWDS,
    "time": TIMES,
    "event": EVENTS,
    "building": BUILDINGS,
}
_FILLER_SLOTS = {t: tuple(field for _, field, _, _ in string.Formatter().parse(t) if field) for t in _FILLERS}

MAX_FACTS = 8  # same-type facts (and decoys) per passage; bounded by the smallest value pool
MAX_DECOYS = 3  # decoy templates per attribute
_MIN_WORDS, _MAX_WORDS_GOAL = 40, 55  # short passages: fast steps, little dilution
_CLOZE_RATE = 1 / 2


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


def _make_fact(attr: _Attribute, entity: str, value: str, extra: str) -> _Fact:
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

    def add(self, attr: _Attribute, *, reuse: bool = False) -> _Fact:
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

    def decoy(self, attr: _Attribute, template: str) -> tuple[str, str]:
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
        slots = _FILLER_SLOTS[template]
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
                values[slot] = rng.choice(_FILLER_WORDS[slot])
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
    attr = ATTRIBUTES[rng.choice(_ATTRIBUTE_NAMES)]
    p = _Passage(rng)
    same = [p.add(attr) for _ in range(n_same)]
    others = [a for a in _ATTRIBUTE_NAMES if a != attr.name]
    for _ in range(rng.randint(1, 2)):
        p.add(ATTRIBUTES[rng.choice(others)], reuse=rng.random() < 0.5)
    target = rng.choice(same)
    decoys = [p.decoy(attr, t) for t in rng.sample(attr.decoys, n_decoys)] if n_decoys else []

    sentences: list[str] = [f.sentence for f in p.facts] + [text for text, _ in decoys]
    words = sum(len(s.split()) for s in sentences)
    goal = rng.randint(_MIN_WORDS, _MAX_WORDS_GOAL)
    fillers = list(_FILLERS)
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
        item = _generate(rng, n_same=n_same, cloze=rng.random() < _CLOZE_RATE, n_decoys=num_decoys)
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
