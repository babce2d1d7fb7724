"""report.md as tables a person reads, 95 % bootstrap intervals, and the bar chart's clean line."""

from __future__ import annotations

import random

import pytest

from robust_mrc.reports import robustness
from robust_mrc.reports.diagnostic_tables import cell, diagnostics_markdown
from robust_mrc.reports.intervals import bootstrap_ci, question_scores
from robust_mrc.reports.robustness import markdown, model_summary, set_entry

PNG = b"\x89PNG\r\n\x1a\n"


def mc_records(n: int, right: int, seed: int = 0) -> dict[str, dict]:
    flags = [True] * right + [False] * (n - right)
    random.Random(seed).shuffle(flags)
    return {f"q{i}": {"pred": 0 if ok else 1, "label": 0, "probs": [0.7, 0.3]} for i, ok in enumerate(flags)}


def mc_metrics(records):
    return {"acc": sum(r["pred"] == r["label"] for r in records.values()) / len(records)}


def mc_report(diagnostics=None) -> dict:
    clean, attacked = mc_records(40, 30), mc_records(40, 12, seed=1)
    sets = {
        "clean": set_entry(clean, None, metrics_of=mc_metrics, primary="acc", task="mc"),
        "addsent": set_entry(attacked, clean, metrics_of=mc_metrics, primary="acc", task="mc"),
    }
    return {
        "task": "mc",
        "suite": "advrace",
        "split": "test",
        "primary": "acc",
        "notes": [],
        "models": {"best": {"sets": sets, **model_summary(sets, "acc")}},
        "diagnostics": diagnostics or {},
    }


DIAGNOSTICS = {
    "confidence": {
        "best": {
            "n": 40,
            "mean_confidence": 0.71,
            "accuracy": 0.75,
            "high_confidence_error_rate": 0.2,
            "threshold": 0.9,
            "ece": 0.0412,
            "plot": "reliability_best.png",
            "bins": [
                {"lo": 0.6, "hi": 0.7, "count": 0, "mean_conf": None, "accuracy": None},
                {"lo": 0.7, "hi": 0.8, "count": 40, "mean_conf": 0.71, "accuracy": 0.75},
            ],
        }
    },
    "error_analysis": {
        "features": ["training_amount", "perturbation_type", "question_type", "question_len", "context_len", "answer_len", "readability"],
        "error": "a wrong option",
        "n": 80,
        "n_errors": 38,
        "models": {"best": "none"},
        "sets": ["clean", "char_noise"],
        "predictor": {
            "status": "ok",
            "n": 80,
            "n_errors": 38,
            "majority": "correct",
            "folds": 10,
            "micro_f1": 0.8125,
            "micro_f1_std": 0.05,
            "baseline_micro_f1": 0.525,
            "error_f1": 0.8,
            "auc": 0.9,
            "importances": [
                ["perturbation_type=char_noise", 0.6],
                ["question_type=what", 0.15],
                ["answer_len", 0.15],
                ["question_type=why", 0.1],
            ],
            "feature_importance": [["perturbation_type", 0.6], ["question_type", 0.25], ["answer_len", 0.15], ["training_amount", 0.0]],
            "constant": ["training_amount"],
        },
        "by_set": {
            "clean": {
                "status": "too_few",
                "n": 40,
                "n_errors": 0,
                "majority": "correct",
                "folds": 0,
                "micro_f1": None,
                "micro_f1_std": None,
                "baseline_micro_f1": 1.0,
                "error_f1": None,
                "auc": None,
                "importances": [],
                "feature_importance": [],
                "constant": ["training_amount"],
                "warning": "error predictor: 40 rows with 0 errors: nothing to cross-validate (one class)",
            },
            "char_noise": {
                "status": "ok",
                "n": 40,
                "n_errors": 38,
                "majority": "error",
                "folds": 10,
                "micro_f1": 0.95,
                "micro_f1_std": 0.1,
                "baseline_micro_f1": 0.95,
                "error_f1": 0.97,
                "auc": float("nan"),
                "importances": [["answer_len", 1.0]],
                "feature_importance": [["answer_len", 1.0]],
                "constant": ["training_amount"],
                "paper": {"perturbation": "char", "BERT": [0.76, 0.77, 0.008], "ELMo": [0.58, 0.7, 0.003]},
            },
        },
        "readability": {
            "correct": 8.5,
            "error": 9.25,
            "paper": {"SQuAD": {"correct": 12.9, "error": 13.0}, "TriviaQA": {"correct": 17.1, "error": 17.5}},
        },
        "accuracy": {
            "best": {
                "question_type": {
                    "clean": {"what": {"n": 30, "acc": 1.0}, "why": {"n": 10, "acc": 1.0}},
                    "char_noise": {"what": {"n": 30, "acc": 0.0}, "why": {"n": 10, "acc": 0.2}},
                },
                "answer_length": {"clean": {"<=1": {"n": 40, "acc": 1.0}}, "char_noise": {"2": {"n": 40, "acc": 0.05}}},
                "context_length": {"clean": {"101-200": {"n": 40, "acc": 1.0}}, "char_noise": {"101-200": {"n": 40, "acc": 0.05}}},
            }
        },
        "paper": {"figure6": {"training_amount": "train_none is the strongest predictor for char perturbations"}},
    },
    "pq_remove": {"best": {"options_only": False, "note": "PQ-remove needs an options-only model"}},
    "dpr": {"note": "no set marked dpr: true"},
    "magnet_screen": {
        "model": "best",
        "questions": 6,
        "pool": 12,
        "pairs": 72,
        "seconds": 0.4,
        "pairs_per_s": 180.0,
        "mean_T": float("nan"),
        "top": [{"option": "All of the above | none", "T": 0.5}, {"option": "x", "T": float("nan")}],
        "files": ["magnet_pool.txt"],
    },
}


