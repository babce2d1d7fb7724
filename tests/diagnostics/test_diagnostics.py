"""robust_mrc.diagnostics: hand-computed cases for every function (fast, model-free)."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest

from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.diagnostics import calibration as C
from robust_mrc.diagnostics import dpr as D
from robust_mrc.diagnostics import drops as R
from robust_mrc.diagnostics import error_analysis as A
from robust_mrc.diagnostics import interference as M
from robust_mrc.diagnostics.figures import PNG_MAGIC
from robust_mrc.evaluation import ensemble as E
from robust_mrc.metrics import confidence as K

INF = math.inf
NAN = math.nan


def is_png(path) -> bool:
    return path.is_file() and path.read_bytes()[:8] == PNG_MAGIC


# --------------------------------------------------------------------------- magnet (Lin, Zou & Ding 2021)

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


# --------------------------------------------------------------------------- DPR (Tang et al. 2021, DuReader_robust)


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
    # Chinese answers are compared as DuReader_robust's official scorer compares them:
    # "。" is removed, a space is not, so "北京。" equals "北京" but not "北 京" (official EM 0).
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


# --------------------------------------------------------------------------- confidence (Wu et al. 2021)

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


# --------------------------------------------------------------------------- error analysis (Wu et al. 2021 sections 5 and 6)


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


def test_example_features_are_exactly_the_papers():
    """Wu et al. 2021 section 6: training amount, perturbation type, question type (first word),
    question / context / answer length, readability; the answer is the model's, not the gold."""
    mc = MCExample("m1", "Tom has a red bike. He rides it.", "What does Tom ride?", ("a red bike", "a car", "a bus", "the train now"), 0)
    f = A.example_features(mc, "mc", prediction=3, training_amount="half", perturbation_type="charswap")
    papers = ("training_amount", "perturbation_type", "question_type", "question_len", "context_len", "answer_len", "readability")
    assert tuple(f) == A.FEATURES == papers and "overlap" not in f
    assert (f["training_amount"], f["perturbation_type"], f["question_type"]) == ("half", "charswap", "what")
    assert (f["question_len"], f["context_len"], f["answer_len"]) == (4.0, 8.0, 3.0)  # the chosen option "the train now"
    assert f["readability"] == pytest.approx(A.flesch_kincaid_grade(mc.passage))
    ctx = "Paris is the capital of France."
    sp = SpanExample("s1", ctx, "In which city is the capital?", (Answer("Paris", 0),))
    g = A.example_features(sp, prediction="the capital of France")  # task inferred; defaults
    assert (g["training_amount"], g["perturbation_type"]) == (A.UNKNOWN, "clean")
    assert g["question_type"] == "other"  # first word "in", not the later "which"
    assert (g["question_len"], g["context_len"], g["answer_len"]) == (6.0, 6.0, 4.0)  # predicted, not gold ("Paris": 1)
    assert A.example_features(sp, "span", prediction="")["answer_len"] == 0.0
    with pytest.raises(TypeError):
        A.example_features(sp, "span")  # no model answer, no answer length


def test_count_syllables():
    words = ["the", "make", "table", "whole", "agree", "jumped", "wanted", "energy", "photosynthesis", "beautiful", "don't", "42"]
    assert [A.count_syllables(w) for w in words] == [1, 1, 2, 1, 2, 1, 2, 3, 5, 3, 1, 0]


def test_flesch_scores_of_known_texts():
    """Hand counts. "The cat sat on the mat. The dog ran.": 9 words, 2 sentences, 9 syllables;
    grade 0.39 * 4.5 + 11.8 * 1 - 15.59 = -2.035, ease 206.835 - 1.015 * 4.5 - 84.6 = 117.6675.
    "Photosynthesis converts light energy into chemical energy.": 7 words, 1 sentence,
    5 + 2 + 1 + 3 + 2 + 3 + 3 = 19 syllables; grade 0.39 * 7 + 11.8 * 19 / 7 - 15.59 = 19.1686,
    ease 206.835 - 1.015 * 7 - 84.6 * 19 / 7 = -29.8986."""
    easy, hard = "The cat sat on the mat. The dog ran.", "Photosynthesis converts light energy into chemical energy."
    assert A.text_statistics(easy) == (9, 2, 9) and A.text_statistics(hard) == (7, 1, 19)
    assert A.flesch_kincaid_grade(easy) == pytest.approx(-2.035, abs=1e-3)
    assert A.flesch_reading_ease(easy) == pytest.approx(117.6675, abs=1e-3)
    assert A.flesch_kincaid_grade(hard) == pytest.approx(19.1686, abs=1e-3)
    assert A.flesch_reading_ease(hard) == pytest.approx(-29.8986, abs=1e-3)
    assert A.text_statistics("It cost 3.5 dollars. Then it rose!") == (6, 2, 7)  # "3.5" ends no sentence
    assert A.flesch_kincaid_grade("") == 0.0 and A.flesch_reading_ease("123 456") == 0.0


