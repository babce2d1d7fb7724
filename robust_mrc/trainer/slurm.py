"""SLURM: Lightning's SLURM environment without its requeue handler, and the framework's own
requeue on the warning signal (:class:`RequeueOnSignal`), whose ``hpc_ckpt_<n>.ckpt`` a requeued
job resumes from."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytorch_lightning as pl
from lightning_fabric.plugins.environments import SLURMEnvironment

log = logging.getLogger(__name__)


def scontrol_requeue(job_id: str) -> int:
    """``scontrol requeue <job>``: SLURM stops the job and queues it again under the same id."""
    return subprocess.call(["scontrol", "requeue", job_id])


def slurm_job_id() -> str:
    array = os.environ.get("SLURM_ARRAY_JOB_ID")
    if array is not None:
        return f"{array}_{os.environ['SLURM_ARRAY_TASK_ID']}"
    return os.environ["SLURM_JOB_ID"]


def hpc_checkpoints(root: Path) -> dict[int, Path]:
    """The requeue checkpoints ``hpc_ckpt_<n>.ckpt`` in ``root`` (Lightning's naming), by ``n``."""
    return {int(m.group(1)): p for p in root.glob("hpc_ckpt_*.ckpt") if (m := re.fullmatch(r"hpc_ckpt_(\d+)\.ckpt", p.name))}


def next_hpc_path(root: Path) -> Path:
    """``hpc_ckpt_<n>.ckpt`` in ``root``, one past the highest ``n`` there."""
    return root / f"hpc_ckpt_{max(hpc_checkpoints(root), default=0) + 1}.ckpt"


class RequeueOnSignal(pl.Callback):
    """SLURM's warning signal (``#SBATCH --signal=SIGUSR1@90``): save ``hpc_ckpt_<n>.ckpt`` in the
    run directory and ``scontrol requeue`` the job; the requeued job resumes from it (``ckpt_path=last``).

    Lightning's own handler (``SLURMEnvironment(auto_requeue=True)``) saves inside the signal
    handler, wherever training happens to be, and such a checkpoint does not always resume to the
    uninterrupted run: saved at an epoch's start, the resumed run stopped one epoch early (step 6 of
    12); saved within a training step, it ended at the right step with other weights (the step's
    random state); the SLURM test once ended at step 151 of 150. Here the handler only sets a flag;
    the save happens at the end of the training batch, where Lightning's mid-epoch checkpoints resume
    exactly (``tests/trainer/test_requeue.py``). A signal outside the training batches (sanity check,
    validation) is kept for the next batch end; after the last one there is nothing to save. Under
    DDP the ranks agree on the flag at each batch end (one rank's signal is enough), so they all
    save at the same step. :func:`robust_mrc.trainer.build.build_trainer` adds it under SLURM, with
    Lightning's handler off."""

    def __init__(self, signum: int = signal.SIGUSR1, requeue=scontrol_requeue) -> None:
        self.signum = signum
        self.requeue = requeue
        self.received = False
        self._installed = False
        self._previous = None

    def _on_signal(self, signum, frame) -> None:
        self.received = True  # only a flag: the handler runs between any two bytecodes

    def on_sanity_check_start(self, trainer, pl_module) -> None:
        self._install()  # a signal during the sanity check is kept for the first batch end

    def on_train_start(self, trainer, pl_module) -> None:
        self._install()

    def _install(self) -> None:
        # after Lightning's Trainer._run registered its handlers: its teardown, which puts back the
        # handlers it found, would otherwise leave this one on after a crash
        if self._installed:
            return
        if threading.current_thread() is not threading.main_thread():
            log.warning("not the main thread: no handler for signal %d, so no requeue on it", self.signum)
            return
        self.received = False
        self._previous = signal.signal(self.signum, self._on_signal)
        self._installed = True
        name = signal.Signals(self.signum).name
        log.info("SLURM requeue on %s: hpc_ckpt_<n>.ckpt at the end of the training batch, then scontrol requeue", name)

    def teardown(self, trainer, pl_module, stage: str) -> None:
        if self._installed:
            signal.signal(self.signum, self._previous if self._previous is not None else signal.SIG_DFL)
            self._installed = False

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        received = self.received
        if trainer.world_size > 1:
            received = trainer.strategy.reduce_boolean_decision(received, all=False)
        if not received:
            return
        self.received = False
        path = trainer.strategy.broadcast(next_hpc_path(Path(trainer.default_root_dir)))  # rank 0's
        log.info("signal %d: saving %s at step %d and requeueing the job", self.signum, path, trainer.global_step)
        trainer.save_checkpoint(path)
        if trainer.is_global_zero:
            job_id = slurm_job_id()
            result = self.requeue(job_id)
            if result == 0:
                log.info("Requeued SLURM job: %s", job_id)
            else:
                log.warning("Requeuing SLURM job %s failed with error code %s", job_id, result)


def cluster_plugins() -> list:
    """Under SLURM (a task started by sbatch/srun): Lightning's SLURM environment (ranks, master
    address), with its requeue handler off: :func:`cluster_callbacks` does the requeue."""
    if SLURMEnvironment.detect():
        return [SLURMEnvironment(auto_requeue=False, requeue_signal=signal.SIGUSR1)]
    return []


def cluster_callbacks() -> list:
    """Under SLURM: on SIGUSR1 (``#SBATCH --signal=SIGUSR1@90``) save ``hpc_ckpt_<n>.ckpt`` in the
    run directory at the end of the training batch and ``scontrol requeue``
    (:class:`RequeueOnSignal`); the requeued job resumes from it."""
    if SLURMEnvironment.detect():
        return [RequeueOnSignal(signal.SIGUSR1)]
    return []
