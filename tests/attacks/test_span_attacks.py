"""Span-QA attacks: offsets stay right, added sentences hold no answer, noise spares answer sentences."""

from __future__ import annotations

import pickle

import pytest

from robust_mrc.attacks import AttackUnavailable, example_rng, get_attack, list_attacks
from robust_mrc.attacks.span.addsent import declarative, fake_answers
from robust_mrc.attacks.span.common import answer_sentences, answer_spans
from robust_mrc.data.text import TOKEN_RE, word_spans, words

SPAN_ATTACKS = {
    "addsent",
    "addonesent",
    "addsentmod",
    "addsent_cue",
    "addany",
    "addcommon",
    "random_words",
    "char_noise",
    "word_noise",
    "paraphrase",
}


def rng(ex, name, seed=0):
    return example_rng(seed, 0, ex.id, name)


def check_offsets(new):
    for a in new.answers:
        assert new.context[a.start : a.start + len(a.text)] == a.text


def added_sentence(old, new):
    """The text an insertion attack added (the context minus the original)."""
    if new.context.startswith(old.context):
        return new.context[len(old.context) :].strip()
    if new.context.endswith(old.context):
        return new.context[: -len(old.context)].strip()
    return new.edits[-1].detail


def test_registry_lists_every_span_attack():
    assert {r["name"] for r in list_attacks("span")} == SPAN_ATTACKS
    with pytest.raises(ValueError, match="available: .*char_noise"):
        get_attack("charswap", "span")


@pytest.mark.parametrize("name,where", [("addsent", "end"), ("addonesent", "end"), ("addsentmod", "start"), ("random_words", "end")])
def test_insertion_attacks(spans, wordnet_ok, name, where):
    attack = get_attack(name, "span")
    n_ok = 0
    for ex in spans:
        new = attack(ex, rng(ex, name))
        if new is None:
            continue
        n_ok += 1
        check_offsets(new)
        assert new.question == ex.question and len(new.answers) == len(ex.answers)
        sent = added_sentence(ex, new)
        assert sent and sent == new.edits[-1].detail
        for a in ex.answers:
            assert a.text.lower() not in sent.lower()
        if where == "end":
            assert new.context.startswith(ex.context) and new.answers == ex.answers
        else:
            assert new.context.endswith(ex.context)
            shift = len(sent) + 1
            assert [a.start for a in new.answers] == [a.start + shift for a in ex.answers]
    assert n_ok >= 3


def test_random_words_appends_ten_common_words(spans, wordnet_ok):
    from robust_mrc.attacks.resources import common_words

    ex = spans[0]
    attack = get_attack("random_words", "span")
    new = attack(ex, rng(ex, "random_words"))
    added = added_sentence(ex, new).split()
    assert len(added) == 10 and set(added) <= set(common_words())
    assert new.edits[-1].attack == "random_words"
    assert attack.method == "stand-in" and attack.provenance()["attack"] == "random_words"
    assert attack.paper == "Jia & Liang 2017"


def test_random_words_is_what_addcommon_did_without_a_model(spans):
    """The stand-in is the model-free ``addcommon`` of before, under its own name: the search's
    initial random sequence (redrawn while it holds an answer), appended."""
    from robust_mrc.attacks import resources as R
    from robust_mrc.attacks.span.common import contains_answer, insert_sentence, insertion_point

    def addcommon_model_free(ex, r):  # the former AddCommon.apply
        vocab = R.common_words(1000)
        for _ in range(20):
            sentence = " ".join(r.choice(vocab) for _ in range(10))
            if not contains_answer(sentence, ex):
                break
        else:
            return None
        return insert_sentence(ex, sentence, insertion_point(ex, "end", r), "random_words", sentence)

    attack = get_attack("random_words", "span")
    for seed in range(3):
        for ex in spans:
            assert attack(ex, rng(ex, "x", seed)) == addcommon_model_free(ex, rng(ex, "x", seed))


def test_addcommon_without_a_model_names_random_words(spans):
    ex = spans[0]
    with pytest.raises(AttackUnavailable, match="random_words") as err:
        get_attack("addcommon", "span")(ex, rng(ex, "addcommon"))
    assert "model: true" in str(err.value) and "ckpt=" in str(err.value)


@pytest.mark.parametrize("position", ["start", "end", "random"])
def test_insertion_position_option(spans, position):
    attack = get_attack("random_words", "span", position=position)
    for seed in range(5):
        for ex in spans:
            new = attack(ex, rng(ex, "random_words", seed))
            check_offsets(new)
            assert len(words(new.context)) == len(words(ex.context)) + 10