def test_training_amount_from_the_training_config(tmp_path):
    assert A.training_amount({"attack": {"policy": "amount", "amount": "half"}}) == "half"
    assert A.training_amount({"attack": {"policy": "amount"}}) == "full"  # the policy's default
    assert A.training_amount({"attack": {"name": "mix", "policy": "mix"}}) == "mix"
    assert A.training_amount({"attack": {"name": "none", "policy": "none"}}) == "none"
    assert A.training_amount({"attack": None}) == "none"
    assert A.training_amount({"seed": 1}) == A.training_amount(None) == A.UNKNOWN
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("seed: 1\nattack:\n  name: amount_both\n  policy: amount\n  amount: both\n")
    assert A.checkpoint_training_amount(str(run / "checkpoints" / "best.ckpt")) == "both"
    assert A.checkpoint_training_amount(tmp_path / "elsewhere" / "x.ckpt") == A.UNKNOWN
    assert A.checkpoint_training_amount(None) == A.UNKNOWN
    assert A.checkpoint_training_amount(["a.ckpt", "b.ckpt"]) == "ensemble"
    (run / "config.yaml").write_text("attack: [unclosed\n")
    assert A.checkpoint_training_amount(run / "checkpoints" / "best.ckpt") == A.UNKNOWN


def span_suite(n: int = 30):
    """A clean set, two attacked ones (their contexts changed) and one searched against model "b"."""
    from robust_mrc.evaluation.suites import EvalSet, SetSpec

    question, gold = "Which city is the capital?", (Answer("Paris", 0),)
    clean = [SpanExample(f"q{i}", f"Paris is the capital of France {i}.", question, gold) for i in range(n)]

    def attacked(name, suffix, attack=None):
        examples = [SpanExample(ex.id, ex.context + suffix, ex.question, ex.answers) for ex in clean]
        return EvalSet(SetSpec(name, attack=attack), examples, name)

    sets = {
        "clean": EvalSet(SetSpec("clean"), clean, "clean"),
        "char_noise": attacked("char_noise", " Nоise hеre."),
        "addsent": attacked("addsent", " Rome is the capital of Italy."),
    }
    return sets, {"b": {"addany": attacked("addany", " Berlin Berlin.", "addany")}}


def span_predictions(sets, model_sets, wrong_on=("char_noise",)):
    preds = {}
    for model in ("a", "b", "ensemble"):
        names = [*sets, *model_sets.get(model, {})]
        preds[model] = {
            name: {f"q{i}": {"pred": "Rome" if name in wrong_on else "Paris", "golds": ["Paris"]} for i in range(30)} for name in names
        }
    return preds


def test_error_rows_come_from_every_set_and_model(tmp_path):
    from robust_mrc.evaluation.diagnose import error_report

    sets, model_sets = span_suite()
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("attack:\n  policy: amount\n  amount: half\n")
    checkpoints = {"a": str(run / "checkpoints" / "best.ckpt"), "b": str(tmp_path / "b.ckpt"), "ensemble": ["x", "y"]}
    preds = span_predictions(sets, model_sets)
    out = error_report(sets, preds, "span", 5, 0, checkpoints=checkpoints, model_sets=model_sets, n_estimators=10)
    assert out["sets"] == ["clean", "char_noise", "addsent", "addany"]
    assert out["n"] == 30 * (3 + 4 + 3)  # a and the ensemble: 3 sets; b: its own addany too
    assert out["n_errors"] == 30 * 3  # every model is wrong on char_noise only
    assert out["models"] == {"a": "half", "b": A.UNKNOWN, "ensemble": "ensemble"}
    assert out["features"] == list(A.FEATURES) and "exact match" in out["error"]
    assert list(out["by_set"]) == out["sets"]
    assert out["by_set"]["char_noise"]["paper"]["BERT"] == [0.76, 0.77, 0.008]  # Table 6's char row
    assert "paper" not in out["by_set"]["addsent"]
    assert out["accuracy"]["b"]["question_type"]["addany"] == {"which": {"n": 30, "acc": 1.0}}
    assert out["accuracy"]["a"]["question_type"]["char_noise"] == {"which": {"n": 30, "acc": 0.0}}
    json.dumps(out)
    rows = A.error_rows("a", "none", {s: e.examples for s, e in sets.items()}, preds["a"], "span")
    assert [r.set for r in rows] == ["clean"] * 30 + ["char_noise"] * 30 + ["addsent"] * 30
    assert {r.features["perturbation_type"] for r in rows} == set(sets)
    assert all(r.wrong == (r.set == "char_noise") for r in rows)
    mc = MCExample("m", "Tom rides a bike.", "What does Tom ride?", ("a bike", "a car"), 0)
    mc_rows = A.error_rows("m", "mix", {"clean": [mc], "x": [mc]}, {"clean": {"m": {"pred": 1, "label": 0}}, "x": {}}, "mc")
    assert [(r.set, r.wrong, r.features["answer_len"]) for r in mc_rows] == [("clean", True, 2.0)]  # no record on x: no row


