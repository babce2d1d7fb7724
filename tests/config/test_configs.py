"""Every config group option composes, and bad combinations fail with a clear message."""

from __future__ import annotations

import itertools
import shlex
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from robust_mrc.data.sources import DataConfigError, load_splits
from tests.helpers import CONF, make_cfg


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (Path(CONF) / group).glob("*.yaml"))


def test_default_is_offline_minilm_on_synthetic_mc():
    cfg = make_cfg()
    assert (cfg.task.name, cfg.model.name, cfg.data.name, cfg.attack.name) == ("mc", "minilm", "synthetic_mc", "none")
    assert make_cfg("task=span").data.name == "synthetic_span"


@pytest.mark.parametrize("group", ["task", "model", "data", "attack", "trainer", "logger", "experiment"])
def test_every_option_composes_and_resolves(group):
    for option in options(group):
        extra = ["task=span"] if group == "data" and "squad" in option or "dureader" in option else []
        cfg = make_cfg(f"{group}={option}", *extra)
        OmegaConf.to_container(cfg, resolve=True)


def test_the_headline_command_composes():
    cfg = make_cfg("attack=mix", "model=roberta")
    assert cfg.model.pretrained == "roberta-large" and cfg.model.optim.lr == 1.5e-5 and cfg.model.optim.adam_epsilon == 1e-6
    assert cfg.attack.policy == "mix"


def test_advrace_recipe_experiment():
    cfg = make_cfg("experiment=advrace_roberta")
    assert (cfg.model.name, cfg.data.name, cfg.batch_size, cfg.trainer.max_epochs) == ("roberta", "race", 32, 4)


def test_eval_config_needs_a_checkpoint():
    cfg = make_cfg("ckpt_path=x.ckpt", config_name="eval")
    assert cfg.split == "test"


def test_span_data_with_mc_task_says_what_to_add():
    cfg = make_cfg("data=squad_local")
    with pytest.raises(DataConfigError, match="add task=span"):
        load_splits(cfg.data, cfg.task.name)


def test_missing_local_file_names_the_key(tmp_path):
    cfg = make_cfg("data=race_local", f"data.train={tmp_path}/nope.jsonl")
    with pytest.raises(DataConfigError, match="data.train=.*nope.jsonl: no such file"):
        load_splits(cfg.data, "mc")


def test_holdout_splits_by_passage(shared_data):
    cfg = make_cfg("data=race_local", f"data.train={shared_data}/race/race_middle_validation.jsonl")
    splits = load_splits(cfg.data, "mc")
    assert len(splits["train"]) + len(splits["validation"]) == 1436
    assert 0.1 < len(splits["validation"]) / 1436 < 0.3
    assert not {e.passage for e in splits["train"]} & {e.passage for e in splits["validation"]}


@pytest.mark.parametrize("group", ["attack", "model", "data"])
def test_a_wrong_choice_lists_only_real_options(group):
    """The groups' shared bases live in ``base/``: Hydra's list of choices holds only options."""
    with pytest.raises(Exception, match="Available options") as err:
        make_cfg(f"{group}=no_such_option")
    listed = str(err.value).split("Available options", 1)[1].split("Config search path")[0].split()[2:]
    assert listed == options(group), listed
    assert not any(o.startswith("_") or "base/" in o for o in listed)


def _alternatives(arg: str) -> list[str]:
    """``key=a|b`` -> ``[key=a, key=b]``; any other argument stands alone."""
    key, sep, value = arg.partition("=")
    return [f"{key}={v}" for v in value.split("|")] if sep and "|" in value else [arg]


def documented_train_commands() -> list[tuple[str, list[str]]]:
    """The ``python train.py ...`` lines in the experiment configs' header comments, one override
    list per alternative of ``a|b`` choices (``-m`` dropped: composing checks each job's overrides)."""
    found = []
    for path in sorted((Path(CONF) / "experiment").glob("*.yaml")):
        for line in path.read_text().splitlines():
            text = line.lstrip("# ").strip()
            if not text.startswith("python train.py "):
                continue
            args = [a for a in shlex.split(text[len("python train.py ") :], comments=True) if a != "-m"]
            choices = [_alternatives(a) for a in args]
            for overrides in itertools.product(*choices):
                found.append((f"{path.name}: {text}", list(overrides)))
    return found


def test_documented_train_commands_compose():
    """A command shown in an experiment config runs as typed (a missing ``+`` on a new key fails here)."""
    commands = documented_train_commands()
    assert len(commands) >= 10
    for where, overrides in commands:
        try:
            OmegaConf.to_container(make_cfg(*overrides), resolve=True)
        except Exception as err:  # noqa: BLE001 - name the line that does not compose
            raise AssertionError(f"{where}\n  -> {type(err).__name__}: {err}") from err
