"""The embedded synthetic data: deterministic, well-formed, and answerable only by reading."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from robust_mrc.data import synthetic
from robust_mrc.data.examples import MCExample, SpanExample
from robust_mrc.data.synthetic import make_synthetic_mc, make_synthetic_span, synthetic_splits

REPO = Path(__file__).resolve().parents[2]


def _digest(examples) -> str:
    h = hashlib.sha256()
    for ex in examples:
        h.update(repr(ex).encode())
    return h.hexdigest()


def _words(text: str, word: str) -> int:
    """Whole-word occurrences of ``word`` in ``text``."""
    return len(re.findall(rf"(?<![\w']){re.escape(word)}(?![\w])", text))


# --------------------------------------------------------------- reading the questions
def _template_regex(template: str) -> re.Pattern:
    out = ""
    for part in re.split(r"(\{[evx]\})", template):
        if part == "{e}":
            out += r"(?P<e>[A-Za-z]+(?: [a-z]+)?)"
        elif part == "{x}":
            out += r"(?P<x>[a-z]+)"
        elif part == "{v}":
            out += r"(?P<v>\S+?)"
        else:
            out += re.escape(part)
    return re.compile(out + "$")


_QUESTION_PATTERNS = [(attr, _template_regex(t)) for attr, spec in synthetic.ATTRIBUTES.items() for t in (*spec.questions, spec.cloze)]


def parse_question(question: str) -> tuple[str, str]:
    """(attribute, entity) of a generated question."""
    for attr, pattern in _QUESTION_PATTERNS:
        m = pattern.match(question)
        if m:
            return attr, m.group("e")
    raise AssertionError(f"question matches no template: {question!r}")


def read_answer(passage: str, question: str, candidates) -> str | None:
    """The reading heuristic: the value of the fact sentence of the question's relation about the
    question's entity ("Where does Tom live?" -> "Tom lives in Oslo.")."""
    attr, entity = parse_question(question)
    for at, e, v in fact_table(passage):
        if at == attr and e == entity and v in set(candidates):
            return v
    return None


def first_after_entity(passage: str, question: str, candidates) -> str | None:
    """A shallow heuristic: the first candidate that follows the question's entity in a sentence
    (ignores the relation, so a decoy about the same person fools it)."""
    _, entity = parse_question(question)
    candidates = set(candidates)
    for m in re.finditer(rf"\b{re.escape(entity)}\b", passage):
        rest = passage[m.end() :].split(".")[0]
        for word in re.findall(r"[\w']+", rest):
            if word in candidates:
                return word
    return None


def decoy_sentences(passage: str, attr: str) -> list[str]:
    """The sentences of ``passage`` made from one of ``attr``'s decoy templates."""
    patterns = [_template_regex(t) for t in synthetic.ATTRIBUTES[attr].decoys]
    return [s.strip() for s in re.findall(r"[^.]+\.", passage) if any(p.match(s.strip()) for p in patterns)]


def fact_table(passage: str) -> list[tuple[str, str, str]]:
    """Every (attribute, entity, value) fact sentence of a passage."""
    facts = []
    for sentence in re.findall(r"[^.]+\.", passage):
        sentence = sentence.strip()
        for attr, spec in synthetic.ATTRIBUTES.items():
            m = _template_regex(spec.fact).match(sentence)
            if m:
                facts.append((attr, m.group("e"), m.group("v")))
    return facts


# --------------------------------------------------------------- determinism
def test_same_seed_same_data_different_seed_different():
    assert make_synthetic_mc(50, seed=3) == make_synthetic_mc(50, seed=3)
    assert make_synthetic_span(50, seed=3) == make_synthetic_span(50, seed=3)
    assert make_synthetic_mc(50, seed=3) != make_synthetic_mc(50, seed=4)
    assert [e.context for e in make_synthetic_span(50, seed=3)] != [e.context for e in make_synthetic_span(50, seed=4)]
    # a prefix is stable: asking for more examples does not change the first ones
    assert make_synthetic_mc(80, seed=5, num_options=(2, 5))[:30] == make_synthetic_mc(30, seed=5, num_options=(2, 5))


def test_same_output_in_another_process_with_another_hash_seed():
    code = (
        "import hashlib\n"
        "from robust_mrc.data.synthetic import make_synthetic_mc, make_synthetic_span, synthetic_splits\n"
        "h = hashlib.sha256()\n"
        "for ex in make_synthetic_mc(200, 7, num_options=(2, 5)) + make_synthetic_span(200, 7):\n"
        "    h.update(repr(ex).encode())\n"
        "print(h.hexdigest())\n"
    )
    expected = _digest(make_synthetic_mc(200, 7, num_options=(2, 5)) + make_synthetic_span(200, 7))
    for hash_seed in ("1", "987654"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO)}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=REPO)
        assert out.stdout.strip() == expected


