"""Embedding-space adversarial training (``embedding_adversary``: FreeLB, SMART, R3F) with tiny models:
FreeLB's norm bound, the limits where each method is plain training, every reader architecture of the
zoo, bf16 autocast, a DDP-wrapped step, and training runs whose checkpoints load strictly."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import torch

from robust_mrc.core import settings as S
from robust_mrc.core.errors import ConfigError
from robust_mrc.data.synthetic import make_synthetic_mc, make_synthetic_span
from robust_mrc.datamodules.mc import MCCollator
from robust_mrc.datamodules.span import SpanCollator
from robust_mrc.models import MultipleChoiceModule, SpanQAModule
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.embedding_adversary import freelb_losses, graphs_per_step, perturbed, row_norms, smoothness_delta
from tests.helpers import TINY_MODEL, make_cfg
from tests.zoo import ENCODER_DECODERS, ZOO_OPTIONS

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = TINY_MODEL
READERS = sorted({ZOO_OPTIONS[o] for o in ZOO_OPTIONS if ZOO_OPTIONS[o] not in ENCODER_DECODERS})
READER_OPTIONS = {arch: next(o for o in ZOO_OPTIONS if ZOO_OPTIONS[o] == arch) for arch in READERS}


def settings(method: str, **values) -> dict:
    return S.complete(S.EmbeddingAdversarySettings, {"method": method, **values})


def module_and_batch(task: str, model_cfg: dict = TINY, tokenizer=None):
    """An evaluation-mode module (no dropout: two forward passes agree) and a training batch."""
    tokenizer = tokenizer or load_tokenizer(model_cfg)
    torch.manual_seed(0)
    if task == "mc":
        module = MultipleChoiceModule(model_cfg, {"name": "mc", "max_length": 64})
        batch = MCCollator(tokenizer, 64)(make_synthetic_mc(3, 0))
    else:
        module = SpanQAModule(model_cfg, {"name": "span", "max_length": 48, "doc_stride": 16})
        batch = SpanCollator(tokenizer, 48, 16, max_windows=2)(make_synthetic_span(2, 0))
    return module.eval(), batch


def logged_step(module, batch, method: str | None, **values) -> tuple[torch.Tensor, dict]:
    """The training step's loss with the adversary ``method`` and what it logged."""
    logged: dict = {}
    module.log = lambda name, value, **kw: logged.__setitem__(name, float(torch.as_tensor(value).detach()))
    module.embedding_adversary = settings(method, **values) if method else None
    return module.training_step(batch, 0), logged


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_freelb_perturbation_never_leaves_the_norm_bound(dtype):
    """Large ascent steps on a loss that grows with the perturbation: after each projection every
    row's Frobenius norm (float32) is within adv_max_norm, and padding stays unperturbed."""
    torch.manual_seed(0)
    shape, bound = torch.Size((3, 5, 8)), 0.5
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 0, 0, 0]], dtype=torch.bool)
    weight = torch.randn(shape)
    seen: list[torch.Tensor] = []

    def run(delta):
        seen.append(delta.detach().clone())
        return (delta.float() * weight).sum() + delta.float().pow(2).sum(), []

    s = settings("freelb", adv_steps=6, adv_lr=10.0, adv_init_mag=5.0, adv_max_norm=bound)
    losses = freelb_losses(run, shape, mask, dtype, s)
    assert len(losses) == 6 and all(d.dtype == dtype for d in seen)
    for delta in seen:
        norms = row_norms(delta)
        assert (norms <= bound).all(), norms
        assert (delta[~mask] == 0).all()
    assert (row_norms(seen[-1]) > 0.99 * bound).all()  # the steps did push against the bound


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_smart_perturbation_is_clipped_or_rescaled_to_its_bound(dtype):
    """clip: every entry within +-smart_eps; rescale: every real token's perturbation has max-norm
    smart_eps exactly (rounded to the dtype); padding stays unperturbed either way."""
    torch.manual_seed(0)
    shape, eps = torch.Size((3, 5, 8)), 0.25
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 0, 0, 0]], dtype=torch.bool)
    weight = torch.randn(shape)

    def run(delta):  # one answer distribution per row over its tokens, moved by the perturbation
        return torch.zeros(()), [(delta.float() * weight).sum(-1)]

    clean, masks = [torch.zeros(3, 5)], [mask]
    s = {"smart_eps": eps, "smart_steps": 2, "smart_lr": eps}
    clipped = smoothness_delta(run, clean, masks, shape, mask, dtype, settings("smart", **s))
    rescaled = smoothness_delta(run, clean, masks, shape, mask, dtype, settings("smart", smart_project="rescale", **s))
    assert clipped.dtype == rescaled.dtype == dtype
    assert clipped.float().abs().max() <= eps and (clipped[~mask] == 0).all()
    peaks = rescaled.float().abs().amax(-1)
    assert torch.allclose(peaks[mask], torch.full_like(peaks[mask], eps), rtol=1e-2 if dtype == torch.bfloat16 else 1e-6)
    assert (rescaled[~mask] == 0).all()
    # clip bounds each entry but leaves tokens of small gradient below eps; rescale lifts every token
    assert clipped.float().abs().amax(-1)[mask].min() < 0.5 * eps


