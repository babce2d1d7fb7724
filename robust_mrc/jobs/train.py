"""``train(cfg)``: data -> model -> Lightning fit -> best checkpoint -> validation / test metrics."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from omegaconf import DictConfig, OmegaConf

from robust_mrc.attacks.base import BankMaker
from robust_mrc.config.checks import ConfigError, check_config, check_lengths
from robust_mrc.core import settings as S
from robust_mrc.data.writers import atomic_write_json, check_writable
from robust_mrc.datamodules.qa import QADataModule, length_buckets
from robust_mrc.datamodules.span import resolve_span_task
from robust_mrc.jobs.extractor import distractor_banks
from robust_mrc.models import MODULES
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.checkpoints import check_weights_fit, resume_shapes
from robust_mrc.models.compiling import compile_backbone
from robust_mrc.policies import attacks_for_task
from robust_mrc.trainer import wandb as tracking
from robust_mrc.trainer.batching import AUTO, BatchPlan, plan_batches, probe_micro_batch
from robust_mrc.trainer.build import build_loggers, build_trainer, trainer_arguments, world_size
from robust_mrc.trainer.callbacks import AttackCounts, StopOnNonFiniteLoss, TrainItemLog, WarmShapes
from robust_mrc.trainer.rng_state import RandomStateCheckpoint
from robust_mrc.trainer.run_dir import hold_run_dir, is_global_zero, refuse_finished_run, run_dir, save_command, save_config
from robust_mrc.trainer.slurm import hpc_checkpoints

log = logging.getLogger(__name__)


def build_datamodule(cfg: DictConfig, tokenizer, banks=None) -> QADataModule:
    return QADataModule(
        cfg.task,
        cfg.data,
        tokenizer,
        batch_size=int(cfg.batch_size),
        eval_batch_size=int(cfg.eval_batch_size or cfg.batch_size),
        num_workers=int(cfg.num_workers),
        group_by_length=bool(cfg.group_by_length),
        seed=int(cfg.seed),
        attack_cfg=OmegaConf.to_container(cfg.attack, resolve=True) if cfg.attack is not None else None,
        record_items=bool(cfg.record_train_items),
        banks=banks,
    )


def batch_plan(cfg: DictConfig, module, task_cfg: dict) -> BatchPlan:
    """``batch_size`` examples per optimizer step over the run's processes in micro-batches
    (:mod:`robust_mrc.trainer.batching`); ``micro_batch_size=auto`` probes the GPU."""
    args = trainer_arguments(cfg)
    fits = None
    if cfg.micro_batch_size == AUTO and args["accelerator"] in ("gpu", "cuda"):
        group = examples_per_item(cfg)
        per_process = int(cfg.batch_size) // world_size(args)
        fits_examples = probe_micro_batch(module, task_cfg, per_process * group, str(args.get("precision")))
        fits = (lambda m: fits_examples(m * group)) if group > 1 else fits_examples
    return plan_batches(int(cfg.batch_size), cfg.micro_batch_size, world_size(args), fits)


def examples_per_item(cfg: DictConfig) -> int:
    """The most examples one item of a micro-batch can hold: 1; with ``attack.consistency`` a
    clean example and its attacked copies (one per training attack at most: :mod:`robust_mrc.datamodules.pairs`)."""
    if cfg.get("attack") is None:
        return 1
    attack = S.complete(S.AttackSettings, OmegaConf.to_container(cfg.attack, resolve=True))
    if not attack["consistency"] or attack["policy"] in (None, "none"):
        return 1
    return 1 + max(1, len(attacks_for_task(attack, cfg.task.name)))


def resolve_resume(ckpt_path: str | None, ckpt_dir: Path, hpc_dir: Path | None = None) -> str | None:
    """The checkpoint to resume from. ``last``: the newest of the run directory's
    ``checkpoints/last.ckpt`` and the ``hpc_ckpt_<n>.ckpt`` saved in ``hpc_dir`` on a SLURM
    requeue signal (:class:`~robust_mrc.trainer.slurm.RequeueOnSignal`); a :class:`ConfigError` when
    there is none. ``last_or_new``: the same, or a fresh start when there is none (the SLURM
    scripts: a requeued job resumes, its first start starts afresh). Else a checkpoint file."""
    if ckpt_path in (None, "", "null"):
        return None
    if ckpt_path in ("last", "last_or_new"):
        candidates = [ckpt_dir / "last.ckpt"]
        if hpc_dir is not None:
            candidates += list(hpc_checkpoints(hpc_dir).values())
        found = [p for p in candidates if p.is_file()]
        if found:
            return str(max(found, key=lambda p: p.stat().st_mtime))
        if ckpt_path == "last":
            raise ConfigError(
                f"ckpt_path=last: no checkpoint to resume from in {ckpt_dir} (checkpoints/last.ckpt"
                + (" or hpc_ckpt_<n>.ckpt" if hpc_dir is not None else "")
                + "): give the run directory "
                "to resume with output_dir=<that directory>, or ckpt_path=last_or_new to start afresh "
                "when there is no checkpoint yet"
            )
        log.info("ckpt_path=last_or_new: no checkpoint in %s yet, starting afresh", ckpt_dir)
        return None
    if not Path(ckpt_path).is_file():
        raise ConfigError(
            f"ckpt_path={ckpt_path}: no such checkpoint file (or ckpt_path=last / last_or_new "
            f"to resume the run directory's last checkpoint)"
        )
    return str(ckpt_path)


# Under DDP, Lightning warns that a DistributedSampler repeats evaluation examples and that epoch
# metrics are logged without sync_dist: predictions are gathered by example id on every rank
# (robust_mrc.models.base.gather_by_id), so each example counts once and every rank logs the same.
_DDP_EVAL_WARNINGS = (r"Using `DistributedSampler` with the dataloaders", r"It is recommended to use `self\.log\(.*sync_dist=True")

# Lightning warns on a resume from a checkpoint written within an epoch unless the loader is
# stateful; QADataModule.batches_done goes on with the epoch's remaining batches instead (except
# under DDP without group_by_length, where Lightning's DistributedSampler starts the epoch again)
_MID_EPOCH_WARNING = r"You're resuming from a checkpoint that ended before the epoch ended"


def monitor_mode(monitor: str) -> str:
    """How the checkpoint metric improves: ``min`` for a loss (``val/loss`` of task=dg), else ``max``."""
    return "min" if monitor.rsplit("/", 1)[-1].endswith("loss") else "max"


def _floats(metrics: dict) -> dict[str, float]:
    return {k: float(v) for k, v in sorted(metrics.items())}


def train(cfg: DictConfig, banks: BankMaker | None = None) -> dict[str, Any]:
    """Fit a reader as configured; return (and write to ``metrics.json``) its metrics. ``banks`` makes
    the distractor banks of ``bank: auto`` (default: :func:`robust_mrc.jobs.extractor.distractor_banks`)."""
    check_config(cfg, "train")
    tracking.require_logger_credentials(cfg)  # W&B online without a key: before any work
    pl.seed_everything(int(cfg.seed), workers=True)
    out = run_dir(cfg)
    with hold_run_dir(out):  # one training at a time in a run directory
        return _train_in(cfg, out, banks if banks is not None else distractor_banks())


def loss_suspects(cfg: DictConfig) -> str:
    """The settings that make a training loss blow up, with their values (what this run uses)."""
    names = ["model.optim.lr"]
    if cfg.attack is not None and cfg.attack.get("consistency"):
        names.append("attack.consistency_weight")
    if cfg.embedding_adversary.method:
        names += [f"embedding_adversary.{k}" for k in ("adv_lr", "adv_init_mag", "noise_std", "weight", "smart_lr", "smart_eps")]
    return ", ".join(f"{n}={OmegaConf.select(cfg, n)}" for n in names) + " too large (or trainer.precision too low)"


def _log_every(cfg: DictConfig) -> int:
    return int(OmegaConf.select(cfg, "trainer.log_every_n_steps", default=None) or 1)


def _train_in(cfg: DictConfig, out: Path, banks: BankMaker) -> dict[str, Any]:
    """:func:`train` in its run directory ``out``, held."""
    if not cfg.ckpt_path:
        refuse_finished_run(out)  # a fresh start never overwrites an earlier run's results
    if is_global_zero():
        save_config(cfg, out / "config.yaml")
        save_command(out / "command.txt")
    task = cfg.task.name
    ckpt_dir = out / "checkpoints"
    resume = resolve_resume(cfg.ckpt_path, ckpt_dir, out)  # before any work: a missing checkpoint says so
    saved_shapes = resume_shapes(resume, task) if resume else None  # not a checkpoint, or of the other task
    check_writable(ckpt_dir / "last.ckpt")  # a read-only checkpoints directory, before the first epoch
    tokenizer = load_tokenizer(cfg.model)
    datamodule = build_datamodule(cfg, tokenizer, banks)
    datamodule.setup("fit")
    check_lengths(cfg.task, tokenizer, datamodule.splits)
    # span: task.no_answer / task.metric "auto" decided from the data (SQuAD v2.0: unanswerable questions)
    task_cfg = resolve_span_task(OmegaConf.to_container(cfg.task, resolve=True), datamodule.splits)
    model_cfg = OmegaConf.to_container(cfg.model, resolve=True)
    module = MODULES[task](model_cfg, task_cfg, window_batch=datamodule.eval_batch_size)
    module.embedding_adversary = OmegaConf.to_container(cfg.embedding_adversary) if "embedding_adversary" in cfg else None
    if saved_shapes is not None:
        check_weights_fit(resume, saved_shapes, module)
    if task == "span":
        if task_cfg.get("no_answer"):
            log.info(
                "no-answer on (task.no_answer=%s): the threshold is tuned on the validation split each epoch",
                cfg.task.no_answer,
            )

    plan = batch_plan(cfg, module, task_cfg)
    datamodule.batch_size = plan.micro_batch_size  # the DataLoaders are made at fit
    log.info("%s", plan.describe())
    compile_backbone(module.backbone, cfg.compile)  # in place: the state dict keeps its keys

    monitor = cfg.monitor or module.monitor  # null: the task's metric
    checkpoint = pl.callbacks.ModelCheckpoint(
        dirpath=str(ckpt_dir),
        filename="best",
        monitor=monitor,
        mode=monitor_mode(monitor),
        enable_version_counter=False,
    )
    # last.ckpt after every validation, by a callback of its own: Lightning 2.6's save_last=True
    # writes it only when a top-k checkpoint is saved at the same step (the monitor improved), so a
    # requeued or resumed run would go back to the best epoch instead of the last one
    last = pl.callbacks.ModelCheckpoint(dirpath=str(ckpt_dir), filename="last", monitor=None, save_top_k=1, enable_version_counter=False)
    callbacks: list = [checkpoint, last, AttackCounts(), RandomStateCheckpoint(), StopOnNonFiniteLoss(loss_suspects(cfg), _log_every(cfg))]
    if cfg.get("checkpoint_every_n_steps"):
        # the same last.ckpt within epochs too; a resume goes on with the rest of that epoch's
        # batches (QADataModule.batches_done) and the saved random state
        every = int(cfg.checkpoint_every_n_steps)
        callbacks.append(
            pl.callbacks.ModelCheckpoint(
                dirpath=str(ckpt_dir), filename="last", monitor=None, save_top_k=1, every_n_train_steps=every, enable_version_counter=False
            )
        )
    if cfg.record_train_items:
        callbacks.append(TrainItemLog(out / "train_items"))
    widths = length_buckets(task_cfg)
    if widths and cfg.warm_shapes:
        callbacks.append(WarmShapes(widths))
    loggers = build_loggers(cfg, out)
    if tracking.wandb_loggers(loggers):
        callbacks.append(tracking.RobustnessTables())
    extra: dict[str, Any] = {"accumulate_grad_batches": plan.accumulation}
    if datamodule.fresh_each_epoch:
        extra["reload_dataloaders_every_n_epochs"] = 1
    trainer = build_trainer(cfg, out, callbacks=callbacks, loggers=loggers, **extra)
    try:
        with warnings.catch_warnings():
            for pattern in _DDP_EVAL_WARNINGS:
                warnings.filterwarnings("ignore", message=pattern)
            if cfg.group_by_length or trainer.world_size == 1:  # the data module resumes within the epoch
                warnings.filterwarnings("ignore", message=_MID_EPOCH_WARNING)
            trainer.fit(module, datamodule=datamodule, ckpt_path=resume, weights_only=True)

            best = checkpoint.best_model_path or None
            metrics: dict[str, Any] = {}
            metrics.update(_floats(trainer.validate(module, datamodule=datamodule, ckpt_path=best, verbose=False, weights_only=True)[0]))
            if cfg.test_after_fit and datamodule.splits["test"]:
                metrics.update(_floats(trainer.test(module, datamodule=datamodule, ckpt_path=best, verbose=False, weights_only=True)[0]))
    except BaseException:
        tracking.finish(loggers, exit_code=1)
        raise
    metrics["ckpt_path"] = best
    metrics["run_dir"] = str(out)
    policy = getattr(datamodule, "policy", None)
    if policy is not None and policy.attacks:  # what the training copies were made by (paper method or stand-in)
        metrics["attack_provenance"] = [a.provenance() for a in policy.attacks]
    if trainer.is_global_zero:
        atomic_write_json(out / "metrics.json", metrics)
    log.info("metrics: %s", metrics)
    tracking.finish(loggers)  # one W&B run per job, also in a multirun
    return metrics
