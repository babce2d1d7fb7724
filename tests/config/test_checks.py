"""Config checks and the command lines' error messages: every bad value names its key,
a user's mistake prints one line without a traceback, an unreachable hub fails at once, and two
runs never share a run directory."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robust_mrc.config.checks import ConfigError, check_config, check_lengths
from robust_mrc.data.examples import MCExample, SpanExample
from tests.helpers import CONF, make_cfg

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["batch_size=abc"], "batch_size='abc': expected an integer >= 1"),
        (["batch_size=0"], "batch_size=0: expected an integer >= 1"),
        (["eval_batch_size=2.5"], "eval_batch_size=2.5: expected an integer >= 1 or null"),
        (["num_workers=-1"], "num_workers=-1: expected an integer >= 0"),
        (["seed=-3"], "seed=-3: expected an integer in [0, 4294967295]"),
        (
            ["data=race_local", "data.limit=abc"],
            "data.limit='abc': expected an integer >= 0, a mapping such as {train: 4000, validation: 1000}, or null",
        ),
        (["data=race_local", "data.limit={train: -1}"], "data.limit.train=-1: expected an integer >= 0 or null"),
        (["data=race_local", "data.limit={dev: 5}"], "data.limit.dev=5: expected a split: train, validation, test"),
        (["data=race_local", "data.holdout=2"], "data.holdout=2: expected a number in [0.0, 1.0) or null"),
        (["data=race_local", "data.strict=maybe"], "data.strict='maybe': expected true or false"),
        (["data=race_local", "data.format=csv"], "data.format='csv': expected one of auto, race_jsonl"),
        (["+data.max_bytes=lots"], "data.max_bytes='lots': expected a number of bytes such as 2147483648 or 2GiB"),
        (["data.n_train=abc"], "data.n_train='abc': expected an integer >= 0"),
        (["task=span", "task.doc_stride=384"], "task.doc_stride=384 must be smaller than task.max_length=384"),
        (["task.pad_to_multiple_of=48"], "task.pad_to_multiple_of=48 must divide task.max_length=512"),
        (["task.pad_to_multiple_of=0"], "task.pad_to_multiple_of"),
        (["task.max_length=16"], "task.max_length=16: expected an integer in [32, 131072]"),
        (["task.inputs=question_only"], "task.inputs='question_only': expected one of full, options_only"),
        (["trainer.max_epochs=abc"], "trainer.max_epochs='abc': expected an integer >= -1"),
        (["trainer.gradient_clip_val=-1"], "trainer.gradient_clip_val=-1: expected a number >= 0.0 or null"),
        (["trainer.precision=17"], "trainer.precision=17: expected one of 16, 16-mixed"),
        (["+trainer.max_epcohs=3"], "trainer.max_epcohs: not an argument of pytorch_lightning.Trainer; did you mean trainer.max_epochs?"),
        (["+trainer.logger=false"], "trainer.logger is set by robust-mrc itself (use logger=)"),
        (["model.optim.lr=0"], "model.optim.lr=0: expected a number > 0.0"),
    ],
)
def test_bad_values_name_their_key(overrides, message):
    with pytest.raises(ConfigError) as excinfo:
        check_config(make_cfg(*overrides))
    assert message in str(excinfo.value) and str(excinfo.value).startswith("bad config: ")


def test_every_problem_is_listed_in_one_message():
    with pytest.raises(ConfigError) as excinfo:
        check_config(make_cfg("batch_size=abc", "num_workers=-1", "+trainer.foo=1"))
    assert str(excinfo.value).count("; ") == 2


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["split=dev"], "split='dev': expected one of train, validation, test"),
        (["confidence_threshold=2"], "confidence_threshold=2: expected a number in (0.0, 1.0]"),
        (["error_folds=1"], "error_folds=1: expected an integer >= 2"),
        (["eval_batch_size=abc"], "eval_batch_size='abc'"),
        (["search_precision=16"], "search_precision=16: expected one of 32, bf16"),
    ],
)
def test_bad_evaluation_values(overrides, message):
    with pytest.raises(ConfigError, match="bad config: ") as excinfo:
        check_config(make_cfg("ckpt_path=x.ckpt", *overrides, config_name="eval"), "eval")
    assert message in str(excinfo.value)


def test_gpu_trainer_without_a_gpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=r"trainer.accelerator=gpu but this machine has no GPU .*: use trainer=cpu"):
        check_config(make_cfg("trainer=gpu"))
    check_config(make_cfg("experiment=advrace_roberta"))  # trainer=auto: the devices there are


@pytest.mark.parametrize("group", ["task", "model", "data", "attack", "trainer", "logger", "experiment"])
def test_every_shipped_option_passes_the_checks(group, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the gpu options, on any machine
    for option in sorted(p.stem for p in (Path(CONF) / group).glob("*.yaml")):
        extra = ["task=span"] if group == "data" and ("squad" in option or "dureader" in option) else []
        check_config(make_cfg(f"{group}={option}", *extra))
    check_config(make_cfg("ckpt_path=x.ckpt", config_name="eval"), "eval")


class WordTokenizer:
    """One token a word, [CLS] q [SEP] c [SEP]: enough for the length checks."""

    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [t.split() for t in texts]}

    def num_special_tokens_to_add(self, pair=False):
        return 3 if pair else 2


def test_a_span_question_too_long_for_a_window_names_the_keys():
    task = {"name": "span", "max_length": 64, "doc_stride": 32}
    fits = SpanExample("ok", "c " * 500, "w " * 28, ())  # 28 + 3 + 32 < 64
    long = SpanExample("q-long", "c " * 500, "w " * 29, ())
    check_lengths(task, WordTokenizer(), {"train": [fits]})
    with pytest.raises(ConfigError) as excinfo:
        check_lengths(task, WordTokenizer(), {"train": [fits], "validation": [long, fits]})
    msg = str(excinfo.value)
    assert "task.max_length=64 is too small for question 'q-long' of the validation split (29 tokens)" in msg
    assert "task.doc_stride=32" in msg and "set task.max_length>=65" in msg


def test_mc_questions_and_options_that_do_not_fit_are_counted(caplog):
    examples = [MCExample("short", "p", "q", ("a", "b"), 0), MCExample("long", "p", "q " * 40, ("a", "b " * 5), 0)]
    with caplog.at_level(logging.WARNING):
        check_lengths({"name": "mc", "max_length": 32}, WordTokenizer(), {"train": examples})
    assert "task.max_length=32: in 1 of 2 train questions" in caplog.text and "(e.g. long)" in caplog.text


# ----------------------------------------------------------------------------- the command lines


def run_cli(*args: str, env: dict | None = None, script: str = "train.py") -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    environment.update(env or {})
    return subprocess.run([sys.executable, script, *args], cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)


def test_a_config_mistake_is_one_line_without_a_traceback(tmp_path):
    result = run_cli("batch_size=abc", f"hydra.run.dir={tmp_path}")
    assert result.returncode == 1
    assert result.stderr.strip() == "Error: bad config: batch_size='abc': expected an integer >= 1"
    assert "Traceback" not in result.stdout + result.stderr
    full = run_cli("batch_size=abc", f"hydra.run.dir={tmp_path}", env={"HYDRA_FULL_ERROR": "1"})
    assert full.returncode == 1 and "Traceback" in full.stderr and "ConfigError: bad config: batch_size='abc'" in full.stderr


@pytest.mark.slow
def test_a_data_mistake_and_an_evaluation_mistake_are_one_line(tmp_path):
    bad = tmp_path / "train.jsonl"
    bad.write_text('{"example_id": "a", "article": "x", "question": "q", "options": ["a", "b"], "answer": "Z"}\n')
    result = run_cli("data=race_local", f"data.train={bad}", "model=tiny", f"hydra.run.dir={tmp_path / 'run'}")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {bad}, record line 1 (example_id a): answer out of range: 'Z' with 2 options "
        "(expected one of A, B) (pass strict=false to skip bad records)"
    )
    evaluation = run_cli(f"ckpt_path={tmp_path / 'missing.ckpt'}", f"hydra.run.dir={tmp_path / 'eval'}", script="evaluate.py")
    assert evaluation.returncode == 1 and "Traceback" not in evaluation.stderr
    assert evaluation.stderr.strip().splitlines()[-1].startswith(f"Error: ckpt_path={tmp_path / 'missing.ckpt'}")


def test_an_unreachable_hub_fails_at_once_with_what_to_do(tmp_path):
    """HF_ENDPOINT at a closed local port: the hub cannot be reached, deterministically and without
    downloading anything even on a machine with internet."""
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf")}
    result = run_cli("model=roberta", "attack=mix", f"hydra.run.dir={tmp_path / 'run'}", env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: cannot load tokenizer 'roberta-large': the Hugging Face hub (127.0.0.1:9) cannot be reached")
    assert "hf download roberta-large" in last and "model=minilm works offline" in last


def test_the_hub_probe_comes_before_any_hub_call(monkeypatch):
    import transformers

    from robust_mrc.models import backbone

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(backbone, "hub_reachable", lambda: False)
    monkeypatch.setattr(backbone, "_in_hf_cache", lambda name: False)

    def never(*args, **kwargs):
        raise AssertionError("from_pretrained was called: the retries the probe avoids")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", never)
    with pytest.raises(backbone.ModelUnavailableError, match="cannot load tokenizer 'roberta-large'"):
        backbone.load_tokenizer({"pretrained": "roberta-large"})
    monkeypatch.setattr(backbone, "_in_hf_cache", lambda name: True)
    assert backbone.hub_access("roberta-large", "model") == {"local_files_only": True}
    assert backbone.hub_access(str(REPO), "model") == {}  # a local directory is never probed


def test_two_runs_started_together_get_different_run_directories(tmp_path):
    cmd = [sys.executable, "train.py", "--cfg", "hydra", "--resolve"]
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    dirs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        run = out.split("run:\n", 1)[1].split("\n", 1)[0]
        dirs.append(run.split("dir:", 1)[1].strip())
    assert dirs[0] != dirs[1]
    assert all(d.startswith("outputs/") and d.rsplit("-", 1)[1].isdigit() for d in dirs)


def test_the_fallback_run_directory_is_made_exclusively(tmp_path, monkeypatch):
    from robust_mrc.trainer import run_dir as runtime

    class Frozen:
        @staticmethod
        def now():
            import datetime

            return datetime.datetime(2026, 1, 2, 3, 4, 5, 678)

    monkeypatch.setattr(runtime, "datetime", Frozen)
    first, second = runtime.new_run_dir(tmp_path), runtime.new_run_dir(tmp_path)
    assert first != second and first.is_dir() and second.is_dir()
    assert first.name == f"03-04-05-000678-{os.getpid()}" and second.name == f"{first.name}-1"


def test_a_refused_command_leaves_no_run_directory_of_its_own(tmp_path):
    """The run directory Hydra makes for a refused command (``...-<pid>``, robust_mrc/conf/run_dirs) is removed
    with its emptied date folder; one the user named is kept with what it holds."""
    result = run_cli("batch_size=abc", f"hydra.run.dir={tmp_path}/outputs/day/run-${{pid:}}")
    assert result.returncode == 1 and result.stderr.startswith("Error: ")
    assert not (tmp_path / "outputs" / "day").exists() and (tmp_path / "outputs").is_dir()
    named = tmp_path / "named"
    result = run_cli("batch_size=abc", f"hydra.run.dir={named}")
    assert result.returncode == 1 and (named / ".hydra").is_dir()