@pytest.mark.parametrize("task", ["mc", "span"])
def test_freelb_with_a_vanishing_bound_and_one_step_is_plain_training(task):
    module, batch = module_and_batch(task)
    plain, _ = logged_step(module, batch, None)
    loss, logged = logged_step(module, batch, "freelb", adv_steps=1, adv_max_norm=1e-9)
    assert loss.item() == pytest.approx(plain.item(), rel=1e-5)
    assert logged["train/adv_loss"] == pytest.approx(plain.item(), rel=1e-5)
    # a real perturbation moves the loss
    loss, logged = logged_step(module, batch, "freelb", adv_steps=3, adv_lr=5.0, adv_init_mag=5.0, adv_max_norm=50.0)
    assert logged["train/adv_loss"] != pytest.approx(plain.item(), rel=1e-3)


@pytest.mark.parametrize("task", ["mc", "span"])
@pytest.mark.parametrize("method", ["r3f", "smart"])
def test_smoothness_term_is_zero_without_noise_and_positive_with_it(task, method):
    module, batch = module_and_batch(task)
    plain, _ = logged_step(module, batch, None)
    loss, logged = logged_step(module, batch, method, noise_std=0.0, smart_eps=0.0)
    assert logged["train/smooth"] == 0.0 and loss.item() == pytest.approx(plain.item(), rel=1e-6)
    loss, logged = logged_step(module, batch, method, noise="uniform", noise_std=0.5, smart_eps=0.5, smart_lr=0.5, weight=2.0)
    assert logged["train/smooth"] > 0
    assert loss.item() == pytest.approx(plain.item() + 2.0 * logged["train/smooth"], rel=1e-5)


@pytest.mark.parametrize("arch", READERS)
def test_every_reader_of_the_zoo_is_perturbed_through_its_embeddings(tiny_zoo, arch):
    """No perturbation gives the clean outputs exactly (the model still reads input_ids: RoBERTa's
    position ids, XLNet's tokens-first layout); a perturbation changes them; each method trains a step."""
    model_cfg = {"pretrained": str(tiny_zoo[READER_OPTIONS[arch]])}
    tokenizer = load_tokenizer(model_cfg)
    for task in ("mc", "span"):
        module, batch = module_and_batch(task, model_cfg, tokenizer)
        embedding = module.backbone.get_input_embeddings()
        shape = (*batch["input_ids"].shape, embedding.weight.shape[-1])
        with torch.no_grad():
            _, clean = module.train_outputs(batch)
            with perturbed(embedding, torch.zeros(shape), batch["input_ids"]):
                _, same = module.train_outputs(batch)
            with perturbed(embedding, torch.randn(shape), batch["input_ids"]):
                _, moved = module.train_outputs(batch)
        assert all(torch.equal(a, b) for a, b in zip(clean, same)), (arch, task)
        assert not torch.allclose(clean[0], moved[0]), (arch, task)
        for method in ("freelb", "smart", "r3f"):
            module.zero_grad()
            loss, _ = logged_step(module, batch, method, noise_std=1e-3)
            loss.backward()
            assert math.isfinite(loss.item()), (arch, task, method)
            assert embedding.weight.grad is not None and torch.isfinite(embedding.weight.grad).all()


@pytest.mark.parametrize("method", ["freelb", "smart", "r3f"])
def test_a_bf16_autocast_step_runs_on_cpu(method):
    module, batch = module_and_batch("span")
    module.train()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss, logged = logged_step(module, batch, method, noise_std=1e-3)
    loss.backward()
    assert loss.dtype == torch.float32 and math.isfinite(loss.item())
    assert all(math.isfinite(v) for v in logged.values())
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in module.parameters())


