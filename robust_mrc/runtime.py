"""Run plumbing shared by train and evaluate: run directory, atomic files, Trainer, loggers."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from lightning_fabric.plugins.environments import SLURMEnvironment
from lightning_fabric.plugins.io.torch_io import TorchCheckpointIO
from lightning_fabric.utilities.rank_zero import rank_zero_only
from omegaconf import DictConfig, OmegaConf
from pytorch_lightning.strategies import StrategyRegistry

from robust_mrc.callbacks import LogProgress, RequeueOnSignal
from robust_mrc.config_checks import ConfigError
from robust_mrc.data.writers import OutputWriteError, atomic_write_text

log = logging.getLogger(__name__)


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def save_config(cfg: DictConfig, path: Path) -> Path:
    """The resolved config as YAML, atomically (a read-only or full run directory: a clear error)."""
    return atomic_write_text(path, OmegaConf.to_yaml(cfg, resolve=True))


class AtomicCheckpointIO(TorchCheckpointIO):
    """Checkpoints saved to a temporary file first, then renamed: a crash leaves the old one whole."""

    def save_checkpoint(self, checkpoint, path, storage_options=None) -> None:
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            super().save_checkpoint(checkpoint, tmp, storage_options)
            os.replace(tmp, path)
        except OSError as err:
            tmp.unlink(missing_ok=True)
            raise OutputWriteError(path, err) from err


RUN_DIR_ENV = "ROBUST_MRC_RUN_DIR"


def run_dir(cfg: DictConfig) -> Path:
    """``cfg.output_dir``, else Hydra's output directory, else ``outputs/<timestamp>`` (rank 0's
    timestamp in every DDP process: Lightning's children inherit it through the environment).

    Processes started by SLURM (srun) do not share an environment with rank 0: give them
    ``output_dir`` (the sbatch scripts key it by the job id)."""
    if cfg.output_dir:
        path = Path(cfg.output_dir)
    else:
        try:
            from hydra.core.hydra_config import HydraConfig

            path = Path(HydraConfig.get().runtime.output_dir)
        except ValueError:  # not under @hydra.main (tests, notebooks)
            inherited = os.environ.get(RUN_DIR_ENV)
            if inherited and not is_global_zero():
                path = Path(inherited)  # a DDP child process started by rank 0: rank 0's directory
            else:
                path = new_run_dir(Path("outputs"))
                os.environ[RUN_DIR_ENV] = str(path)  # inherited by the DDP processes Lightning starts
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputWriteError(path / "config.yaml", err) from err
    return path


def new_run_dir(root: Path) -> Path:
    """A directory ``root/<date>/<time with microseconds>-<pid>`` made by this call alone: two runs
    started in the same second (or microsecond) never share one."""
    stamp = datetime.now().strftime("%Y-%m-%d/%H-%M-%S-%f")
    base = root / f"{stamp}-{os.getpid()}"
    for n in range(1000):
        path = base if n == 0 else base.with_name(f"{base.name}-{n}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as err:
            raise OutputWriteError(path / "config.yaml", err) from err
    raise OutputWriteError(base, OSError(None, "1000 run directories of this name exist"))


def is_global_zero() -> bool:
    """Rank 0 of the job, known before the Trainer exists (from RANK / LOCAL_RANK / SLURM_PROCID)."""
    return rank_zero_only.rank == 0


def build_loggers(cfg: DictConfig, out: Path) -> list:
    logger_cfg = cfg.logger if cfg.logger is not None else {"name": "csv"}  # logger=null: the CSV log alone
    name = logger_cfg["name"]
    if name in ("none", None, False):
        return []
    if name not in ("csv", "wandb"):
        raise ConfigError(f"logger={name!r}: expected csv, wandb or none")
    # csv/version_N: a resumed run gets a new version instead of overwriting the old log
    loggers: list = [pl.loggers.CSVLogger(save_dir=str(out), name="csv")]
    if name == "wandb":
        from robust_mrc.tracking import wandb_logger

        loggers.append(wandb_logger(cfg, out))
    return loggers


def build_strategy(spec: Any) -> Any:
    """``trainer.strategy``: a Lightning name (``ddp``), or ``{name: ddp, <its arguments>}`` such as
    ``{name: ddp, process_group_backend: gloo}``, built into that strategy object."""
    if not isinstance(spec, dict):
        return spec
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in StrategyRegistry:
        known = ", ".join(sorted(StrategyRegistry.available_strategies()))
        raise ConfigError(f"trainer.strategy.name={name!r} is not a Lightning strategy; one of: {known}")
    entry = StrategyRegistry[name]
    try:
        return entry["strategy"](**{**entry["init_params"], **spec})
    except TypeError as err:
        raise ConfigError(f"trainer.strategy={{name: {name}, ...}}: {err}") from None


def cluster_plugins() -> list:
    """Under SLURM (a task started by sbatch/srun): Lightning's SLURM environment (ranks, master
    address), with its requeue handler off: :func:`cluster_callbacks` does the requeue."""
    if SLURMEnvironment.detect():
        return [SLURMEnvironment(auto_requeue=False, requeue_signal=signal.SIGUSR1)]
    return []


def cluster_callbacks() -> list:
    """Under SLURM: on SIGUSR1 (``#SBATCH --signal=SIGUSR1@90``) save ``hpc_ckpt_<n>.ckpt`` in the
    run directory at the end of the training batch and ``scontrol requeue``
    (:class:`~robust_mrc.callbacks.RequeueOnSignal`); the requeued job resumes from it."""
    if SLURMEnvironment.detect():
        return [RequeueOnSignal(signal.SIGUSR1)]
    return []


def progress_callbacks(cfg: DictConfig, kwargs: dict, stdout=None) -> list:
    """When stdout is not a terminal (SLURM, CI, ``> log``): Lightning's progress bar off (unless
    ``trainer.enable_progress_bar`` says otherwise) and, with ``progress_every: N``, a plain line every
    N steps / batches (:class:`~robust_mrc.callbacks.LogProgress`). On a terminal: the bar, no lines."""
    if (stdout or sys.stdout).isatty():
        return []
    kwargs.setdefault("enable_progress_bar", False)
    every = cfg.progress_every
    return [LogProgress(int(every))] if every else []


def build_trainer(cfg: DictConfig, out: Path, callbacks: list | None = None, loggers: list | None = None, **extra) -> pl.Trainer:
    """The Trainer of a training or an evaluation: ``cfg.trainer`` and ``extra`` as arguments, atomic
    checkpoints, the SLURM plugin under SLURM, the loggers, and plain progress lines in logs."""
    kwargs = {**OmegaConf.to_container(cfg.trainer, resolve=True), **extra}
    if "strategy" in kwargs:
        kwargs["strategy"] = build_strategy(kwargs["strategy"])
    progress = progress_callbacks(cfg, kwargs)
    return pl.Trainer(
        default_root_dir=str(out),
        callbacks=[*(callbacks or []), *progress, *cluster_callbacks()],
        logger=loggers if loggers else False,
        plugins=[AtomicCheckpointIO(), *cluster_plugins()],
        **kwargs,
    )