def test_addsent_rules():
    assert fake_answers("1856", "When was Tesla born?")[0] == "1831"
    assert fake_answers("1,517", "How many died?")[0] != "1,517"
    assert fake_answers("Thomas Edison", "Who did Tesla work for?")[0] == "Jeff Dean"
    assert fake_answers("Thomas Edison", "Who did Tesla work for?", mod=True)[0] == "Charles Babbage"
    assert fake_answers("NBA", "Which league?")[0] == "ABC" and fake_answers("NBA", "x").count("ABC") == 1
    toks = TOKEN_RE.findall("When did Tesla move to Paris?")
    assert declarative(toks, "1850") == "Tesla moved to Paris in 1850"
    toks = TOKEN_RE.findall("What ABC division handles foreign television distribution?")
    assert declarative(toks, "Central Park") == "The ABC division of Central Park handles foreign television distribution"
    toks = TOKEN_RE.findall("When was Nikola Tesla born?")
    assert declarative(toks, "1831") == "Nikola Tesla was born in 1831"
    toks = TOKEN_RE.findall("How old was Tesla when he died?")
    assert declarative(toks, "96") == "Tesla was 96 when he died"
    toks = TOKEN_RE.findall("Who did Tesla work for in the US?")
    assert declarative(toks, "Jeff Dean") == "Tesla worked for Jeff Dean in the US"
    toks = TOKEN_RE.findall("Who founded the company?")
    assert declarative(toks, "Jeff Dean") == "Jeff Dean founded the company"


def test_addsent_alters_the_question(spans, wordnet_ok):
    ex = spans[2]  # "Who did Tesla work for in the United States?"
    new = get_attack("addsent", "span")(ex, rng(ex, "addsent"))
    sent = added_sentence(ex, new)
    assert "Jeff Dean" in sent and "Thomas Edison" not in sent and "Tesla" not in sent
    mod = get_attack("addsentmod", "span")(ex, rng(ex, "addsentmod"))
    assert "Charles Babbage" in added_sentence(ex, mod)
    # nothing in this question can be altered: give up (None), as the paper does
    assert get_attack("addsent", "span")(spans[3], rng(spans[3], "addsent")) is None


def _free_positions(ex, spared):
    return [i for i in range(len(ex.context)) if not any(s <= i < e for s, e in spared) and not ex.context[i].isspace()]


def _rest_of_answer_sentence_changed(ex, new):
    """True when the answer's sentence changed outside the answer (char_noise: same offsets)."""
    a = ex.answers[0]
    ((s, e),) = [(s, e) for s, e in answer_sentences(ex) if s <= a.start < e]
    return ex.context[s : a.start] + ex.context[a.end : e] != new.context[s : a.start] + new.context[a.end : e]


def test_char_noise_spares_only_the_answer_spans(spans):
    attack = get_attack("char_noise", "span")  # spare="span" by default (Wu et al. 2021, section 3.1)
    for ex in spans:
        new = attack(ex, rng(ex, "char_noise"))
        assert new is not None and len(new.context) == len(ex.context)
        for old, a in zip(ex.answers, new.answers):  # the answers byte-identical, offsets unmoved
            assert a == old and new.context[a.start : a.end] == a.text
        free = _free_positions(ex, answer_spans(ex))
        changed = [i for i in range(len(ex.context)) if new.context[i] != ex.context[i]]
        assert set(changed) <= set(free)
        assert len(changed) == round(0.25 * len(free))  # 25 % of the characters outside the answers
        assert all(ord(new.context[i]) > 127 for i in changed)
    # the rest of the answer's sentence is fair game now
    assert _rest_of_answer_sentence_changed(spans[3], attack(spans[3], rng(spans[3], "char_noise")))


def test_char_noise_spare_sentence_keeps_answer_sentences(spans):
    attack = get_attack("char_noise", "span", spare="sentence")
    for ex in spans:
        new = attack(ex, rng(ex, "char_noise"))
        assert new is not None and len(new.context) == len(ex.context)
        check_offsets(new)
        protected = answer_sentences(ex)
        for s, e in protected:
            assert new.context[s:e] == ex.context[s:e]
        free = _free_positions(ex, protected)
        changed = [i for i in free if new.context[i] != ex.context[i]]
        assert len(changed) == round(0.25 * len(free))
        assert not _rest_of_answer_sentence_changed(ex, new)


