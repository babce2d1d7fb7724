"""SQuAD and DuReader span metrics: hand-computed cases and properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robust_mrc.metrics import dureader_scores, get_span_metric, squad_scores
from robust_mrc.metrics import dureader as zh
from robust_mrc.metrics import squad


# --------------------------------------------------------------- SQuAD, by hand
@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Denver Broncos", "denver broncos"),
        ("  the   Denver\tBroncos!! ", "denver broncos"),
        ("an apple, a pear", "apple pear"),
        ("Theater of the Absurd", "theater of absurd"),  # only whole-word articles go
        ("U.S. Army's", "us armys"),
        ("A", ""),
    ],
)
def test_normalize_answer(text, expected):
    assert squad.normalize_answer(text) == expected


def test_official_examples():
    assert squad.exact_match("the Denver Broncos", "Denver Broncos") == 1.0
    assert squad.f1("the Denver Broncos", "Denver Broncos") == 1.0
    assert squad.exact_match("Denver Broncos won", "Denver Broncos") == 0.0
    # 2 common tokens, precision 2/3, recall 1 -> F1 = 0.8
    assert squad.f1("Denver Broncos won", "Denver Broncos") == pytest.approx(0.8)
    # precision 1, recall 1/2 -> 2/3
    assert squad.f1("Broncos", "the Denver Broncos") == pytest.approx(2 / 3)
    assert squad.f1("Carolina Panthers", "Denver Broncos") == 0.0


def test_f1_counts_repeated_tokens_once_per_occurrence():
    # multiset overlap: "b b b" vs "b": 1 common; precision 1/3, recall 1 -> 0.5
    assert squad.f1("b b b", "b") == pytest.approx(0.5)
    # "x b b" vs "b b c": 2 common; precision 2/3, recall 2/3 -> 2/3
    assert squad.f1("x b b", "b b c") == pytest.approx(2 / 3)
    # order does not matter for F1, it does for EM
    assert squad.f1("Broncos Denver", "Denver Broncos") == 1.0
    assert squad.exact_match("Broncos Denver", "Denver Broncos") == 0.0


def test_max_over_ground_truths():
    golds = ["Levi's Stadium", "Santa Clara, California"]
    assert squad.metric_max_over_ground_truths(squad.exact_match, "Santa Clara", golds) == 0.0
    # vs "santa clara california": precision 1, recall 2/3 -> 0.8
    assert squad.metric_max_over_ground_truths(squad.f1, "Santa Clara", golds) == pytest.approx(0.8)
    assert squad.metric_max_over_ground_truths(squad.exact_match, "levis stadium", golds) == 1.0


def test_no_answer_questions():
    for fn in (squad.exact_match, squad.f1):
        assert squad.metric_max_over_ground_truths(fn, "", []) == 1.0
        assert squad.metric_max_over_ground_truths(fn, "Denver", []) == 0.0
        assert squad.metric_max_over_ground_truths(fn, "", ["Denver"]) == 0.0
        assert fn("the", "") == 1.0  # normalizes to nothing


def test_squad_scores_over_predicted_ids_only():
    references = {"q1": ["Denver Broncos"], "q2": ["Denver Broncos", "Broncos"], "q3": ["Paris"], "q4": []}
    predictions = {"q1": "the Denver Broncos", "q2": "Denver", "q4": ""}
    scores = squad_scores(predictions, references)
    # q1: EM 1 F1 1; q2: EM 0, F1 max(2/3, 0) = 2/3; q4: no answer, predicted "" -> 1, 1
    assert scores["exact_match"] == pytest.approx(100 * 2 / 3)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 3)
    assert set(scores) == {"exact_match", "f1"}
    assert squad_scores({}, references) == {"exact_match": 0.0, "f1": 0.0}
    assert squad_scores({"q3": "paris"}, {"q3": "Paris"}) == {"exact_match": 100.0, "f1": 100.0}


def test_squad_scores_unknown_id_raises():
    with pytest.raises(KeyError, match="no reference answers: 'q9'"):
        squad_scores({"q1": "x", "q9": "y"}, {"q1": ["x"]})


# --------------------------------------------------------------- DuReader, by hand
def test_normalize_zh():
    assert zh.normalize_zh("北京， 中国。") == "北京中国"
    assert zh.normalize_zh("“北京”《大学》（一）、……！？；：") == "北京大学一"
    assert zh.normalize_zh("Beijing 2008!") == "beijing2008"
    assert zh.normalize_zh("～１２３，〇") == "１２３〇"  # full-width digits and 〇 are text


def test_longest_common_substring():
    assert zh.longest_common_substring("在北京大学", "北京大学的学生") == 4
    assert zh.longest_common_substring("北上京", "北京") == 1  # a substring, not a subsequence
    assert zh.longest_common_substring("", "北京") == 0
    assert zh.longest_common_substring("上海", "北京") == 0


def test_dureader_em_f1_by_hand():
    assert zh.exact_match("“北京”", "北京") == 1.0
    assert zh.exact_match("北京市", "北京") == 0.0
    # lcs 2: precision 2/3, recall 1 -> 0.8
    assert zh.f1("北京市", "北京") == pytest.approx(0.8)
    # lcs 4 ("北京大学"): precision 4/5, recall 4/7 -> 2/3
    assert zh.f1("在北京大学", "北京大学的学生") == pytest.approx(2 / 3)
    # lcs 1: precision 1/3, recall 1/2 -> 0.4 (a subsequence metric would give 0.8)
    assert zh.f1("北上京", "北京") == pytest.approx(0.4)
    assert zh.f1("上海", "北京") == 0.0
    assert zh.f1("", "") == 1.0
    assert zh.f1("北京", "") == 0.0


def test_dureader_scores():
    references = {"a": ["北京", "北京市"], "b": ["北京大学的学生"], "c": ["x"], "d": []}
    predictions = {"a": "北京市。", "b": "在北京大学", "d": ""}
    scores = dureader_scores(predictions, references)
    assert scores["exact_match"] == pytest.approx(100 * 2 / 3)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 3)
    with pytest.raises(KeyError, match="'zz'"):
        dureader_scores({"zz": "x"}, references)


def test_get_span_metric():
    assert get_span_metric("squad") is squad_scores
    assert get_span_metric("dureader") is dureader_scores
    with pytest.raises(ValueError, match="unknown span metric 'bleu'.*dureader.*squad"):
        get_span_metric("bleu")


# --------------------------------------------------------------- properties
_EN_WORDS = st.sampled_from(["a", "an", "the", "The", "cat", "Cat", "dog", "dog!", "x", "(y)", "U.S.", ",", "  "])
_EN = st.lists(_EN_WORDS, max_size=8).map(" ".join)
_ZH = st.text(alphabet="北京上海大学的，。 “”a1", max_size=10)


@settings(max_examples=300, deadline=None)
@given(_EN, _EN)
def test_squad_f1_properties(pred, gold):
    value = squad.f1(pred, gold)
    assert 0.0 <= value <= 1.0
    assert squad.exact_match(pred, gold) <= value
    assert value == squad.f1(gold, pred)
    p, g = squad.normalize_answer(pred).split(), squad.normalize_answer(gold).split()
    if p and g:
        assert (value == 1.0) == (Counter(p) == Counter(g))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30))
def test_squad_f1_in_range_for_any_text(pred, gold):
    assert 0.0 <= squad.f1(pred, gold) <= 1.0
    assert squad.exact_match(pred, gold) <= squad.f1(pred, gold)
    assert squad.exact_match(pred, pred) == squad.f1(pred, pred) == 1.0


@settings(max_examples=300, deadline=None)
@given(_ZH, _ZH)
def test_dureader_f1_properties(pred, gold):
    value = zh.f1(pred, gold)
    assert 0.0 <= value <= 1.0
    assert zh.exact_match(pred, gold) <= value
    assert value == pytest.approx(zh.f1(gold, pred))
    p, g = zh.normalize_zh(pred), zh.normalize_zh(gold)
    if p and g:
        assert (value == 1.0) == (p == g)
        lcs = zh.longest_common_substring(p, g)
        assert lcs == max(
            (j - i for i in range(len(p)) for j in range(i + 1, len(p) + 1) if p[i:j] in g), default=0
        )


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdef"), st.tuples(_EN, st.lists(_EN, max_size=3)), max_size=6))
def test_corpus_scores_are_means_of_per_question_maxima(data):
    predictions = {k: pred for k, (pred, _) in data.items()}
    references = {k: golds for k, (_, golds) in data.items()}
    scores = squad_scores(predictions, references)
    assert 0.0 <= scores["exact_match"] <= scores["f1"] <= 100.0
    if data:
        expected = sum(squad.metric_max_over_ground_truths(squad.f1, p, g) for p, g in data.values())
        assert scores["f1"] == pytest.approx(100 * expected / len(data))
