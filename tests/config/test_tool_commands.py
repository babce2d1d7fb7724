"""The Hydra tools (``robust-mrc attacks``, ``robust-mrc banks de``): every
command the README and docs/ show composes as typed, and Hydra writes nothing beside the tool."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from robust_mrc.banks.de import span_training_config
from robust_mrc.cli.attacks import hydra_arguments, main
from robust_mrc.cli.banks import _as_list, training_overrides
from robust_mrc.config.compose import compose_config
from tests.helpers import CONF

REPO = Path(__file__).resolve().parents[2]


def documented(tool: str) -> list[tuple[str, list[str]]]:
    """The ``<tool> ...`` lines (``robust-mrc attacks``, ``python train.py``) of the code blocks in
    README.md and docs/ (continuation lines joined, comments dropped); lines with placeholders
    (``...``, ``<work_dir>``) left out."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            text = line.strip().removeprefix("OMP_NUM_THREADS=1 ")
            if not text.startswith(f"{tool} "):
                continue
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i].strip()
            while True:  # a quoted value may go on over lines
                try:
                    args = shlex.split(text, comments=True)[len(tool.split()) :]
                    break
                except ValueError:
                    assert i + 1 < len(lines), f"{path}: an open quote in {text}"
                    i += 1
                    text = text.rstrip("\\") + " " + lines[i].strip().rstrip("\\")
            if any("..." in a or "<" in a for a in args):
                continue
            found.append((f"{path.relative_to(REPO)}: {text}", args))
    return found


def test_documented_attack_commands_compose():
    commands = documented("robust-mrc attacks")
    assert len(commands) >= 6
    for where, (verb, *args) in commands:
        assert verb in ("list", "apply", "stats", "audit"), where
        if verb == "audit" and args[:1] == ["score"]:
            args = args[1:]
        cfg = compose_config(CONF, "attacks", hydra_arguments(args))
        assert all(k in cfg.args for k in ("attack", "data", "out")), where


def test_documented_de_bank_commands_compose():
    commands = documented("robust-mrc banks de")
    assert len(commands) >= 4
    for where, args in commands:
        overrides = [_as_list(a) for a in args]
        cfg = compose_config(CONF, "bank_de", overrides)
        assert cfg.out and cfg.task.name == "span" and cfg.data.name == "dream_local", where
        span_training_config(training_overrides(overrides))


def test_a_parameter_is_params_and_an_own_key_is_args():
    cfg = compose_config(CONF, "attacks", hydra_arguments(["attack=charswap", "seed=3", "question_only=true", "pool=a.txt"]))
    assert (cfg.args.attack, cfg.args.seed) == ("charswap", 3)
    assert dict(cfg.params) == {"question_only": True, "pool": "a.txt"}


def test_hydra_writes_nothing_and_a_mistake_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["list", "task=span"]) == 0
    assert "addsent" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["stats", "attack=charswap", "data=a,b"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: Ambiguous value") and "\n" not in err
    assert list(tmp_path.iterdir()) == []


def test_documented_export_commands_compose():
    commands = documented("robust-mrc export")
    assert len(commands) >= 2
    for where, args in commands:
        cfg = compose_config(CONF, "export", args)
        assert cfg.ckpt and cfg.out, where


@pytest.mark.parametrize("tool, config", [("python train.py", "config"), ("robust-mrc train", "config"), ("python evaluate.py", "eval")])
def test_documented_train_and_evaluate_commands_compose(tool, config):
    commands = documented(tool)
    if tool != "robust-mrc train":
        assert len(commands) >= 3
    for where, args in commands:
        overrides = [a for a in args if "=" in a and not a.startswith("-")]
        if any(a.startswith(("hydra", "+hydra", "--")) or "{" in a or "$" in a for a in args) or "-m" in args:
            continue  # sweeps, Hydra's flags, shell expansions: not one composition
        assert compose_config(CONF, config, overrides).task.name, where