def planted_rows(n: int = 300, seed: int = 0):
    """Three sets and two training amounts; errors on char_noise only, other features random."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        set_name = ("clean", "char_noise", "addsent")[i % 3]
        feats = {
            "training_amount": ("none", "full")[(i // 3) % 2],
            "perturbation_type": set_name,
            "question_type": str(rng.choice(A.QUESTION_TYPES)),
            "question_len": float(rng.integers(3, 20)),
            "context_len": float(rng.integers(40, 400)),
            "answer_len": float(rng.integers(1, 8)),
            "readability": float(rng.normal(12, 3)),
        }
        rows.append(A.ErrorRow("m", set_name, f"q{i // 3}", feats, set_name == "char_noise"))
    return rows


def test_planted_signal_is_the_most_important_feature():
    out = A.error_analysis(planted_rows(), folds=10, seed=0, n_estimators=20)
    p = out["predictor"]
    assert p["status"] == "ok" and p["folds"] == 10 and "warning" not in p
    assert (p["n"], p["n_errors"], p["majority"]) == (300, 100, "correct")
    assert p["micro_f1"] == 1.0 and p["baseline_micro_f1"] == pytest.approx(2 / 3, abs=0.02) and p["auc"] == 1.0
    assert p["feature_importance"][0][0] == "perturbation_type" and p["feature_importance"][0][1] > 0.9
    assert p["importances"][0][0] == "perturbation_type=char_noise"
    assert {name for name, _ in p["feature_importance"]} == set(A.FEATURES)
    assert {c.split("=")[0] for c, _ in p["importances"]} == set(A.FEATURES)
    assert sum(v for _, v in p["importances"]) == pytest.approx(1.0)
    # a per-set fit leaves the perturbation type out: it is constant there
    assert "perturbation_type" not in {f for f, _ in out["by_set"]["clean"]["feature_importance"]}
    assert out["by_set"]["clean"]["status"] == "too_few"  # no error on the clean set: nothing to predict
    # planted on the training amount instead: errors only for the clean-trained model
    rows = [A.ErrorRow(r.model, r.set, r.id, r.features, r.features["training_amount"] == "none") for r in planted_rows(seed=1)]
    q = A.error_predictor([r.features for r in rows], [r.wrong for r in rows], folds=5, seed=0, n_estimators=20)
    assert q["feature_importance"][0][0] == "training_amount" and q["micro_f1"] == 1.0


def test_error_analysis_is_deterministic():
    rows = planted_rows(150, seed=2)
    rng = np.random.default_rng(5)
    rows = [A.ErrorRow(r.model, r.set, r.id, r.features, bool(rng.random() < 0.3)) for r in rows]  # no signal
    first = A.error_analysis(rows, folds=5, seed=7, n_estimators=15)
    assert json.dumps(first, sort_keys=True) == json.dumps(A.error_analysis(rows, folds=5, seed=7, n_estimators=15), sort_keys=True)
    assert first["readability"]["correct"] == pytest.approx(float(np.median([r.features["readability"] for r in rows if not r.wrong])))
    assert first["readability"]["paper"]["SQuAD"] == {"correct": 12.9, "error": 13.0}


def test_error_predictor_majority_error_and_few_rows(caplog):
    rows = planted_rows(90)
    flipped = [not r.wrong for r in rows]  # 2/3 errors: the baseline predicts "error"
    out = A.error_predictor([r.features for r in rows], flipped, folds=3, seed=0, n_estimators=10)
    assert out["majority"] == "error" and out["baseline_micro_f1"] == pytest.approx(2 / 3, abs=0.05) and out["error_f1"] == 1.0
    feats = [{"x": float(i)} for i in range(5)]
    with caplog.at_level(logging.WARNING, logger="robust_mrc.diagnostics.error_analysis"):
        out = A.error_predictor(feats, [False, True, False, True, False], folds=10, n_estimators=5)
    assert out["status"] == "ok" and out["folds"] == 5 and "using 5 folds" in out["warning"]
    assert "fewer than folds=10" in caplog.text
    assert out["micro_f1"] in {k / 5 for k in range(6)}  # leave-one-out: each fold is 0 or 1
    out = A.error_predictor(feats, [False] * 5)
    assert out["status"] == "too_few" and out["micro_f1"] is None and out["baseline_micro_f1"] == 1.0 and out["importances"] == []
    assert A.error_predictor([], [])["status"] == "too_few"
    with pytest.raises(ValueError):
        A.error_predictor(feats, [True], folds=10)


# --------------------------------------------------------------------------- ensembles (Wu et al. 2021)


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
    # Wu et al. 2021, Table 3
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
    # normalization would call both of these right)
    zh = {"pred": "北京。", "golds": ["北京"]}
    assert R.record_correct(zh, metric="dureader") is True
    assert R.record_correct({"pred": "北 京", "golds": ["北京"]}, metric="dureader") is False
    assert R.record_correct({"pred": "北京!", "golds": ["北京"]}, metric="dureader") is False
    assert R.record_correct({"pred": "北京!", "golds": ["北京"]}) is True  # squad_v1 drops "!"
    # the official DuReader script finds no match without golds
    assert R.record_correct({"pred": "", "golds": []}, metric="dureader") is False
    with pytest.raises(ValueError, match="unknown span metric 'bleu'"):
        R.record_correct({"pred": "", "golds": []}, metric="bleu")
