"""The SLURM scripts on a real (one-node, local) SLURM cluster. Not part of the default run:

    slurm/local_cluster.sh start
    SLURM_CONF=/tmp/robust-mrc-slurm/slurm.conf python -m pytest -m slurm tests/trainer/test_slurm.py
    slurm/local_cluster.sh stop

Skipped when ``sbatch`` is missing or no controller answers. The jobs run on CPU: the sbatch
scripts' GPU request is overridden with ``--gpus-per-node=0`` and ``TRAINER=ddp_cpu|cpu``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parents[2]
LONG = [
    "model=tiny",
    "data.n_train=400",
    "data.n_val=16",
    "data.n_test=16",
    "batch_size=16",
    "trainer.max_epochs=6",
    "test_after_fit=false",
]
EPOCH_STEPS = 400 // 16  # attack=none: 25 batches an epoch
LONG_STEPS = 6 * EPOCH_STEPS


def no_cluster(reason: str) -> None:
    """Skip; fail under CI (ROBUST_MRC_CI=1), which starts the cluster and must not skip silently."""
    (pytest.fail if os.environ.get("ROBUST_MRC_CI") == "1" else pytest.skip)(reason)


@pytest.fixture(scope="module", autouse=True)
def cluster():
    if shutil.which("sbatch") is None:
        no_cluster("sbatch not found: apt-get install slurm-wlm munge, then slurm/local_cluster.sh start")
    hint = "slurm/local_cluster.sh start, then export SLURM_CONF=/tmp/robust-mrc-slurm/slurm.conf"
    try:
        probe = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired as err:  # sinfo retries a missing slurm.conf / controller for a minute
        no_cluster(f"no SLURM controller answers (sinfo: {(err.stderr or b'')[:200]!r}); {hint}")
    if probe.returncode != 0 or not probe.stdout.strip():
        no_cluster(f"no SLURM controller answers (sinfo: {probe.stderr.strip()[:200]}); {hint}")


def sbatch(script: str, run_dir: Path, overrides: list[str], *, tasks: int = 1, trainer: str = "cpu", nodes: int = 1) -> str:
    log = run_dir.parent / f"{run_dir.name}-%j.out"
    cmd = [
        "sbatch",
        "--parsable",
        f"--nodes={nodes}",
        f"--ntasks-per-node={tasks}",
        "--gpus-per-node=0",
        "--cpus-per-task=1",
        "--time=15",
        f"--output={log}",
        f"--export=ALL,TRAINER={trainer},RUN_DIR={run_dir},PYTHON={sys.executable}",
        f"slurm/{script}",
        *overrides,
    ]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip().split(";")[0]


def job_info(job: str) -> dict[str, str]:
    out = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True, check=True).stdout
    return dict(re.findall(r"(\w+)=(\S*)", out))


def wait(job: str, timeout: float = 300) -> dict[str, str]:
    """Until the job ends. A requeued job waits out SLURM's begin-time delay (minutes): moved to now."""
    end = time.time() + timeout
    while time.time() < end:
        info = job_info(job)
        if info["JobState"] in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return info
        if info["JobState"] == "PENDING" and info.get("Restarts", "0") != "0":
            subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"], capture_output=True)
        time.sleep(1)
    subprocess.run(["scancel", job])
    raise AssertionError(f"job {job} still {job_info(job)['JobState']} after {timeout} s")


def wait_for_file(path: Path, job: str, timeout: float = 180) -> None:
    end = time.time() + timeout
    while not path.exists():
        assert job_info(job)["JobState"] in ("PENDING", "RUNNING", "CONFIGURING"), f"job {job} ended before {path} appeared"
        assert time.time() < end, f"{path} did not appear in {timeout} s"
        time.sleep(0.3)


def slurm_log(run_dir: Path, job: str) -> str:
    return (run_dir.parent / f"{run_dir.name}-{job}.out").read_text()


def last_step(run_dir: Path) -> tuple[int, int]:
    ckpt = torch.load(run_dir / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)
    return ckpt["epoch"], ckpt["global_step"]