def test_char_noise_spare_none_noises_the_answers_at_the_same_rate(spans):
    """Training copies (``spare="none"``): the answer is no clean stretch in a noised context."""
    attack = get_attack("char_noise", "span", spare="none")
    in_answers = outside = n_in = n_out = 0
    for ex in spans:
        new = attack(ex, rng(ex, "char_noise"))
        assert len(new.context) == len(ex.context)
        check_offsets(new)
        for old, a in zip(ex.answers, new.answers):  # same offsets, the text is what lies there now
            assert a.start == old.start and a.text == new.context[old.start : old.end]
        gold = {i for s, e in answer_spans(ex) for i in range(s, e)}
        changed = [i for i in range(len(ex.context)) if new.context[i] != ex.context[i]]
        assert len(changed) == round(0.25 * sum(1 for c in ex.context if not c.isspace()))
        in_answers += sum(1 for i in changed if i in gold)
        n_in += sum(1 for i in gold if not ex.context[i].isspace())
        outside += sum(1 for i in changed if i not in gold)
        n_out += sum(1 for i in range(len(ex.context)) if i not in gold and not ex.context[i].isspace())
    assert in_answers > 0
    assert abs(in_answers / n_in - outside / n_out) < 0.15, (in_answers / n_in, outside / n_out)


def test_word_noise_spare_none_replaces_answer_words_but_never_cuts_an_answer(wordnet_ok):
    from robust_mrc.data.examples import Answer, SpanExample

    context = "The old teacher walked to the quiet village school in the morning with his students."
    answers = [Answer("quiet village school", context.index("quiet")), Answer("ill", context.index("village") + 1)]
    ex = SpanExample("w1", context, "Where did the teacher walk?", tuple(answers))
    attack = get_attack("word_noise", "span", vectors="wordnet", spare="none", rate=1.0)
    new = attack(ex, rng(ex, "word_noise"))
    check_offsets(new)
    whole, inner = new.answers
    assert whole.text != "quiet village school"  # answer words are replaced too
    assert "village" in whole.text and inner.text == "ill"  # "village" holds an answer's boundary: kept


def test_training_copies_take_train_params_and_the_test_sets_do_not():
    from robust_mrc.attacks.apply import build_attack
    from robust_mrc.policies import eval_attack_specs, policy_from_config
    from tests.helpers import make_cfg

    for group in ("char_noise", "mix", "amount"):
        cfg = make_cfg(f"attack={group}", "task=span").attack
        trained = [a for a in policy_from_config(cfg, "span", seed=0).attacks if a.name.endswith("noise")]
        tested = [build_attack(s, "span") for s in eval_attack_specs(cfg, "span")]
        assert trained and all(a.spare == "none" for a in trained), group
        assert [a.name for a in tested if a.name.endswith("noise")] == [a.name for a in trained], group
        assert all(a.spare == "span" for a in tested if a.name.endswith("noise")), group  # the paper's test


def test_noise_rejects_an_unknown_spare():
    for name in ("char_noise", "word_noise"):
        with pytest.raises(ValueError, match=f"{name}.*spare must be one of span, sentence, none"):
            get_attack(name, "span", spare="paragraph")


def test_char_noise_fallback_table(spans, monkeypatch):
    from robust_mrc.attacks import resources as R

    monkeypatch.setattr(R, "homoglyphs", lambda: dict(R.FALLBACK_HOMOGLYPHS))
    ex = spans[0]
    new = get_attack("char_noise", "span")(ex, rng(ex, "char_noise"))
    assert set(c for c in new.context if ord(c) > 127) <= set(R.FALLBACK_HOMOGLYPHS.values())


def test_homoglyph_table_is_single_code_points():
    from robust_mrc.attacks.resources import homoglyphs

    table = homoglyphs()
    assert len(table) >= 29 and set("aceiopsxyAEIO") <= set(table)  # intentional.txt covers 29
    assert all(len(v) == 1 and ord(v) > 127 for v in table.values())


def _outside_words(ex, spared):
    return [w for s, e, w in word_spans(ex.context) if not any(s < pe and e > ps for ps, pe in spared)]


