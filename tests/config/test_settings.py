"""Every setting has one home: its definition in ``robust_mrc/core/settings.py`` (type, default,
allowed values, doc). Every option of a group starts from its group's definition and sets only what
differs; every composed config holds every defined key; the code never repeats a default
(``cfg.get("key", default)``); the keys of the groups without a definition (W&B logger, the DG bank
tool, source-specific data keys) are where the code reads them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf

from robust_mrc.config.schema import choices
from robust_mrc.core import settings as S
from tests.helpers import CONF, make_cfg

PACKAGE = Path(__file__).resolve().parents[2] / "robust_mrc"
DEFINITIONS = [S.TrainSettings, S.EvalSettings, *S.TASKS.values(), *S.GROUPS.values(), *S.COMMAND_SETTINGS.values()]
DATA_KEYS_BY_SOURCE = {
    "synthetic": ("n_train", "n_val", "n_test", "seed"),
    "local": ("train", "validation", "test"),
    "hub": ("hub_name", "train", "validation", "test"),
}
# read by robust_mrc/trainer/wandb.py when logger=wandb
WANDB_KEYS = ("name", "project", "entity", "group", "tags", "run_name", "mode")


def options(group: str) -> list[str]:
    """The options of a config group a user picks (files under base/ are not options)."""
    return sorted(p.stem for p in (Path(CONF) / group).glob("*.yaml"))


def keys(cls: type, prefix: str = "") -> list[str]:
    return [key for key, _ in S.walk(cls, prefix)]


def missing(cfg: DictConfig, wanted) -> list[str]:
    """The dotted keys absent from ``cfg`` (a key present with the value null counts as present)."""
    absent = []
    for key in wanted:
        parent, _, leaf = key.rpartition(".")
        node = OmegaConf.select(cfg, parent) if parent else cfg
        if not isinstance(node, DictConfig) or leaf not in node:
            absent.append(key)
    return absent


def data_task(option: str) -> str:
    """The task an option's data is for (``mc`` for an option that follows the run's task)."""
    task = yaml.safe_load((Path(CONF) / "data" / f"{option}.yaml").read_text()).get("task")
    return task if task in ("mc", "span") else "mc"


@pytest.mark.parametrize("cls", DEFINITIONS, ids=lambda c: c.__name__)
def test_every_setting_has_a_doc_and_a_default_its_check_accepts(cls):
    for key, f in S.walk(cls):
        meta = f.metadata
        assert meta.get("doc"), f"{cls.__name__}.{key}: no doc"
        if meta.get("check") == "choice":
            allowed = choices(meta["choices"])
            default = S.defaults(cls)
            for part in key.split("."):
                default = default[part]
            ok = str(default) in allowed if meta.get("as_text") else default in allowed or (default is None and meta.get("null"))
            assert ok or str(default).startswith("${") or default == "???", (cls.__name__, key, default, allowed)


def test_train_config_holds_every_defined_key():
    for task in S.TASKS:
        cfg = make_cfg(f"task={task}")
        assert missing(cfg, keys(S.TrainSettings)) == []
        assert missing(cfg.task, keys(S.TASKS[task])) == [], task
        assert missing(cfg.attack, keys(S.AttackSettings)) == []


def test_eval_config_holds_every_defined_key():
    for suite in options("suite"):
        task = "span" if suite.startswith("squad") else "mc"
        cfg = make_cfg(f"suite={suite}", f"task={task}", config_name="eval")
        assert missing(cfg, keys(S.EvalSettings)) == [], suite
        assert missing(cfg.task, keys(S.TASKS[task])) == []
        assert missing(cfg, ("suite.name", "suite.sets")) == []


def test_the_tool_configs_hold_their_defined_keys_and_repeat_none():
    """``robust-mrc banks de|dg``: the train keys and their own; ``export``: its own; ``attacks``: its own
    under ``args``. Each tool's YAML takes its keys from the definition and sets only what differs."""
    for name, cls, at in (
        ("bank_dg", S.BankDGSettings, ""),
        ("bank_de", S.BankDESettings, ""),
        ("export", S.ExportSettings, ""),
        ("attacks", S.AttacksCommandSettings, "args."),
    ):
        cfg = make_cfg(config_name=name)
        own = keys(cls, at)
        assert missing(cfg, own + (keys(S.TrainSettings) if name.startswith("bank") else [])) == [], name
        doc = _top_keys(Path(CONF) / f"{name}.yaml")
        assert set(doc.get(at.rstrip("."), {}) if at else doc) & set(S.defaults(cls)) == set(), name
    assert make_cfg(config_name="bank_dg").task.name == "dg" and make_cfg(config_name="bank_de").task.name == "span"


