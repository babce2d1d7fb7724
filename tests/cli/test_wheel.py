"""The built wheel works outside the checkout: in a fresh virtual environment (the dependencies
and the offline MiniLM of this one on its path, nothing of the checkout), ``pip install`` of the
wheel gives a ``robust-mrc`` command whose configs come from the package: ``--help``, ``attacks
list``, ``evaluate --help`` answer, and ``robust-mrc train`` trains the embedded default.

Minutes (a wheel build, a virtual environment, a training run): run by ``.ci/run`` with
``pytest -m wheel tests/cli/test_wheel.py``."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.wheel


def run(cmd, cwd, env, timeout=900):
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_wheel_installs_and_its_command_trains_outside_the_checkout(tmp_path):
    # built from a copy: an in-tree build leaves build/ and *.egg-info in the checkout, and a stale
    # build/ would go into the wheel
    source = tmp_path / "source"
    skip = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "outputs", "multirun", ".cache", "runs")
    shutil.copytree(REPO, source, ignore=skip)
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--no-build-isolation", "-q", "-w", dist], tmp_path, None)
    (wheel,) = dist.glob("robust_mrc-*.whl")

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = Path(run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, None).strip())
    # this environment's packages (torch, transformers, MiniLM, ...) as plain path entries: their .pth
    # files (this checkout's editable install among them) are not read
    theirs = [p for p in [*site.getsitepackages(), site.getusersitepackages()] if Path(p).is_dir()]
    (purelib / "dependencies.pth").write_text("".join(f"{p}\n" for p in theirs))

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}", ROBUST_MRC_CACHE=str(tmp_path / "cache"))
    work = tmp_path / "elsewhere"
    work.mkdir()
    # every dependency the wheel declares is already there: nothing is downloaded (the fresh
    # environment's own old setuptools would hide the one torch needs)
    run([py, "-m", "pip", "uninstall", "-y", "-q", "setuptools"], work, env)
    run([py, "-m", "pip", "install", "--no-index", "-q", wheel], work, env)
    where = run([py, "-c", "import robust_mrc, robust_mrc.config as c; print(robust_mrc.__file__); print(c.CONFIG_DIR)"], work, env)
    package, conf = (Path(line) for line in where.split())
    assert env_dir in package.parents and REPO not in package.parents, where
    assert (conf / "config.yaml").is_file() and (conf / "attack" / "mix.yaml").is_file() and env_dir in conf.parents

    command = env_dir / "bin" / "robust-mrc"
    assert "robust-mrc train" in run([command, "--help"], work, env)
    listed = run([command, "attacks", "list"], work, env)
    assert "addsent" in listed and "charswap" in listed
    assert "ckpt_path" in run([command, "evaluate", "--help"], work, env)

    trained = run([command, "train", f"output_dir={work / 'run'}"], work, env, timeout=1800)
    metrics = json.loads((work / "run" / "metrics.json").read_text())
    assert (work / "run" / "checkpoints" / "best.ckpt").is_file(), trained[-2000:]
    assert metrics["val/acc"] > 0.5, metrics  # the embedded multiple-choice set: chance is 0.25
