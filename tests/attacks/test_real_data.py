"""Guarantees and Table 5-style statistics on the real data in ../shared/data (skipped when absent)."""

from __future__ import annotations

import pytest

from robust_mrc.attacks import example_rng, get_attack
from robust_mrc.attacks.fidelity import attack_stats
from robust_mrc.attacks.span.common import answer_sentences
from robust_mrc.data.text import normalize

N = 150


@pytest.fixture(scope="module")
def race(shared_data):
    from robust_mrc.data.readers import load_examples

    return list(load_examples(shared_data / "race" / "race_middle_validation.jsonl", limit=N))


@pytest.fixture(scope="module")
def squad(shared_data):
    from robust_mrc.data.readers import load_examples

    return list(load_examples(shared_data / "squad" / "dev-v1.1.json", limit=N))


def _run(attack, examples):
    out = []
    for e in examples:
        new = attack(e, example_rng(0, 0, e.id, attack.name))
        out.append((e, new))
    return out


def test_race_mc_attacks(race, wordnet_ok):
    for name, kw in [
        ("charswap", {}),
        ("addsent", {}),
        ("de_lexical", {}),
        ("dg_retrieval", {"pool": race}),
        ("magnet", {"pool": race}),
        ("extra_option", {"pool": race, "position": "random"}),
        ("diagnosis", {}),
    ]:
        pairs = _run(get_attack(name, "mc", **kw), race)
        done = [(e, n) for e, n in pairs if n is not None]
        assert len(done) >= 0.7 * len(pairs), name
        for e, n in done:
            assert n.options[n.label] == e.options[e.label]
            others = [normalize(o) for i, o in enumerate(n.options) if i != n.label]
            assert normalize(n.answer) not in others
    # Table 5 of Si et al. 2021 (AdvRACE): AddSent lengthens passages (~34 words on RACE test), CharSwap alters ~7 %
    add = _run(get_attack("addsent", "mc"), race)
    st = attack_stats([e for e, _ in add], [n or e for e, n in add], 0)
    assert 15 < st["length_change"]["passage"] < 45
    cs = _run(get_attack("charswap", "mc"), race)
    st = attack_stats([e for e, _ in cs], [n or e for e, n in cs], 0)
    assert 0.04 < st["share_words_altered"] < 0.12 and st["length_change"]["passage"] == 0


def test_squad_span_attacks(squad, wordnet_ok):
    for name, kw in [
        ("addsent", {}),
        ("addonesent", {}),
        ("addsentmod", {}),
        ("random_words", {}),
        ("char_noise", {}),
        ("word_noise", {}),
        ("char_noise", {"spare": "sentence"}),
        ("word_noise", {"spare": "sentence"}),
        ("char_noise", {"spare": "none"}),
        ("word_noise", {"spare": "none"}),
    ]:
        pairs = _run(get_attack(name, "span", **kw), squad)
        done = [(e, n) for e, n in pairs if n is not None]
        assert len(done) >= 0.5 * len(pairs), name
        for e, n in done:
            for a in n.answers:
                assert n.context[a.start : a.end] == a.text
            if kw.get("spare") == "none":  # the answers noised too, never cut
                assert [len(a.text.split()) for a in n.answers] == [len(a.text.split()) for a in e.answers]
            elif name.endswith("noise") and kw:  # spare="sentence"
                for s, t in answer_sentences(e):
                    assert e.context[s:t] in n.context
            elif not name.endswith("noise"):
                added = n.edits[-1].detail.lower()
                assert not any(a.text.lower() in added for a in e.answers)
