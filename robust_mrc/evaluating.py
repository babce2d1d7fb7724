"""``evaluate(cfg)``: checkpoints x a suite of test sets -> metrics, predictions, a robustness report.

    evaluate.py ckpt_path=... [data=...] [split=test] [suite=advrace|squad|clean]
    evaluate.py 'ensemble=[a.ckpt,b.ckpt,c.ckpt]' suite=advrace

Steps: load the split; build the suite's sets (attacked sets come from the disk cache when an
earlier run made them); predict every set with every checkpoint (predictions are cached too, so
an interrupted evaluation resumes where it stopped); combine an ensemble; run the diagnostics;
write ``report.json|csv|md``, ``robustness.png``, ``metrics.json``, ``predictions/`` and print
the table.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from omegaconf import DictConfig, OmegaConf

from robust_mrc.data.sources import load_splits
from robust_mrc.datamodules.qa import QADataModule
from robust_mrc.evaluation.cache import DiskCache
from robust_mrc.evaluation.ensemble import combine_records
from robust_mrc.evaluation.predict import Predictor
from robust_mrc.evaluation.suites import CLEAN, build_sets, suite_specs
from robust_mrc.models import MODULES
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.reports.robustness import model_summary, report_rows, set_entry, write_report
from robust_mrc.reports.tables import format_table
from robust_mrc.runtime import atomic_write_json, atomic_write_text, build_trainer, run_dir

log = logging.getLogger(__name__)

__all__ = ["CheckpointError", "evaluate", "format_table", "load_module"]


class CheckpointError(ValueError):
    """A checkpoint that cannot be evaluated as asked."""


def load_module(ckpt_path: str | Path):
    """The Lightning module of a robust-mrc checkpoint, architecture built without downloading weights."""
    path = Path(ckpt_path)
    if not path.is_file():
        raise CheckpointError(f"ckpt_path={ckpt_path}: no such checkpoint file")
    try:
        hparams = torch.load(path, map_location="cpu", weights_only=False).get("hyper_parameters", {})
    except Exception as err:
        raise CheckpointError(f"ckpt_path={ckpt_path}: not a readable checkpoint ({type(err).__name__}: {err})") from None
    task = (hparams.get("task_cfg") or {}).get("name")
    if task not in MODULES:
        raise CheckpointError(f"ckpt_path={ckpt_path}: not a robust-mrc checkpoint (no task in its hyper-parameters)")
    module = MODULES[task].load_from_checkpoint(path, map_location="cpu", pretrained_weights=False)
    module.eval()
    return module


def _checkpoints(cfg: DictConfig) -> list[str]:
    members = list(cfg.get("ensemble") or [])
    if members:
        if len(members) < 2:
            raise CheckpointError("ensemble=[...] needs at least two checkpoints")
        return [str(m) for m in members]
    if not cfg.get("ckpt_path"):
        raise CheckpointError("give ckpt_path=path/to/best.ckpt (or ensemble=[a.ckpt,b.ckpt,...])")
    return [str(cfg.ckpt_path)]


def model_names(paths: list[str]) -> list[str]:
    """Readable unique names: ``<run dir>/<stem>`` for ``.../checkpoints/best.ckpt``, else the stem."""
    names = []
    for p in paths:
        path = Path(p)
        name = f"{path.parent.parent.name}/{path.stem}" if path.parent.name == "checkpoints" else path.stem
        base, k = name, 2
        while name in names:
            name, k = f"{base}#{k}", k + 1
        names.append(name)
    return names


def evaluate(cfg: DictConfig) -> dict[str, Any]:
    """Evaluate the checkpoint(s) on ``cfg.data``'s ``cfg.split`` under ``cfg.suite``; write the report."""
    pl.seed_everything(int(cfg.seed), workers=True)
    out = run_dir(cfg)
    paths = _checkpoints(cfg)
    modules = [load_module(p) for p in paths]
    task = modules[0].task
    for path, module in zip(paths, modules):
        if module.task != cfg.task.name:
            raise CheckpointError(f"ckpt_path={path} is a {module.task!r} model but task={cfg.task.name}: add task={module.task}")
    split = cfg.get("split", "test")
    splits = load_splits(cfg.data, task, seed=int(cfg.seed))
    if split not in splits or not splits[split]:
        available = [k for k, v in splits.items() if v]
        raise ValueError(f"data={cfg.data.get('name')} has no {split!r} split; available: {available}")
    cache = DiskCache(cfg.get("cache_dir"))
    suite_cfg = OmegaConf.to_container(cfg.suite, resolve=True) if cfg.get("suite") is not None else {}
    specs = suite_specs(suite_cfg, task)
    pool = splits.get("train") or splits[split]
    sets = build_sets(
        specs, splits[split], task, seed=int(cfg.seed), cache=cache, pool_examples=pool, strict=bool(cfg.data.get("strict", True))
    )

    names = model_names(paths)
    predictions: dict[str, dict[str, dict]] = {}
    predictors: list[Predictor] = []
    for name, path, module in zip(names, paths, modules):
        task_cfg = dict(module.task_cfg)  # the checkpoint's preprocessing (inputs, max length) ...
        if task == "span":
            task_cfg["metric"] = cfg.task.get("metric", task_cfg.get("metric"))  # ... but this data's metric
        module.task_cfg = task_cfg
        datamodule = QADataModule(
            task_cfg, cfg.data, load_tokenizer(module.model_cfg), eval_batch_size=int(cfg.eval_batch_size),
            num_workers=int(cfg.num_workers), splits=splits,
        )
        predictor = Predictor(module, path, lambda: build_trainer(cfg, out), datamodule, cache)
        predictors.append(predictor)
        predictions[name] = {s.name: predictor.records(s.name, s.examples, s.fingerprint) for s in sets.values()}

    screening = None
    if (cfg.get("magnet_screen") or {}).get("enabled"):
        screening = _magnet_screening(cfg, task, splits[split], pool, predictors, names, predictions, sets, cache, out)
    if len(modules) > 1:
        method = str(cfg.get("ensemble_method") or ("average" if task == "mc" else "token_vote"))
        predictions["ensemble"] = {
            s: combine_records([predictions[n][s] for n in names], task, method) for s in sets
        }

    metrics_of = modules[0].metrics_of
    primary = modules[0].primary_metric
    report: dict[str, Any] = {
        "task": task, "suite": suite_cfg.get("name", "clean"), "split": split, "data": cfg.data.get("name"),
        "primary": primary, "seed": int(cfg.seed), "models": {}, "sets": {}, "notes": [],
    }
    for s in sets.values():
        report["sets"][s.name] = {
            "n": len(s.examples), "source": s.spec.file or s.spec.attack or "clean", "fingerprint": s.fingerprint,
            "cached": s.cached, "unchanged": s.fallbacks,
        }
    for model, per_set in predictions.items():
        entry: dict[str, Any] = {"ckpt": paths[names.index(model)] if model in names else list(paths), "sets": {}}
        clean_records = per_set.get(CLEAN)
        clean_metrics = metrics_of(clean_records) if clean_records else None
        for set_name, records in per_set.items():
            if not records:
                continue
            metrics = metrics_of(records)
            paired = set_name != CLEAN and clean_records is not None
            entry["sets"][set_name] = set_entry(
                metrics, records, clean_records if paired else None, clean_metrics if paired else None, primary, task
            )
        entry.update(model_summary(entry["sets"], primary))
        report["models"][model] = entry

    from robust_mrc.evaluation.diagnose import run_diagnostics

    report["diagnostics"] = run_diagnostics(cfg, report, sets, predictions, modules, names, out)
    if screening is not None:
        report["diagnostics"]["magnet_screen"] = screening

    for model, per_set in predictions.items():
        for set_name, records in per_set.items():
            atomic_write_json(out / "predictions" / model.replace("/", "__") / f"{set_name}.json", records)
    first = names[0] if len(names) == 1 else "ensemble"
    atomic_write_json(out / "predictions.json", predictions[first][CLEAN])
    files = write_report(report, out)
    if cfg.get("wandb"):
        from robust_mrc.tracking import log_evaluation

        log_evaluation(cfg, report, report_rows(report), [files["png"], *sorted(out.glob("reliability_*.png")), out / "magnet_scores.png"], out)

    metrics: dict[str, Any] = {}
    for set_name, m in report["models"][first]["sets"].items():
        prefix = f"{split}/" if set_name == CLEAN else f"{split}/{set_name}/"
        for key in ("acc", "em", "f1", "n", "drop", "flip"):
            if key in m:
                metrics[prefix + key] = float(m[key])
    if "attack_avg" in report["models"][first]:
        metrics[f"{split}/attack_avg"] = float(report["models"][first]["attack_avg"])
    metrics["ckpt_path"] = paths[0] if len(paths) == 1 else list(paths)
    atomic_write_json(out / "metrics.json", metrics)
    table = format_table(report_rows(report))
    listing = format_table([{"metric": k, "value": v} for k, v in metrics.items() if isinstance(v, float)])
    atomic_write_text(
        out / "metrics.md", f"# {cfg.data.get('name')} / {split}\n\ncheckpoint(s): `{', '.join(paths)}`\n\n{table}\n{listing}"
    )
    print(table)
    metrics["run_dir"] = str(out)
    metrics["report"] = {k: str(v) for k, v in files.items()}
    log.info("evaluation written to %s", out)
    return metrics