def test_word_noise_spares_only_the_answer_spans(spans, wordnet_ok):
    attack = get_attack("word_noise", "span", vectors="wordnet")
    for ex in spans:
        new = attack(ex, rng(ex, "word_noise"))
        check_offsets(new)  # the answers' texts unchanged, their offsets moved with the edits
        assert [a.text for a in new.answers] == [a.text for a in ex.answers]
        n_words = len(_outside_words(ex, answer_spans(ex)))
        assert new.edits[-1].detail == f"{round(0.25 * n_words)} words"  # 25 % of the words outside
        assert len(words(new.context)) == len(words(ex.context))  # one word for one
    ex = spans[0]  # "Nikola Tesla was born in 1856 in Smiljan.": the answer's sentence changes too
    new = attack(ex, rng(ex, "word_noise"))
    sentence_end = ex.context.index("Smiljan.") + len("Smiljan.")
    shift = new.answers[0].start - ex.answers[0].start
    assert new.context[: sentence_end + shift] != ex.context[:sentence_end]


def test_word_noise_spare_sentence_keeps_answer_sentences(spans, wordnet_ok):
    attack = get_attack("word_noise", "span", vectors="wordnet", spare="sentence")
    for ex in spans:
        new = attack(ex, rng(ex, "word_noise"))
        check_offsets(new)
        for s, e in answer_sentences(ex):
            assert ex.context[s:e] in new.context
        for old, a in zip(ex.answers, new.answers):  # the answer's whole sentence moved as one
            ((s, e),) = [(s, e) for s, e in answer_sentences(ex) if s <= old.start < e]
            start = a.start - (old.start - s)
            assert new.context[start : start + (e - s)] == ex.context[s:e]
        assert new.context != ex.context


def test_word_noise_with_vector_file(tiny_vectors):
    from robust_mrc.data.examples import Answer, SpanExample

    ctx = "The school opens every morning. The village has many trees. The answer is here."
    start = ctx.index("here")
    ex = SpanExample("w", ctx, "Where is it?", (Answer("here", start),))
    new = get_attack("word_noise", "span", vectors=tiny_vectors, rate=1.0)(ex, rng(ex, "word_noise"))
    assert "The answer is here." in new.context
    assert "college" in new.context and "evening" in new.context and "town" in new.context and "plants" in new.context
    check_offsets(new)


def test_paraphrase_span_keeps_answer_sentences(spans):
    ex = spans[0]
    with pytest.raises(AttackUnavailable):
        get_attack("paraphrase", "span")(ex, rng(ex, "paraphrase"))
    new = get_attack("paraphrase", "span", paraphraser=lambda ss: ["Something else entirely here." for _ in ss])(ex, rng(ex, "paraphrase"))
    check_offsets(new)
    s, e = answer_sentences(ex)[0]
    assert ex.context[s:e] in new.context and "Something else entirely here." in new.context


def test_span_attacks_pickle(spans):
    attack = get_attack("char_noise", "span", rate=0.1)
    ex = spans[0]
    assert pickle.loads(pickle.dumps(attack))(ex, rng(ex, "char_noise")) == attack(ex, rng(ex, "char_noise"))


def test_unanswerable_examples(spans):
    from robust_mrc.data.examples import SpanExample

    ex = SpanExample("u", spans[0].context, "Why?", ())
    assert get_attack("addsent", "span")(ex, rng(ex, "addsent")) is None
    new = get_attack("char_noise", "span")(ex, rng(ex, "char_noise"))
    assert new is not None and new.answers == ()


def test_fallback_common_words(no_wordnet, spans):
    from robust_mrc.attacks.resources import common_words

    words_ = common_words()
    assert 100 < len(words_) < 1000 and "time" in words_
    new = get_attack("random_words", "span")(spans[0], rng(spans[0], "random_words"))
    check_offsets(new)


@pytest.mark.parametrize("variant", [0, 1])
def test_span_alteration_keeps_members_of_a_contrast_set_in_their_set_and_refuses_other_spellings(wordnet_ok, variant):
    from robust_mrc.attacks.replacements import spelling_variant
    from robust_mrc.attacks.resources import contrasts as C
    from robust_mrc.attacks.span.addsent.alter import alter_question

    toks, n = alter_question("Who was a prominent Huguenot in Holland?", variant)
    assert n == 1 and toks[6] != "Holland" and "country" in C.set_names(toks[6])  # never "Dutch", a people's word
    toks, n = alter_question("When were Jews expelled from several German states?", variant)
    assert "people of a religion" in C.set_names(toks[2])  # never "Judaism"
    assert {"nationality", "language"} & set(C.set_names(toks[6])) and toks[6] != "German"  # never "Bavarian"
    toks, n = alter_question("Who wrote the Nong Shu?", variant)
    assert n == 1 and not spelling_variant(toks[4], "Shu")  # never "Sho"
