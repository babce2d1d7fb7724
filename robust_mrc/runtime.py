"""Run plumbing shared by train and evaluate: run directory, atomic files, Trainer, loggers."""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from lightning_fabric.plugins.io.torch_io import TorchCheckpointIO
from omegaconf import DictConfig, OmegaConf

from robust_mrc.data.writers import atomic_write_bytes

log = logging.getLogger(__name__)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename: never half a file."""
    atomic_write_bytes(path, text.encode("utf-8"))
    return Path(path)


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


class AtomicCheckpointIO(TorchCheckpointIO):
    """Checkpoints saved to a temporary file first, then renamed: a crash leaves the old one whole."""

    def save_checkpoint(self, checkpoint, path, storage_options=None) -> None:
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        super().save_checkpoint(checkpoint, tmp, storage_options)
        os.replace(tmp, path)


def run_dir(cfg: DictConfig) -> Path:
    """``cfg.output_dir``, else Hydra's output directory, else ``outputs/<timestamp>``."""
    if cfg.get("output_dir"):
        path = Path(cfg.output_dir)
    else:
        try:
            from hydra.core.hydra_config import HydraConfig

            path = Path(HydraConfig.get().runtime.output_dir)
        except ValueError:  # not under @hydra.main (tests, notebooks)
            path = Path("outputs") / datetime.now().strftime("%Y-%m-%d/%H-%M-%S-%f")
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_loggers(cfg: DictConfig, out: Path) -> list:
    logger_cfg = cfg.get("logger") or {"name": "csv"}
    name = logger_cfg.get("name", "csv")
    if name in ("none", None, False):
        return []
    # csv/version_N: a resumed run gets a new version instead of overwriting the old log
    loggers: list = [pl.loggers.CSVLogger(save_dir=str(out), name="csv")]
    if name == "wandb":
        mode = logger_cfg.get("mode", "offline")
        os.environ.setdefault("WANDB_MODE", mode)
        loggers.append(
            pl.loggers.WandbLogger(
                project=logger_cfg.get("project", "robust-mrc"),
                entity=logger_cfg.get("entity"),
                group=logger_cfg.get("group"),
                tags=list(logger_cfg.get("tags") or []),
                save_dir=str(out),
                mode=mode,
                config=OmegaConf.to_container(cfg, resolve=True),
            )
        )
    elif name != "csv":
        raise ValueError(f"logger={name!r}: expected csv, wandb or none")
    return loggers


def build_trainer(cfg: DictConfig, out: Path, callbacks: list | None = None, loggers: list | None = None, **extra) -> pl.Trainer:
    kwargs = {**OmegaConf.to_container(cfg.trainer, resolve=True), **extra}
    return pl.Trainer(
        default_root_dir=str(out),
        callbacks=callbacks or [],
        logger=loggers if loggers else False,
        plugins=[AtomicCheckpointIO()],
        **kwargs,
    )