# --------------------------------------------------------------- invariants
@pytest.mark.parametrize("num_options", [4, 2, 5, (2, 5), (3, 4)])
def test_mc_invariants(num_options):
    examples = make_synthetic_mc(300, seed=11, num_options=num_options)
    lo, hi = (num_options, num_options) if isinstance(num_options, int) else num_options
    counts = Counter(len(ex.options) for ex in examples)
    assert set(counts) == set(range(lo, hi + 1))
    assert len({ex.id for ex in examples}) == len(examples)
    for i, ex in enumerate(examples):
        assert isinstance(ex, MCExample)
        assert ex.id == f"synmc-11-{i}"
        assert 0 <= ex.label < len(ex.options)
        assert len(set(ex.options)) == len(ex.options)
        # the answer and every wrong option appear in the passage, each exactly once
        for option in ex.options:
            assert _words(ex.passage, option) == 1, (option, ex.passage)
        _, entity = parse_question(ex.question)
        assert _words(ex.passage, entity) >= 1
        assert ex.question.count("_") <= 1


def test_mc_labels_uniform_and_some_cloze_questions():
    examples = make_synthetic_mc(2000, seed=2)
    labels = Counter(ex.label for ex in examples)
    assert set(labels) == {0, 1, 2, 3}
    assert all(380 < n < 620 for n in labels.values()), labels
    cloze = sum("_" in ex.question for ex in examples)
    assert 0.35 < cloze / len(examples) < 0.65
    attrs = Counter(parse_question(ex.question)[0] for ex in examples)
    assert set(attrs) == set(synthetic.ATTRIBUTES)
    assert len({re.sub(r"[A-Z][a-z]+", "N", ex.question) for ex in examples}) >= 15  # varied wording


def test_span_invariants():
    examples = make_synthetic_span(400, seed=13)
    for i, ex in enumerate(examples):
        assert isinstance(ex, SpanExample)
        assert ex.id == f"synspan-13-{i}"
        assert len(ex.answers) == 1
        a = ex.answers[0]
        assert ex.context[a.start : a.end] == a.text
        assert _words(ex.context, a.text) == 1
        assert "_" not in ex.question
        attr, entity = parse_question(ex.question)
        assert _words(ex.context, entity) >= 1
        # distractors: other values of the answer's attribute, for other entities
        same = [(e, v) for (at, e, v) in fact_table(ex.context) if at == attr]
        assert (entity, a.text) in same
        assert len(same) >= 2


@pytest.mark.parametrize("make", [make_synthetic_mc, make_synthetic_span])
def test_passages_unambiguous_and_of_moderate_length(make):
    for ex in make(300, seed=21):
        text = ex.passage if isinstance(ex, MCExample) else ex.context
        assert 35 <= len(text.split()) <= 100
        facts = fact_table(text)
        n_sentences = len(re.findall(r"[^.]+\.", text))
        assert n_sentences > len(facts)  # some filler sentences
        # one value per (entity, attribute), and no value shared by two entities of one attribute
        assert len({(at, e) for at, e, _ in facts}) == len(facts)
        assert len({(at, v) for at, _, v in facts}) == len(facts)


@pytest.mark.parametrize("num_facts", [1, 2, 4, 6, 8])
def test_num_facts_sets_the_number_of_competing_facts(num_facts):
    for ex in make_synthetic_span(100, seed=1, num_facts=num_facts):
        attr, _ = parse_question(ex.question)
        same = [f for f in fact_table(ex.context) if f[0] == attr]
        assert len(same) == max(num_facts, 2)
    for ex in make_synthetic_mc(100, seed=1, num_facts=num_facts, num_decoys=0, num_options=(2, 5)):
        attr, _ = parse_question(ex.question)
        same = [f for f in fact_table(ex.passage) if f[0] == attr]
        assert len(same) == max(num_facts, len(ex.options))
        assert decoy_sentences(ex.passage, attr) == []


@pytest.mark.parametrize("num_facts,num_decoys", [(1, 3), (2, 2), (1, 1), (3, 0), (5, 3)])
def test_decoys_name_same_type_values_in_other_relations(num_facts, num_decoys):
    for ex in make_synthetic_mc(200, seed=8, num_facts=num_facts, num_decoys=num_decoys, num_options=(2, 5)):
        attr, entity = parse_question(ex.question)
        same = [(e, v) for at, e, v in fact_table(ex.passage) if at == attr]
        decoys = decoy_sentences(ex.passage, attr)
        assert len(decoys) == num_decoys
        assert len(same) == max(num_facts, len(ex.options) - num_decoys, 1)
        decoy_values = [o for o in synthetic.ATTRIBUTES[attr].pool if any(_words(d, o) for d in decoys)]
        assert len(decoy_values) == num_decoys
        # every wrong option is a rival fact's value or a decoy's value; the answer is the fact's
        assert (entity, ex.answer) in same
        for option in ex.options:
            if option != ex.answer:
                assert option in decoy_values or any(v == option and e != entity for e, v in same)


