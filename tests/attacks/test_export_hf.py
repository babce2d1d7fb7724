"""`robust-mrc attacks apply ... format=hf`: an attacked set as a Hugging Face dataset with
its card, the same examples and fingerprint as an evaluation's set of the same attack and seed, and
evaluated back through `data=hf_local` to the same accuracy."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml
from attack_samples import mc_examples, span_examples

from robust_mrc.cli.attacks import apply
from robust_mrc.data.readers import load_examples
from robust_mrc.data.writers import write_examples
from robust_mrc.evaluation.cache import DiskCache
from robust_mrc.evaluation.suites import SetSpec, build_sets
from robust_mrc.export.hf_dataset import parquet_name


def _front_matter(card: str) -> dict:
    head, sep, _ = card.removeprefix("---\n").partition("\n---\n")
    assert sep, "the card starts with a YAML block"
    return yaml.safe_load(head)


def _evaluation_set(clean, task, pool, seed, attack, params=None):
    spec = SetSpec(attack, attack=attack, params=params or {})
    return build_sets([spec], clean, task, seed=seed, cache=DiskCache(None), pool_examples=pool)[attack]


@pytest.mark.parametrize(
    "task, attack, params",
    [("mc", "random_option", {}), ("mc", "charswap", {"question_only": True}), ("span", "char_noise", {"rate": 0.1})],
)
def test_export_is_the_evaluation_set_with_its_fingerprint_and_a_card(tmp_path, task, attack, params):
    clean = mc_examples() if task == "mc" else span_examples()
    # another pool than the data, as an evaluation's training split: other passages, other options
    if task == "mc":
        pool = [
            ex.replace(id=f"p{i}", passage=f"Passage {i}.", options=tuple(f"{o} ({i})" for o in ex.options)) for i, ex in enumerate(clean)
        ]
    else:
        pool = list(reversed(clean))
    fmt, name = ("race_jsonl", "in.jsonl") if task == "mc" else ("squad", "in.json")
    write_examples(clean, tmp_path / name, fmt)
    write_examples(pool, tmp_path / f"pool.{name.split('.')[1]}", fmt)
    out = tmp_path / "export"
    stats = apply(
        {
            "attack": attack,
            "data": str(tmp_path / name),
            "out": str(out),
            "format": "hf",
            "seed": 7,
            "pool_data": str(tmp_path / f"pool.{name.split('.')[1]}"),
            **params,
        }
    )
    expected = _evaluation_set(clean, task, pool, 7, attack, params)
    for source in (out, out / parquet_name("test")):
        back = load_examples(source)
        assert back == expected.examples and [ex.edits for ex in back] == [ex.edits for ex in expected.examples]
    assert any(ex.edits for ex in back)
    assert stats["fingerprint"] == expected.fingerprint == json.loads((out / "stats.json").read_text())["fingerprint"]
    card = (out / "README.md").read_text()
    meta = _front_matter(card)
    assert meta["tags"][:2] == ["robust-mrc", "adversarial"] and meta["license"] == "unknown"
    assert meta["task_categories"] == (["multiple-choice"] if task == "mc" else ["question-answering"])
    (config,) = meta["configs"]
    assert (
        config["data_files"] == [{"split": "test", "path": "data/test-00000-of-00001.parquet"}]
        and (out / config["data_files"][0]["path"]).is_file()
    )
    assert f"`{expected.fingerprint}`" in card and "seed: 7, epoch: 0" in card
    assert f"SHA-256 `{hashlib.sha256((out / parquet_name('test')).read_bytes()).hexdigest()}`" in card
    assert expected.provenance["paper"] in card
    from robust_mrc.attacks import get_attack

    for key, value in get_attack(attack, task).params.items():  # every parameter, defaults resolved
        value = params.get(key, value)
        given = "yes" if key in params else "default"
        assert f"| {key} | `{json.dumps(value)}` | {given} |" in card, key
    checks = stats["checks"]
    assert all(c["held"] == c["of"] for c in checks[:2]) and "Checks on the written data" in card
    assert "robust-mrc attacks apply attack=" in card and "pool_data=" in card


def test_an_exported_set_is_attacked_again_into_a_dataset_and_mistakes_are_one_line(tmp_path):
    write_examples(mc_examples(), tmp_path / "in.jsonl", "race_jsonl")
    first = tmp_path / "first"
    apply({"attack": "charswap", "data": str(tmp_path / "in.jsonl"), "out": str(first), "format": "hf", "keep_failed": "false"})
    stats = apply({"attack": "diagnosis", "data": str(first), "out": str(tmp_path / "second"), "epoch": 2})
    assert stats["format"] == "hf" and (tmp_path / "second" / "README.md").is_file()
    assert "no evaluation set has this key" in (tmp_path / "second" / "README.md").read_text()
    back = load_examples(tmp_path / "second")
    assert [e.attack for e in back[0].edits] == ["charswap", "diagnosis"]
    (tmp_path / "file.txt").write_text("x")
    cases = [
        ({"out": str(tmp_path / "file.txt"), "format": "hf"}, "is a file: format=hf writes a directory"),
        ({"out": str(tmp_path), "format": "hf"}, "holds the input"),
        ({"out": str(tmp_path / "x"), "format": "parquet"}, "format=parquet: expected one of race_jsonl, race_original, dream, squad, hf"),
        ({"out": str(tmp_path / "x"), "format": "hf", "split": "dev"}, "split=dev: expected one of train, validation, test"),
    ]
    for extra, message in cases:
        with pytest.raises(SystemExit, match=message):
            apply({"attack": "charswap", "data": str(tmp_path / "in.jsonl"), **extra})
    assert not (tmp_path / "x").exists()


def test_acceptance_dream_exported_and_evaluated_back_gives_the_same_accuracy(shared_data, tmp_path):
    """An attacked DREAM test set, exported and evaluated through data=hf_local: the accuracy and
    predictions of the evaluation that made it, its examples the cached set's, its card the
    evaluation's fingerprint."""
    from robust_mrc.jobs.evaluate import evaluate
    from robust_mrc.jobs.train import train
    from tests.helpers import make_cfg

    ckpt = train(
        make_cfg(
            "model=tiny",
            "task.max_length=128",
            "data.n_train=32",
            "data.n_val=8",
            "data.n_test=8",
            "trainer.max_epochs=1",
            "batch_size=16",
            "test_after_fit=false",
            f"output_dir={tmp_path / 'train'}",
        )
    )["ckpt_path"]
    dream = shared_data / "dream"
    common = [f"ckpt_path={ckpt}", f"paths.shared={shared_data.parent}", "diagnostics=[]", f"cache_dir={tmp_path / 'cache'}"]
    evaluate(
        make_cfg(
            *common,
            "data=dream_local",
            "data.limit=60",
            "suite.sets=[{name: charswap}]",
            f"output_dir={tmp_path / 'e1'}",
            config_name="eval",
        )
    )
    first = json.loads((tmp_path / "e1" / "report.json").read_text())
    stats = apply(
        {
            "attack": "charswap",
            "data": str(dream / "test.json"),
            "limit": 60,
            "pool_data": str(dream / "train.json"),
            "pool_limit": 60,
            "seed": 42,  # evaluate.py's seed
            "format": "hf",
            "out": str(tmp_path / "dream_charswap"),
        }
    )
    fingerprint = first["sets"]["charswap"]["fingerprint"]
    assert first["sets"]["charswap"]["unchanged"] < 60  # an attacked set, not the clean one
    assert stats["fingerprint"] == fingerprint and fingerprint in (tmp_path / "dream_charswap" / "README.md").read_text()
    cached = DiskCache(tmp_path / "cache").load_examples("charswap", fingerprint)
    exported = load_examples(tmp_path / "dream_charswap")
    assert exported == cached and [e.edits for e in exported] == [e.edits for e in cached] and len(exported) == 60
    evaluate(
        make_cfg(*common, "data=hf_local", f"data.test={tmp_path / 'dream_charswap'}", f"output_dir={tmp_path / 'e2'}", config_name="eval")
    )
    second = json.loads((tmp_path / "e2" / "report.json").read_text())
    (model,) = first["models"]
    assert second["models"][model]["sets"]["clean"]["acc"] == first["models"][model]["sets"]["charswap"]["acc"]
    preds = [
        json.loads((tmp_path / e / "predictions" / model.replace("/", "__") / f"{s}.json").read_text())
        for e, s in (("e1", "charswap"), ("e2", "clean"))
    ]
    assert {i: r["pred"] for i, r in preds[0].items()} == {i: r["pred"] for i, r in preds[1].items()}
