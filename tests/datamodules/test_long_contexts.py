"""Long span contexts in bounded memory: a long context is tokenized in pieces
into exactly the tokenizer's own windows, prediction runs the windows through the backbone in
chunks, training keeps at most ``task.max_windows`` windows of one example; normal SQuAD batches
are the HF recipe's, unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from robust_mrc.data.examples import Answer, SpanExample
from robust_mrc.datamodules.qa import make_collator
from robust_mrc.datamodules.span import SpanCollator, capped_windows
from robust_mrc.datamodules.span_windows import piece_starts, tokenize_context
from robust_mrc.models import SpanQAModule
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.span_decoding import best_answers
from tests.helpers import TINY_MODEL

TINY = TINY_MODEL
WORDS = ("river", "Lisbon", "the", "1848", "élan", "co-operation", "U.S.", "naïve", "中文", "x", "(note)", "don't")


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(TINY)


@pytest.fixture(scope="module")
def bpe_tokenizer():
    """A byte-level BPE tokenizer with RoBERTa's template and offset trimming (the space belongs
    to the next word there), trained here on a few sentences."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tk.train_from_iterator([text(i, 60) for i in range(20)], trainer)
    tk.post_processor = processors.RobertaProcessing(("</s>", tk.token_to_id("</s>")), ("<s>", tk.token_to_id("<s>")), trim_offsets=True)
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        unk_token="<unk>",
        model_input_names=["input_ids", "attention_mask"],
    )


def text(seed: int, n_words: int) -> str:
    """Words with every kind of white space between them: single and double spaces, tabs, newlines."""
    rng = np.random.default_rng(seed)
    gaps = (" ", " ", " ", "  ", "\n", "\n\n", "\t", " \u00a0")
    return "".join(WORDS[rng.integers(len(WORDS))] + gaps[rng.integers(len(gaps))] for _ in range(n_words)).strip()