@pytest.mark.parametrize("group", sorted(S.GROUPS))
def test_every_option_starts_from_its_group_definition(group):
    for option in options(group):
        cfg = make_cfg(f"{group}={option}", *([f"task={data_task(option)}"] if group == "data" else []))
        assert missing(cfg[group], keys(S.GROUPS[group])) == [], option
        if group == "data":
            assert missing(cfg.data, DATA_KEYS_BY_SOURCE[cfg.data.source]) == [], option
        if group == "attack":
            assert cfg.attack.name, option


def test_every_experiment_keeps_the_keys():
    for option in options("experiment"):
        cfg = make_cfg(f"experiment={option}")
        assert missing(cfg, keys(S.TrainSettings)) == [], option
        assert missing(cfg.data, keys(S.DataSettings)) == [], option


def test_wandb_logger_keys():
    cfg = make_cfg("logger=wandb")
    assert missing(cfg.logger, WANDB_KEYS) == []


def _top_keys(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text()) or {}
    return doc if isinstance(doc, dict) else {}


def _repeats(doc: dict, base: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in doc.items():
        if key == "defaults" or key not in base:
            continue
        if isinstance(value, dict) and isinstance(base[key], dict):
            out += _repeats(value, base[key], f"{prefix}{key}.")
        elif value == base[key]:
            out.append(prefix + key)
    return out


@pytest.mark.parametrize("group", [*sorted(S.GROUPS), "task"])
def test_no_option_repeats_its_definition(group):
    """A value equal to the definition's default is left to the definition (one home per setting)."""
    for option in options(group):
        doc = _top_keys(Path(CONF) / group / f"{option}.yaml")
        base = S.defaults(S.TASKS[option] if group == "task" else S.GROUPS[group])
        assert "@_here_" in str(doc.get("defaults")) or (group, option) == ("data", "synthetic_dg"), option
        assert _repeats(doc, base) == [], option


def test_top_level_configs_leave_the_defined_keys_to_their_definitions():
    for name, cls in (("config", S.TrainSettings), ("eval", S.EvalSettings)):
        doc = _top_keys(Path(CONF) / f"{name}.yaml")
        assert set(doc) & set(S.defaults(cls)) == set(), name


def _setting_names() -> set[str]:
    names = set()
    for cls in DEFINITIONS:
        names |= {key.rsplit(".", 1)[-1] for key in keys(cls)}
    return names


def test_the_code_repeats_no_default():
    """``cfg.get("batch_size", 8)``-style reads of a defined setting (on a config: a name ending in
    ``cfg``) would be a second home of its default."""
    names, found = _setting_names(), []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":  # a tool's own key=value arguments, not a config group's settings
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"):
                continue
            receiver = ast.unparse(node.func.value)
            if len(node.args) < 2 or not isinstance(node.args[0], ast.Constant) or node.args[0].value not in names:
                continue
            if "suite" in receiver:  # a suite's sets are checked by robust_mrc/evaluation/suites.py, not defined here
                continue
            if receiver.split(".")[-1].endswith("cfg") or receiver.endswith(("settings", "optim")):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert found == [], "defaults repeated in code:\n" + "\n".join(found)


def test_run_directories_come_from_run_dirs():
    def hydra_of(config_name: str) -> DictConfig:
        with initialize_config_dir(config_dir=CONF, version_base="1.3"):
            return compose(config_name=config_name, return_hydra_config=True).hydra

    train, evaluate, bank = hydra_of("config"), hydra_of("eval"), hydra_of("bank_dg")
    for h in (train, evaluate, bank):
        assert h.job.chdir is False
        assert str(h.sweep.dir).startswith("multirun/") and "${pid:}" in OmegaConf.to_yaml(h.run)
    assert str(OmegaConf.to_container(train.run)["dir"]).startswith("outputs/${now:")
    assert str(OmegaConf.to_container(evaluate.run)["dir"]).startswith("outputs/eval/${now:")
    assert OmegaConf.to_container(bank.run) == OmegaConf.to_container(train.run)


def _files():
    return sorted(Path(CONF).rglob("*.yaml"))


def test_paths_and_run_directories_have_one_home():
    """``paths.shared`` only in robust_mrc/conf/paths/, hydra.run / hydra.sweep / hydra.job only in robust_mrc/conf/run_dirs/."""
    for path in _files():
        rel = path.relative_to(CONF).as_posix()
        doc = _top_keys(path)
        if not rel.startswith("paths/"):
            assert "paths" not in doc, rel
        hydra = doc.get("hydra") or {}
        if not rel.startswith("run_dirs/"):
            assert not {"run", "sweep", "job"} & set(hydra), rel
