"""The seed papers' effects, in short runs (slow: `python -m pytest -m slow tests/test_effects.py`).

Each test trains a clean model and a targeted adversarial model with the same recipe and asserts
the direction of the effect on the attacked test set, with a margin:

- multiple choice (seed 000, AdvRACE Table 6 shape): training with AddSent copies raises accuracy
  on the AddSent test set. An earlier synthetic set gave clean 0.855 -> targeted 0.975 on AddSent;
  on today's default set (three decoys, no rival) the effect does not appear: run on 2026-11-25,
  the clean model scores 0.950 on AddSent (the attack barely hurts it) and the targeted one
  0.945, and the test was marked ``xfail`` (strict). Run again on 2026-11-26 (the AddSent rules
  had changed since) it passes: clean 0.910 on AddSent, targeted 0.970 (margin 0.05); the marker
  is gone.
- span QA (seed 001, Jia & Liang section 4.6): training on AddSent raises F1 on AddSent. Not
  reproduced on synthetic data either (2026-11-25): the clean model is not hurt by AddSent (800
  questions, 1 epoch: test F1 53.3, AddSent 53.8; the default 1,200 x 2 epochs: 100.0 and 100.0),
  because the rule-based sentences on the synthetic questions did not follow the passage's fact
  templates ("Jeff recordeds in Chicago" for "Where does David live?"), and a model that reads the
  templates ignores them. After the AddSent rule fixes of that day ("In Central Park, Jeff lives.")
  the test was run again and still did not show the effect (xfail; its F1 figures not recorded).
  On real SQuAD the attack hurts (docs/results.md); the targeted-training
  row there is the evidence, so this test is ``xfail`` (strict) with those numbers.
- span QA on real SQuAD (seed 001, the same claim): a short version of docs/results.md's SQuAD
  rows (MiniLM, the first 2,000 train questions, one epoch at length 256, validated on the first
  300 dev questions and their AddSent version), clean against AddSent-targeted. Needs
  ``../shared/data`` (skips without it). First run (2026-11-25, sixth session, one thread beside a
  training, 20.5 minutes): clean F1 57.3, on AddSent 33.1; AddSent-trained 60.6 and 48.9, so the
  margins below (5 points each) hold with room.
- multiple choice on real DREAM (seed 000, Table 6's AddSent column): a short version of
  docs/results.md's DREAM rows (experiment=dream_cpu: MiniLM, length 256, lr 5e-5; the first 1,200
  train questions, one epoch, validated on the first 300 dev questions and their AddSent version),
  clean against AddSent-targeted. Needs ``../shared/data``. First run (2026-11-26, ninth
  session, one thread beside two trainings, 39 minutes): clean 0.497, on AddSent 0.223 (chance
  0.333); AddSent-trained 0.457 and 0.350. The margins below leave about 0.04 of room on 300
  questions (one accuracy's standard error there is about 0.029).
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


# Not reproduced on 2026-11-25 (AddSent acc clean 0.950, targeted 0.945); with the later AddSent
# rules it is (2026-11-26, eleventh session): clean acc 0.995, on AddSent 0.910; targeted 1.000 /
# 0.970, +0.060 against the 0.05 margin (deterministic on CPU, but a thin margin)
def test_mc_addsent_training_helps_on_addsent(tmp_path):
    clean, targeted = _pair(MC, tmp_path)
    assert clean["test/acc"] > 0.6, clean  # the clean model reads: the effect is not two models at chance
    assert targeted["test/addsent/acc"] >= clean["test/addsent/acc"] + 0.05, (clean, targeted)


@pytest.mark.xfail(
    reason="not reproduced on synthetic span data (2026-11-25): AddSent does not hurt the clean model (F1 53.3 -> 53.8)",
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
