"""No command overwrites a run it did not make: a training started afresh in a finished run's
directory, and an evaluation pointed at a training run's directory, are refused in one line before
any work, and every file of the run stays as it was (``robust-mrc export``: tests/export)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robust_mrc.jobs.evaluate import evaluate
from robust_mrc.jobs.train import train
from robust_mrc.trainer.run_dir import RunDirTaken
from tests.helpers import make_cfg

QUICK = ["model=tiny", "data.n_train=8", "data.n_val=4", "data.n_test=4", "trainer.max_epochs=1", "test_after_fit=false"]


def snapshot(run: Path) -> dict:
    """Every file of the run (the lock file a command holds while it runs aside)."""
    files = [p for p in sorted(run.rglob("*")) if p.is_file() and p.name != ".run.lock"]
    return {p.relative_to(run): (p.stat().st_mtime_ns, p.read_bytes()) for p in files}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("runs") / "run"
    train(make_cfg(*QUICK, f"output_dir={run}"))
    assert (run / "metrics.json").is_file() and (run / "checkpoints" / "best.ckpt").is_file()
    return run


def test_a_fresh_training_in_a_finished_run_is_refused(finished):
    before = snapshot(finished)
    with pytest.raises(RunDirTaken, match=r"holds a run \(metrics.json, checkpoints/.*ckpt_path=last resumes it"):
        train(make_cfg(*QUICK, f"output_dir={finished}", "seed=7"))
    assert snapshot(finished) == before


def test_a_training_with_ckpt_path_last_resumes_there(finished, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(finished, copy)
    before = (copy / "metrics.json").stat().st_mtime_ns
    metrics = train(make_cfg(*QUICK, f"output_dir={copy}", "ckpt_path=last", "trainer.max_epochs=2"))
    assert "val/acc" in metrics and (copy / "metrics.json").stat().st_mtime_ns != before


def test_an_evaluation_never_writes_into_a_training_run(finished):
    before = snapshot(finished)
    ckpt = finished / "checkpoints" / "best.ckpt"
    with pytest.raises(RunDirTaken, match=r"is a training run's directory .*give output_dir=.*/eval"):
        evaluate(make_cfg(f"ckpt_path={ckpt}", "cache_dir=null", "diagnostics=[]", f"output_dir={finished}", config_name="eval"))
    assert snapshot(finished) == before
    evaluate(make_cfg(f"ckpt_path={ckpt}", "cache_dir=null", "diagnostics=[]", f"output_dir={finished / 'eval'}", config_name="eval"))
    assert (finished / "eval" / "report.json").is_file() and snapshot(finished)[Path("metrics.json")] == before[Path("metrics.json")]
