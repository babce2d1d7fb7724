"""``--help`` of the Hydra commands prints Hydra's own text (the config groups and their options, the
composed config), made without Hydra's seconds-long listing; a user's config folder shows in it."""

from __future__ import annotations

import sys

import pytest
from hydra.core.global_hydra import GlobalHydra


def hydras_own_help(app, argv, monkeypatch, capsys) -> str:
    from robust_mrc.config.compose import register_resolvers

    register_resolvers()  # the settings' definitions in Hydra's ConfigStore
    monkeypatch.setattr(sys, "argv", ["prog", *argv])
    try:
        app()
    except SystemExit as done:
        assert done.code in (None, 0)
    finally:  # leave no Hydra state behind for a later test's app
        from hydra.core.hydra_config import HydraConfig

        HydraConfig.instance().cfg = None
        GlobalHydra.instance().clear()
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_the_help_is_hydras_text(command, monkeypatch, capsys):
    from robust_mrc.cli import evaluate, train

    module = {"train": train, "evaluate": evaluate}[command]
    app = train.train_app if command == "train" else evaluate.evaluate_app
    argv = ["--help", "task=span", "suite=squad" if command == "evaluate" else "model=tiny"]
    expected = hydras_own_help(app, argv, monkeypatch, capsys)
    assert f"{command} is powered by Hydra" in expected and "== Configuration groups ==" in expected
    module.main(argv)
    assert capsys.readouterr().out == expected


def test_a_users_config_folder_joins_the_help_and_the_run(tmp_path, capsys):
    from robust_mrc.cli.train import main
    from robust_mrc.config.compose import compose_config

    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "mine.yaml").write_text("# @package _global_\ndefaults:\n  - override /task: span\nseed: 7\n")
    searchpath = f"hydra.searchpath=[file://{tmp_path}]"
    main(["--help", searchpath])
    listed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("experiment:"))
    assert "mine" in listed.split(": ")[1].split(", ")
    cfg = compose_config(None, "config", [searchpath, "experiment=mine"])
    assert cfg.seed == 7 and cfg.task.name == "span"
