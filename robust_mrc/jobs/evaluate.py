"""``evaluate(cfg)``: models x a suite of test sets -> metrics, predictions, a robustness report.

    evaluate.py ckpt_path=... [data=...] [split=test] [suite=advrace|squad|clean]
    evaluate.py model.pretrained=<model directory or hub name> [model.revision=...] task=span suite=squad_adv
    evaluate.py 'ensemble=[a.ckpt,b.ckpt,org/hub-model]' suite=advrace

Steps (one function each below): load the models (checkpoints: weights only, no code run from them;
Hugging Face models: :mod:`robust_mrc.models.pretrained`, their head checked); load
the split; build the suite's sets (attacked sets come from the disk cache when an earlier run made
them); predict every set with every checkpoint through Lightning's predict loop (predictions are
cached too, so an interrupted evaluation resumes where it stopped); combine an ensemble; build the
report (``robust_mrc.reports.robustness``) and run the diagnostics; write ``report.json|csv|md``,
``report.html`` (the examples behind the numbers), ``robustness.png``, ``metrics.json``, ``predictions/`` and print the table.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from omegaconf import DictConfig, OmegaConf

from robust_mrc.attacks.base import BankMaker
from robust_mrc.config.checks import check_config
from robust_mrc.core.digests import fingerprint
from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import examples_digest
from robust_mrc.data.sources import load_splits
from robust_mrc.data.writers import atomic_write_json, atomic_write_text
from robust_mrc.datamodules.qa import make_collator, prediction_loader
from robust_mrc.datamodules.span import resolve_span_task
from robust_mrc.evaluation.cache import DiskCache
from robust_mrc.evaluation.diagnose import run_diagnostics
from robust_mrc.evaluation.ensemble import combine_records, ensemble_method
from robust_mrc.evaluation.predict import Predictor
from robust_mrc.evaluation.suites import CLEAN, EvalSet, build_sets, suite_specs
from robust_mrc.jobs.extractor import distractor_banks
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.checkpoints import CheckpointError, read_checkpoint, require_file
from robust_mrc.models.pretrained import exported_settings, head_task, is_checkpoint, load_model
from robust_mrc.models.scoring import ModelScorer
from robust_mrc.models.span_decoding import apply_no_answer
from robust_mrc.reports.examples import browser_sets
from robust_mrc.reports.robustness import build_report, headline_metrics, report_rows, write_report
from robust_mrc.reports.tables import format_table
from robust_mrc.trainer.build import build_trainer
from robust_mrc.trainer.run_dir import refuse_training_run, run_dir

log = logging.getLogger(__name__)

__all__ = ["CheckpointError", "evaluate", "model_names"]


def evaluate(cfg: DictConfig, banks: BankMaker | None = None) -> dict[str, Any]:
    """Evaluate the checkpoint(s) on ``cfg.data``'s ``cfg.split`` under ``cfg.suite``; write the report.
    ``banks`` makes the distractor banks of ``bank: auto`` (default:
    :func:`robust_mrc.jobs.extractor.distractor_banks`)."""
    check_config(cfg, "eval")
    pl.seed_everything(int(cfg.seed), workers=True)
    out = run_dir(cfg)
    refuse_training_run(out)
    paths = model_sources(cfg)
    for p in paths:  # a missing checkpoint or model directory says so before the data is read
        require_source(p)
    task = cfg.task.name
    method = ensemble_method(task, cfg.ensemble_method) if len(paths) > 1 else None  # null: by task (eval.yaml)
    if cfg.wandb and os.environ.get("WANDB_MODE") == "online":
        from robust_mrc.trainer.wandb import require_credentials

        require_credentials()
    banks = banks if banks is not None else distractor_banks()
    splits, split = load_split(cfg, task)
    task_cfg = resolve_span_task(OmegaConf.to_container(cfg.task, resolve=True), splits)
    modules = load_models(cfg, paths, task_cfg)
    cache = DiskCache(cfg.cache_dir)
    suite_cfg = OmegaConf.to_container(cfg.suite, resolve=True) if cfg.suite is not None else {}
    pool = splits.get("train") or splits[split]
    specs = suite_specs(suite_cfg, task) + magnet_screen_specs(cfg, suite_cfg)
    sets = build_sets(
        [s for s in specs if not s.model and not s.screen],
        splits[split],
        task,
        seed=int(cfg.seed),
        cache=cache,
        pool_examples=pool,
        strict=bool(cfg.data.strict),
        banks=banks,
    )

    names = model_names(paths)
    predictors = [make_predictor(cfg, module, path, cache, out) for module, path in zip(modules, paths)]
    predictions = {name: predict_sets(predictor, sets) for name, predictor in zip(names, predictors)}
    no_answer = {
        name: tune_no_answer(predictor, splits, split, predictions[name][CLEAN])
        for name, predictor in zip(names, predictors)
        if getattr(predictor.module, "no_answer", False)
    }
    model_sets = {}  # the model-in-the-loop sets, searched against each model
    if any(s.model for s in specs):
        for name, predictor in zip(names, predictors):
            own = build_sets(
                [s for s in specs if s.model],
                splits[split],
                task,
                seed=int(cfg.seed),
                cache=cache,
                pool_examples=pool,
                scorer=predictor.scorer(int(cfg.eval_batch_size)),
                banks=banks,
            )
            own.pop(CLEAN)
            model_sets[name] = own
            predictions[name].update(predict_sets(predictor, own))
    screened = [s for s in specs if s.screen]  # magnet sets: a pool screened against each model
    magnet_sets, screenings, ensemble_own = {}, {}, {}
    if screened:
        from robust_mrc.evaluation.magnet_screening import screen_models

        magnet_sets, screenings = screen_models(
            screened,
            splits[split],
            pool,
            dict(zip(names, predictors)),
            {name: predictions[name][CLEAN] for name in names},
            cache,
            out,
            seed=int(cfg.seed),
            task=task,
        )
        if not cfg.magnet_screen.attack_top:  # magnet_screen.attack_top=false: the screening only
            for own in magnet_sets.values():
                own.pop(MAGNET_TOP_SET, None)
        for name, predictor in zip(names, predictors):
            model_sets.setdefault(name, {}).update(magnet_sets[name])
            predictions[name].update(predict_sets(predictor, magnet_sets[name]))
        if "ensemble" in magnet_sets:  # each member predicts the ensemble's own magnet set
            ensemble_own = {name: predict_sets(predictor, magnet_sets["ensemble"]) for name, predictor in zip(names, predictors)}
            model_sets["ensemble"] = magnet_sets["ensemble"]
    for name in no_answer:  # "" where null score - best span score > the model's threshold
        predictions[name] = {s: apply_no_answer(records, no_answer[name]["threshold"]) for s, records in predictions[name].items()}
    if method is not None:
        predictions["ensemble"] = {s: combine_records([predictions[n][s] for n in names], task, method) for s in sets}
        for s in magnet_sets.get("ensemble", {}):
            predictions["ensemble"][s] = combine_records([ensemble_own[n][s] for n in names], task, method)

    report = build_report(
        task=task,
        suite=suite_cfg.get("name", "clean"),
        split=split,
        data=cfg.data.get("name"),
        primary=modules[0].primary_metric,
        seed=int(cfg.seed),
        sets=sets,
        predictions=predictions,
        checkpoints={**dict(zip(names, paths)), "ensemble": list(paths)},
        metrics_of=modules[0].metrics_of,
        metric=str(modules[0].task_cfg.get("metric") or "squad_v1"),
        model_sets=model_sets,
    )
    if no_answer:
        report["no_answer"] = no_answer
        report["notes"] += [
            f'{n}: answers "" when null score - best span score > {v["threshold"]:.4g} ({v["source"]})' for n, v in no_answer.items()
        ]
    report["diagnostics"] = run_diagnostics(cfg, report, sets, predictions, modules, names, out, model_sets=model_sets)
    if cfg.magnet_screen.enabled:  # the first model's screening of magnet_top, as a diagnostic table
        report["diagnostics"]["magnet_screen"] = screenings[names[0]][MAGNET_TOP_SET]
    if screenings:  # per model and set: the magnets, their T_k, the pool and questions screened
        report["magnet_screening"] = screenings
    return write_outputs(cfg, report, predictions, names, paths, out, set_examples(sets, model_sets, names))


def model_sources(cfg: DictConfig) -> list[str]:
    """The models evaluated: checkpoint files and Hugging Face models (directories, hub names), from
    ``ckpt_path``, ``model.pretrained`` or ``ensemble`` (one of them)."""
    if cfg.ensemble is not None and not OmegaConf.is_list(cfg.ensemble) and not isinstance(cfg.ensemble, (list, tuple)):
        raise CheckpointError(
            f"ensemble={cfg.ensemble!r}: expected a list of checkpoints or models, e.g. 'ensemble=[a/best.ckpt,b/best.ckpt]' "
            "(one model: ckpt_path= or model.pretrained=)"
        )
    members = list(cfg.ensemble or [])
    given = [k for k, v in (("ckpt_path", cfg.ckpt_path), ("model.pretrained", cfg.model.pretrained), ("ensemble", members)) if v]
    if len(given) > 1:
        raise CheckpointError(f"give one of ckpt_path, model.pretrained and ensemble, not {' and '.join(given)}")
    if members:
        if len(members) < 2:
            raise CheckpointError("ensemble=[...] needs at least two models (checkpoints, model directories or hub names)")
        warn_repeated_members([str(m) for m in members])
        return [str(m) for m in members]
    if cfg.model.pretrained:
        if Path(str(cfg.model.pretrained)).is_file():
            raise CheckpointError(
                f"model.pretrained={cfg.model.pretrained} is a file: a checkpoint goes to ckpt_path={cfg.model.pretrained}; "
                "model.pretrained takes a Hugging Face model directory or hub name"
            )
        return [str(cfg.model.pretrained)]
    if not cfg.ckpt_path:
        raise CheckpointError(
            "give ckpt_path=path/to/best.ckpt, model.pretrained=<model directory or hub name>, or ensemble=[a.ckpt,b.ckpt,...]"
        )
    if Path(str(cfg.ckpt_path)).is_dir():
        raise CheckpointError(
            f"ckpt_path={cfg.ckpt_path} is a directory: for a Hugging Face model directory give model.pretrained={cfg.ckpt_path}"
        )
    return [str(cfg.ckpt_path)]


def warn_repeated_members(members: list[str]) -> None:
    """A warning for each model an ensemble names more than once (paths compared resolved): it
    would weigh twice in the average or the vote."""
    seen: dict[str, str] = {}
    for member in members:
        path = Path(member).expanduser()
        key = str(path.resolve()) if path.exists() else member
        if key in seen:
            log.warning(
                "ensemble: %s is given twice (%s and %s): it counts twice in the ensemble's average or vote", key, seen[key], member
            )
        else:
            seen[key] = member


def load_models(cfg: DictConfig, paths: list[str], task_cfg: dict) -> list:
    """The evaluation-mode modules of ``paths``; an ensemble whose members are of different tasks
    says which are which."""
    modules = []
    for p in paths:
        try:
            module = load_model(
                p,
                task_cfg,
                revision=cfg.model.revision if p == cfg.model.pretrained else None,
                trust_remote_code=bool(cfg.trust_remote_code),
                task_settings=functools.partial(evaluation_task_settings, cfg, task_cfg),
                window_batch=int(cfg.eval_batch_size),
            )
        except CheckpointError:
            if len(paths) > 1:
                require_one_task(paths)
            raise
        modules.append(module)
    return modules


def require_one_task(paths: list[str]) -> None:
    """A :class:`CheckpointError` naming the members of each task when an ensemble mixes tasks."""
    by_task: dict[str, list[str]] = {}
    for p in paths:
        task = source_task(p)
        if task is not None:
            by_task.setdefault(task, []).append(p)
    if len(by_task) > 1:
        members = "; ".join(f"{task}: {', '.join(ps)}" for task, ps in sorted(by_task.items()))
        raise CheckpointError(
            f"ensemble=[...] mixes tasks ({members}): an ensemble combines models of one task; "
            "evaluate each task's models in a run of its own (task=mc / task=span)"
        )


def source_task(source: str) -> str | None:
    """The task of a checkpoint or a local model directory (``None``: a hub name, or unreadable)."""
    try:
        if is_checkpoint(source):
            task_cfg = (read_checkpoint(source).get("hyper_parameters") or {}).get("task_cfg")
            return task_cfg.get("name") if isinstance(task_cfg, dict) else None
        if Path(source).is_dir():
            saved = exported_settings(source).get("task") or {}
            if saved:
                return saved.get("name")
            from transformers import AutoConfig

            return head_task(AutoConfig.from_pretrained(source))
    except (UserError, OSError, ValueError, AttributeError):
        return None
    return None


def require_source(source: str) -> None:
    """A checkpoint that is no file, or a path that is no model directory, named before the data is read."""
    if is_checkpoint(source):
        require_file(source)
    elif not Path(source).is_dir() and (source.startswith(("/", ".", "~")) or source.count("/") > 1):
        raise CheckpointError(f"{source}: no such model directory (a Hugging Face hub name is name or org/name)")


def model_names(paths: list[str]) -> list[str]:
    """Readable unique names: ``<run dir>/<stem>`` for ``.../checkpoints/best.ckpt``, the stem of
    another checkpoint, the directory's name of a model directory, a hub name as it is."""
    names = []
    for p in paths:
        path = Path(p)
        if not is_checkpoint(p):
            name = path.name if path.is_dir() else p
        else:
            name = f"{path.parent.parent.name}/{path.stem}" if path.parent.name == "checkpoints" else path.stem
        base, k = name, 2
        while name in names:
            name, k = f"{base}#{k}", k + 1
        names.append(name)
    return names


