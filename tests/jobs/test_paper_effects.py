"""The papers' adversarial-training effects, in short runs (slow:
`python -m pytest -m slow tests/jobs/test_paper_effects.py`).

Each test trains a clean model and an AddSent-targeted model with the same recipe and asserts the
direction of the effect on the AddSent test (or validation) set, with a margin:

- multiple choice, synthetic data (Si et al. 2021 (AdvRACE), Table 6 shape): AddSent training
  raises accuracy on AddSent by at least 0.05.
- span QA, synthetic data (Jia & Liang 2017, section 4.6): the same claim for F1; ``xfail``
  (strict): the rule-based AddSent sentences do not hurt a clean model on the synthetic questions.
- span QA on real SQuAD (Jia & Liang 2017): a short version of the SQuAD rows of docs/results.md;
  the attack costs the clean model at least 5 F1 points, AddSent training wins at least 5 back, at
  little cost on clean questions.
- multiple choice on real DREAM (Si et al. 2021 (AdvRACE), Table 6's AddSent column): a short
  version of the DREAM rows of docs/results.md, with accuracy margins of 0.05 / 0.08.

The real-data tests need ``../shared/data`` (they skip without it). The measured figures are in
docs/results.md.
"""

from __future__ import annotations

import pytest

from robust_mrc.jobs.train import train
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


SQUAD = [
    "task=span",
    "model=minilm",
    "data=squad_local",
    "data.limit={train: 2000, validation: 300}",
    "task.max_length=256",
    "trainer.max_epochs=1",
    "batch_size=16",
    "num_workers=0",
    "test_after_fit=false",
    "attack.eval=[{name: addsent}]",
]


DREAM = [
    "experiment=dream_cpu",
    "data.limit={train: 1200, validation: 300}",
    "trainer.max_epochs=1",
    "num_workers=0",
    "attack.eval=[{name: addsent}]",
]


def _pair(recipe, tmp_path):
    clean = train(make_cfg(*recipe, "attack=none", f"output_dir={tmp_path / 'none'}"))
    targeted = train(make_cfg(*recipe, "attack=addsent", f"output_dir={tmp_path / 'addsent'}"))
    return clean, targeted


# deterministic on CPU, but the 0.05 margin is thin
def test_mc_addsent_training_helps_on_addsent(tmp_path):
    clean, targeted = _pair(MC, tmp_path)
    assert clean["test/acc"] > 0.6, clean  # the clean model reads: the effect is not two models at chance
    assert targeted["test/addsent/acc"] >= clean["test/addsent/acc"] + 0.05, (clean, targeted)


@pytest.mark.xfail(
    reason="not reproduced on synthetic span data: AddSent does not hurt the clean model",
    strict=True,  # a pass means the recipe now shows the effect: remove the marker
)
def test_span_addsent_training_helps_on_addsent(tmp_path):
    clean, targeted = _pair(SPAN, tmp_path)
    assert clean["test/f1"] > 10, clean
    assert clean["test/addsent/f1"] < clean["test/f1"], clean  # the attack hurts the clean model
    assert targeted["test/addsent/f1"] >= clean["test/addsent/f1"] + 3, (clean, targeted)


def test_span_addsent_training_helps_on_real_squad_addsent(tmp_path, shared_data):
    clean, targeted = _pair(SQUAD, tmp_path)
    assert clean["val/f1"] > 25, clean  # the clean model reads
    assert clean["val/addsent/f1"] <= clean["val/f1"] - 5, clean  # the attack hurts it
    assert targeted["val/addsent/f1"] >= clean["val/addsent/f1"] + 5, (clean, targeted)
    assert targeted["val/f1"] >= clean["val/f1"] - 5, (clean, targeted)  # at little cost on clean questions


def test_mc_addsent_training_helps_on_real_dream_addsent(tmp_path, shared_data):
    clean, targeted = _pair(DREAM, tmp_path)
    assert clean["val/addsent/acc"] <= clean["val/acc"] - 0.05, clean  # the attack hurts the clean model
    assert targeted["val/addsent/acc"] >= clean["val/addsent/acc"] + 0.08, (clean, targeted)
    assert targeted["val/acc"] >= clean["val/acc"] - 0.08, (clean, targeted)  # at little cost on clean questions
