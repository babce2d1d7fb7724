"""W&B online without an API key: one line saying what to do, before the work, without the network."""

from __future__ import annotations

import pytest

pytest.importorskip("wandb")

from robust_mrc.core.errors import ConfigError, UserError  # noqa: E402
from robust_mrc.evaluation.predict import Predictor  # noqa: E402
from robust_mrc.jobs.evaluate import evaluate  # noqa: E402
from robust_mrc.jobs.train import train  # noqa: E402
from robust_mrc.trainer import wandb as tracking  # noqa: E402
from tests.helpers import make_cfg  # noqa: E402

NO_KEY = "W&B online mode needs an API key: no W&B API key for https://api.example.org. Run `wandb login`, set WANDB_API_KEY"
KEY = "k" * 40


@pytest.fixture
def no_credentials(monkeypatch, tmp_path):
    """No key in the environment nor in a netrc file (wandb's own lookup sees none)."""
    for variable in ("WANDB_API_KEY", "WANDB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    return tmp_path / "netrc"


@pytest.fixture
def key_missing(monkeypatch):
    """The key lookup answering "none" whatever this machine holds."""
    monkeypatch.setattr(tracking, "credentials_problem", lambda: "no W&B API key for https://api.example.org")


def test_the_key_is_found_where_wandb_finds_it(no_credentials, monkeypatch):
    from wandb.sdk import wandb_setup

    assert tracking.credentials_problem().startswith("no W&B API key for ")
    host = wandb_setup.singleton().settings.base_url.split("//", 1)[1].split("/")[0]
    no_credentials.write_text(f"machine {host}\n  login user\n  password {KEY}\n")
    no_credentials.chmod(0o600)
    assert tracking.credentials_problem() is None
    no_credentials.unlink()
    monkeypatch.setenv("WANDB_API_KEY", KEY)
    assert tracking.credentials_problem() is None
    monkeypatch.setenv("WANDB_API_KEY", "short")
    assert tracking.credentials_problem() == "WANDB_API_KEY invalid: API key must have 40+ characters, has 5"


def test_train_online_without_a_key_is_one_line_before_training(key_missing, tmp_path):
    out = tmp_path / "run"
    cfg = make_cfg(
        "model=tiny", "data.n_train=16", "data.n_val=8", "data.n_test=8", "logger=wandb", "logger.mode=online", f"output_dir={out}"
    )
    with pytest.raises(ConfigError) as caught:
        train(cfg)
    assert str(caught.value).startswith(NO_KEY) and "logger.mode=offline" in str(caught.value)
    assert isinstance(caught.value, UserError) and "\n" not in str(caught.value)
    assert not (out / "checkpoints").exists() and not (out / "wandb").exists()


def test_evaluate_online_without_a_key_is_one_line_before_any_model_is_loaded(key_missing, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a prediction was made before the error")

    monkeypatch.setattr(Predictor, "records", refuse)
    monkeypatch.setenv("WANDB_MODE", "online")
    fake = tmp_path / "never_read.ckpt"  # exists: the checks before the W&B one pass; never loaded
    fake.write_bytes(b"")
    cfg = make_cfg(f"ckpt_path={fake}", "wandb=true", "suite=clean", f"output_dir={tmp_path / 'eval'}", config_name="eval")
    with pytest.raises(ConfigError, match="W&B online mode needs an API key") as caught:
        evaluate(cfg)
    assert "WANDB_MODE=offline" in str(caught.value)
