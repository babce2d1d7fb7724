"""Lightning callbacks of the framework: attack counts, the trained-items log, plain progress lines.
(The SLURM requeue: :mod:`robust_mrc.trainer.slurm`; the random state: :mod:`robust_mrc.trainer.rng_state`.)"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path

import pytorch_lightning as pl

from robust_mrc.core.clock import clock
from robust_mrc.core.distributed import gather_objects
from robust_mrc.core.errors import UserError

log = logging.getLogger(__name__)


class NonFiniteLoss(UserError, FloatingPointError):
    """The training loss became NaN or infinite: the run stops with what it saved before."""


class StopOnNonFiniteLoss(pl.Callback):
    """Stops the training in one line when its loss is NaN or infinite: checked every ``every``
    steps (no host synchronisation in the steps between) and before each validation, so no
    checkpoint is written after the weights broke (and a NaN validation metric is never the best).
    ``suspects``: the settings most likely at fault, with their values, named in the message."""

    def __init__(self, suspects: str, every: int = 1):
        self.suspects, self.every = suspects, max(1, int(every))
        self._last = None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if loss is None:
            return
        self._last = loss.detach()
        if trainer.global_step % self.every == 0:
            self._check(trainer)

    def on_validation_start(self, trainer, pl_module) -> None:
        if trainer.training or trainer.state.fn == "fit":
            self._check(trainer)

    def _check(self, trainer) -> None:
        import torch

        if self._last is None or bool(torch.isfinite(self._last).all()):
            return
        raise NonFiniteLoss(
            f"the training loss became {float(self._last.float().reshape(-1)[0])} by step {trainer.global_step} "
            f"(epoch {trainer.current_epoch}): the weights are no longer numbers and training stops here, the checkpoints "
            f"saved before kept (none after); the likeliest cause: {self.suspects}"
        )


class WarmShapes(pl.Callback):
    """Before the first training step of the process: one forward and backward pass of the task
    loss per bucket width (``task.length_buckets``), on the first batch cut or padded to it, so that
    every kernel choice and compiled graph the run will need is made before its first timed step.
    Nothing of the run changes: no optimizer step, the gradients cleared, the random state of
    Python, NumPy and torch (CPU and GPU) restored, no gradient synchronisation across ranks."""

    def __init__(self, widths) -> None:
        self.widths = tuple(int(w) for w in widths)
        self.done = False
        self.seconds = 0.0

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if self.done:
            return
        self.done = True
        import contextlib
        import random

        import numpy as np
        import torch

        from robust_mrc.datamodules.buckets import batch_at_width

        start = time.perf_counter()
        states = (random.getstate(), np.random.get_state(), torch.get_rng_state())
        cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
        block = getattr(trainer.strategy, "block_backward_sync", None)
        try:
            with block() if block is not None else contextlib.nullcontext():
                for width in self.widths:
                    with trainer.precision_plugin.train_step_context():
                        loss, _ = pl_module.train_outputs(batch_at_width(batch, width))
                    loss.backward()
                    pl_module.zero_grad(set_to_none=True)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        finally:
            random.setstate(states[0])
            np.random.set_state(states[1])
            torch.set_rng_state(states[2])
            if cuda is not None:
                torch.cuda.set_rng_state_all(cuda)
        self.seconds = time.perf_counter() - start
        log.info("warmed %d padded widths %s in %.1f s before the first step", len(self.widths), list(self.widths), self.seconds)


class AttackCounts(pl.Callback):
    """Counts the training items of each epoch by attack and status (attacked / fallback / clean)
    from the ``attack_tags`` of the batches, and logs them at the end of the epoch as
    ``train/items/<attack>/<status>`` (summed over ranks) and ``train/items/clean``; the cue copies
    of ``attack.balance`` count apart, as ``<cue> (balance)`` (e.g. ``diagnosis (balance)``).

    ``history`` keeps ``{epoch: {(attack, status): count}}`` of this rank.
    """

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.history: dict[int, dict[tuple[str, str], int]] = {}

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self.counts = Counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.counts.update(tuple(tag) for tag in batch.get("attack_tags", ()))

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        counts = dict(self.counts)
        self.history[trainer.current_epoch] = counts
        # Summed here, over the union of the ranks' keys, and logged unsynchronised (every rank holds
        # the same totals). Not `log(..., sync_dist=True)` per key: a rank whose epoch lacked a key
        # (a rare fallback) would make one all-reduce fewer than the others, and the ranks would
        # hang at the epoch end, or pair one key's count with another's.
        totals = sum_over_ranks(counts)
        for (attack, status), n in sorted(totals.items()):
            key = "train/items/clean" if attack == "clean" else f"train/items/{attack}/{status}"
            pl_module.log(key, float(n))
        if any(a != "clean" for a, _ in counts):
            log.info(
                "epoch %d training items: %s", trainer.current_epoch, ", ".join(f"{a}/{s}={n}" for (a, s), n in sorted(counts.items()))
            )


def sum_over_ranks(counts: dict) -> Counter:
    """``counts`` summed over every rank of the process group, keys united (this rank's alone
    without one)."""
    total: Counter = Counter()
    for part in gather_objects(counts):
        total.update(part)
    return total


class TrainItemLog(pl.Callback):
    """Debug record of what each rank trained on: one JSON line per training item,
    ``{"epoch", "batch", "id", "attack", "status", "digest"}``, in ``<dirpath>/rank<global rank>.jsonl``
    (written at the end of each epoch). The union over ranks of a DDP run is what one process
    trains on (DDP padding may repeat a few items). Needs batches with ``item_digests``
    (``record_train_items=true``)."""

    def __init__(self, dirpath: str | Path) -> None:
        self.dirpath = Path(dirpath)
        self.rows: list[dict] = []

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self.rows = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        digests = batch.get("item_digests")
        if digests is None:
            raise ValueError("TrainItemLog needs batches with item_digests: build the data module with record_items=True")
        for ex_id, (attack, status), digest in zip(batch["ids"], batch["attack_tags"], digests):
            self.rows.append(
                {"epoch": trainer.current_epoch, "batch": batch_idx, "id": ex_id, "attack": attack, "status": status, "digest": digest}
            )

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        self.dirpath.mkdir(parents=True, exist_ok=True)
        with open(self.dirpath / f"rank{trainer.global_rank}.jsonl", "a", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in self.rows)


def _items(batch) -> int:
    """Examples in a batch (the collators' ``ids``; else the first dimension of its first tensor)."""
    if isinstance(batch, dict):
        if "ids" in batch:
            return len(batch["ids"])
        batch = next((v for v in batch.values() if hasattr(v, "shape")), None)
    return int(batch.shape[0]) if hasattr(batch, "shape") and len(batch.shape) else 0


class LogProgress(pl.Callback):
    """Plain progress lines for logs (SLURM, CI, ``> log``), where a progress bar would write control
    codes: every ``every`` optimizer steps of training and every ``every`` batches of validation,
    test and prediction, one line on stdout from rank 0::

        [train] epoch 1/2 step 50/100 loss 1.3862 items/s 52.4 (mean 45.2) ETA 0:00:03
        [predict] batch 50/200 items/s 120.3 (mean 118.0) ETA 0:00:10

    ``items/s`` counts the examples of all ranks (rank 0's times the world size): first since the
    previous line (the pace now), then the mean since the stage started. A training rate leaves out
    the time spent in validation within the fit; the first batches of a process are slow (CUDA
    kernel choice per new input shape: ~2.2x slower over the first ~60 steps on an H200, docs/results.md),
    which the mean carries for long and the pace now does not. ``ETA`` is the rest of the stage
    (training: of the whole fit, validation included) at the mean wall-clock pace, ``?`` when its
    length is unknown. :func:`robust_mrc.trainer.build.build_trainer` adds it when stdout is not a
    terminal (``progress_every``)."""

    def __init__(self, every: int = 50, stream=None) -> None:
        if every < 1:
            raise ValueError(f"progress_every={every}: expected an integer >= 1")
        self.every = every
        self.stream = stream
        self._start: dict[str, tuple[float, int]] = {}  # stage -> (time, step or batch count at the start)
        self._items: dict[str, int] = {}
        self._last: dict[str, tuple[float, int, float]] = {}  # stage -> (time, items, paused seconds) at the last line
        self._paused: dict[str, float] = {}  # stage -> seconds spent in other stages within it (validation in fit)
        self._validation_began: float | None = None
        self._printed_step = -1

    def _print(self, trainer, line: str) -> None:
        if trainer.is_global_zero:
            print(line, file=self.stream or sys.stdout, flush=True)

    def _begin(self, stage: str, count: int = 0) -> None:
        now = time.monotonic()
        self._start[stage] = (now, count)
        self._items[stage] = 0
        self._paused[stage] = 0.0
        self._last[stage] = (now, 0, 0.0)

    def _pace(self, trainer, stage: str, done: int, total: float | None) -> str:
        now = time.monotonic()
        started, first = self._start[stage]
        elapsed = max(now - started, 1e-9)
        items, paused = self._items[stage], self._paused[stage]
        mean = items * trainer.world_size / max(elapsed - paused, 1e-9)
        then, then_items, then_paused = self._last[stage]
        recent = (items - then_items) * trainer.world_size / max(now - then - (paused - then_paused), 1e-9)
        self._last[stage] = (now, items, paused)
        per_unit = elapsed / max(done - first, 1)
        eta = clock(per_unit * (total - done)) if total is not None and total != float("inf") else "?"
        return f"items/s {recent:.1f} (mean {mean:.1f}) ETA {eta}"

    def on_train_start(self, trainer, pl_module) -> None:
        self._begin("train", trainer.global_step)
        self._printed_step = trainer.global_step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self._items["train"] = self._items.get("train", 0) + _items(batch)
        step = trainer.global_step
        total = trainer.estimated_stepping_batches
        if step == self._printed_step or (step % self.every and step != total):
            return
        self._printed_step = step
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        loss_text = f"{float(loss.detach()):.4f}" if loss is not None and hasattr(loss, "detach") else "?"
        epochs = trainer.max_epochs if trainer.max_epochs not in (None, -1) else "?"
        steps = int(total) if total != float("inf") else "?"
        self._print(
            trainer,
            f"[train] epoch {trainer.current_epoch + 1}/{epochs} step {step}/{steps} loss {loss_text} "
            + self._pace(trainer, "train", step, total),
        )

    def _eval_batch(self, trainer, stage: str, batch, batch_idx: int, totals, dataloader_idx: int) -> None:
        if trainer.sanity_checking:
            return
        self._items[stage] = self._items.get(stage, 0) + _items(batch)
        total = totals[dataloader_idx] if dataloader_idx < len(totals) else None
        done = batch_idx + 1
        if done % self.every and done != total:
            return
        total_text = int(total) if total is not None and total != float("inf") else "?"
        self._print(trainer, f"[{stage}] batch {done}/{total_text} " + self._pace(trainer, stage, done, total))

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        self._begin("validate")
        self._validation_began = time.monotonic()

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        if self._validation_began is not None and "train" in self._paused:  # validation within the fit
            self._paused["train"] += time.monotonic() - self._validation_began
        self._validation_began = None

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        self._eval_batch(trainer, "validate", batch, batch_idx, trainer.num_val_batches, dataloader_idx)

    def on_test_epoch_start(self, trainer, pl_module) -> None:
        self._begin("test")

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        self._eval_batch(trainer, "test", batch, batch_idx, trainer.num_test_batches, dataloader_idx)

    def on_predict_epoch_start(self, trainer, pl_module) -> None:
        self._begin("predict")

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        self._eval_batch(trainer, "predict", batch, batch_idx, trainer.num_predict_batches, dataloader_idx)
