"""The seed papers' effects, in short runs (slow: `python -m pytest -m slow tests/test_effects.py`).

Each test trains a clean model and a targeted adversarial model with the same recipe and asserts
the direction of the effect on the attacked test set, with a margin:

- multiple choice (seed 000, AdvRACE Table 6 shape): training with AddSent copies raises accuracy
  on the AddSent test set. Measured with this recipe (MiniLM, 400 synthetic questions, 2 epochs,
  200 test questions; docs/results.md): clean 0.855 -> targeted 0.975 on AddSent.
- span QA (seed 001, Jia & Liang section 4.6): training on AddSent raises F1 on AddSent.
"""

from __future__ import annotations

import pytest

from robust_mrc.training import train
from tests.helpers import make_cfg

pytestmark = pytest.mark.slow

MC = [
    "model=minilm",
    "data.n_train=400",
    "data.n_val=100",
    "data.n_test=200",
    "trainer.max_epochs=2",
    "batch_size=8",
    "num_workers=0",
    "attack.eval=[{name: addsent}]",
]
SPAN = [
    "task=span",
    "model=minilm",
    "data.n_train=800",
    "data.n_val=100",
    "data.n_test=200",
    "trainer.max_epochs=1",
    "batch_size=16",
    "num_workers=0",
    "attack.eval=[{name: addsent}]",
]


def _pair(recipe, tmp_path):
    clean = train(make_cfg(*recipe, "attack=none", f"output_dir={tmp_path / 'none'}"))
    targeted = train(make_cfg(*recipe, "attack=addsent", f"output_dir={tmp_path / 'addsent'}"))
    return clean, targeted


def test_mc_addsent_training_helps_on_addsent(tmp_path):
    clean, targeted = _pair(MC, tmp_path)
    assert clean["test/acc"] > 0.6, clean  # the clean model reads: the effect is not two models at chance
    assert targeted["test/addsent/acc"] >= clean["test/addsent/acc"] + 0.05, (clean, targeted)


def test_span_addsent_training_helps_on_addsent(tmp_path):
    clean, targeted = _pair(SPAN, tmp_path)
    assert clean["test/f1"] > 10, clean
    assert clean["test/addsent/f1"] < clean["test/f1"], clean  # the attack hurts the clean model
    assert targeted["test/addsent/f1"] >= clean["test/addsent/f1"] + 3, (clean, targeted)