def test_report_md_shows_the_diagnostics_as_tables():
    text = markdown(mc_report(DIAGNOSTICS))
    assert "```json" not in text and '"bins"' not in text  # no JSON dump
    for title in (
        "### Confidence and calibration",
        "Reliability bins of `best`",
        "### Error prediction (Wu et al. 2021 section 6)",
        "Feature importance",
        "### PQ-remove",
        "### Different-prediction ratio",
        "### Magnet screening",
    ):
        assert title in text, title
    assert "| best  | 40 | 0.7100          | 0.7500   |" in text  # the confidence row
    assert "| 0.7-0.8    | 40    |" in text and "0.6-0.7" not in text  # non-empty bins only
    assert "| question type      | what    | 1.000 (30) | 0.000 (30) |" in text  # accuracy per set
    assert "All of the above \\| none" in text  # a pipe in an option stays in its cell
    assert "nan" not in text.lower()


def test_error_prediction_shows_scores_sorted_importances_and_the_papers_numbers():
    lines = diagnostics_markdown({"error_analysis": DIAGNOSTICS["error_analysis"]})
    text = "\n".join(lines)
    assert "80 rows (model x set x question) from the sets `clean`, `char_noise`; 38 errors" in text
    assert "Training amount: `best` (none)" in text
    # cross-validated micro F1 against the majority class; Table 6 beside the char set
    assert "| all sets     | 80 | 38     | 10    | 0.8125 ± 0.0500 | 0.5250   |" in text
    (char_row,) = [ln for ln in text.splitlines() if ln.startswith("| `char_noise`")]
    assert "BERT 0.76 / 0.77, ELMo 0.58 / 0.70" in char_row
    # importances sorted, the constant feature marked, Figure 6's remark beside it
    table = text.split("Feature importance")[1].split("Top columns")[0]
    order = [ln.split("|")[1].strip() for ln in table.splitlines() if ln.startswith("| ") and "importance" not in ln]
    assert order == ["perturbation_type", "question_type", "answer_len", "training_amount (constant)"]
    assert "train_none is the strongest predictor" in table
    assert "| Wu et al. 2021 SQuAD    | 12.9000 | 13.0000 |" in text  # Table 5 beside this evaluation's medians
    assert "Note (`clean`): error predictor: 40 rows with 0 errors" in text
    assert "nan" not in text.lower()


def test_unknown_diagnostics_still_appear():
    lines = diagnostics_markdown({"new_probe": {"x": 1}})
    assert "### new_probe" in lines and '  "x": 1' in "\n".join(lines)


def test_cells():
    assert [cell(None), cell(float("nan")), cell(0.5), cell(True), cell("a|b\nc")] == ["-", "-", "0.5000", "yes", "a\\|b c"]


def test_every_set_carries_a_95_percent_interval_in_the_table():
    report = mc_report()
    sets = report["models"]["best"]["sets"]
    for name, value in (("clean", 0.75), ("addsent", 0.3)):
        lo, hi = sets[name]["ci95"]
        assert sets[name]["acc"] == pytest.approx(value) and lo < value < hi
    text = markdown(report)
    assert "95% CI" in text and f"{sets['clean']['ci95'][0]:.4f}-{sets['clean']['ci95'][1]:.4f}" in text