def test_decoys_fool_a_reader_that_ignores_the_relation():
    examples = make_synthetic_mc(1000, seed=5, num_facts=1, num_decoys=3)
    fooled = sum(first_after_entity(ex.passage, ex.question, ex.options) not in (None, ex.answer) for ex in examples)
    # half the decoys talk about one of the passage's people, often the question's entity
    assert fooled / len(examples) > 0.1
    assert all(read_answer(ex.passage, ex.question, ex.options) == ex.answer for ex in examples)


def test_vocabulary_is_modest():
    examples = make_synthetic_mc(1000, seed=0) + make_synthetic_span(1000, seed=0)
    vocab = set()
    for ex in examples:
        text = ex.passage if isinstance(ex, MCExample) else ex.context
        vocab.update(re.findall(r"[\w']+", (text + " " + ex.question).lower()))
    assert 150 < len(vocab) < 500


# --------------------------------------------------------------- it needs reading
def test_reading_heuristic_is_right_and_passage_matching_is_at_chance():
    examples = make_synthetic_mc(1000, seed=5)
    read = first_present = earliest = 0
    for ex in examples:
        read += read_answer(ex.passage, ex.question, ex.options) == ex.answer
        present = [o for o in ex.options if _words(ex.passage, o)]
        first_present += present[0] == ex.answer
        earliest += min(ex.options, key=ex.passage.find) == ex.answer
    n = len(examples)
    assert read / n >= 0.99
    assert first_present / n < 0.6
    assert earliest / n < 0.6


def test_span_reading_heuristic_is_right_and_type_matching_is_not_enough():
    examples = make_synthetic_span(1000, seed=6)
    read = first_of_type = 0
    for ex in examples:
        attr, _ = parse_question(ex.question)
        pool = synthetic.ATTRIBUTES[attr].pool
        read += read_answer(ex.context, ex.question, pool) == ex.answers[0].text
        values = [v for at, _, v in fact_table(ex.context) if at == attr]
        first_of_type += values[0] == ex.answers[0].text
    n = len(examples)
    assert read / n >= 0.99
    assert first_of_type / n < 0.6


# --------------------------------------------------------------- splits
@pytest.mark.parametrize("task", ["mc", "span"])
def test_splits_are_disjoint(task):
    splits = synthetic_splits(task, 300, 50, 60, seed=4)
    assert {k: len(v) for k, v in splits.items()} == {"train": 300, "validation": 50, "test": 60}
    ids = [ex.id for split in splits.values() for ex in split]
    assert len(ids) == len(set(ids))
    keys = {name: {((ex.passage if task == "mc" else ex.context), ex.question) for ex in split} for name, split in splits.items()}
    assert not keys["train"] & keys["validation"]
    assert not keys["train"] & keys["test"]
    assert not keys["validation"] & keys["test"]
    assert synthetic_splits(task, 300, 50, 60, seed=4) == splits
    assert synthetic_splits(task, 300, 50, 60, seed=5)["train"] != splits["train"]


def test_splits_pass_generator_arguments():
    splits = synthetic_splits("mc", 100, 20, 20, seed=0, num_options=(2, 3), num_facts=3)
    assert {len(ex.options) for split in splits.values() for ex in split} == {2, 3}
    assert synthetic_splits("span", 5, 0, 0, seed=0, num_facts=2)["validation"] == []
    with pytest.raises(ValueError, match="num_options"):
        synthetic_splits("span", 5, 5, 5, seed=0, num_options=4)
    with pytest.raises(ValueError, match="unknown synthetic task"):
        synthetic_splits("cloze", 5, 5, 5, seed=0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_options": 1},
        {"num_options": 6},
        {"num_options": (4, 2)},
        {"num_options": (2, 3, 4)},
        {"num_facts": 0},
        {"num_facts": synthetic.MAX_FACTS + 1},
        {"num_decoys": -1},
        {"num_decoys": synthetic.MAX_DECOYS + 1},
        {"num_facts": synthetic.MAX_FACTS, "num_decoys": 1},
    ],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        make_synthetic_mc(3, **kwargs)


def test_fast():
    start = time.perf_counter()
    make_synthetic_mc(10_000, seed=0)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0  # about 0.5 s on an idle core
