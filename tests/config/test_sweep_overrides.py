"""A W&B sweep run takes no Hydra settings (``hydra.*``) from its command line: a sweep's parameters
become overrides, and ``hydra.callbacks`` would run any Python callable before the job starts."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

from robust_mrc.cli.common import refuse_hydra_settings_in_sweep
from robust_mrc.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_hydra():
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    yield
    HydraConfig.instance().cfg = None
    GlobalHydra.instance().clear()


def sweep_arguments(marker: Path) -> list[str]:
    """What `wandb agent` puts in place of ${args_no_hyphens} for a sweep whose parameters open a file."""
    from wandb.sdk.launch.sweeps.utils import create_sweep_command_args

    params = {"+hydra.callbacks.x._target_": "builtins.open", "+hydra.callbacks.x.file": str(marker), "+hydra.callbacks.x.mode": "w"}
    return create_sweep_command_args({"args": {k: {"value": v} for k, v in params.items()}})["args_no_hyphens"]


HYDRA_SETTINGS = [
    "hydra.run.dir=x",
    "+hydra.callbacks.x._target_=builtins.open",
    "++hydra.job.chdir=true",
    "~hydra.job",
    "hydra/launcher=basic",
    "--config-dir=/elsewhere",  # what the default sweep command (${args}) makes of a parameter config-dir
    "-cn",
]


@pytest.mark.parametrize("argument", HYDRA_SETTINGS)
def test_a_sweep_run_refuses_hydra_settings(monkeypatch, argument):
    monkeypatch.setenv("WANDB_SWEEP_ID", "abc123")
    with pytest.raises(ConfigError) as caught:
        refuse_hydra_settings_in_sweep(["attack=charswap", argument])
    expected = (
        f"{argument}: a W&B sweep run (WANDB_SWEEP_ID is set) takes no Hydra settings (hydra.*, --config-dir and Hydra's other flags)"
    )
    assert str(caught.value).startswith(expected)


def test_other_overrides_and_runs_outside_a_sweep_pass(monkeypatch):
    monkeypatch.setenv("WANDB_SWEEP_ID", "abc123")
    refuse_hydra_settings_in_sweep(["attack=charswap", "model.optim.lr=1e-05", "+hydra_notes=x", "logger.tags=[hydra.x]"])
    monkeypatch.delenv("WANDB_SWEEP_ID")
    monkeypatch.delenv("WANDB_SWEEP_PARAM_PATH", raising=False)
    refuse_hydra_settings_in_sweep(["hydra.run.dir=x"])  # the user's own command line: Hydra's behaviour


def test_train_py_under_a_sweep_agent_refuses_a_callback_before_hydra_runs_it(monkeypatch, capsys, tmp_path, clean_hydra):
    marker = tmp_path / "written_by_a_callback"
    monkeypatch.chdir(tmp_path)  # Hydra's outputs/ of the run without the agent
    monkeypatch.setattr(sys, "argv", [str(REPO / "train.py"), "experiment=advrace_targeted", *sweep_arguments(marker), "batch_size=abc"])
    monkeypatch.delenv("WANDB_SWEEP_ID", raising=False)
    with pytest.raises(SystemExit):  # not under an agent: Hydra runs the callback (then batch_size=abc stops the job)
        runpy.run_path(str(REPO / "train.py"), run_name="__main__")
    assert marker.exists()
    marker.unlink()
    capsys.readouterr()
    monkeypatch.setenv("WANDB_SWEEP_ID", "abc123")
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(REPO / "train.py"), run_name="__main__")
    assert done.value.code == 1 and not marker.exists()
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("Error: +hydra.callbacks.x._target_=builtins.open +hydra.callbacks.x.file=")