def test_the_drop_gets_a_paired_interval_narrower_than_the_unpaired_one():
    """10 of 40 questions flip from right to wrong and none the other way: the paired interval of
    abs_drop lies on 0 or above and holds 0.25; it is narrower than what the two sets' own intervals
    allow (clean hi - attacked lo), and the table carries it."""
    clean = mc_records(40, 30)
    wrong = [q for q, r in clean.items() if r["pred"] == 0][:10]
    attacked = {q: ({**r, "pred": 1} if q in wrong else r) for q, r in clean.items()}
    entry = set_entry(attacked, clean, metrics_of=mc_metrics, primary="acc", task="mc")
    lo, hi = entry["abs_drop_ci95"]
    assert entry["abs_drop"] == pytest.approx(0.25) and 0.0 <= lo < 0.25 < hi
    clean_ci = set_entry(clean, None, metrics_of=mc_metrics, primary="acc", task="mc")["ci95"]
    assert hi - lo < (clean_ci[1] - entry["ci95"][0]) - (clean_ci[0] - entry["ci95"][1])
    unchanged = set_entry(dict(clean), clean, metrics_of=mc_metrics, primary="acc", task="mc")
    assert unchanged["abs_drop_ci95"] == [0.0, 0.0]
    report = mc_report()
    drop_ci = report["models"]["best"]["sets"]["addsent"]["abs_drop_ci95"]
    assert "abs_drop 95% CI" in markdown(report) and f"{drop_ci[0]:.4f}-{drop_ci[1]:.4f}" in markdown(report)


def test_bootstrap_interval_contains_the_mean_and_shrinks_with_more_questions():
    small = [1.0] * 12 + [0.0] * 8
    large = small * 100
    lo_s, hi_s = bootstrap_ci(small, seed=3)
    lo_l, hi_l = bootstrap_ci(large, seed=3)
    assert lo_s < 0.6 < hi_s and lo_l < 0.6 < hi_l
    assert hi_l - lo_l < (hi_s - lo_s) / 5  # ~ 1 / sqrt(100) as wide
    # the normal approximation of a proportion: +- 1.96 sqrt(p (1 - p) / n)
    assert hi_l - lo_l == pytest.approx(2 * 1.96 * (0.6 * 0.4 / 2000) ** 0.5, rel=0.15)
    assert bootstrap_ci(small, seed=3) == [lo_s, hi_s] and bootstrap_ci(small, seed=4) != [lo_s, hi_s]  # seeded
    assert bootstrap_ci([0.4]) == [0.4, 0.4] and bootstrap_ci([]) == [0.0, 0.0]


def test_span_question_scores_average_to_the_reported_f1():
    from robust_mrc.metrics import get_span_metric

    records = {
        "a": {"pred": "Denver Broncos", "golds": ["Denver Broncos"]},
        "b": {"pred": "the Broncos", "golds": ["Denver Broncos"]},
        "c": {"pred": "Panthers", "golds": ["Denver Broncos", "Carolina"]},
    }
    reported = get_span_metric("squad_v1")({k: r["pred"] for k, r in records.items()}, {k: r["golds"] for k, r in records.items()})
    assert sum(question_scores(records, "f1")) / 3 == pytest.approx(reported["f1"])
    assert sum(question_scores(records, "em")) / 3 == pytest.approx(reported["exact_match"])
    assert question_scores({"a": {"pred": 1}}, "acc") is None  # nothing to score: no interval


def test_bar_chart_marks_the_clean_level_and_the_intervals(tmp_path, monkeypatch):
    drawn = {}
    real_save = robustness.save_png

    def keep(fig, path):
        drawn["ax"] = fig.axes[0]
        return real_save(fig, path)

    monkeypatch.setattr(robustness, "save_png", keep)
    report = mc_report()
    path = robustness.plot_report(report, tmp_path / "robustness.png")
    assert path.read_bytes()[:8] == PNG
    ax = drawn["ax"]
    clean = report["models"]["best"]["sets"]["clean"]["acc"]
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "clean"]
    assert list(line.get_ydata()) == [clean, clean]
    caps = sorted({round(float(y), 6) for ln in ax.get_lines() if ln.get_label().startswith("_") for y in ln.get_ydata()})
    bounds = sorted(round(b, 6) for s in report["models"]["best"]["sets"].values() for b in s["ci95"])
    assert caps == bounds  # an error bar from lo to hi on every bar
