"""Plain progress lines when stdout is not a terminal: training and evaluation, no bar control codes."""

from __future__ import annotations

import io
import re

import pytest
import torch

from robust_mrc.jobs.evaluate import evaluate
from robust_mrc.jobs.train import train
from robust_mrc.trainer.build import progress_callbacks
from robust_mrc.trainer.callbacks import LogProgress
from tests.helpers import make_cfg

QUICK = ["model=tiny", "data.n_train=64", "data.n_val=16", "data.n_test=16", "trainer.max_epochs=2", "batch_size=16", "eval_batch_size=8"]
TRAIN_LINE = re.compile(r"^\[train\] epoch (\d+)/2 step (\d+)/8 loss \d+\.\d{4} items/s \d+\.\d \(mean \d+\.\d\) ETA \d+:\d\d:\d\d$")
EVAL_LINE = re.compile(r"^\[(validate|test|predict)\] batch (\d+)/(\d+) items/s \d+\.\d \(mean \d+\.\d\) ETA \d+:\d\d:\d\d$")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_training_and_evaluation_print_progress_lines_into_a_log(tmp_path, capsys):
    metrics = train(make_cfg(*QUICK, "progress_every=3", f"output_dir={tmp_path / 'train'}"))
    out = capsys.readouterr().out
    assert "\r" not in out and "\x1b" not in out  # no progress bar in the log
    train_lines = [m for m in map(TRAIN_LINE.match, out.splitlines()) if m]
    # every 3 optimizer steps and the last one: 3, 6, 8 (4 steps an epoch, 2 epochs)
    assert [(int(m.group(1)), int(m.group(2))) for m in train_lines] == [(1, 3), (2, 6), (2, 8)]
    evals = [m.groups() for m in map(EVAL_LINE.match, out.splitlines()) if m]
    # validation after each epoch and once more for the best checkpoint, then the test: 2 batches of 8 each (the last batch printed)
    assert evals == [("validate", "2", "2")] * 3 + [("test", "2", "2")]

    evaluate(
        make_cfg(
            f"ckpt_path={metrics['ckpt_path']}",
            *QUICK[1:4],
            "eval_batch_size=4",
            "progress_every=2",
            f"output_dir={tmp_path / 'eval'}",
            config_name="eval",
        )
    )
    lines = [m.groups() for m in map(EVAL_LINE.match, capsys.readouterr().out.splitlines()) if m]
    assert lines == [("predict", "2", "4"), ("predict", "4", "4")]


def test_progress_every_zero_prints_nothing(tmp_path, capsys):
    train(make_cfg(*QUICK, "trainer.max_epochs=1", "progress_every=0", f"output_dir={tmp_path}"))
    out = capsys.readouterr().out
    assert not re.search(r"^\[(train|validate|test)\]", out, re.M) and "\r" not in out


def test_a_terminal_keeps_the_progress_bar():
    kwargs: dict = {}
    assert progress_callbacks(make_cfg(), kwargs, stdout=_Terminal()) == [] and kwargs == {}
    (cb,) = progress_callbacks(make_cfg("progress_every=7"), kwargs, stdout=io.StringIO())
    assert isinstance(cb, LogProgress) and cb.every == 7 and kwargs == {"enable_progress_bar": False}
    with pytest.raises(ValueError, match="progress_every=0"):
        LogProgress(0)


def test_the_train_rate_is_the_pace_now_and_leaves_validation_out(monkeypatch):
    """The first number is the pace since the previous line (the slow first steps of a process
    weigh on the mean only), and neither counts the time spent validating inside the fit."""
    from types import SimpleNamespace

    import robust_mrc.trainer.callbacks as callbacks

    clock = [0.0]
    monkeypatch.setattr(callbacks.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    cb = LogProgress(every=5, stream=stream)
    trainer = SimpleNamespace(is_global_zero=True, world_size=1, global_step=0, estimated_stepping_batches=20, max_epochs=2)
    trainer.current_epoch, trainer.sanity_checking = 0, False
    batch = {"ids": list(range(16))}
    cb.on_train_start(trainer, None)

    def steps(n, seconds):
        for _ in range(n):
            clock[0] += seconds
            trainer.global_step += 1
            cb.on_train_batch_end(trainer, None, {"loss": torch.tensor(1.0)}, batch, 0)

    steps(10, 1.0)  # slow first steps: 16 items/s
    cb.on_validation_epoch_start(trainer, None)
    clock[0] += 100.0  # validation
    cb.on_validation_epoch_end(trainer, None)
    trainer.current_epoch = 1
    steps(5, 0.5)  # warm: 32 items/s
    lines = stream.getvalue().splitlines()
    assert [line.split("items/s ")[1] for line in lines] == [
        "16.0 (mean 16.0) ETA 0:00:15",
        "16.0 (mean 16.0) ETA 0:00:10",
        "32.0 (mean 19.2) ETA 0:00:38",  # 240 items in 12.5 s of training; the ETA at the wall-clock pace, validation included
    ]
