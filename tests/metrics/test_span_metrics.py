"""SQuAD v1.1 / v2.0 and DuReader_robust span metrics: the official scripts' scores (oracle
files and inlined oracle cases), hand-computed cases, corpus averaging, adversarial grouping and
properties."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robust_mrc.metrics import adversarial as adv
from robust_mrc.metrics import dureader as zh
from robust_mrc.metrics import (
    dureader_scores,
    get_span_metric,
    question_exact_match,
    question_f1,
    span_metric,
    squad,
    squad_scores,
    squad_v1_scores,
    squad_v2_scores,
)

# ------------------------------------------------ the official scripts' scores (oracle files)
# (column of the oracle file, registry name of the scorer, "em" or "f1")
SQUAD_COLUMNS = [("v11_em", "squad_v1", "em"), ("v11_f1", "squad_v1", "f1"), ("v20_em", "squad_v2", "em"), ("v20_f1", "squad_v2", "f1")]
DUREADER_COLUMNS = [("dr_em", "dureader", "em"), ("dr_f1", "dureader", "f1")]


def _score(metric: str, which: str, pred: str, golds: list[str]) -> float:
    return (question_exact_match if which == "em" else question_f1)(metric, pred, golds)


@pytest.mark.parametrize(
    "file, columns, min_cases",
    [("squad_en.jsonl", SQUAD_COLUMNS, 2000), ("dureader_zh.jsonl", DUREADER_COLUMNS, 2000)],
)
def test_every_oracle_case_is_reproduced(shared_data, file, columns, min_cases):
    """Each line of ../shared/data/metric_oracles/ holds the per-question scores the official
    scripts gave; every column present on a line must be reproduced to 1e-9."""
    lines = (shared_data / "metric_oracles" / file).read_text(encoding="utf-8").splitlines()
    assert len(lines) >= min_cases
    checked, wrong = Counter(), []
    for line in lines:
        case = json.loads(line)
        for column, metric, which in columns:
            if column in case:
                got = _score(metric, which, case["pred"], case["golds"])
                checked[column] += 1
                if abs(got - case[column]) > 1e-9:
                    wrong.append((case["id"], column, case[column], got))
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[:5]}"
    # every column was checked on (nearly) every line (the DuReader script has no F1 for no gold)
    assert all(checked[c] >= len(lines) - 1 for c, _, _ in columns), checked


# Oracle lines inlined so that the default run checks them without ../shared (copied verbatim,
# the ids are the oracle file's).
INLINE_SQUAD = [
    # a gold of "." normalizes to nothing: v1.1 EM 1 but F1 0 (no shared token); v2.0 drops that
    # gold, leaves [""], and scores both sides empty as equal
    ("edge2#edge_gold_punct_only", ",", ["."], 1.0, 0.0, 1.0, 1.0),
    ("edge1#edge_gold_punct_only", "London", [".", "Paris"], 0.0, 0.0, 0.0, 0.0),
    ("edge7#edge_gold_empty_string", "x", [""], 0.0, 0.0, 0.0, 0.0),
    ("edge10#edge_pred_article_gold_word", "the", ["Paris"], 0.0, 0.0, 0.0, 0.0),
    ("edge19#edge_repeat", "a a b", ["a b b"], 0.0, 2 / 3, 0.0, 2 / 3),
    # U+200B is no white space for str.split: "\u200barabia" is one token
    ("57265526708984140094c2bf#zero_width_space", "Saudi \u200bArabia", ["Saudi Arabia"] * 5, 0.0, 0.5, 0.0, 0.5),
    # U+3000 is white space
    (
        "572908c13f37b31900477fbe#ideographic_space",
        "Leukocytes\u3000(white\u3000blood\u3000cells)",
        ["Leukocytes (white blood cells)", "white blood cells", "white blood cells"],
        1.0,
        1.0,
        1.0,
        1.0,
    ),
    # curly quotes are not in string.punctuation; the em dash glues two words into one token
    (
        "5726a784708984140094cd02#quotes_curly",
        "\u201cthe need for alliances\u201d",
        ["the need for alliances", "need for alliances", "need for alliances."],
        0.0,
        0.5714285714285715,
        0.0,
        0.5714285714285715,
    ),
    ("56beb2153aeaaa14008c9226#emdash_glued", "May\u201421, 2013", ["May 21, 2013", "May 21, 2013", "May 21, 2013,"], 0.0, 0.4, 0.0, 0.4),
    ("57114aceb654c5140001fc49#trail_period", "port.", ["port", "additional port", "an additional port"], 1.0, 1.0, 1.0, 1.0),
]

INLINE_DUREADER = [
    # runs of Latin letters / digits are one token each
    ("zedge1#edge_mixed_latin", "XP", ["XPE"], 0.0, 0.0),
    ("zedge2#edge_mixed_digits", "2018年", ["2018年6月"], 0.0, 2 / 3),
    ("zedge13#edge_fullwidth_digits", "２０１８年", ["2018年"], 0.0, 0.5),
    # both sides normalize to nothing: EM 1, F1 0 (no common token)
    ("zedge7#edge_both_empty", "", [""], 1.0, 0.0),
    ("zedge8#edge_both_punct", "。", ["，"], 1.0, 0.0),
    # "=" is a token of its own; "|" is in the script's list, "%" is not
    ("zedge10#edge_equal_sign", "a=", ["a=b"], 0.0, 0.8),
    ("zedge11#edge_pipe", "a|b", ["ab"], 1.0, 1.0),
    ("zedge12#edge_percent", "50%", ["50"], 0.0, 0.0),
    # kana are not CJK ideographs: one run each
    ("zedge17#edge_kana", "カタカナ", ["カタ"], 0.0, 0.0),
    # ASCII "." stays (one more token); so do "…" and spaces (U+3000 too: not CJK, not removed)
    ("0de639bb338c52c7c0ab2ff0e1645cf8#ascii_period", "今年年中.", ["今年年中"], 0.0, 0.888888888888889),
    ("bf84599818d7f76af1b1bfc16f12aca2#zh_ellipsis_single", "成都九龙医院…", ["成都九龙医院"], 0.0, 0.923076923076923),
    ("871d3d6ab0de655294044873b834dd03#space_between_chars", "1 6 岁", ["16岁"], 0.0, 0.5),
    ("07e3d72a9b1a2cae3b83f597132143bf#latin_word_gap", "16元 abc def", ["16元"], 0.0, 0.8),
    ("702ae5866ff1a198956dd618e4c572d4#ideographic_space", "\u3000升温30度范围内", ["升温30度范围内"], 0.0, 0.9333333333333333),
    # "·" is in the list
    ("6533b2772dba0c4cf71e929876a39fe6#middle_dot", "7·月·1·3·日", ["7月13日"], 1.0, 1.0),
]


@pytest.mark.parametrize("case_id, pred, golds, v11_em, v11_f1, v20_em, v20_f1", INLINE_SQUAD, ids=[c[0] for c in INLINE_SQUAD])
def test_inlined_squad_oracle_cases(case_id, pred, golds, v11_em, v11_f1, v20_em, v20_f1):
    got = [_score(m, w, pred, golds) for _, m, w in SQUAD_COLUMNS]
    assert got == pytest.approx([v11_em, v11_f1, v20_em, v20_f1], abs=1e-9)


@pytest.mark.parametrize("case_id, pred, golds, dr_em, dr_f1", INLINE_DUREADER, ids=[c[0] for c in INLINE_DUREADER])
def test_inlined_dureader_oracle_cases(case_id, pred, golds, dr_em, dr_f1):
    got = [_score(m, w, pred, golds) for _, m, w in DUREADER_COLUMNS]
    assert got == pytest.approx([dr_em, dr_f1], abs=1e-9)


def test_dureader_without_gold_scores_zero():
    # oracle zedge14: golds [] -> the official script's EM is 0 (its F1 fails on an empty max)
    assert question_exact_match("dureader", "", []) == 0.0
    assert question_f1("dureader", "", []) == 0.0


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
    # Each version follows its own official script (neither scores both sides empty as F1 1).
    # v1.1: an empty gold list is read as [""]; EM compares normalized strings (1), F1 counts
    # shared tokens (none -> 0), as evaluate-v1.1.py does for a gold of "".
    v1, v2 = span_metric("squad_v1"), span_metric("squad_v2")
    assert (v1.exact_match("", []), v1.f1("", [])) == (1.0, 0.0)
    assert (v1.exact_match("Denver", []), v1.f1("Denver", [])) == (0.0, 0.0)
    assert squad.f1("the", "") == 0.0 and squad.exact_match("the", "") == 1.0
    # v2.0: unanswerable (golds [] or only golds that normalize to nothing) -> "" is fully right
    for golds in ([], [""], [".", "the"]):
        assert (v2.exact_match("", golds), v2.f1("", golds)) == (1.0, 1.0)
        assert (v2.exact_match("Denver", golds), v2.f1("Denver", golds)) == (0.0, 0.0)
    assert squad.f1_v2("the", "") == 1.0
    for scorer in (v1, v2):
        assert (scorer.exact_match("", ["Denver"]), scorer.f1("", ["Denver"])) == (0.0, 0.0)


def test_corpus_scores_average_over_every_reference_question():
    # As the official scripts do: the average runs over the data set (a missing prediction scores
    # 0), not over the predicted ids, and predictions for other ids are ignored.
    references = {"q1": ["Denver Broncos"], "q2": ["Denver Broncos", "Broncos"], "q3": ["Paris"], "q4": ["Oslo"]}
    predictions = {"q1": "the Denver Broncos", "q2": "Denver", "q4": "oslo", "q9": "extra"}
    scores = squad_scores(predictions, references)
    # q1: 1/1; q2: EM 0, F1 max(2/3, 0); q3 missing: 0/0; q4: 1/1; q9 ignored
    assert scores == pytest.approx({"exact_match": 100 * 2 / 4, "f1": 100 * (1 + 2 / 3 + 0 + 1) / 4})
    assert set(scores) == {"exact_match", "f1"}
    assert squad_scores({}, references) == {"exact_match": 0.0, "f1": 0.0}
    assert squad_scores({"x": "y"}, {}) == {"exact_match": 0.0, "f1": 0.0}
    assert squad_scores({"q3": "paris"}, {"q3": "Paris"}) == {"exact_match": 100.0, "f1": 100.0}
    # the same averaging for every scorer
    for name in ("squad_v1", "squad_v2", "dureader"):
        assert get_span_metric(name)({"q3": "Paris", "zz": "x"}, {"q3": ["Paris"], "q5": ["Rome"]}) == {"exact_match": 50.0, "f1": 50.0}


def test_squad_v2_scores_unanswerable_questions():
    references = {"a": [], "b": ["."], "c": ["Paris"], "d": []}
    predictions = {"a": "", "b": ",", "c": "Paris", "d": "Rome"}
    # a, b: unanswerable and no answer given -> 1/1; c -> 1/1; d: an answer to nothing -> 0/0
    assert squad_v2_scores(predictions, references) == {"exact_match": 75.0, "f1": 75.0}
    # v1.1 on the same: EM 1 for a and b, F1 0 (nothing shared)
    assert squad_v1_scores(predictions, references) == {"exact_match": 75.0, "f1": 25.0}


# --------------------------------------------------------------- DuReader, by hand
def test_normalize_dureader():
    # The official script removes only its own list -- not spaces, not ASCII ".!?", not "…"
    # (its "……" entry is two characters and never matches one).
    assert zh.normalize_dureader("北京， 中国。") == "北京 中国"
    assert zh.normalize_dureader("“北京”《大学》（一）、……！？；：") == "北京大学一……"
    assert zh.normalize_dureader("Beijing 2008!") == "beijing 2008!"
    assert zh.normalize_dureader("～１２３，〇") == "１２３〇"
    assert zh.normalize_dureader("a:b_c`d(e)f,g|h") == "abcdefgh"
    assert zh.normalize_zh is zh.normalize_dureader  # the old name, kept for callers


def test_tokenize_dureader():
    assert zh.tokenize_dureader("2018年6月") == ["2018", "年", "6", "月"]
    assert zh.tokenize_dureader("a b北京x=y") == ["a b", "北", "京", "x", "=", "y"]
    assert zh.tokenize_dureader("カタカナ\u3000１２") == ["カタカナ\u3000１２"]
    assert zh.tokenize_dureader("𠀀一") == ["𠀀", "一"]
    assert zh.tokenize_dureader("") == []
    assert zh.is_cjk("中") and zh.is_cjk("𠀀") and not zh.is_cjk("カ") and not zh.is_cjk("\u3000")


def test_longest_common_substring():
    assert zh.longest_common_substring("在北京大学", "北京大学的学生") == 4
    assert zh.longest_common_substring("北上京", "北京") == 1  # a substring, not a subsequence
    assert zh.longest_common_substring("", "北京") == 0
    assert zh.longest_common_substring("上海", "北京") == 0
    assert zh.longest_common_substring(["20", "年", "6"], ["2018", "年", "6"]) == 2  # token lists


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
    # both sides empty -> F1 0 (no common token; official), EM 1
    assert zh.f1("", "") == 0.0 and zh.exact_match("", "") == 1.0
    assert zh.f1("北京", "") == 0.0
    # Latin/digit runs are single tokens: "2018" and "201" share nothing
    assert zh.f1("201年", "2018年") == pytest.approx(0.5)


def test_dureader_scores():
    # Averaged over every reference question (c is missing -> 0), an empty
    # gold list scores 0 (official), unknown predicted ids are ignored instead of raising.
    references = {"a": ["北京", "北京市"], "b": ["北京大学的学生"], "c": ["x"], "d": []}
    predictions = {"a": "北京市。", "b": "在北京大学", "d": "", "zz": "x"}
    scores = dureader_scores(predictions, references)
    assert scores["exact_match"] == pytest.approx(100 * 1 / 4)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3) / 4)


def test_get_span_metric():
    assert get_span_metric("squad") is squad_scores is squad_v1_scores  # configs' "metric: squad"
    assert get_span_metric("squad_v1") is squad_v1_scores
    assert get_span_metric("squad_v2") is squad_v2_scores
    assert get_span_metric("dureader") is dureader_scores
    assert span_metric("squad") is span_metric("squad_v1")
    with pytest.raises(ValueError, match="unknown span metric 'bleu'.*dureader.*squad"):
        get_span_metric("bleu")
    with pytest.raises(ValueError, match="unknown span metric"):
        question_exact_match("bleu", "x", ["x"])


# --------------------------------------------------------------- properties
_EN_WORDS = st.sampled_from(["a", "an", "the", "The", "cat", "Cat", "dog", "dog!", "x", "(y)", "U.S.", ",", "  "])
_EN = st.lists(_EN_WORDS, max_size=8).map(" ".join)
_ZH = st.text(alphabet="北京上海大学的，。 “”a1", max_size=10)


def _overlap_f1(common: int, n_pred: int, n_gold: int) -> float:
    """The harmonic mean of precision and recall, written as 2 * common / (n_pred + n_gold)."""
    return 2 * common / (n_pred + n_gold) if common else 0.0


def _squad_f1_by_hand(pred: str, gold: str) -> float:
    p, g = squad.normalize_answer(pred).split(), squad.normalize_answer(gold).split()
    return _overlap_f1(sum((Counter(p) & Counter(g)).values()), len(p), len(g))


@settings(max_examples=300, deadline=None)
@given(_EN, _EN)
def test_squad_f1_properties(pred, gold):
    value = squad.f1(pred, gold)
    assert value == pytest.approx(_squad_f1_by_hand(pred, gold))
    assert value == squad.f1(gold, pred)
    p, g = squad.normalize_answer(pred).split(), squad.normalize_answer(gold).split()
    if p and g:
        assert squad.exact_match(pred, gold) <= value
        assert (value == 1.0) == (Counter(p) == Counter(g))
        assert squad.f1_v2(pred, gold) == value
    else:  # v1.1: nothing to share -> 0, whatever EM says; v2.0: equal emptiness -> 1
        assert value == 0.0
        assert squad.f1_v2(pred, gold) == float(p == g)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30))
def test_squad_f1_of_any_text(pred, gold):
    assert squad.f1(pred, gold) == pytest.approx(_squad_f1_by_hand(pred, gold))
    assert squad.exact_match(pred, pred) == 1.0
    # v1.1 gives an answer that normalizes to nothing F1 0 even against itself
    assert squad.f1(pred, pred) == float(bool(squad.normalize_answer(pred)))


@settings(max_examples=300, deadline=None)
@given(_ZH, _ZH)
def test_dureader_f1_properties(pred, gold):
    value = zh.f1(pred, gold)
    pt, gt = zh.tokenize_dureader(zh.normalize_dureader(pred)), zh.tokenize_dureader(zh.normalize_dureader(gold))
    longest_run = max(
        (j - i for i in range(len(pt)) for j in range(i + 1, len(pt) + 1) if any(gt[k : k + j - i] == pt[i:j] for k in range(len(gt)))),
        default=0,
    )
    assert value == pytest.approx(_overlap_f1(longest_run, len(pt), len(gt)))
    assert value == pytest.approx(zh.f1(gold, pred))
    p, g = zh.normalize_dureader(pred), zh.normalize_dureader(gold)
    assert "".join(zh.tokenize_dureader(p)) == p  # tokens cover the string
    if p and g:
        assert zh.exact_match(pred, gold) <= value
        assert (value == 1.0) == (p == g)
        lcs = zh.longest_common_substring(p, g)
        assert lcs == max((j - i for i in range(len(p)) for j in range(i + 1, len(p) + 1) if p[i:j] in g), default=0)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdef"), st.tuples(_EN, st.lists(_EN, max_size=3)), max_size=6))
def test_corpus_scores_are_means_of_per_question_maxima(data):
    predictions = {k: pred for k, (pred, _) in data.items()}
    references = {k: golds for k, (_, golds) in data.items()}
    scores = squad_scores(predictions, references)
    if data:
        expected = sum(squad.metric_max_over_ground_truths(squad.f1, p, g) for p, g in data.values())
        assert scores["f1"] == pytest.approx(100 * expected / len(data))
        expected = sum(squad.metric_max_over_ground_truths(squad.exact_match, p, g) for p, g in data.values())
        assert scores["exact_match"] == pytest.approx(100 * expected / len(data))


# --------------------------------------------------------------- Jia & Liang grouping
def test_original_id_splits_at_the_first_separator():
    assert adv.original_id("56be4db0acb8001400a502ec") == "56be4db0acb8001400a502ec"
    assert adv.original_id("56be4db0acb8001400a502ec-high-conf-turk0") == "56be4db0acb8001400a502ec"
    assert adv.original_id("q1#v2", sep="#") == "q1"


def _grouped(predictions, references, **kw):
    return adv.adversarial_scores(predictions, references, **kw)


def test_adversarial_variant_replaces_the_original():
    # q1: original wrong, its only variant right -> the variant is the adversary (adv > orig);
    # q2: original right, variant wrong -> adversary wrong
    references = {"q1": ["Paris"], "q1-adv": ["Paris"], "q2": ["Rome"], "q2-adv": ["Rome"]}
    predictions = {"q1": "Lyon", "q1-adv": "Paris", "q2": "Rome", "q2-adv": "Milan"}
    out = _grouped(predictions, references)
    assert out == pytest.approx(
        {
            "exact_match": 50.0,
            "f1": 50.0,  # all four questions, one by one
            "orig_exact_match": 50.0,
            "orig_f1": 50.0,  # q1 wrong, q2 right
            "adv_exact_match": 50.0,
            "adv_f1": 50.0,  # q1-adv right, q2-adv wrong
        }
    )
    assert adv.choose_adversaries(references, {"q1": (0.0, 0.0), "q1-adv": (1.0, 1.0)}) == {"q1": "q1-adv", "q2": None}


def test_adversarial_equal_f1_first_variant_in_file_order_wins():
    # both variants have F1 1 (same tokens), but only "Denver Broncos" has EM 1 (order matters)
    golds = ["Denver Broncos"]
    predictions = {"q": "Denver Broncos", "q-a": "Broncos Denver", "q-b": "the Denver Broncos"}
    first_a = _grouped(predictions, {"q": golds, "q-a": golds, "q-b": golds})
    first_b = _grouped(predictions, {"q": golds, "q-b": golds, "q-a": golds})
    assert (first_a["adv_exact_match"], first_a["adv_f1"]) == (0.0, 100.0)  # q-a kept its place
    assert (first_b["adv_exact_match"], first_b["adv_f1"]) == (100.0, 100.0)  # q-b first now
    assert first_a["orig_exact_match"] == first_b["orig_exact_match"] == 100.0
    # a later variant with a strictly lower F1 replaces the first
    scores = {"q": (1.0, 1.0), "q-a": (1.0, 0.5), "q-b": (0.0, 0.25)}
    assert adv.choose_adversaries(["q", "q-a", "q-b"], scores) == {"q": "q-b"}
    lower = adv.grouped_scores(["q", "q-a", "q-b"], scores)
    assert (lower["adv_exact_match"], lower["adv_f1"]) == (0.0, 25.0)


def test_adversarial_unanswered_variants_fall_back_to_the_original():
    references = {"q1": ["Paris"], "q1-a": ["Paris"], "q1-b": ["Paris"], "q2": ["Rome"], "q2-a": ["Rome"]}
    # q1: no variant answered -> the original (right) stands in; q2: nothing answered -> 0
    out = _grouped({"q1": "Paris"}, references)
    assert out == pytest.approx(
        {
            "exact_match": 20.0,
            "f1": 20.0,
            "orig_exact_match": 50.0,
            "orig_f1": 50.0,
            "adv_exact_match": 50.0,
            "adv_f1": 50.0,
        }
    )
    # one answered variant (wrong) beats the original, whatever the original scored
    out = _grouped({"q1": "Paris", "q1-b": "Lyon"}, references)
    assert (out["adv_exact_match"], out["orig_exact_match"]) == (0.0, 50.0)


def test_adversarial_group_without_its_original_in_the_file():
    # "q9-a" has no original "q9" in the file: its group counts in both denominators, its
    # original contributes 0 (Jia & Liang's evaluator), its variant is the adversary
    references = {"q1": ["Paris"], "q1-a": ["Paris"], "q9-a": ["Oslo"]}
    out = _grouped({"q1": "Paris", "q1-a": "Paris", "q9-a": "Oslo"}, references)
    assert out == pytest.approx(
        {
            "exact_match": 100.0,
            "f1": 100.0,
            "orig_exact_match": 50.0,
            "orig_f1": 50.0,
            "adv_exact_match": 100.0,
            "adv_f1": 100.0,
        }
    )
    assert adv.grouped_scores([], {}) == {"orig_exact_match": 0.0, "orig_f1": 0.0, "adv_exact_match": 0.0, "adv_f1": 0.0}


def test_adversarial_custom_id_rule_and_metric():
    references = {"q1": ["北京"], "q1#p1": ["北京"]}
    out = _grouped({"q1": "北京", "q1#p1": "北 京"}, references, metric="dureader", original_of=lambda qid: adv.original_id(qid, sep="#"))
    # dureader: "北 京" -> tokens 北, " ", 京 -> lcs 1: p 1/3, r 1/2 -> F1 0.4, EM 0
    assert out["adv_f1"] == pytest.approx(40.0) and out["adv_exact_match"] == 0.0
    assert out["orig_f1"] == 100.0
