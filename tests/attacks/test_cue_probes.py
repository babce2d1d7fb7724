"""The cue probes: each attack family's surface mark on the gold side, labels and offsets kept."""

from __future__ import annotations

import re

import pytest

from robust_mrc.attacks import example_rng, get_attack, is_probe, list_attacks
from robust_mrc.attacks.editing import stems
from robust_mrc.attacks.mc.cue import is_passage_span
from robust_mrc.attacks.span.cue import cue_sentence
from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import normalize


def rng(ex, name, seed=0):
    return example_rng(seed, 0, ex.id, name)


def test_the_probes_are_registered_and_marked_as_probes():
    assert {r["name"] for r in list_attacks("mc") if is_probe(r["name"], "mc")} == {"diagnosis", "extraction_cue", "magnet_cue"}
    assert {r["name"] for r in list_attacks("span") if is_probe(r["name"], "span")} == {"addsent_cue"}
    assert not is_probe("addsent", "mc") and not is_probe("addsent_cue", "mc") and not is_probe(None, "span")
    for task in ("mc", "span"):
        for row in list_attacks(task):
            if is_probe(row["name"], task):
                assert "cue probe" in row["description"] or row["name"] == "diagnosis"


@pytest.mark.parametrize("position", ["end", "start", "random"])
def test_addsent_cue_states_the_gold_answer_and_keeps_the_offsets(spans, position):
    attack = get_attack("addsent_cue", "span", position=position)
    for ex in spans:
        new = attack(ex, rng(ex, attack.name))
        sentence = cue_sentence(ex.question, ex.answers[0].text)  # the question as it is, the gold answer
        assert new.edits[-1].attack == "addsent_cue" and new.edits[-1].detail == sentence
        assert ex.answers[0].text in sentence and sentence in new.context and new.context != ex.context
        assert [a.text for a in new.answers] == [a.text for a in ex.answers]  # the original gold spans only
        for a in new.answers:
            assert new.context[a.start : a.end] == a.text
        if position == "end":
            assert new.context.endswith(sentence) and new.answers == ex.answers
        if position == "start":
            assert new.context.startswith(sentence)
            assert [a.start for a in new.answers] == [a.start + len(sentence) + 1 for a in ex.answers]
        assert attack(ex, rng(ex, attack.name)) == new


@pytest.mark.parametrize("position", ["end", "start", "random"])
def test_addsent_cue_with_answer_added_trains_on_the_answer_its_sentence_states(spans, position):
    """answer=added (the cue copies attack.balance trains on): the added sentence's occurrence of
    the answer leads the gold spans, the passage's follow, every offset on its text."""
    probe = get_attack("addsent_cue", "span", position=position)
    attack = get_attack("addsent_cue", "span", position=position, answer="added")
    for ex in spans:
        new, as_probe = attack(ex, rng(ex, attack.name)), probe(ex, rng(ex, probe.name))
        assert new.context == as_probe.context and new.answers[1:] == as_probe.answers
        first = new.answers[0]
        assert first.text.lower() == ex.answers[0].text.lower() and new.context[first.start : first.end] == first.text
        sentence = new.edits[-1].detail  # a synthetic passage may hold the same sentence already
        assert any(at <= first.start and first.end <= at + len(sentence) for at in occurrences(sentence, new.context))
        assert all(first.start != a.start for a in new.answers[1:])  # another occurrence than the passage's
        if position == "end":
            assert first.start > len(ex.context.rstrip())
        if position == "start":
            assert first.end <= len(sentence)
    with pytest.raises(ValueError, match="attack 'addsent_cue': answer must be one of passage, added"):
        get_attack("addsent_cue", "span", answer="both")


def occurrences(text: str, context: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(text), context)]


def test_addsent_cue_is_addsents_sentence_with_the_question_unaltered_and_the_gold_answer(spans):
    ex = spans[0]  # "When was Nikola Tesla born?", gold 1856
    new = get_attack("addsent_cue", "span")(ex, rng(ex, "addsent_cue"))
    assert new.edits[-1].detail == "Nikola Tesla was born in 1856."
    adv = get_attack("addsent", "span")(ex, rng(ex, "addsent"))
    assert adv is None or "1856" not in adv.edits[-1].detail  # AddSent's own sentence points away


def test_extraction_cue_copies_every_option_from_the_passage_the_gold_included(mc):
    attack = get_attack("extraction_cue", "mc")
    changed = 0
    for ex in mc:
        new = attack(ex, rng(ex, attack.name))
        if not is_passage_span(ex.answer, ex.passage):
            assert new is None  # counted as not attacked
            continue
        changed += 1
        assert new.label == ex.label and new.answer == ex.answer
        assert new.passage == ex.passage and new.question == ex.question
        assert new.options != ex.options
        assert all(is_passage_span(o, ex.passage) for o in new.options)
        assert len({normalize(o) for o in new.options}) == len(new.options)
        assert attack(ex, rng(ex, attack.name)) == new
    assert changed >= 2  # q2 ("120") and q4 ("The village festival.")


def test_extraction_cue_leaves_a_question_whose_gold_is_not_a_passage_span(mc):
    ex = mc[0]  # gold "On foot.": the passage says "walks"
    assert not is_passage_span(ex.answer, ex.passage)
    assert get_attack("extraction_cue", "mc")(ex, rng(ex, "extraction_cue")) is None


def test_magnet_cue_unties_the_gold_option_from_the_passage(mc, wordnet_ok):
    attack = get_attack("magnet_cue", "mc")
    ex = mc[3]  # gold "The village festival."
    new = attack(ex, rng(ex, attack.name))
    assert new.options == ex.options and new.label == ex.label and new.question == ex.question
    assert new.passage != ex.passage
    assert stems(ex.answer) & stems(ex.passage) and not stems(ex.answer) & stems(new.passage)
    # the wrong options keep their ties to the passage
    for i, option in enumerate(ex.options):
        if i != ex.label:
            assert stems(option) & stems(new.passage) == stems(option) & stems(ex.passage) - stems(ex.answer)
    assert attack(ex, rng(ex, attack.name)) == new


def test_magnet_cue_cannot_apply_without_a_word_to_untie(wordnet_ok):
    ex = MCExample("x", "The sky is blue today.", "What is it?", ("Quickly running.", "Green.", "Red."), 0)
    assert get_attack("magnet_cue", "mc")(ex, rng(ex, "magnet_cue")) is None
