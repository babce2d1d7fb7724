"""Ensembles given wrongly: members of two tasks, a checkpoint beside them, one model twice, a
method of the other task; each said before any prediction."""

from __future__ import annotations

import logging

import pytest

from robust_mrc.core.errors import ConfigError
from robust_mrc.evaluation.predict import Predictor
from robust_mrc.jobs.evaluate import evaluate
from robust_mrc.jobs.train import train
from robust_mrc.models.checkpoints import CheckpointError
from tests.helpers import make_cfg

DATA = ["data.n_train=32", "data.n_val=8", "data.n_test=12"]
TRAIN = ["model=tiny", *DATA, "trainer.max_epochs=1", "batch_size=16", "test_after_fit=false"]
EVAL = [*DATA, "suite=clean", "cache_dir=null", "diagnostics=[]"]


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory) -> dict[str, str]:
    """Two multiple-choice checkpoints and a span one."""
    out = {}
    for name, extra in (("mc1", ["seed=1"]), ("mc2", ["seed=2"]), ("span", ["task=span"])):
        d = tmp_path_factory.mktemp(name)
        out[name] = train(make_cfg(*TRAIN, *extra, f"output_dir={d}"))["ckpt_path"]
    return out


def run_eval(tmp_path, *overrides):
    return evaluate(make_cfg(*EVAL, *overrides, f"output_dir={tmp_path / 'eval'}", config_name="eval"))


@pytest.fixture
def no_prediction(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a prediction was made before the error")

    monkeypatch.setattr(Predictor, "records", refuse)


@pytest.mark.parametrize("task", ["mc", "span"])
def test_an_ensemble_of_two_tasks_names_the_members_of_each(ckpts, tmp_path, task, no_prediction):
    members = f"ensemble=[{ckpts['mc1']},{ckpts['span']}]"
    with pytest.raises(CheckpointError) as caught:
        run_eval(tmp_path, members, f"task={task}")
    message = str(caught.value)
    assert f"mixes tasks (mc: {ckpts['mc1']}; span: {ckpts['span']})" in message
    assert "an ensemble combines models of one task" in message and "add task=" not in message


def test_ckpt_path_beside_an_ensemble_is_refused(ckpts, tmp_path, no_prediction):
    with pytest.raises(CheckpointError, match="give one of ckpt_path, model.pretrained and ensemble, not ckpt_path and ensemble"):
        run_eval(tmp_path, f"ensemble=[{ckpts['mc1']},{ckpts['mc2']}]", f"ckpt_path={ckpts['mc1']}")


def test_a_method_of_the_other_task_is_refused_before_any_prediction(ckpts, tmp_path, no_prediction):
    with pytest.raises(ConfigError, match="ensemble_method=token_vote does not apply to task=mc: for task=mc use one of average, vote"):
        run_eval(tmp_path, f"ensemble=[{ckpts['mc1']},{ckpts['mc2']}]", "ensemble_method=token_vote")
    assert not (tmp_path / "eval" / "predictions").exists()


def test_the_same_checkpoint_twice_is_named_in_a_warning(ckpts, tmp_path, caplog):
    again = ckpts["mc1"].replace("/checkpoints/", "/checkpoints/../checkpoints/")
    with caplog.at_level(logging.WARNING, logger="robust_mrc.jobs.evaluate"):
        metrics = run_eval(tmp_path, f"ensemble=[{ckpts['mc1']},{again}]")
    warned = [r.getMessage() for r in caplog.records if "given twice" in r.getMessage()]
    assert warned == [
        f"ensemble: {ckpts['mc1']} is given twice ({ckpts['mc1']} and {again}): it counts twice in the ensemble's average or vote"
    ]
    assert metrics["ckpt_path"] == [ckpts["mc1"], again]  # a warning: the evaluation still runs


def test_an_ensemble_as_a_plain_string_is_refused_not_read_letter_by_letter(tmp_path, no_prediction):
    """``ensemble=abc`` was three models: 'a', 'b' and 'c' (each then looked up on the hub)."""
    with pytest.raises(CheckpointError, match=r"ensemble='abc': expected a list of checkpoints or models, e.g. 'ensemble=\[a/best.ckpt"):
        run_eval(tmp_path, "ensemble=abc")


def test_a_checkpoint_file_given_as_model_pretrained_names_ckpt_path(ckpts, tmp_path, no_prediction):
    with pytest.raises(CheckpointError, match=rf"model.pretrained={ckpts['mc1']} is a file: a checkpoint goes to ckpt_path="):
        run_eval(tmp_path, f"model.pretrained={ckpts['mc1']}")
