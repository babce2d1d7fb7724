"""The Lightning Trainer of a training or an evaluation: its arguments, strategy, loggers, atomic
checkpoints, plain progress lines in logs and the SLURM plugins."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from lightning_fabric.plugins.io.torch_io import TorchCheckpointIO
from omegaconf import DictConfig, OmegaConf
from pytorch_lightning.strategies import StrategyRegistry

from robust_mrc.core.errors import ConfigError
from robust_mrc.data.writers import OutputWriteError
from robust_mrc.trainer.callbacks import LogProgress
from robust_mrc.trainer.slurm import cluster_callbacks, cluster_plugins

log = logging.getLogger(__name__)


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
        from robust_mrc.trainer.wandb import wandb_logger

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


def progress_callbacks(cfg: DictConfig, kwargs: dict, stdout=None) -> list:
    """When stdout is not a terminal (SLURM, CI, ``> log``): Lightning's progress bar off (unless
    ``trainer.enable_progress_bar`` says otherwise) and, with ``progress_every: N``, a plain line every
    N steps / batches (:class:`~robust_mrc.trainer.callbacks.LogProgress`). On a terminal: the bar, no lines."""
    if (stdout or sys.stdout).isatty():
        return []
    kwargs.setdefault("enable_progress_bar", False)
    every = cfg.progress_every
    return [LogProgress(int(every))] if every else []


_SAID: set[str] = set()


def resolve_devices(trainer_args: dict, one_device: bool = False) -> dict:
    """``trainer=auto`` (``accelerator: auto`` / ``devices: auto`` / ``precision: auto``) made
    concrete: every GPU PyTorch finds, in ``bf16-mixed`` where the GPU supports bfloat16, else
    ``16-mixed``, with DDP when there are several; without a GPU the CPU, one process, ``32-true``.
    Settings given explicitly are kept; ``one_device`` (an evaluation): ``devices: auto`` is one
    device. Logs the choice once per process."""
    kwargs = dict(trainer_args)
    if "auto" not in (kwargs.get("accelerator"), kwargs.get("devices"), str(kwargs.get("precision"))):
        return kwargs
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if kwargs.get("accelerator") in ("auto", None):
        kwargs["accelerator"] = "gpu" if gpus else "cpu"
    on_gpu = kwargs["accelerator"] in ("gpu", "cuda")
    if kwargs.get("devices") in ("auto", None):
        kwargs["devices"] = gpus if on_gpu and not one_device else 1
    if str(kwargs.get("precision")) == "auto":
        kwargs["precision"] = ("bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed") if on_gpu else "32-true"
    processes = world_size(kwargs)
    if processes > 1 and kwargs.get("strategy") in (None, "auto"):
        kwargs["strategy"] = "ddp"
    if on_gpu:
        name = torch.cuda.get_device_name(0)
        said = f"trainer=auto: {kwargs['devices']} x {name}, {kwargs['precision']}, {processes} process(es)" + (
            " under DDP" if processes > 1 else ""
        )
    else:
        said = f"trainer=auto: no GPU found, so the CPU, {kwargs['precision']}, {processes} process(es)"
    if said not in _SAID:
        _SAID.add(said)
        log.info(said)
    return kwargs


def world_size(trainer_args: dict) -> int:
    """The number of training processes ``trainer_args`` (resolved: :func:`resolve_devices`) give:
    devices per node x nodes."""
    devices = trainer_args.get("devices", 1)
    if isinstance(devices, (list, tuple)):
        n = len(devices)
    elif isinstance(devices, str):
        n = len([d for d in devices.split(",") if d.strip()]) if "," in devices else (int(devices) if devices.lstrip("-").isdigit() else 1)
    else:
        n = int(devices)
    if n == -1:
        import torch

        n = torch.cuda.device_count() if trainer_args.get("accelerator") in ("gpu", "cuda") else 1
    return max(1, n) * max(1, int(trainer_args.get("num_nodes") or 1))


def trainer_arguments(cfg: DictConfig, one_device: bool = False) -> dict:
    """``cfg.trainer`` as Trainer keyword arguments, ``trainer=auto`` resolved (:func:`resolve_devices`)."""
    return resolve_devices(OmegaConf.to_container(cfg.trainer, resolve=True), one_device)


# Lightning's advertisements for its cloud services (litlogger, litmodels), and a deprecation inside
# Lightning's own tree code (torch's LeafSpec): nothing a user of this package can act on
_ADVERTISEMENT = "\N{ELECTRIC LIGHT BULB} Tip:"
_LIGHTNING_INTERNAL_DEPRECATIONS = (r"`isinstance\(treespec, LeafSpec\)` is deprecated",)


class _DropAdvertisements(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.getMessage()).startswith(_ADVERTISEMENT)


def quiet_lightning() -> None:
    """Leave out of a run's output what Lightning prints that is not about the run: its cloud
    advertisements and its own deprecation warnings. Idempotent."""
    logger = logging.getLogger("pytorch_lightning.utilities.rank_zero")
    if not any(isinstance(f, _DropAdvertisements) for f in logger.filters):
        logger.addFilter(_DropAdvertisements())
    for pattern in _LIGHTNING_INTERNAL_DEPRECATIONS:
        warnings.filterwarnings("ignore", message=pattern, category=FutureWarning)


def build_trainer(
    cfg: DictConfig, out: Path, callbacks: list | None = None, loggers: list | None = None, one_device: bool = False, **extra
) -> pl.Trainer:
    """The Trainer of a training or an evaluation: ``cfg.trainer`` (``trainer=auto`` resolved; an
    evaluation passes ``one_device``) and ``extra`` as arguments, atomic checkpoints, the SLURM
    plugin under SLURM, the loggers, and plain progress lines in logs."""
    quiet_lightning()
    kwargs = {**trainer_arguments(cfg, one_device), **extra}
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
