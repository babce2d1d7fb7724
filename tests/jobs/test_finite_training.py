"""Numbers that make a run worthless: a setting that is not finite is refused with the config, and a
training whose loss becomes NaN or infinite stops in one line naming the step and the likely
setting, with no checkpoint of broken weights saved after it."""

from __future__ import annotations

import pytest
import torch

from robust_mrc.config.checks import check_config
from robust_mrc.core.errors import ConfigError
from robust_mrc.jobs.train import train
from robust_mrc.trainer.callbacks import NonFiniteLoss
from tests.helpers import make_cfg

QUICK = ["model=tiny", "data.n_train=32", "data.n_val=8", "data.n_test=4", "trainer.max_epochs=2", "test_after_fit=false"]


@pytest.mark.parametrize(
    "override",
    [
        "attack.consistency_weight=inf",
        "embedding_adversary.adv_lr=inf",
        "embedding_adversary.noise_std=nan",
        "model.optim.lr=inf",
        "trainer.gradient_clip_val=inf",
    ],
)
def test_a_setting_that_is_not_finite_is_refused(override):
    key, value = override.split("=")
    with pytest.raises(ConfigError, match=rf"{key}={value}: expected a finite number"):
        check_config(make_cfg(*QUICK, override), "train")


def test_a_loss_that_blows_up_stops_the_training_and_leaves_no_broken_best(tmp_path):
    run = tmp_path / "run"
    with pytest.raises(NonFiniteLoss, match=r"the training loss became (nan|inf) by step \d+ \(epoch \d\).*model.optim.lr=1e\+30"):
        train(make_cfg(*QUICK, f"output_dir={run}", "model.optim.lr=1e30", "trainer.log_every_n_steps=1", "trainer.gradient_clip_val=0"))
    for ckpt in (run / "checkpoints").glob("*.ckpt"):
        weights = torch.load(ckpt, map_location="cpu", weights_only=True)["state_dict"]
        assert all(torch.isfinite(w).all() for w in weights.values() if w.is_floating_point()), ckpt