def load_split(cfg: DictConfig, task: str) -> tuple[dict[str, list], str]:
    split = cfg.split
    splits = load_splits(cfg.data, task, seed=int(cfg.seed))
    if split not in splits or not splits[split]:
        available = [k for k, v in splits.items() if v]
        raise ValueError(f"data={cfg.data.get('name')} has no {split!r} split; available: {available}")
    return splits, split


def evaluation_task_settings(cfg: DictConfig, data_task: dict, saved: dict) -> dict:
    """A checkpoint's task settings for this evaluation: its preprocessing (inputs, max length),
    this data's metric (``data_task``: ``cfg.task`` resolved on the data, :func:`resolve_span_task`).
    Span: no-answer is on when the data has unanswerable questions, the checkpoint was trained with
    it, or ``task.no_answer=true``."""
    task_cfg = dict(saved)
    if task_cfg.get("name") == "span":
        task_cfg["metric"] = data_task["metric"]
        explicit = str(cfg.task.no_answer).lower() != "auto"
        task_cfg["no_answer"] = data_task["no_answer"] if explicit else bool(data_task["no_answer"] or task_cfg.get("no_answer") is True)
    return task_cfg


def make_predictor(cfg: DictConfig, module, path: str, cache: DiskCache, out: Path) -> Predictor:
    """A predictor of ``module`` (built for this evaluation: :func:`evaluation_task_settings`)."""
    task_cfg = module.task_cfg
    tokenizer = load_tokenizer(module.model_cfg)
    collator = make_collator(task_cfg, tokenizer)

    def loader_for(examples):
        return prediction_loader(task_cfg, examples, collator, int(cfg.eval_batch_size), int(cfg.num_workers))

    def scorer(batch_size: int) -> ModelScorer:
        return ModelScorer(module, tokenizer, predictor.key, batch_size, precision=str(cfg.search_precision))

    predictor = Predictor(module, path, lambda: build_trainer(cfg, out, one_device=True), loader_for, cache, scorer)
    return predictor


