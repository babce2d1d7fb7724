"""Spurious-cue diagnostics over a finished evaluation's prediction records.

``cfg.diagnostics`` selects among:

* ``confidence`` (Wu et al. 2021): top option probability (multiple choice) or the normalized-entropy
  confidence of the answer's window (span); mean, high-confidence error rate, expected calibration
  error, and ``reliability_<model>.png``, for every model on the clean set.
* ``error_analysis`` (Wu et al. 2021 sections 5 and 6): over every (model, set, question) of the
  evaluation, clean and attacked sets alike, a gradient-boosting predictor of the model's errors
  from the paper's features (training amount, perturbation type, question type, question /
  context / model-answer length, Flesch-Kincaid readability), ``error_folds``-fold against the
  majority class, with its feature importances; per set the same (the paper's Table 6); median
  readability of right and wrong answers; accuracy by question type, answer and context length
  per set (see :mod:`robust_mrc.diagnostics.error_analysis`).
* ``pq_remove`` (Si et al. 2021 (AdvRACE), Table 8): for an options-only checkpoint, its accuracy
  against chance;
  for any other checkpoint the report says that the probe needs an options-only model.
* ``dpr`` (Tang et al. 2021 (DuReader_robust)): the different-prediction ratio of every set marked
  ``dpr: true`` (a
  paraphrase file or a question-only rewrite), paired with the clean set by example id.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from robust_mrc.diagnostics import calibration as conf_mod
from robust_mrc.diagnostics import error_analysis as err_mod
from robust_mrc.diagnostics.dpr import different_prediction_ratio
from robust_mrc.diagnostics.drops import record_correct
from robust_mrc.evaluation.suites import CLEAN
from robust_mrc.metrics.confidence import mc_confidence

log = logging.getLogger(__name__)

KNOWN = ("confidence", "error_analysis", "pq_remove", "dpr")


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


def error_report(
    sets: Mapping[str, Any],
    predictions: Mapping[str, Mapping[str, Mapping[str, dict]]],
    task: str,
    folds: int,
    seed: int,
    metric: str = "squad_v1",
    *,
    checkpoints: Mapping[str, Any] | None = None,
    model_sets: Mapping[str, Mapping[str, Any]] | None = None,
    **booster: Any,
) -> dict:
    """:func:`~robust_mrc.diagnostics.error_analysis.error_analysis` of an evaluation.

    Rows: every model of ``predictions`` (model -> set -> question id -> record) on every set it
    predicted, with that set's examples (``model_sets[model][set]`` for a set searched against the
    model, else ``sets[set]``). The training amount of a model comes from its checkpoint
    (``checkpoints[model]``: a path, or a list for the ensemble) through
    :func:`~robust_mrc.diagnostics.error_analysis.checkpoint_training_amount`. Wrong = not
    ``record_correct(record, metric)``. ``booster``: keyword arguments of
    :func:`~robust_mrc.diagnostics.error_analysis.error_predictor`."""
    checkpoints = checkpoints or {}
    training = {model: err_mod.checkpoint_training_amount(checkpoints.get(model)) for model in predictions}
    rows, attacks = [], {}
    for model, per_set in predictions.items():
        own = (model_sets or {}).get(model, {})
        examples = {}
        for name in per_set:
            eval_set = own.get(name) or sets.get(name)
            if eval_set is not None:
                examples[name] = eval_set.examples
                attacks[name] = eval_set.spec.attack or eval_set.spec.name
        rows += err_mod.error_rows(model, training[model], examples, per_set, task, metric)
    error = "a wrong option" if task == "mc" else f"no exact match of a gold answer ({metric})"
    return err_mod.error_analysis(rows, folds, seed, training=training, attacks=attacks, error=error, **booster)


def _without_ids(result: dict, keep: int = 20) -> dict:
    """A DPR result for the report: the first ``keep`` changed ids only."""
    return {**result, "changed_ids": list(result["changed_ids"])[:keep]}


def run_diagnostics(
    cfg,
    report: dict,
    sets: Mapping[str, Any],
    predictions: Mapping[str, Mapping[str, dict]],
    modules,
    names,
    out: Path,
    model_sets: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict:
    """The diagnostics ``cfg.diagnostics`` names (see the module doc). ``model_sets``: model ->
    the sets searched against that model (model-in-the-loop attacks), whose examples are not in
    ``sets``."""
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
        checkpoints = {m: entry.get("ckpt") for m, entry in report["models"].items()}
        result["error_analysis"] = error_report(
            sets, predictions, task, int(cfg.error_folds), int(cfg.seed), metric, checkpoints=checkpoints, model_sets=model_sets
        )
    if "pq_remove" in wanted and task == "mc":
        pq = {}
        chance = sum(1 / len(ex.options) for ex in sets[CLEAN].examples) / max(1, len(sets[CLEAN].examples))
        for name, module in zip(names, modules):
            inputs = module.task_cfg["inputs"]
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
