"""A training with a DataLoader worker (``num_workers=1``, as the CPU experiments run), killed with
SIGKILL twice within epochs, resumes each time with ``ckpt_path=last`` to the final weights of the
uninterrupted run, bit for bit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
# 48 questions in batches of 8: 6 steps an epoch, 2 epochs, a checkpoint every 2 steps; dropout on
RUN = [
    "model=tiny",
    "data.n_train=48",
    "data.n_val=16",
    "data.n_test=16",
    "batch_size=8",
    "num_workers=1",
    "trainer=cpu",
    "trainer.max_epochs=2",
    "checkpoint_every_n_steps=2",
    "+model.config.hidden_dropout_prob=0.1",
    "+model.config.attention_probs_dropout_prob=0.1",
    "test_after_fit=false",
]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(WANDB_MODE="offline", HF_HUB_OFFLINE="1")
    return env


def _command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "train.py", *RUN, *extra, f"output_dir={out}", f"hydra.run.dir={out}"]


def _killed_after_step(out: Path, step: int, *extra: str) -> None:
    """Start the training, SIGKILL it (the worker too) once its last.ckpt holds ``step``."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    proc = subprocess.Popen(_command(out, *extra), cwd=ROOT, env=_env(), start_new_session=True, **quiet)
    last, deadline = out / "checkpoints" / "last.ckpt", time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if last.exists() and torch.load(last, weights_only=False)["global_step"] >= step:
                break
        except (EOFError, RuntimeError, OSError):  # read while it is replaced
            pass
        time.sleep(0.05)
    assert proc.poll() is None, "the training ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _weights(out: Path) -> dict:
    return torch.load(out / "checkpoints" / "last.ckpt", weights_only=False)["state_dict"]


@pytest.mark.slow  # four short trainings in their own processes (~1 min)
def test_killed_twice_with_a_worker_resumes_to_the_uninterrupted_weights(tmp_path):
    whole = tmp_path / "whole"
    done = subprocess.run(_command(whole), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    killed = tmp_path / "killed"
    _killed_after_step(killed, 2)  # within epoch 0
    _killed_after_step(killed, 8, "ckpt_path=last")  # within epoch 1, after a resume
    done = subprocess.run(_command(killed, "ckpt_path=last"), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    a, b = _weights(whole), _weights(killed)
    assert torch.load(killed / "checkpoints" / "last.ckpt", weights_only=False)["global_step"] == 12
    assert all(torch.equal(a[k], b[k]) for k in a)