def tune_no_answer(predictor: Predictor, splits: dict[str, list], split: str, clean: dict[str, dict]) -> dict[str, Any]:
    """The no-answer threshold of one checkpoint, tuned (maximum F1) on the clean predictions of
    the validation split (predicted here when the evaluated split is another); without a
    validation split the checkpoint's own threshold (tuned in training), else 0.0 (HF's default)."""
    module = predictor.module
    validation = splits.get("validation") or []
    if split == "validation" or validation:
        examples = validation if split != "validation" else splits[split]
        records = (
            clean if split == "validation" else predictor.records("validation", examples, fingerprint("clean", examples_digest(examples)))
        )
        module.tune_no_answer(records)
        info = {"source": "tuned on the validation split", "n": len(records)}
        info.update({f"validation_{k}": v for k, v in module.metrics_of(records).items()})
    else:
        info = {"source": "checkpoint" if module.no_answer_threshold is not None else "default 0.0 (no validation split)"}
        module.no_answer_threshold = module.no_answer_threshold or 0.0
    log.info("no-answer threshold of %s: %.4g (%s)", Path(predictor.source).name, module.no_answer_threshold, info["source"])
    return {"threshold": float(module.no_answer_threshold), **info}


def predict_sets(predictor: Predictor, sets: dict[str, EvalSet]) -> dict[str, dict]:
    return {s.name: predictor.records(s.name, s.examples, s.fingerprint) for s in sets.values()}


