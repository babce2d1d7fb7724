"""Spurious-cue diagnostics over a finished evaluation's prediction records.

``cfg.diagnostics`` selects among:

* ``confidence`` (seed 004): top option probability (multiple choice) or the normalized-entropy
  confidence of the answer's window (span); mean, high-confidence error rate, expected calibration
  error, and ``reliability_<model>.png``, for every model on the clean set.
* ``error_analysis`` (seed 004 section 5): accuracy by question type (first wh-word), answer
  length and context length; a gradient-boosting error predictor (k-fold) against the majority
  baseline.
* ``pq_remove`` (seed 000 Table 8): for an options-only checkpoint, its accuracy against chance;
  for any other checkpoint the report says that the probe needs an options-only model.
* ``dpr`` (seed 003): the different-prediction ratio of every set marked ``dpr: true`` (a
  paraphrase file or a question-only rewrite), paired with the clean set by example id.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from robust_mrc.diagnostics import confidence as conf_mod
from robust_mrc.diagnostics import error_analysis as err_mod
from robust_mrc.diagnostics.dpr import different_prediction_ratio
from robust_mrc.diagnostics.report import record_correct
from robust_mrc.evaluation.suites import CLEAN
from robust_mrc.metrics.confidence import mc_confidence

log = logging.getLogger(__name__)

KNOWN = ("confidence", "error_analysis", "pq_remove", "dpr")
LENGTH_EDGES = {"answer": (1, 2, 3, 5, 10), "context": (50, 100, 200, 400, 800)}


def _confidence(record: Mapping[str, Any], task: str) -> float:
    if task == "mc":
        return float(mc_confidence(record["probs"]))
    return float(record.get("confidence", 0.0))


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def confidence_report(records: Mapping[str, dict], task: str, threshold: float, plot_path: Path | None, metric: str = "squad_v1") -> dict:
    ids = list(records)
    conf = [_confidence(records[i], task) for i in ids]
    correct = [bool(record_correct(records[i], metric)) for i in ids]
    bins = conf_mod.reliability_bins(conf, correct)
    out = {
        "n": len(ids),
        "mean_confidence": sum(conf) / len(conf) if conf else 0.0,
        "accuracy": sum(correct) / len(correct) if correct else 0.0,
        "high_confidence_error_rate": conf_mod.high_confidence_error_rate(conf, correct, threshold=threshold),
        "threshold": threshold,
        "ece": bins["ece"],
        "bins": bins["bins"],
    }
    if plot_path is not None:
        conf_mod.plot_reliability(bins, plot_path)
        out["plot"] = plot_path.name
    return out


def error_report(examples: Sequence, records: Mapping[str, dict], task: str, folds: int, seed: int, metric: str = "squad_v1") -> dict:
    by_id = {ex.id: ex for ex in examples}
    ids = [i for i in records if i in by_id]
    correct = [bool(record_correct(records[i], metric)) for i in ids]
    exs = [by_id[i] for i in ids]

    def answer_words(ex) -> int:
        text = ex.answer if task == "mc" else (ex.answer_texts[0] if ex.answers else "")
        return len(text.split())

    def context_words(ex) -> int:
        return len((ex.passage if task == "mc" else ex.context).split())

    def by(groups, order=None) -> dict:
        return {str(g): {"n": n, "acc": acc} for g, (n, acc) in err_mod.accuracy_by(groups, correct, order).items()}

    out = {
        "by_question_type": by([err_mod.question_type(ex.question) for ex in exs]),
        "by_answer_length": by(
            [err_mod.length_bucket(answer_words(ex), LENGTH_EDGES["answer"]) for ex in exs], err_mod.bucket_labels(LENGTH_EDGES["answer"])
        ),
        "by_context_length": by(
            [err_mod.length_bucket(context_words(ex), LENGTH_EDGES["context"]) for ex in exs],
            err_mod.bucket_labels(LENGTH_EDGES["context"]),
        ),
    }
    features = [err_mod.example_features(ex, task) for ex in exs]
    out["error_predictor"] = err_mod.error_predictor(features, [not c for c in correct], folds=folds, seed=seed)
    return out


def _without_ids(result: dict, keep: int = 20) -> dict:
    """A DPR result for the report: the first ``keep`` changed ids only."""
    return {**result, "changed_ids": list(result["changed_ids"])[:keep]}


def run_diagnostics(
    cfg, report: dict, sets: Mapping[str, Any], predictions: Mapping[str, Mapping[str, dict]], modules, names, out: Path
) -> dict:
    wanted = list(cfg.diagnostics or [])
    unknown = [d for d in wanted if d not in KNOWN]
    if unknown:
        raise ValueError(f"diagnostics={unknown}: unknown; choose from {list(KNOWN)} (magnet screening: magnet_screen.enabled=true)")
    task = report["task"]
    metric = str(modules[0].task_cfg.get("metric") or "squad_v1")  # what "correct" means (span: the task's scorer)
    result: dict[str, Any] = {}
    if "confidence" in wanted:
        result["confidence"] = {
            model: confidence_report(per_set[CLEAN], task, float(cfg.confidence_threshold), out / f"reliability_{_safe(model)}.png", metric)
            for model, per_set in predictions.items()
            if per_set.get(CLEAN)
        }
    if "error_analysis" in wanted:
        result["error_analysis"] = {
            model: error_report(sets[CLEAN].examples, per_set[CLEAN], task, int(cfg.error_folds), int(cfg.seed), metric)
            for model, per_set in predictions.items()
            if per_set.get(CLEAN)
        }
    if "pq_remove" in wanted and task == "mc":
        pq = {}
        chance = sum(1 / len(ex.options) for ex in sets[CLEAN].examples) / max(1, len(sets[CLEAN].examples))
        for name, module in zip(names, modules):
            inputs = module.task_cfg.get("inputs", "full")
            if inputs == "options_only":
                acc = report["models"][name]["sets"][CLEAN]["acc"]
                pq[name] = {"options_only": True, "acc": acc, "chance": chance, "above_chance": acc - chance}
            else:
                pq[name] = {
                    "options_only": False,
                    "note": f"PQ-remove needs an options-only model; this checkpoint reads inputs={inputs} "
                    "(train one with task.inputs=options_only and evaluate it)",
                }
        result["pq_remove"] = pq
    if "dpr" in wanted:
        dpr_sets = [s for s in sets.values() if s.spec.dpr]
        result["dpr"] = (
            {
                model: {
                    s.name: _without_ids(
                        different_prediction_ratio(
                            {i: r["pred"] for i, r in per_set[CLEAN].items()},
                            {i: r["pred"] for i, r in per_set[s.name].items()},
                            normalize="mc" if task == "mc" else metric,
                        )
                    )
                    for s in dpr_sets
                    if per_set.get(s.name)
                }
                for model, per_set in predictions.items()
            }
            if dpr_sets
            else {"note": "no set marked dpr: true (add a paraphrase file: suite.extra.NAME={file: ..., dpr: true})"}
        )
    return result
