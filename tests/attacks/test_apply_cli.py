"""`robust-mrc attacks list|apply`: attacked file in the input's format, plus stats."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from attack_samples import mc_examples, span_examples

from robust_mrc.attacks.fidelity import attack_stats
from robust_mrc.cli.attacks import apply, main
from robust_mrc.data.examples import MCExample


def _write_race_jsonl(path, examples):
    with open(path, "w") as fh:
        for e in examples:
            fh.write(
                json.dumps(
                    {
                        "example_id": e.id,
                        "article": e.passage,
                        "question": e.question,
                        "options": list(e.options),
                        "answer": e.answer_letter,
                    }
                )
                + "\n"
            )


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "charswap" in out and "char_noise" in out and "Si et al. 2021 (AdvRACE)" in out
    main(["list", "task=span"])
    assert "charswap" not in capsys.readouterr().out


def test_apply_charswap_race_jsonl(tmp_path):
    from robust_mrc.data.readers import load_examples

    src = tmp_path / "in.jsonl"
    _write_race_jsonl(src, mc_examples())
    out = tmp_path / "out" / "adv.jsonl"
    stats = apply({"attack": "charswap", "data": str(src), "out": str(out), "seed": "3"})
    back = load_examples(out)
    assert back.format == "race_jsonl" and len(back) == 4
    orig = load_examples(src)
    for a, b in zip(orig, back):
        assert a.label == b.label and a.options == b.options and a.question != b.question
    saved = json.loads((tmp_path / "out" / "adv.jsonl.stats.json").read_text())
    assert saved["share_changed"] == 1.0 and saved["not_attackable"] == 0
    assert 0 < saved["share_words_altered"] < 0.5 and saved["length_change"]["passage"] == 0
    assert stats["attack"] == "charswap" and stats["seed"] == 3


def test_apply_is_deterministic_and_takes_params(tmp_path):
    src = tmp_path / "in.jsonl"
    _write_race_jsonl(src, mc_examples())
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    apply({"attack": "diagnosis", "data": str(src), "out": str(a), "position": "end", "limit": "2"})
    apply({"attack": "diagnosis", "data": str(src), "out": str(b), "position": "end", "limit": "2"})
    assert a.read_text() == b.read_text() and len(a.read_text().splitlines()) == 2
    st = json.loads((tmp_path / "a.jsonl.stats.json").read_text())
    assert st["length_change"]["passage"] > 5 and st["words_added_per_example"] > 5
    # random_option without pool= draws from the input data; magnet needs a screened pool: one line
    apply({"attack": "random_option", "data": str(src), "out": str(tmp_path / "m.jsonl")})
    with pytest.raises(SystemExit, match="screened against a model"):
        apply({"attack": "magnet", "data": str(src), "out": str(tmp_path / "m2.jsonl")})
    assert not (tmp_path / "m2.jsonl").exists()


def test_apply_span_squad(tmp_path):
    from robust_mrc.data.readers import load_examples
    from robust_mrc.data.writers import write_examples

    src = tmp_path / "squad.json"
    write_examples(span_examples(), src, "squad")
    out = tmp_path / "noisy.json"
    stats = apply({"attack": "char_noise", "data": str(src), "out": str(out)})
    back = load_examples(out)
    assert back.format == "squad" and len(back) == 5 and stats["share_changed"] == 1.0
    for e in back:
        for a in e.answers:
            assert e.context[a.start : a.start + len(a.text)] == a.text


def test_stats_count_words():
    old = MCExample("x", "one two three four", "q q", ("a", "b"), 0)
    new = old.replace(passage="one tow three four five six")
    st = attack_stats([old], [new], failed=1)
    assert st["share_words_altered"] == round(1 / 8, 4)  # 1 of 4 + 2 + 2 words replaced
    assert st["words_added_per_example"] == 2 and st["length_change"]["passage"] == 2
    assert st["not_attackable"] == 1


def test_cli_errors():
    with pytest.raises(SystemExit, match="apply needs"):
        main(["apply", "attack=charswap"])
    with pytest.raises(SystemExit, match="precision=16: expected one of 32, bf16"):  # before any work
        main(["apply", "attack=addany", "data=x.json", "out=y.json", "ckpt=none.ckpt", "precision=16"])
    res = subprocess.run(
        [sys.executable, "-m", "robust_mrc.cli", "attacks", "apply", "attack=nope", "data=x", "out=y"], capture_output=True, text=True
    )
    assert res.returncode != 0


def test_every_verb_has_help_and_apply_help_lists_an_attacks_parameters(capsys):
    from robust_mrc.cli.attacks import main

    assert main(["list", "--help"]) == 0
    assert "list [task=mc|span]" in capsys.readouterr().out
    assert main(["apply", "--help"]) == 0
    assert "attack=NAME data=PATH out=PATH" in capsys.readouterr().out
    assert main(["apply", "attack=addany", "-h"]) == 0
    out = capsys.readouterr().out
    assert "addany (span" in out and "budget" in out and "epochs" in out
    assert main(["apply", "attack=charswap", "task=mc", "--help"]) == 0
    assert "question_only = False" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown command 'bogus'"):
        main(["bogus", "--help"])


def test_apply_with_a_checkpoint_resumes_an_interrupted_search(tmp_path, monkeypatch):
    """`apply ckpt=...` journals its search in <out>.partial.jsonl: stopped after the first lockstep
    group of 64 questions, the same command searches only the other questions and writes the file
    an uninterrupted run writes; the journal is gone once the file is written."""
    from robust_mrc.data.synthetic import synthetic_splits
    from robust_mrc.data.writers import write_examples
    from robust_mrc.jobs.train import train
    from robust_mrc.models.scoring import ModelScorer
    from tests.helpers import make_cfg

    tiny = ["task=span", "model=tiny", "data.n_train=16", "data.n_val=8", "data.n_test=0", "trainer.max_epochs=1", "test_after_fit=false"]
    ckpt = train(make_cfg(*tiny, f"output_dir={tmp_path / 'run'}"))["ckpt_path"]
    questions = synthetic_splits("span", 0, 0, 70, 5)["test"]
    data = tmp_path / "dev.json"
    write_examples(questions, data, "squad")
    first_group = {ex.id for ex in questions[:64]}

    def run(out):
        assert main(["apply", "attack=addany", f"data={data}", f"out={out}", f"ckpt={ckpt}", "budget=4"]) == 0

    run(tmp_path / "whole.json")
    real = ModelScorer.predict
    asked: set[str] = set()

    def preempted_after_the_first_group(self, candidates):
        if any(c.id not in first_group for c in candidates):
            raise KeyboardInterrupt("preempted")
        return real(self, candidates)

    out = tmp_path / "adv.json"
    monkeypatch.setattr(ModelScorer, "predict", preempted_after_the_first_group)
    with pytest.raises(KeyboardInterrupt):
        run(out)
    journal = tmp_path / "adv.json.partial.jsonl"
    assert not out.exists() and len(journal.read_text().splitlines()) == 2  # header + group 0
    monkeypatch.setattr(ModelScorer, "predict", lambda self, c: asked.update(x.id for x in c) or real(self, c))
    run(out)
    assert asked == {ex.id for ex in questions[64:]}
    assert out.read_text() == (tmp_path / "whole.json").read_text() and not journal.exists()
    stats = json.loads((tmp_path / "adv.json.stats.json").read_text())
    assert stats["search"]["queries"] == json.loads((tmp_path / "whole.json.stats.json").read_text())["search"]["queries"]


def test_apply_and_stats_say_in_one_line_what_is_wrong(tmp_path):
    from robust_mrc.cli.attacks import apply, stats

    src = tmp_path / "in.jsonl"
    _write_race_jsonl(src, mc_examples())
    with pytest.raises(SystemExit, match="seed='abc': expected a whole number >= 0"):
        apply({"attack": "charswap", "data": str(src), "out": str(tmp_path / "a.jsonl"), "seed": "abc"})
    with pytest.raises(SystemExit, match=r"limit='abc': expected a whole number >= 0 or null \(all\)"):
        stats({"attack": "charswap", "data": str(src), "limit": "abc"})
    before = src.read_bytes()
    with pytest.raises(SystemExit, match="destroy the input"):  # checked before any attack runs
        stats({"attack": "charswap", "data": str(src), "out": str(src)})
    assert src.read_bytes() == before and not (tmp_path / "a.jsonl").exists()
