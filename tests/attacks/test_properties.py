"""Property-based guarantees (hypothesis): labels, answers and offsets survive every attack."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robust_mrc.attacks import example_rng, get_attack
from robust_mrc.attacks.span.common import answer_sentences
from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.data.text import normalize

WORDS = [
    "school",
    "teacher",
    "morning",
    "happy",
    "village",
    "Tom",
    "quickly",
    "river",
    "green",
    "big",
    "walks",
    "planted",
    "trees",
    "the",
    "a",
    "of",
    "is",
    "was",
    "not",
    "120",
    "1984",
    "story",
    "Mary",
]
sentence = st.lists(st.sampled_from(WORDS), min_size=3, max_size=12).map(lambda ws: " ".join(ws).capitalize() + ".")
passage = st.lists(sentence, min_size=1, max_size=6).map(" ".join)
option = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mc_example(draw):
    opts = draw(st.lists(option, min_size=2, max_size=5, unique_by=normalize).filter(lambda o: all(normalize(x) for x in o)))
    q = draw(sentence)
    if draw(st.booleans()):
        q = q.rstrip(".") + " _ ."
    return MCExample("h", draw(passage), q, tuple(opts), draw(st.integers(0, len(opts) - 1)))


@st.composite
def span_example(draw):
    sents = draw(st.lists(sentence, min_size=1, max_size=6))
    ctx = " ".join(sents)
    k = draw(st.integers(0, len(sents) - 1))
    start = len(" ".join(sents[:k])) + (1 if k else 0)
    ws = sents[k].rstrip(".").split()
    i = draw(st.integers(0, len(ws) - 1))
    j = draw(st.integers(i + 1, len(ws)))
    text = " ".join(ws[i:j])
    s = start + len(" ".join(ws[:i])) + (1 if i else 0)
    return SpanExample("h", ctx, draw(sentence).rstrip(".") + "?", (Answer(text, s),))


MC_CASES = [
    ("charswap", {}),
    ("diagnosis", {}),
    ("de_lexical", {}),
    ("magnet", {"pool": ["Walk to the river.", "A big green tree.", "Nothing at all."]}),
    ("extra_option", {"pool": ["Walk to the river.", "A big green tree."], "position": "random"}),
    ("addsent", {}),
    ("extraction_cue", {}),
    ("magnet_cue", {}),
]
SPAN_CASES = [
    ("addsent", {}),
    ("addsent_cue", {}),
    ("addsent_cue", {"position": "random"}),
    ("addonesent", {}),
    ("addsentmod", {}),
    ("random_words", {"position": "random"}),
    ("char_noise", {"spare": "span"}),
    ("word_noise", {"spare": "span"}),
    ("char_noise", {"spare": "sentence"}),
    ("word_noise", {"spare": "sentence"}),
    ("char_noise", {"spare": "none"}),
    ("word_noise", {"spare": "none"}),
]


@SETTINGS
@given(ex=mc_example(), seed=st.integers(0, 2**31))
def test_mc_label_and_answer_kept(ex, seed):
    for name, kw in MC_CASES:
        new = get_attack(name, "mc", **kw)(ex, example_rng(seed, 0, ex.id, name))
        if new is None:
            continue
        assert new.options[new.label] == ex.options[ex.label]
        others = [normalize(o) for i, o in enumerate(new.options) if i != new.label]
        assert normalize(new.answer) not in others
        assert 2 <= len(new.options) <= 5
        assert new.edits and new.edits[-1].attack == name


@SETTINGS
@given(ex=span_example(), seed=st.integers(0, 2**31))
def test_span_offsets_and_added_text(ex, seed):
    for name, kw in SPAN_CASES:
        new = get_attack(name, "span", **kw)(ex, example_rng(seed, 0, ex.id, name))
        if new is None:
            continue
        # SpanExample validates offsets itself; check explicitly as well
        for old, a in zip(ex.answers, new.answers):
            assert new.context[a.start : a.end] == a.text
            if kw.get("spare") == "none":  # training copies: the answer noised where it was
                assert name == "word_noise" or (a.start == old.start and len(a.text) == len(old.text))
            else:
                assert a.text == old.text
        if name in ("char_noise", "word_noise") and kw.get("spare") in ("span", "none"):
            continue  # the answers (checked above) are all that must stay
        if name in ("char_noise", "word_noise"):  # spare="sentence": the answer sentences stay
            for s, e in answer_sentences(ex):
                assert ex.context[s:e] in new.context
            a0, n0 = ex.answers[0], new.answers[0]
            s, e = next((s, e) for s, e in answer_sentences(ex) if s <= a0.start < e)
            ns = n0.start - (a0.start - s)
            assert new.context[ns : ns + (e - s)] == ex.context[s:e]  # byte-identical, in place
        elif name == "addsent_cue":  # the cue probe's sentence states the gold answer
            assert ex.answers[0].text.strip().lower() in new.edits[-1].detail.lower()
        else:
            added = new.edits[-1].detail
            assert ex.answers[0].text.lower() not in added.lower()


@SETTINGS
@given(ex=mc_example(), seed=st.integers(0, 2**31))
def test_same_seed_same_output(ex, seed):
    for name, kw in MC_CASES[:3]:
        a = get_attack(name, "mc", **kw)
        assert a(ex, example_rng(seed, 0, ex.id, name)) == a(ex, example_rng(seed, 0, ex.id, name))