@pytest.mark.parametrize("script", ["train_1node.sbatch", "train_multinode.sbatch"])
def test_sbatch_script_runs_ddp_over_two_slurm_tasks(tmp_path, script):
    """The multi-node script on this one-node cluster runs with --nodes=1 (its #SBATCH says 2)."""
    run = tmp_path / "run"
    overrides = [
        "model=tiny",
        "attack=charswap",
        "data.n_train=40",
        "data.n_val=27",
        "data.n_test=19",
        "batch_size=8",
        "eval_batch_size=4",
        "trainer.max_epochs=1",
        "record_train_items=true",
    ]
    job = sbatch(script, run, overrides, tasks=2, trainer="ddp_cpu", nodes=1)
    info = wait(job)
    log = slurm_log(run, job)
    assert info["JobState"] == "COMPLETED", log[-3000:]
    if script == "train_1node.sbatch":
        expected = f"job {job}: fresh run in {run}"
    else:
        expected = f"job {job} (restart 0): 1 nodes x 2 devices in {run}"
    assert expected in log
    assert log.count("SLURM requeue on SIGUSR1:") >= 2  # both tasks run as SLURM tasks, with RequeueOnSignal
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["val/n"] == 27 and metrics["test/n"] == 19 and metrics["test/charswap/n"] == 19
    assert sorted(p.name for p in (run / "train_items").iterdir()) == ["rank0.jsonl", "rank1.jsonl"]  # ranks from SLURM_PROCID
    assert OmegaConf.load(run / "config.yaml").trainer.devices == 2


def test_job_requeued_with_scontrol_resumes_from_its_checkpoint(tmp_path):
    run = tmp_path / "run"
    job = sbatch("train_1node.sbatch", run, LONG)
    wait_for_file(run / "checkpoints" / "last.ckpt", job)  # epoch 0 done, more to go
    subprocess.run(["scontrol", "requeue", job], check=True)
    info = wait(job)
    log = slurm_log(run, job)
    assert info["JobState"] == "COMPLETED" and info["Restarts"] == "1", log[-3000:]
    assert f"job {job} (restart 1): resuming in {run}" in log
    assert f"Restoring states from the checkpoint path at {run}/checkpoints/last.ckpt" in log
    assert last_step(run) == (5, LONG_STEPS)  # as many steps as an uninterrupted run
    assert sorted(p.name for p in (run / "csv").iterdir()) == ["version_0", "version_1"]


def test_sigusr1_saves_at_a_batch_end_and_requeues_and_the_job_resumes_mid_epoch(tmp_path):
    run = tmp_path / "run"
    job = sbatch("train_1node.sbatch", run, LONG)
    wait_for_file(run / "checkpoints" / "last.ckpt", job)
    time.sleep(1.0)  # into epoch 1
    # what `#SBATCH --signal=SIGUSR1@90` sends 90 s before the time limit
    subprocess.run(["scancel", "--signal=USR1", job], check=True)
    info = wait(job)
    log = slurm_log(run, job)
    assert info["JobState"] == "COMPLETED" and info["Restarts"] == "1", log[-3000:]
    assert f"Requeued SLURM job: {job}" in log  # RequeueOnSignal ran scontrol requeue itself
    hpc = run / "hpc_ckpt_1.ckpt"
    saved_at = torch.load(hpc, map_location="cpu", weights_only=True)["global_step"]
    assert 0 < saved_at < LONG_STEPS
    # ckpt_path=last picks the newer checkpoint: the hpc one, unless the signal came on an epoch's
    # last batch, whose epoch-end last.ckpt (after validation) is written after it
    newer = run / "checkpoints" / "last.ckpt" if saved_at % EPOCH_STEPS == EPOCH_STEPS - 1 else hpc
    assert f"Restoring states from the checkpoint path at {newer}" in log
    assert last_step(run) == (5, LONG_STEPS)  # no batch trained twice (Lightning's own handler: 151 once)


def test_hydra_multirun_through_the_submitit_slurm_launcher(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    cmd = [
        sys.executable,
        "train.py",
        "-m",
        "hydra/launcher=slurm",
        "hydra.launcher.gpus_per_node=null",
        "hydra.launcher.cpus_per_task=1",
        "hydra.launcher.mem_gb=2",
        "hydra.launcher.timeout_min=10",
        "model=tiny",
        "seed=1,2",
        "data.n_train=32",
        "data.n_val=8",
        "data.n_test=8",
        "trainer.max_epochs=1",
        "batch_size=16",
        f"hydra.sweep.dir={tmp_path}",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seeds = []
    for job in sorted(p for p in tmp_path.iterdir() if p.is_dir() and p.name.isdigit()):
        seeds.append(OmegaConf.load(job / "config.yaml").seed)
        assert json.loads((job / "metrics.json").read_text())["test/n"] == 8
        assert "SLURM requeue on SIGUSR1:" in (job / "train.log").read_text()  # ran as a SLURM job
    assert seeds == [1, 2]
    assert list((tmp_path / ".submitit").glob("*/*_log.out"))
