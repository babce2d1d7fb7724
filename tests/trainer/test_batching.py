"""The effective batch (batch_size per optimizer step = micro-batches x accumulation x processes)
and trainer=auto."""

from __future__ import annotations

import logging

import pytest
import torch

from robust_mrc.config.checks import check_config
from robust_mrc.core.errors import ConfigError
from robust_mrc.jobs.train import train
from robust_mrc.models.mc import MultipleChoiceModule
from robust_mrc.trainer.batching import plan_batches
from robust_mrc.trainer.build import resolve_devices
from tests.helpers import make_cfg


def test_a_plan_splits_the_batch_over_processes_and_micro_batches():
    assert plan_batches(32, None, 1).accumulation == 1
    plan = plan_batches(32, 8, 1)
    assert (plan.micro_batch_size, plan.accumulation) == (8, 4)
    plan = plan_batches(32, 4, 2)
    assert (plan.micro_batch_size, plan.accumulation, plan.processes) == (4, 4, 2)
    assert plan_batches(32, "auto", 2, fits=lambda m: m <= 5).micro_batch_size == 4  # the largest divisor of 16 that fits
    assert plan_batches(32, "auto", 1).micro_batch_size == 32  # no probe (the CPU): no accumulation
    with pytest.raises(ConfigError, match=r"micro_batch_size=6 must divide batch_size / processes = 32 / 1 = 32"):
        plan_batches(32, 6, 1)
    with pytest.raises(ConfigError, match="not a multiple of the 3 training processes"):
        plan_batches(32, None, 3)
    with pytest.raises(ConfigError, match="not even one example"):
        plan_batches(8, "auto", 1, fits=lambda m: False)


def test_auto_micro_batches_with_consistency_are_probed_for_whole_groups(monkeypatch):
    from robust_mrc.jobs import train as train_job

    asked: list[int] = []

    def probe(module, task_cfg, per_process, precision):
        return lambda examples: asked.append(examples) or examples <= 15

    monkeypatch.setattr(train_job, "probe_micro_batch", probe)
    monkeypatch.setattr(train_job, "trainer_arguments", lambda cfg: {"accelerator": "gpu", "devices": 1, "precision": "bf16-mixed"})
    monkeypatch.setattr(train_job, "world_size", lambda args: 1)
    plain = make_cfg("attack=mix", "batch_size=16", "micro_batch_size=auto")
    assert train_job.examples_per_item(plain) == 1
    assert train_job.batch_plan(plain, None, {}).micro_batch_size == 8  # 8 examples fit, 16 do not
    paired = make_cfg("attack=mix", "attack.consistency=kl", "batch_size=16", "micro_batch_size=auto")
    assert train_job.examples_per_item(paired) == 5  # a clean example and one copy per mix attack (4 for mc)
    asked.clear()
    assert train_job.batch_plan(paired, None, {}).micro_batch_size == 2  # 2 groups = 10 examples fit, 4 groups = 20 do not
    assert asked[-1] == 10
    assert train_job.examples_per_item(make_cfg("attack=none")) == 1


def test_settings_that_would_bypass_the_plan_are_refused():
    with pytest.raises(ConfigError, match=r"trainer.accumulate_grad_batches is set by robust-mrc itself \(use batch_size="):
        check_config(make_cfg("+trainer.accumulate_grad_batches=4"))
    with pytest.raises(ConfigError, match="micro_batch_size=0: expected a whole number >= 1, auto or null"):
        check_config(make_cfg("micro_batch_size=0"))
    check_config(make_cfg("micro_batch_size=auto"))


def test_trainer_auto_is_the_default_and_says_it_chose_the_cpu(caplog, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = make_cfg()
    assert cfg.trainer.accelerator == "auto" and make_cfg(config_name="eval").trainer.accelerator == "auto"
    import robust_mrc.trainer.build as build

    monkeypatch.setattr(build, "_SAID", set())
    with caplog.at_level(logging.INFO, logger="robust_mrc.trainer.build"):
        args = resolve_devices({"accelerator": "auto", "devices": "auto", "precision": "auto"})
    assert args == {"accelerator": "cpu", "devices": 1, "precision": "32-true"}
    assert "trainer=auto: no GPU found, so the CPU, 32-true, 1 process(es)" in caplog.text
    assert resolve_devices({"accelerator": "cpu", "devices": 2, "precision": "32-true"})["devices"] == 2  # explicit: kept


def test_one_step_of_32_is_four_accumulated_steps_of_8(tmp_path, monkeypatch):
    """The same 32 examples (no length grouping, no dropout) give the same gradient at the optimizer
    step whether they run as one batch or as four accumulated micro-batches of 8."""
    grads = {}

    def record(self, optimizer):
        grads[self._run] = {n: p.grad.detach().clone() for n, p in self.backbone.named_parameters() if p.grad is not None}

    monkeypatch.setattr(MultipleChoiceModule, "on_before_optimizer_step", record, raising=False)
    common = [
        "model=tiny",
        "+model.config.hidden_dropout_prob=0.0",
        "+model.config.attention_probs_dropout_prob=0.0",
        "data.n_train=64",
        "data.n_val=4",
        "data.n_test=0",
        "batch_size=32",
        "group_by_length=false",
        "+trainer.max_steps=1",
        "+trainer.num_sanity_val_steps=0",
        "test_after_fit=false",
    ]
    for micro in (32, 8):
        MultipleChoiceModule._run = micro
        train(make_cfg(*common, f"micro_batch_size={micro}", f"output_dir={tmp_path / str(micro)}"))
    whole, accumulated = grads[32], grads[8]
    assert whole.keys() == accumulated.keys() and len(whole) > 10
    for name, g in whole.items():
        assert torch.allclose(g, accumulated[name], rtol=1e-4, atol=1e-7), name
    assert any(g.abs().max() > 0 for g in whole.values())


@pytest.mark.slow
def test_a_compiled_backbone_trains_as_the_eager_one(tmp_path):
    """compile=true and compile=regional (torch.compile of the backbone, of each encoder layer;
    inductor with the system's C compiler on the CPU): the same loss curve as eager within
    tolerance, and a checkpoint with the eager keys. A few minutes on 2 cores."""
    import csv

    from robust_mrc.models.checkpoints import load_checkpoint

    common = ["model=minilm_l2", "data.n_train=96", "data.n_val=8", "data.n_test=0", "trainer.max_epochs=1", "test_after_fit=false"]
    common += ["trainer.log_every_n_steps=1", "+trainer.num_sanity_val_steps=0"]
    curves = {}
    for compiled in (False, True, "regional"):
        out = tmp_path / str(compiled)
        metrics = train(make_cfg(*common, f"compile={compiled}", f"output_dir={out}"))
        rows = csv.DictReader((out / "csv" / "version_0" / "metrics.csv").open())
        curves[compiled] = [float(r["train/loss"]) for r in rows if r.get("train/loss")]
        load_checkpoint(metrics["ckpt_path"])  # strict keys: the compiled module saved the eager names
    for mode in (True, "regional"):
        assert len(curves[mode]) == len(curves[False]) >= 5
        assert max(abs(a - b) for a, b in zip(curves[mode], curves[False])) < 1e-3, mode
