"""Length buckets (task.length_buckets), their warm-up and the regional compile: the shapes a GPU
run sees are few and known, and the numbers stay those of the eager, unbucketed path."""

from __future__ import annotations

import csv

import pytest
import torch

from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.datamodules.buckets import bucket_width, bucket_widths
from robust_mrc.datamodules.mc import MCCollator
from robust_mrc.datamodules.span import SpanCollator
from robust_mrc.jobs.train import train
from robust_mrc.models import MultipleChoiceModule, SpanQAModule
from robust_mrc.models.backbone import load_backbone, load_tokenizer
from robust_mrc.models.compiling import compile_backbone, repeated_layers
from tests.helpers import TINY_MODEL, make_cfg

TINY = {**TINY_MODEL, "config": {**TINY_MODEL["config"], "num_hidden_layers": 2}}  # two layers: a stack to compile


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(TINY)


@pytest.mark.parametrize("max_length,count", [(512, 4), (512, 1), (500, 3), (384, 6), (64, 64), (33, 5)])
def test_the_bucket_set_covers_every_length(max_length, count):
    widths = bucket_widths(max_length, count)
    assert widths[-1] == max_length and list(widths) == sorted(set(widths)) and len(widths) <= count
    assert all(w % 8 == 0 for w in widths[:-1])
    for length in range(1, max_length + 1):
        w = bucket_width(length, widths)
        assert length <= w and not any(length <= v < w for v in widths)  # the smallest that holds it
    with pytest.raises(ValueError, match="longer than the largest bucket"):
        bucket_width(max_length + 1, widths)
    assert bucket_widths(512, 4) == (128, 256, 384, 512)


def test_bucketed_multiple_choice_batches_give_the_unbucketed_loss(tokenizer):
    module = MultipleChoiceModule(TINY, {"name": "mc", "max_length": 96}).eval()
    exs = [
        MCExample("a", "Tom went to the market to buy apples.", "Where did Tom go?", ("market", "school", "home"), 0),
        MCExample("b", "Ann reads.", "What does Ann do?", ("reads", "swims", "sings", "runs"), 0),
    ]
    plain = MCCollator(tokenizer, 96)(exs)
    bucketed = MCCollator(tokenizer, 96, buckets=bucket_widths(96, 3))(exs)
    assert plain["input_ids"].shape[-1] < bucketed["input_ids"].shape[-1] == 32
    with torch.no_grad():
        a, b = module(plain), module(bucketed)
    assert torch.allclose(a, b, atol=1e-5)
    loss = [torch.nn.functional.cross_entropy(x, plain["labels"]) for x in (a, b)]
    assert abs(float(loss[0] - loss[1])) < 1e-6


def test_bucketed_span_windows_decode_the_same_answers(tokenizer):
    module = SpanQAModule(TINY, {"name": "span", "max_length": 64, "doc_stride": 16}).eval()
    ctx = "The river Tagus flows through Lisbon. " * 4
    exs = [SpanExample("s", ctx, "Which river flows through Lisbon?", (Answer("Tagus", ctx.index("Tagus")),))]
    plain = SpanCollator(tokenizer, max_length=64, doc_stride=16)(exs)
    bucketed = SpanCollator(tokenizer, max_length=64, doc_stride=16, buckets=bucket_widths(64, 2))(exs)
    assert bucketed["input_ids"].shape[-1] == 64 and bucketed["offsets"].shape[1] == 64
    assert (bucketed["start_positions"] == plain["start_positions"]).all()  # the answer's tokens did not move
    with torch.no_grad():
        loss = [module.train_outputs(b)[0] for b in (plain, bucketed)]
        records = [module.predict_records(b) for b in (plain, bucketed)]
    assert abs(float(loss[0] - loss[1])) < 1e-5
    assert records[0]["s"]["pred"] == records[1]["s"]["pred"]


def loss_curve(out):
    rows = csv.DictReader((out / "csv" / "version_0" / "metrics.csv").open())
    return [float(r["train/loss"]) for r in rows if r.get("train/loss")]


def test_warming_the_buckets_changes_nothing_of_the_run(tmp_path, caplog):
    """The warm-up's passes leave the weights, gradients and random state as they were: the run's
    losses and final weights equal a run without it, bit for bit."""
    common = ["model=tiny", "data.n_train=48", "data.n_val=8", "data.n_test=0", "trainer.max_epochs=1", "batch_size=8"]
    common += ["test_after_fit=false", "trainer.log_every_n_steps=1", "task.length_buckets=4"]
    weights = {}
    for warm in (False, True):
        out = tmp_path / str(warm)
        with caplog.at_level("INFO", logger="robust_mrc.trainer.callbacks"):
            metrics = train(make_cfg(*common, f"warm_shapes={warm}", f"output_dir={out}"))
        state = torch.load(metrics["ckpt_path"], map_location="cpu", weights_only=False)["state_dict"]
        weights[warm] = (loss_curve(out), state)
    assert "warmed 4 padded widths [128, 256, 384, 512]" in caplog.text
    assert weights[True][0] == weights[False][0] and len(weights[True][0]) >= 5
    for key, value in weights[False][1].items():
        assert torch.equal(value, weights[True][1][key]), key


def test_regional_compile_compiles_each_layer_and_keeps_the_keys():
    model = load_backbone(TINY, "mc")
    keys = list(model.state_dict())
    names = compile_backbone(model, "regional")
    assert names == ["bert.encoder.layer.0", "bert.encoder.layer.1"]
    assert repeated_layers(model) is model.bert.encoder.layer
    assert all(layer._compiled_call_impl is not None for layer in model.bert.encoder.layer)
    assert model._compiled_call_impl is None and list(model.state_dict()) == keys
    assert compile_backbone(load_backbone(TINY, "mc"), False) == []