def set_examples(sets: dict[str, EvalSet], model_sets: dict[str, dict[str, EvalSet]], names: list[str]) -> dict[str, list]:
    """The examples of every set as the headline model saw them (the single model, or the
    ensemble): the shared sets, then its own model-in-the-loop and magnet sets."""
    first = names[0] if len(names) == 1 else "ensemble"
    own = model_sets.get(first) or (model_sets.get(names[0]) if first == "ensemble" else None) or {}
    return {name: list(s.examples) for name, s in {**sets, **own}.items()}


def write_outputs(
    cfg: DictConfig, report: dict, predictions: dict, names: list[str], paths: list[str], out: Path, examples: dict[str, list]
) -> dict[str, Any]:
    """Predictions, the report files (``examples``: each set's examples, for report.html's
    browser), ``metrics.json`` / ``metrics.md``, W&B; prints the table."""
    for model, per_set in predictions.items():
        for set_name, records in per_set.items():
            atomic_write_json(out / "predictions" / model.replace("/", "__") / f"{set_name}.json", records)
    first = names[0] if len(names) == 1 else "ensemble"
    atomic_write_json(out / "predictions.json", predictions[first][CLEAN])
    per_set = int(cfg.report_examples)
    metric = str(report.get("metric") or "squad_v1")
    browser = browser_sets(examples, predictions, first, metric=metric, per_set=per_set, seed=int(cfg.seed))
    figures = [*sorted(out.glob("reliability_*.png")), *sorted(out.glob("magnet_screening/*/*/magnet_scores.png"))]
    files = write_report(report, out, browser, figures, per_set)
    if cfg.wandb:
        from robust_mrc.trainer.wandb import log_evaluation

        log_evaluation(cfg, report, report_rows(report), [files["png"], *figures], out, browser)
    metrics: dict[str, Any] = headline_metrics(report, first)
    clean = report["models"][first]["sets"].get(CLEAN, {})
    metrics.update({f"{report['split']}/{k}": float(v) for k, v in clean.items() if k.startswith(("HasAns_", "NoAns_"))})
    if first in report.get("no_answer", {}):
        metrics["no_answer_threshold"] = report["no_answer"][first]["threshold"]
    metrics["ckpt_path"] = paths[0] if len(paths) == 1 else list(paths)
    atomic_write_json(out / "metrics.json", metrics)
    table = format_table(report_rows(report))
    listing = format_table([{"metric": k, "value": v} for k, v in metrics.items() if isinstance(v, float)])
    atomic_write_text(
        out / "metrics.md", f"# {cfg.data.get('name')} / {report['split']}\n\ncheckpoint(s): `{', '.join(paths)}`\n\n{table}\n{listing}"
    )
    print(table)
    metrics["run_dir"] = str(out)
    metrics["report"] = {k: str(v) for k, v in files.items()}
    log.info("evaluation written to %s", out)
    return metrics


MAGNET_TOP_SET = "magnet_top"


def magnet_screen_specs(cfg: DictConfig, suite_cfg: dict) -> list:
    """``magnet_screen.enabled=true`` (eval.yaml): one more screened magnet set, ``magnet_top``, made
    like a suite's ``{name: magnet, screen: ...}`` set (the same code, per model) with the
    ``magnet_screen`` sizes; its first model's screening is also the ``magnet_screen`` diagnostic."""
    from robust_mrc.evaluation.suites import SetSpec, SuiteConfigError

    ms = cfg.magnet_screen
    if not ms.enabled:
        return []
    if any((s if isinstance(s, str) else s.get("name")) == MAGNET_TOP_SET for s in suite_cfg.get("sets") or []):
        raise SuiteConfigError(f"magnet_screen.enabled=true adds the set {MAGNET_TOP_SET!r}, which the suite already has")
    screen = {
        "questions": int(ms.questions) if ms.questions else None,
        "pool_size": int(ms.max_pool) if ms.max_pool else None,
        "top": int(ms.top),
    }
    return [SetSpec(MAGNET_TOP_SET, attack="magnet", params={"pool": ms.pool} if ms.pool else {}, screen=screen)]