def example(i: int, n_words: int, answer: str = "the capital city") -> SpanExample:
    head = text(i, n_words // 2)
    context = f"{head} Here lies {answer}. {text(i + 1000, n_words // 2)}"
    return SpanExample(f"q{i}", context, f"  Which place {i}?", (Answer(answer, len(head) + 11),))


def hf_recipe(tokenizer, examples, max_length: int, stride: int) -> dict:
    """The collator as it was before pieces and arrays (the HF ``run_qa.py`` preprocessing):
    the reference for "normal batches unchanged"."""
    enc = tokenizer(
        [ex.question.lstrip() for ex in examples],
        [ex.context for ex in examples],
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding=True,
        return_tensors="pt",
    )
    feature_example = enc.pop("overflow_to_sample_mapping").tolist()
    offsets_all = enc.pop("offset_mapping").tolist()
    starts, ends, offsets = [], [], []
    for f, ex_i in enumerate(feature_example):
        offs = [tuple(o) if s == 1 else None for o, s in zip(offsets_all[f], enc.sequence_ids(f))]
        offsets.append(offs)
        start_tok = end_tok = 0
        a = examples[ex_i].answers[0]
        ctx = [i for i, o in enumerate(offs) if o is not None]
        if ctx and offs[ctx[0]][0] <= a.start and offs[ctx[-1]][1] >= a.end:
            start_tok = next(i for i in ctx if offs[i][1] > a.start)
            end_tok = next(i for i in reversed(ctx) if offs[i][0] < a.end)
        starts.append(start_tok)
        ends.append(end_tok)
    batch = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    batch.update(start_positions=torch.tensor(starts), end_positions=torch.tensor(ends), feature_example=feature_example, offsets=offsets)
    return batch


def assert_same(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for key in a:
        if isinstance(a[key], torch.Tensor):
            assert a[key].dtype == b[key].dtype and torch.equal(a[key], b[key]), key
        elif isinstance(a[key], np.ndarray):
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


def assert_recipe(batch: dict, reference: dict) -> None:
    for key in ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions"):
        assert torch.equal(batch[key], reference[key]), key
    assert batch["feature_example"] == reference["feature_example"]
    as_lists = [[None if o[0] < 0 else (int(o[0]), int(o[1])) for o in window] for window in batch["offsets"]]
    assert as_lists == reference["offsets"]


def test_normal_batches_are_the_hf_recipe(tokenizer):
    examples = [example(i, n) for i, n in enumerate((20, 150, 400, 90))]
    for max_length, stride in ((384, 128), (64, 16)):
        assert_recipe(SpanCollator(tokenizer, max_length, stride)(examples), hf_recipe(tokenizer, examples, max_length, stride))


def test_squad_dev_batches_are_the_hf_recipe_and_pieces_change_nothing(tokenizer, shared_data):
    from robust_mrc.data.readers import load_examples

    dev = load_examples(shared_data / "squad" / "dev-v1.1.json")[::53][:160]
    for max_length, stride in ((384, 128), (96, 32)):
        whole = SpanCollator(tokenizer, max_length, stride)
        pieces = SpanCollator(tokenizer, max_length, stride, long_context=0, piece_chars=40)  # every context cut into pieces
        mixed = SpanCollator(tokenizer, max_length, stride, long_context=700, piece_chars=150)
        for i in range(0, len(dev), 8):
            batch = whole(dev[i : i + 8])
            assert_recipe(batch, hf_recipe(tokenizer, dev[i : i + 8], max_length, stride))
            assert_same(pieces(dev[i : i + 8]), batch)
            assert_same(mixed(dev[i : i + 8]), batch)


def test_piecewise_windows_equal_the_tokenizers_own(tokenizer):
    examples = [example(i, n) for i, n in enumerate((30, 900, 4000, 200))]
    for max_length, stride in ((128, 32), (64, 20)):
        whole = SpanCollator(tokenizer, max_length, stride, long_context=10**9)(examples)  # the tokenizer's overflow
        assert_same(SpanCollator(tokenizer, max_length, stride, long_context=500, piece_chars=300)(examples), whole)
        assert_same(SpanCollator(tokenizer, max_length, stride, long_context=0, piece_chars=25)(examples), whole)


def test_piecewise_windows_of_a_byte_level_bpe_tokenizer(bpe_tokenizer):
    """Equal to the tokenizer's own windows, but for one quirk of RoBERTa's ``trim_offsets``: the
    tokenizer leaves the white space in the offsets of the first context token of each
    overflowing window (it trims every other token); the pieces trim it there too."""
    examples = [example(i, n) for i, n in enumerate((30, 900, 4000, 200))]
    whole = SpanCollator(bpe_tokenizer, 128, 32, long_context=10**9)(examples)
    for pieces in (
        SpanCollator(bpe_tokenizer, 128, 32, long_context=500, piece_chars=300)(examples),
        SpanCollator(bpe_tokenizer, 128, 32, long_context=0, piece_chars=25)(examples),
    ):
        offsets = pieces.pop("offsets")
        assert_same(pieces, {k: v for k, v in whole.items() if k != "offsets"})
        differ = np.argwhere((offsets != whole["offsets"]).any(-1))
        first_context = (whole["offsets"][:, :, 0] >= 0).argmax(1)
        assert len(differ) and all(i == first_context[f] for f, i in differ)
        for f, i in differ:
            context = examples[whole["feature_example"][f]].context
            (a, b), (c, d) = whole["offsets"][f, i], offsets[f, i]
            # the same text but for white space (zero-length offsets of white-space tokens may move by one)
            assert context[a:b].strip() == context[c:d].strip() == context[min(a, c) : max(b, d)].strip()


def test_pieces_start_at_white_space_runs(tokenizer):
    s = "alpha  beta\t\tgamma delta\n\nepsilon"
    starts = piece_starts(s, 3)
    assert starts == [0, 5, 11, 18, 24]  # each at the first character of a run of white space
    assert all(s[i].isspace() and not s[i - 1].isspace() for i in starts[1:])
    ids, offsets = tokenize_context(tokenizer, s, 3)
    whole = tokenizer(s, add_special_tokens=False, return_offsets_mapping=True)
    assert ids.tolist() == whole["input_ids"] and [tuple(o) for o in offsets.tolist()] == whole["offset_mapping"]
    assert ids.dtype == np.int32 and offsets.dtype == np.int32


def test_a_long_context_is_predicted_in_chunks_of_windows(tokenizer):
    module = SpanQAModule(TINY, {"name": "span", "max_length": 384, "doc_stride": 64}).eval()
    module.window_batch = 4
    rows: list[int] = []
    forward = module.backbone.forward

    def spy(*args, **kwargs):
        rows.append(int(kwargs["input_ids"].shape[0]))
        return forward(*args, **kwargs)

    module.backbone.forward = spy
    ex = example(7, 36_000)  # ~200 KB
    assert len(ex.context) > 190_000
    batch = SpanCollator(tokenizer, 384, 64)([ex])
    windows = len(batch["feature_example"])
    with torch.inference_mode():
        records = module.predict_records(batch)
    assert windows > 100 and max(rows) == 4 and sum(rows) == windows
    assert set(records) == {"q7"} and records["q7"]["pred"] in ex.context


def test_chunks_give_the_answer_of_one_forward_pass(tokenizer):
    module = SpanQAModule(TINY, {"name": "span", "max_length": 64, "doc_stride": 16, "n_best": 5}).eval()
    examples = [example(i, n) for i, n in enumerate((400, 60, 250))]
    batch = SpanCollator(tokenizer, 64, 16)(examples)
    assert len(batch["feature_example"]) > 20
    with torch.inference_mode():
        module.window_batch = 3
        chunked = module.predict_records(batch)
        module.window_batch = 10_000
        whole = module.predict_records(batch)
        out = module(batch)
    best = best_answers(out.start_logits, out.end_logits, batch, n_best=5)
    for ex in examples:
        assert chunked[ex.id]["pred"] == whole[ex.id]["pred"] == best[ex.id][0]
        assert chunked[ex.id]["score"] == pytest.approx(whole[ex.id]["score"], abs=1e-5)
        assert chunked[ex.id]["confidence"] == pytest.approx(whole[ex.id]["confidence"], abs=1e-5)


def test_training_keeps_at_most_max_windows_answer_windows_first(tokenizer):
    long = example(1, 3000)
    short = example(2, 30)
    evaluation = SpanCollator(tokenizer, 64, 16)([long, short])
    train = SpanCollator(tokenizer, 64, 16, max_windows=3)([long, short])
    n_long = evaluation["feature_example"].count(0)
    answer_windows = [f for f in range(n_long) if int(evaluation["start_positions"][f]) != 0]
    assert n_long > 100 and 1 <= len(answer_windows) <= 3 and answer_windows[0] > 3  # not among the first windows
    assert train["feature_example"].count(0) == 3 and train["feature_example"].count(1) == evaluation["feature_example"].count(1)
    kept = [f for f in range(n_long) if f in answer_windows] + [f for f in range(n_long) if f not in answer_windows]
    kept = sorted(kept[:3])
    assert torch.equal(train["input_ids"][:3], evaluation["input_ids"][kept])
    assert torch.equal(train["start_positions"][:3], evaluation["start_positions"][kept])
    assert np.array_equal(train["offsets"][:3], evaluation["offsets"][kept])
    # a normal example is untouched
    assert torch.equal(train["input_ids"][3:], evaluation["input_ids"][n_long:])


def test_capped_windows_prefer_the_answer_windows_and_keep_order():
    feature_example = [0, 0, 0, 0, 0, 1, 1]
    has_answer = [False, False, False, True, True, False, True]
    assert capped_windows(feature_example, has_answer, 3) == [0, 3, 4, 5, 6]
    assert capped_windows(feature_example, has_answer, 1) == [3, 6]
    assert capped_windows([0, 0, 0], [False] * 3, 2) == [0, 1]


def test_only_the_training_collator_caps_windows(tokenizer):
    task = {"name": "span", "max_length": 384, "doc_stride": 128, "max_windows": 32}
    assert make_collator(task, tokenizer, train=True).max_windows == 32
    assert make_collator(task, tokenizer).max_windows is None
