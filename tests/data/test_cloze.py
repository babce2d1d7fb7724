"""One cloze rule: the model's input and the attacks' sentences put an option into the same blank."""

from __future__ import annotations

import pytest

from robust_mrc.attacks import example_rng, get_attack
from robust_mrc.data.cloze import BLANK_RE, fill_blank, has_blank
from robust_mrc.data.examples import MCExample
from robust_mrc.data.readers import load_examples
from robust_mrc.data.text import as_statement
from robust_mrc.datamodules.mc import option_pairs


@pytest.mark.parametrize(
    "question,filled",
    [
        ("Tom lives in _ now.", "Tom lives in Rome now."),
        ("Tom lives in ____ now.", "Tom lives in Rome now."),
        ("Tom lives in _ _ _ now.", "Tom lives in Rome now."),  # one blank, not "Rome  _ _"
        ("Tom lives in  _  .", "Tom lives in  Rome  ."),  # the text around the blank is kept as it is
        ("Where does Tom live?", "Where does Tom live? Rome"),
        ("Where does Tom live?  ", "Where does Tom live? Rome"),
        ("", "Rome"),
        ("Tom lives in ___ and Ann in ___ .", "Tom lives in Rome and Ann in ___ ."),  # only the first blank
    ],
)
def test_fill_blank(question, filled):
    assert fill_blank(question, " Rome ") == filled


def test_has_blank():
    assert has_blank("a _ b") and has_blank("___") and not has_blank("What is it?")


def test_the_model_sees_the_question_filled_once():
    ex = MCExample("x", "Tom lives in Rome.", "Tom lives in _ _ _ now.", ("Rome", "Paris"), 0)
    assert [q for _, q in option_pairs(ex, "full")] == ["Tom lives in Rome now.", "Tom lives in Paris now."]
    assert [q for q, _ in option_pairs(ex, "question_options")] == ["Tom lives in Rome now.", "Tom lives in Paris now."]


def test_collator_and_attacks_fill_every_race_m_blank_alike(shared_data):
    """The diagnosis attack inserts the question filled with its answer: for every RACE-M
    validation question with a blank it is the model's input for the correct option, as a statement."""
    examples = [ex for ex in load_examples(shared_data / "race" / "race_middle_validation.jsonl") if has_blank(ex.question)]
    assert len(examples) == 805
    attack = get_attack("diagnosis", "mc", position="end")
    for ex in examples:
        inserted = attack(ex, example_rng(0, 0, ex.id, "diagnosis")).edits[-1].detail
        model_input = option_pairs(ex, "full")[ex.label][1]
        assert inserted == as_statement(model_input), ex.id
        assert len(BLANK_RE.findall(model_input)) == len(BLANK_RE.findall(ex.question)) - 1, ex.id  # one blank filled
