"""robust_mrc.diagnostics: hand-computed cases for every function (fast, model-free)."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest

from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.diagnostics import confidence as C
from robust_mrc.diagnostics import dpr as D
from robust_mrc.diagnostics import error_analysis as A
from robust_mrc.diagnostics import interference as M
from robust_mrc.diagnostics import report as R
from robust_mrc.diagnostics import votes as E
from robust_mrc.diagnostics._io import PNG_MAGIC
from robust_mrc.metrics import confidence as K

INF = math.inf
NAN = math.nan


def is_png(path) -> bool:
    return path.is_file() and path.read_bytes()[:8] == PNG_MAGIC


# --------------------------------------------------------------------------- magnet (seed 002)

# 3 questions (own options padded with -inf / NaN) x 4 pool options
OWN = [[1.0, 2.0, -INF], [0.5, NAN, NAN], [3.0, 1.0, 2.0]]  # best own score: 2.0, 0.5, 3.0
POOL = [
    [2.5, 2.0, 1.0, 5.0],  # beats 2.0: k0, k3 (k1 ties: no)
    [0.4, 0.6, 1.0, 0.5],  # beats 0.5: k1, k2 (k3 ties: no)
    [3.5, 2.9, 4.0, 3.0],  # beats 3.0: k0, k2 (k3 ties: no)
]


def test_interference_scores_paper_average():
    T = M.interference_scores(OWN, POOL)
    np.testing.assert_allclose(T, [2 / 3, 1 / 3, 2 / 3, 1 / 3])


def test_interference_scores_masked_pairs_leave_the_average():
    exclude = np.zeros((3, 4), dtype=bool)
    exclude[0, 0] = exclude[2, 2] = True
    exclude[:, 3] = True
    T = M.interference_scores(OWN, POOL, exclude=exclude)
    # k0: rows 1, 2 -> 0 + 1 of 2; k1 untouched; k2: rows 0, 1 -> 0 + 1 of 2; k3: no pair -> NaN
    np.testing.assert_allclose(T[:3], [1 / 2, 1 / 3, 1 / 2])
    assert math.isnan(T[3])
    # the same pairs as a positive mask (how the evaluation passes it), and both combined
    np.testing.assert_allclose(M.interference_scores(OWN, POOL, ~exclude), T)
    T2, hits, counted = M.interference_scores(OWN, POOL, ~exclude, exclude=exclude, return_counts=True)
    np.testing.assert_allclose(T2, T)
    assert hits.tolist() == [1, 1, 1, 0] and counted.tolist() == [2, 3, 2, 0]


def test_interference_scores_nan_pool_scores_and_padding_rows():
    pool = np.array(POOL)
    pool[1, 1] = NAN  # not scored: k1 now counts rows 0 and 2 only, neither interferes
    own = np.array(OWN)
    own[2] = NAN  # a question without any own score is left out for every option
    T = M.interference_scores(own, pool)
    np.testing.assert_allclose(T, [1 / 2, 0.0, 1 / 2, 1 / 2])
    with pytest.raises(ValueError, match="questions"):
        M.interference_scores(OWN, POOL[:2])


def test_pool_exclusion_mask_identical_options_and_same_source():
    own = [["The cat.", "a dog"], ["Fish"]]
    pool = ["the cat", "A dog!", "fish", "bird"]
    ex = M.pool_exclusion_mask(own, pool)
    assert ex.tolist() == [[True, True, False, False], [False, False, True, False]]
    ex = M.pool_exclusion_mask(own, pool, own_sources=["p1", "p2"], pool_sources=["p9", "", "p9", "p1"])
    assert ex.tolist() == [[True, True, False, True], [False, False, True, False]]
    assert (M.pool_admissible_mask(own, pool) == ~M.pool_exclusion_mask(own, pool)).all()
    # custom normalization: exact strings only
    assert M.pool_exclusion_mask(own, pool, normalize=lambda s: s).sum() == 0


def test_rank_pool_descending_stable_nan_last():
    T = [0.5, 1 / 3, 0.5, NAN, 0.9]
    ranked = M.rank_pool(["a", "b", "c", "d", "e"], T)
    assert [o for o, _ in ranked] == ["e", "a", "c", "b", "d"]
    assert ranked[0][1] == 0.9 and math.isnan(ranked[-1][1])
    with pytest.raises(ValueError):
        M.rank_pool(["a"], [0.1, 0.2])


def test_write_ranked_pool_formats_load_as_option_pools(tmp_path):
    from robust_mrc.attacks.pools import OptionPool

    ranked = [("all of the\nabove", 0.8), ("not mentioned", 0.5), ("   ", 0.4), ("x", NAN)]
    jl = M.write_ranked_pool(tmp_path / "pool.jsonl", ranked)
    recs = [json.loads(line) for line in jl.read_text().splitlines()]
    assert recs[0] == {"option": "all of the\nabove", "T": 0.8, "rank": 1}
    assert recs[3] == {"option": "x", "T": None, "rank": 4}
    back = M.read_ranked_pool(jl)
    assert back[:2] == ranked[:2] and math.isnan(back[3][1])
    assert [e.option for e in OptionPool.from_file(jl).entries] == ["all of the\nabove", "not mentioned", "x"]

    txt = M.write_ranked_pool(tmp_path / "pool.txt", ranked, top=3)
    assert txt.read_text() == "all of the above\nnot mentioned\n"
    assert [e.option for e in OptionPool.from_file(txt).entries] == ["all of the above", "not mentioned"]
    with pytest.raises(ValueError, match="jsonl"):
        M.write_ranked_pool(tmp_path / "pool.csv", ranked)
    assert not list(tmp_path.glob(".*tmp"))  # atomic writes leave no temporary file


def test_plot_sorted_scores_png(tmp_path):
    assert is_png(M.plot_sorted_scores([0.1, 0.8, NAN, 0.3], tmp_path / "one.png"))
    assert is_png(M.plot_sorted_scores({"bert": [0.2, 0.1], "roberta": [0.5, 0.0, 0.9]}, tmp_path / "sub" / "two.png"))


# --------------------------------------------------------------------------- DPR (seed 003)


def test_dpr_pairs_with_squad_normalization():
    a = {"1": "The Cat", "2": "dog", "3": "a bird.", "4": "red"}
    b = {"1p": "cat", "2p": "Dogs", "3p": "Bird", "4p": "blue"}
    pairs = [("1", "1p"), ("2", "2p"), ("3", "3p"), ("4", "4p"), ("5", "5p")]
    out = D.different_prediction_ratio(a, b, pairs, normalize="squad")
    assert out == {"dpr": 0.5, "n": 4, "n_changed": 2, "changed_ids": ["2p", "4p"], "n_missing": 1}
    assert D.different_prediction_ratio(a, b, pairs)["dpr"] == 0.5  # auto: English -> squad
    assert D.different_prediction_ratio(a, b, pairs, normalize=None)["dpr"] == 1.0
    assert D.different_prediction_ratio(a, b, pairs, normalize=str.lower)["changed_ids"] == ["1p", "2p", "3p", "4p"]


def test_dpr_same_ids_ints_and_chinese():
    out = D.different_prediction_ratio({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 0}, normalize="mc")
    assert (out["dpr"], out["n"], out["changed_ids"], out["n_missing"]) == (0.5, 2, ["b"], 0)
    assert D.different_prediction_ratio({"a": np.int64(2)}, {"a": 2})["dpr"] == 0.0
    # Chinese answers are compared as DuReader_robust's official scorer compares them (issue 16):
    # "。" is removed, a space is not, so "北京。" equals "北京" but not "北 京" (official EM 0;
    # the earlier looser normalization dropped all spaces and punctuation).
    zh = D.different_prediction_ratio({"q": "北京。", "r": "上海", "s": "北京"}, {"q": "北京", "r": "北京", "s": "北 京"})
    assert (zh["dpr"], zh["changed_ids"]) == (2 / 3, ["r", "s"])
    assert D.different_prediction_ratio({"q": "北京。"}, {"q": "北 京"}, normalize="dureader")["dpr"] == 1.0
    assert D.different_prediction_ratio({"q": "北京。"}, {"q": "北京，"}, normalize="dureader")["dpr"] == 0.0
    # a metric name picks that scorer's normalization: ASCII "!" counts for dureader, not for squad
    assert D.different_prediction_ratio({"q": "北京!"}, {"q": "北京"}, normalize="dureader")["dpr"] == 1.0
    assert D.different_prediction_ratio({"q": "Paris!"}, {"q": "paris"}, normalize="squad_v2")["dpr"] == 0.0
    assert D.different_prediction_ratio({}, {"x": 1})["dpr"] == 0.0
    with pytest.raises(ValueError):
        D.different_prediction_ratio({}, {}, normalize="klingon")


# --------------------------------------------------------------------------- confidence (seed 004)

H_HALF_QUARTERS = 1.5 * math.log(2) / math.log(3)  # normalized entropy of (0.5, 0.25, 0.25)


def test_span_confidence_uniform_onehot_and_hand_computed():
    assert K.span_confidence([0.0] * 4, [3.0] * 4) == pytest.approx(0.0, abs=1e-12)
    assert K.span_confidence([100.0, 0, 0, 0], [0, 0, 100.0, 0]) == pytest.approx(1.0, abs=1e-6)
    start = np.log([0.5, 0.25, 0.25])
    end = [0.0, -INF, -INF]  # exactly one-hot inside the mask: entropy 0
    assert K.span_confidence(start, end) == pytest.approx(1 - H_HALF_QUARTERS / 2, abs=1e-12)
    assert K.normalized_entropy(start) == pytest.approx(H_HALF_QUARTERS, abs=1e-12)


def test_span_confidence_mask_edges_and_batches():
    mask = [True, True, False, False]
    # only the two context tokens count: start uniform over them, end one-hot on one of them
    assert K.span_confidence([0, 0, 5, 7], [50, -50, 9, 9], mask) == pytest.approx(0.5, abs=1e-12)
    assert K.span_confidence([1.0, 2.0], [3.0, 0.0], [False, True]) == 1.0  # n == 1
    assert K.span_confidence([1.0, 2.0], [3.0, 0.0], [False, False]) == 0.0  # n == 0
    out = K.span_confidence([[0.0, 0.0], [100.0, 0.0]], [[0.0, 0.0], [100.0, 0.0]], [[True, True], [True, True]])
    assert out.shape == (2,)
    np.testing.assert_allclose(out, [0.0, 1.0], atol=1e-6)
    assert K.normalized_entropy([INF, INF, 0.0]) == pytest.approx(math.log(2) / math.log(3))


def test_flat_rest_and_mc_confidence():
    assert K.flat_rest_confidence(0.5, 1.0, 3) == pytest.approx(1 - H_HALF_QUARTERS / 2, abs=1e-12)
    assert K.flat_rest_confidence(0.2, 0.2, 5) == pytest.approx(0.0, abs=1e-12)
    assert K.flat_rest_confidence(0.3, 0.9, 1) == 1.0
    assert K.mc_confidence([0.2, 0.5, 0.3]) == 0.5
    np.testing.assert_allclose(K.mc_confidence([[0.1, 0.9], [0.6, 0.4]]), [0.9, 0.6])


CONF6 = [0.1, 0.2, 0.6, 0.7, 0.8, 1.0]
RIGHT6 = [False, True, True, False, True, True]


def test_high_confidence_error_rate():
    conf = [0.95, 0.92, 0.5, 0.99, 0.3, 0.91]
    correct = [True, False, False, False, True, True]
    assert C.high_confidence_error_rate(conf, correct) == pytest.approx(2 / 3)
    assert C.high_confidence_error_rate(conf, correct, among="all") == pytest.approx(2 / 6)
    assert C.high_confidence_error_rate(conf, correct, threshold=0.99) == pytest.approx(1 / 3)  # inclusive
    assert C.high_confidence_error_rate([0.99], [True]) == 0.0
    assert C.high_confidence_error_rate([], []) == 0.0


def test_reliability_bins_and_ece_by_hand():
    rb = C.reliability_bins(CONF6, RIGHT6, n_bins=4)
    counts = [b["count"] for b in rb["bins"]]
    assert counts == [2, 0, 2, 2] and rb["n"] == 6
    b0, b1, b2, b3 = rb["bins"]
    assert (b0["lo"], b0["hi"], b0["mean_conf"], b0["accuracy"]) == (0.0, 0.25, pytest.approx(0.15), 0.5)
    assert b1["mean_conf"] is None and b1["accuracy"] is None
    assert (b2["mean_conf"], b2["accuracy"]) == (pytest.approx(0.65), 0.5)
    assert (b3["mean_conf"], b3["accuracy"]) == (pytest.approx(0.9), 1.0)  # conf 1.0 lands in the last bin
    # ECE = 2/6 * (|0.5 - 0.15| + |0.5 - 0.65| + |1 - 0.9|) = 0.2
    assert rb["ece"] == pytest.approx(0.2)
    json.dumps(rb)  # report-ready
    assert C.reliability_bins([], [])["ece"] == 0.0


def test_plot_reliability_png(tmp_path):
    rb = C.reliability_bins(CONF6, RIGHT6, n_bins=4)
    assert is_png(C.plot_reliability(rb, tmp_path / "rel.png"))
    assert is_png(C.plot_reliability(rb["bins"], tmp_path / "rel2.png"))


# --------------------------------------------------------------------------- error analysis (seed 004)


@pytest.mark.parametrize(
    "question, qtype",
    [
        ("What is the capital of France?", "what"),
        ("What's the main idea of the passage?", "what"),
        ("In which year did the war end?", "which"),
        ("Whose book was it?", "who"),
        ("To whom did she write?", "who"),
        ("WHEN did it happen?", "when"),
        ("How many people came?", "how"),
        ("The writer thinks that _ .", "other"),
        ("Is Paris in France?", "other"),
        ("", "other"),
    ],
)
def test_question_type(question, qtype):
    assert A.question_type(question) == qtype


def test_question_type_first_word_only():
    assert A.question_type("In which year did the war end?", first_word_only=True) == "other"
    assert A.question_type("Why did he leave?", first_word_only=True) == "why"


def test_accuracy_by_and_length_buckets():
    acc = A.accuracy_by(["a", "b", "a", "c"], [True, False, False, True])
    assert acc == {"a": (2, 0.5), "b": (1, 0.0), "c": (1, 1.0)}
    assert list(A.accuracy_by(["a", "b", "a", "c"], [1, 0, 0, 1], order=["c", "x", "a"])) == ["c", "a", "b"]
    edges = (1, 2, 3, 5, 10)
    assert A.bucket_labels(edges) == ["<=1", "2", "3", "4-5", "6-10", ">10"]
    assert [A.length_bucket(n, edges) for n in (0, 1, 2, 3, 4, 5, 7, 10, 11)] == [
        "<=1",
        "<=1",
        "2",
        "3",
        "4-5",
        "4-5",
        "6-10",
        "6-10",
        ">10",
    ]
    assert A.length_bucket(5, ()) == "all"
    with pytest.raises(ValueError):
        A.bucket_labels((3, 3))


def test_example_features_mc_and_span():
    mc = MCExample("m1", "Tom has a red bike. He rides it.", "What does Tom ride?", ("a red bike", "a car", "a bus", "the train now"), 0)
    f = A.example_features(mc, "mc", prediction=3)
    assert f["q_what"] == 1.0 and sum(f[f"q_{t}"] for t in A.QUESTION_TYPES) == 1.0
    assert (f["question_len"], f["context_len"], f["answer_len"]) == (4.0, 8.0, 3.0)
    assert f["overlap"] == pytest.approx(1 / 4)  # {what, does, tom, ride} & context words = {tom}
    assert (f["n_options"], f["option_len"], f["pred_len"]) == (4.0, 2.5, 3.0)
    ctx = "Paris is the capital of France."
    sp = SpanExample("s1", ctx, "Which city is the capital?", (Answer("Paris", 0),))
    g = A.example_features(sp)  # task inferred
    assert g["q_which"] == 1.0 and (g["question_len"], g["context_len"], g["answer_len"]) == (5.0, 6.0, 1.0)
    assert g["overlap"] == pytest.approx(3 / 5)  # is, the, capital
    assert "n_options" not in g and A.example_features(sp, "span", prediction="Paris, France")["pred_len"] == 2.0
    assert A.example_features(SpanExample("s2", ctx, "Why?", ()), "span")["answer_len"] == 0.0


def synthetic_errors(n: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.permutation(n) / n  # errors are exactly the examples with x >= 0.7: 30 %
    feats = [{"x": float(v), "noise": float(rng.random()), "kind": "long" if i % 2 else "short"} for i, v in enumerate(x)]
    return feats, [bool(v >= 0.7) for v in x]


def test_error_predictor_beats_the_majority_baseline():
    feats, wrong = synthetic_errors()
    out = A.error_predictor(feats, wrong, folds=10, seed=0, n_estimators=30)
    assert out["status"] == "ok" and out["folds"] == 10 and "warning" not in out
    assert (out["n"], out["n_errors"], out["majority"]) == (200, 60, "correct")
    # majority "correct": predicts no error -> error-class F1 0; stratified folds hold 30 % errors each
    assert out["baseline_f1"] == 0.0 and out["baseline_accuracy"] == pytest.approx(0.7)
    assert out["f1"] >= 0.95 and out["accuracy"] >= 0.97
    assert out["top_features"][0][0] == "x"
    json.dumps(out)


def test_error_predictor_majority_error_baseline_and_string_features():
    feats, wrong = synthetic_errors(100, seed=1)
    flipped = [not w for w in wrong]  # 70 % errors: the baseline predicts "error" everywhere
    out = A.error_predictor(feats, flipped, folds=5, seed=0, n_estimators=10)
    assert out["majority"] == "error"
    assert out["baseline_f1"] == pytest.approx(2 * 0.7 / 1.7) and out["baseline_accuracy"] == pytest.approx(0.7)
    names = {name for name, _ in A.error_predictor(feats, flipped, folds=5, n_estimators=10, top_features=50)["top_features"]}
    assert {"kind=long", "kind=short", "x", "noise"} <= names


def test_error_predictor_few_examples(caplog):
    feats = [{"x": float(i)} for i in range(5)]
    with caplog.at_level(logging.WARNING, logger="robust_mrc.diagnostics.error_analysis"):
        out = A.error_predictor(feats, [False, True, False, True, False], folds=10, n_estimators=5)
    assert out["status"] == "ok" and out["folds"] == 2 and "2 folds" in out["warning"]
    assert "fewer than folds=10" in caplog.text
    # stratified 2 folds of 3 and 2 examples: the mean of a/3 and b/2 for some a, b
    assert any(out["accuracy"] == pytest.approx((a / 3 + b / 2) / 2) for a in range(4) for b in range(3))

    out = A.error_predictor(feats[:3], [False, True, False])
    assert out["status"] == "too_few" and out["f1"] is None and out["accuracy"] is None
    assert (out["baseline_f1"], out["baseline_accuracy"]) == (0.0, pytest.approx(2 / 3))
    out = A.error_predictor(feats, [True, True, True, True, False])
    assert out["status"] == "too_few" and out["baseline_f1"] == pytest.approx(2 * 0.8 / 1.8)
    assert A.error_predictor([], [])["status"] == "too_few"


# --------------------------------------------------------------------------- ensembles (seed 004)


def test_mc_average():
    pred, avg = E.mc_average([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])
    assert pred == 1 and np.allclose(avg, [0.3, 0.4, 0.3])
    assert E.mc_average([[0.5, 0.5], [0.5, 0.5]])[0] == 0  # tie -> lowest index
    with pytest.raises(ValueError, match="options"):
        E.mc_average([[0.5, 0.5], [0.2, 0.3, 0.5]])


def test_mc_majority_and_its_ties():
    assert E.mc_majority([2, 0, 2])[0] == 2
    # 1 vote each: the higher averaged probability wins, not the lower index
    pred, avg = E.mc_majority([0, 1], [[0.6, 0.4, 0.0], [0.3, 0.7, 0.0]])
    assert pred == 1 and np.allclose(avg, [0.45, 0.55, 0.0])
    assert E.mc_majority([2, 1, 0], [[0.1, 0.2, 0.7], [0.1, 0.6, 0.3], [0.5, 0.3, 0.2]])[0] == 2  # .233 .367 .4
    assert E.mc_majority([1, 0], [[0.5, 0.5], [0.5, 0.5]])[0] == 0  # full tie -> lowest index
    pred, shares = E.mc_majority([1, 0])
    assert pred == 0 and shares.tolist() == [0.5, 0.5]
    # a minority option with a high probability does not beat a real majority
    assert E.mc_majority([0, 0, 1], [[0.4, 0.6], [0.4, 0.6], [0.0, 1.0]])[0] == 0


def test_span_token_vote():
    # seed 004 Table 3
    assert E.span_token_vote(["here\u201d", "Orientalism", "Orientalism"]) == "Orientalism"
    assert E.span_token_vote(["Orientalism", "behaviourism identities", "The discourse of Orientalism"]) == "Orientalism"
    # keys: SQuAD normalization, or the lower-cased token when that erases it ("The" ~ "the")
    assert E.span_token_vote(["The Eiffel Tower", "the eiffel tower.", "Tower"]) == "The Eiffel Tower"
    # multiplicity: "New" is kept twice (2 answers hold it twice), "to" / "and" once only
    assert E.span_token_vote(["New York to New Jersey", "New Jersey and New York", "York"]) == "New York New Jersey"
    assert E.span_token_vote(["New New York", "New York", "x"]) == "New York"  # 2nd largest count: 1
    # order: first answer's kept tokens, then the rest in the order of the next answer
    assert E.span_token_vote(["red car", "blue car big", "big blue"]) == "car blue big"
    assert E.span_token_vote(["a", "b", "c"]) == ""
    assert E.span_token_vote(["a", "b", "c"], fallback="first") == "a"
    assert E.span_token_vote(["a b", "c"], min_votes=1) == "a b c"
    assert E.span_token_vote(["a b", "a b"], min_votes=3) == ""
    assert E.span_token_vote(["北京市", "北京", "南京"], tokenize="char") == "北京"
    with pytest.raises(ValueError):
        E.span_token_vote(["a"], min_votes=0)


def test_span_ensemble_dicts():
    a = {"q1": "the red car", "q2": "Paris", "q3": "x"}
    b = {"q1": "red car", "q2": "London"}
    c = {"q2": "Paris France", "q1": "a car"}
    assert E.span_ensemble([a, b, c]) == {"q1": "red car", "q2": "Paris"}


# --------------------------------------------------------------------------- report helpers


def test_relative_drop_and_flip_rate():
    assert R.relative_drop(80.0, 60.0) == 0.25
    assert R.relative_drop(0.5, 0.6) == pytest.approx(-0.2)
    assert R.relative_drop(0, 10) == 0.0
    assert R.flip_rate({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 0, "d": 1}) == 0.5
    assert R.flip_rate({"a": "The Cat"}, {"a": "cat"}) == 0.0
    assert R.flip_rate({"a": "x"}, {"b": "x"}) == 0.0


def test_record_correct_uses_the_task_scorer():
    mc = {"pred": 2, "label": 2}
    assert R.record_correct(mc) is True and R.record_correct({"pred": 1, "label": 2}) is False
    assert R.record_correct({"pred": "x"}) is None
    # SQuAD (default squad_v1): article and ASCII punctuation do not count
    assert R.record_correct({"pred": "the Denver Broncos!", "golds": ["Denver Broncos"]}) is True
    assert R.record_correct({"pred": "Denver", "golds": ["Denver Broncos"]}) is False
    # no gold answer: "" is right under SQuAD (v1 and v2 read [] as [""]) ...
    assert R.record_correct({"pred": "", "golds": []}) is True
    assert R.record_correct({"pred": "", "golds": []}, metric="squad_v2") is True
    # ... v2.0 drops golds that normalize to nothing: "," against ["."] is right (gold -> [""])
    assert R.record_correct({"pred": ",", "golds": ["."]}, metric="squad_v2") is True
    # DuReader: only the official punctuation list goes, spaces and ASCII "!" stay (the SQuAD
    # normalization used before issue 16 called both of these right)
    zh = {"pred": "北京。", "golds": ["北京"]}
    assert R.record_correct(zh, metric="dureader") is True
    assert R.record_correct({"pred": "北 京", "golds": ["北京"]}, metric="dureader") is False
    assert R.record_correct({"pred": "北京!", "golds": ["北京"]}, metric="dureader") is False
    assert R.record_correct({"pred": "北京!", "golds": ["北京"]}) is True  # squad_v1 drops "!"
    # the official DuReader script finds no match without golds
    assert R.record_correct({"pred": "", "golds": []}, metric="dureader") is False
    with pytest.raises(ValueError, match="unknown span metric 'bleu'"):
        R.record_correct({"pred": "", "golds": []}, metric="bleu")