def _magnet_screening(cfg, task, clean, pool_examples, predictors, names, predictions, sets, cache, out) -> dict:
    """Seed 002 screening with the first checkpoint; optionally a ``magnet_top`` set drawn from
    the top-ranked options, predicted by every checkpoint."""
    from robust_mrc.attacks.pools import OptionPool
    from robust_mrc.evaluation.magnet_screen import pool_of, screen
    from robust_mrc.evaluation.suites import SetSpec

    ms = cfg.magnet_screen
    if task != "mc":
        raise ValueError("magnet_screen.enabled=true needs a multiple-choice checkpoint (task=mc)")
    questions = list(clean[: int(ms.questions)])
    pool = pool_of(ms.get("pool"), pool_examples)
    if ms.get("max_pool"):  # a new pool: file pools are shared through resolve_pool's cache
        pool = OptionPool(pool.entries[: int(ms.max_pool)])
    if not pool.entries:
        raise ValueError("magnet_screen: the option pool is empty")
    info = screen(predictors[0], questions, predictions[names[0]][CLEAN], pool, out, int(ms.top))
    info["model"] = names[0]
    if ms.get("attack_top", True):
        spec = SetSpec("magnet_top", attack="magnet", params={"pool": str(out / "magnet_pool.txt")})
        built = build_sets([spec], clean, task, seed=int(cfg.seed), cache=cache, pool_examples=pool_examples)
        sets["magnet_top"] = built["magnet_top"]
        for name, predictor in zip(names, predictors):
            predictions[name]["magnet_top"] = predictor.records("magnet_top", sets["magnet_top"].examples, sets["magnet_top"].fingerprint)
    return info
