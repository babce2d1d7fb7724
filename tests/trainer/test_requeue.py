"""SLURM's warning signal (SIGUSR1) during training: the checkpoint saved for the requeue resumes to
the uninterrupted run, wherever in training the signal came (robust_mrc.trainer.slurm.RequeueOnSignal).
The SLURM scripts themselves run in tests/trainer/test_slurm.py, on a local cluster."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import pytorch_lightning as pl
import torch

import robust_mrc.jobs.train as training
from robust_mrc.jobs.train import train
from robust_mrc.trainer.slurm import RequeueOnSignal
from tests.helpers import make_cfg

# 48 examples in batches of 8: 6 steps an epoch, 12 in all; dropout on, so the random state matters
CFG = ["model=tiny", "data.n_train=48", "data.n_val=16", "data.n_test=16", "trainer.max_epochs=2", "batch_size=8"]
CFG += ["+model.config.hidden_dropout_prob=0.1"]


class Killed(RuntimeError):
    pass


class SignalAt(pl.Callback):
    """Sends the signal (or runs ``send``) once, at ``hook`` of ``epoch`` (batch hooks: the third batch)."""

    def __init__(self, hook: str, epoch: int, send=None):
        self.hook, self.epoch, self.fired = hook, epoch, False
        self.send = send or (lambda trainer: os.kill(os.getpid(), signal.SIGUSR1))

    def _maybe(self, hook: str, trainer) -> None:
        if self.fired or hook != self.hook or trainer.current_epoch != self.epoch:
            return
        if hook == "on_before_optimizer_step" and trainer.fit_loop.epoch_loop.batch_progress.current.ready != 3:
            return
        self.fired = True
        self.send(trainer)

    def on_validation_start(self, trainer, pl_module):
        self._maybe("on_validation_start", trainer)

    def on_validation_end(self, trainer, pl_module):
        self._maybe("on_validation_end", trainer)

    def on_train_epoch_start(self, trainer, pl_module):
        self._maybe("on_train_epoch_start", trainer)

    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        self._maybe("on_before_optimizer_step", trainer)


class KillAfterSave(pl.Callback):
    """SLURM stopping the requeued job: a crash one training step after the requeue checkpoint."""

    def __init__(self, root: Path):
        self.root, self.saved_at = root, None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self.saved_at is None and list(self.root.glob("hpc_ckpt_*.ckpt")):
            self.saved_at = trainer.global_step
        elif self.saved_at is not None:
            raise Killed(f"killed at step {trainer.global_step}")


def _last(run: Path) -> dict:
    return torch.load(run / "checkpoints" / "last.ckpt", weights_only=False)


def _signalled_then_resumed(tmp_path, monkeypatch, name: str, extra: list) -> tuple[Path, int]:
    run = tmp_path / name
    real = training.build_trainer

    def with_extra(cfg, out, callbacks, **kw):
        return real(cfg, out, callbacks=[*callbacks, *extra, KillAfterSave(run)], **kw)

    monkeypatch.setattr(training, "build_trainer", with_extra)
    with pytest.raises(Killed):
        train(make_cfg(*CFG, f"output_dir={run}"))
    monkeypatch.setattr(training, "build_trainer", real)
    (hpc,) = run.glob("hpc_ckpt_*.ckpt")
    saved_at = torch.load(hpc, weights_only=False)["global_step"]
    train(make_cfg(*CFG, "ckpt_path=last", f"output_dir={run}"))  # picks the hpc checkpoint, the newest
    return run, saved_at


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    run = tmp_path_factory.mktemp("whole")
    train(make_cfg(*CFG, f"output_dir={run}"))
    return _last(run)


@pytest.mark.parametrize(
    ("hook", "epoch", "saved_at"),
    [("on_validation_start", 0, 1), ("on_train_epoch_start", 1, 7), ("on_before_optimizer_step", 1, 9)],
    ids=["sanity_check", "epoch_start", "within_a_step"],
)
def test_a_signal_anywhere_saves_at_a_batch_end_and_resumes_to_the_uninterrupted_run(
    tmp_path, monkeypatch, uninterrupted, hook, epoch, saved_at
):
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    requeued = []
    callback = RequeueOnSignal(signal.SIGUSR1, requeue=lambda job: requeued.append(job) or 0)
    before = signal.getsignal(signal.SIGUSR1)
    run, step = _signalled_then_resumed(tmp_path, monkeypatch, hook, [SignalAt(hook, epoch), callback])
    assert requeued == ["4242"] and step == saved_at  # saved at the end of the batch after the signal
    resumed = _last(run)
    assert resumed["global_step"] == uninterrupted["global_step"] == 12
    assert all(torch.equal(resumed["state_dict"][k], v) for k, v in uninterrupted["state_dict"].items())
    assert signal.getsignal(signal.SIGUSR1) == before  # handler removed with the trainer


def test_lightnings_in_handler_save_at_an_epoch_start_resumes_an_epoch_short(tmp_path, monkeypatch, uninterrupted):
    """Why RequeueOnSignal: Lightning 2.6's SLURM handler, run at the same point, saves a checkpoint
    from which the resumed run ends at step 6 of 12. When this fails, Lightning has fixed it."""
    import pytorch_lightning.trainer.connectors.signal_connector as connector

    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setattr(connector, "call", lambda cmd, **kw: 0)  # no scontrol
    lightning = SignalAt("on_train_epoch_start", 1, send=lambda t: t._signal_connector._slurm_sigusr_handler_fn(signal.SIGUSR1, None))
    run, step = _signalled_then_resumed(tmp_path, monkeypatch, "lightning", [lightning])
    assert step == 6 and _last(run)["global_step"] == 6 < uninterrupted["global_step"]
