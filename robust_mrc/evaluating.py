"""``evaluate(cfg)``: a checkpoint + a data split -> metrics, predictions, a readable table."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from omegaconf import DictConfig, OmegaConf

from robust_mrc.data.sources import load_splits
from robust_mrc.datamodules.qa import QADataModule
from robust_mrc.models import MODULES
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.runtime import atomic_write_json, atomic_write_text, build_trainer, run_dir

log = logging.getLogger(__name__)


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


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table (also valid Markdown)."""
    if not rows:
        return ""
    cols = list(rows[0])
    cells = [[f"{r[c]:.4f}" if isinstance(r[c], float) else str(r[c]) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = lambda vals: "| " + " | ".join(v.ljust(w) for v, w in zip(vals, widths)) + " |"  # noqa: E731
    return "\n".join([line(cols), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, cells)]) + "\n"


def evaluate(cfg: DictConfig) -> dict[str, Any]:
    """Evaluate ``cfg.ckpt_path`` on ``cfg.data``'s ``cfg.split``; write metrics.json, predictions.json, metrics.md."""
    pl.seed_everything(int(cfg.seed), workers=True)
    out = run_dir(cfg)
    module = load_module(cfg.ckpt_path)
    task = module.task
    if task != cfg.task.name:
        raise CheckpointError(f"ckpt_path={cfg.ckpt_path} is a {task!r} model but task={cfg.task.name}: add task={task}")
    split = cfg.get("split", "test")
    splits = load_splits(cfg.data, task, seed=int(cfg.seed))
    if split not in splits or not splits[split]:
        available = [k for k, v in splits.items() if v]
        raise ValueError(f"data={cfg.data.get('name')} has no {split!r} split; available: {available}")
    tokenizer = load_tokenizer(module.model_cfg)
    task_cfg = dict(module.task_cfg)  # the checkpoint's preprocessing (inputs, max length) ...
    if task == "span":
        task_cfg["metric"] = cfg.task.get("metric", task_cfg.get("metric"))  # ... but this data's metric
    module.task_cfg = task_cfg
    datamodule = QADataModule(
        task_cfg, cfg.data, tokenizer, eval_batch_size=int(cfg.eval_batch_size), num_workers=int(cfg.num_workers), splits=splits
    )
    trainer = build_trainer(cfg, out)
    results = trainer.test(module, dataloaders=datamodule.eval_loader(splits[split]), verbose=False)[0]
    metrics = {k.replace("test/", f"{split}/", 1): float(v) for k, v in sorted(results.items())}
    metrics["ckpt_path"] = str(cfg.ckpt_path)
    predictions = module.last_predictions.get("clean", {})
    atomic_write_json(out / "metrics.json", metrics)
    atomic_write_json(out / "predictions.json", predictions)
    rows = [{"metric": k, "value": v} for k, v in metrics.items() if isinstance(v, float)]
    table = format_table(rows)
    atomic_write_text(out / "metrics.md", f"# {cfg.data.get('name')} / {split}\n\ncheckpoint: `{cfg.ckpt_path}`\n\n{table}")
    print(table)
    metrics["run_dir"] = str(out)
    log.info("evaluation written to %s", out)
    return metrics