class _Step(torch.nn.Module):
    """The LightningModule's training step as DDP's forward (as Lightning wraps it)."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, batch):
        return self.module.training_step(batch, 0)


def _ddp_allreduces(method: str | None, tmp_path: Path) -> int:
    """All-reduces of two DDP-wrapped training steps (one process, gloo); unused parameters or a
    second reduction in a step would fail the second step."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    module, batch = module_and_batch("mc")
    module.train()
    calls = []

    def count(state, bucket):
        calls.append(1)
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / ('store-' + str(method))}", rank=0, world_size=1)
    try:
        ddp = DistributedDataParallel(_Step(module), bucket_cap_mb=0.01)
        ddp.register_comm_hook(None, count)
        for _ in range(2):
            module.zero_grad()
            logged_step(module, batch, method, noise_std=1e-3)  # sets the adversary and the log stub
            ddp(batch).backward()
            assert all(p.grad is not None for p in module.parameters())
    finally:
        dist.destroy_process_group()
    return len(calls)


def test_under_ddp_every_parameter_is_used_and_no_collective_is_added(tmp_path):
    plain = _ddp_allreduces(None, tmp_path)
    assert plain > 0
    for method in ("freelb", "smart", "r3f"):
        assert _ddp_allreduces(method, tmp_path) == plain, method


def test_auto_micro_batches_are_probed_for_the_graphs_a_step_keeps():
    """``micro_batch_size=auto`` probes K + 1 (FreeLB) or 2 (SMART, R3F) forward graphs per example."""
    assert graphs_per_step(None) == graphs_per_step(settings(None)) == 1
    assert graphs_per_step(settings("freelb", adv_steps=3)) == 4
    assert graphs_per_step(settings("smart")) == graphs_per_step(settings("r3f")) == 2


def test_a_generation_task_and_bad_settings_are_refused_in_one_line():
    from robust_mrc.config.checks import check_config

    cfg = make_cfg("task=dg", "data=synthetic_dg", "model=tiny", "embedding_adversary.method=freelb")
    with pytest.raises(ConfigError) as err:
        check_config(cfg, "train")
    assert str(err.value) == (
        "bad config: embedding_adversary.method=freelb perturbs a reader's answer distribution: use it with task=mc or task=span"
    )
    with pytest.raises(ConfigError) as err:
        check_config(make_cfg("model=tiny", "embedding_adversary.method=alum", "embedding_adversary.adv_max_norm=-1"), "train")
    assert str(err.value) == (
        "bad config: embedding_adversary.method='alum': expected one of freelb, smart, r3f or null; "
        "embedding_adversary.adv_max_norm=-1: expected a number >= 0.0 or null"
    )


QUICK = ["model=tiny", "data.n_train=8", "data.n_val=4", "data.n_test=4", "trainer.max_epochs=1", "batch_size=4"]
QUICK += [
    "micro_batch_size=2",
    "test_after_fit=false",
    "+trainer.num_sanity_val_steps=0",
    "progress_every=0",
    "trainer.log_every_n_steps=1",
]
SPAN = ["task=span", "task.max_length=64", "task.doc_stride=16"]


@pytest.mark.parametrize("task", ["mc", "span"])
@pytest.mark.parametrize("method", ["freelb", "smart", "r3f"])
def test_training_runs_with_accumulation_and_its_checkpoint_loads_strictly(tmp_path, task, method):
    from robust_mrc.jobs.train import train
    from robust_mrc.models.checkpoints import load_checkpoint, read_checkpoint

    overrides = [*QUICK, *(SPAN if task == "span" else []), f"embedding_adversary.method={method}", f"output_dir={tmp_path}"]
    metrics = train(make_cfg(*overrides))
    rows = list(csv.DictReader((tmp_path / "csv" / "version_0" / "metrics.csv").open()))
    key = "train/adv_loss" if method == "freelb" else "train/smooth"
    values = [float(r[key]) for r in rows if r.get(key)]
    losses = [float(r["train/loss"]) for r in rows if r.get("train/loss")]
    assert values and losses and all(math.isfinite(v) for v in values + losses)
    module = load_checkpoint(metrics["ckpt_path"])  # strict
    saved = read_checkpoint(Path(metrics["ckpt_path"]))["state_dict"]
    assert set(saved) == set(module.state_dict())
    assert "embedding_adversary" not in str(read_checkpoint(Path(metrics["ckpt_path"])).get("hyper_parameters"))
