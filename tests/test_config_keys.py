"""The keys the code reads from a composed config without a Python default are in the YAML files.

``train(cfg)``, ``evaluate(cfg)``, ``build_bank(cfg)``, ``load_splits(cfg.data)`` and the W&B
logger read these keys as ``cfg.key`` (no ``cfg.get(key, default)``): the default lives in one YAML
file under ``conf/``. Removing one of them from its YAML home makes a test here fail (before a run
fails with a missing key). Each config is composed as the command line composes it, for every option
of the groups whose options differ in their keys.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf

from tests.helpers import CONF, make_cfg

# read by robust_mrc/jobs/train.py, runtime.py, train.py (train.py, the bank builders)
TRAIN_KEYS = (
    "seed",
    "output_dir",
    "batch_size",
    "eval_batch_size",
    "num_workers",
    "progress_every",
    "group_by_length",
    "ckpt_path",
    "test_after_fit",
    "monitor",
    "record_train_items",
    "logger.name",
    "attack",
    "task.name",
    "task.max_length",
    "paths.shared",
)
# read by robust_mrc/jobs/evaluate.py, evaluation/diagnose.py, runtime.py, tracking.py (evaluate.py)
EVAL_KEYS = (
    "seed",
    "output_dir",
    "ckpt_path",
    "ensemble",
    "ensemble_method",
    "split",
    "eval_batch_size",
    "num_workers",
    "progress_every",
    "cache_dir",
    "trust_remote_code",
    "wandb",
    "wandb_project",
    "diagnostics",
    "confidence_threshold",
    "error_folds",
    "magnet_screen.enabled",
    "magnet_screen.pool",
    "magnet_screen.questions",
    "magnet_screen.max_pool",
    "magnet_screen.top",
    "magnet_screen.attack_top",
    "suite.name",
    "suite.sets",
    "task.name",
    "paths.shared",
)
# read by robust_mrc/banks/dg.py (python -m robust_mrc.banks.dg), on top of TRAIN_KEYS
BANK_DG_KEYS = (
    "out",
    "stats",
    "ckpt",
    "splits",
    "beams",
    "n",
    "max_similarity",
    "exclude_options",
    "gen_batch_size",
    "device",
    "trust_remote_code",
    "task.max_new_tokens",
    "task.no_repeat_ngram_size",
)
# read by robust_mrc/data/sources.py from every data option (home: conf/data/base/defaults.yaml)
DATA_KEYS = ("name", "task", "source", "format", "strict", "limit", "holdout", "holdout_seed", "max_bytes", "subset")
DATA_KEYS_BY_SOURCE = {
    "synthetic": ("n_train", "n_val", "n_test", "seed"),
    "local": ("train", "validation", "test"),
    "hub": ("hub_name", "train", "validation", "test"),
}
# every key the models read (home: conf/model/base/defaults.yaml and the option); the code keeps defaults
# for them because a checkpoint's saved settings may lack the newer ones
MODEL_KEYS = ("name", "pretrained", "tokenizer", "init", "init_seed", "cross_attention_init", "config", "trust_remote_code")
OPTIM_KEYS = ("lr", "weight_decay", "warmup_ratio", "adam_epsilon", "betas")
# read by robust_mrc/trainer/wandb.py when logger=wandb
WANDB_KEYS = ("name", "project", "entity", "group", "tags", "run_name", "mode")
TASK_KEYS = {
    "mc": ("name", "max_length", "inputs"),
    "span": ("name", "max_length", "doc_stride", "n_best", "max_answer_length", "metric", "no_answer", "max_windows"),
    "dg": ("name", "max_length", "max_target_length", "max_new_tokens", "no_repeat_ngram_size", "val_generate"),
}


def options(group: str) -> list[str]:
    """The options of a config group a user picks (``_base``-style files are bases, not options)."""
    return sorted(p.stem for p in (Path(CONF) / group).glob("*.yaml"))


def missing(cfg: DictConfig, keys) -> list[str]:
    """The dotted keys absent from ``cfg`` (a key present with the value null counts as present)."""
    absent = []
    for key in keys:
        parent, _, leaf = key.rpartition(".")
        node = OmegaConf.select(cfg, parent) if parent else cfg
        if not isinstance(node, DictConfig) or leaf not in node:
            absent.append(key)
    return absent


def data_task(option: str) -> str:
    return yaml.safe_load((Path(CONF) / "data" / f"{option}.yaml").read_text()).get("task") or "mc"


def test_train_config_has_every_key_the_training_reads():
    for task in TASK_KEYS:
        cfg = make_cfg(f"task={task}")
        assert missing(cfg, TRAIN_KEYS) == []
        assert missing(cfg.task, TASK_KEYS[task]) == [], task


def test_eval_config_has_every_key_the_evaluation_reads():
    for suite in options("suite"):
        task = "span" if suite.startswith("squad") else "mc"
        cfg = make_cfg(f"suite={suite}", f"task={task}", config_name="eval")
        assert missing(cfg, EVAL_KEYS) == [], suite
        assert missing(cfg.task, TASK_KEYS[task]) == []


def test_bank_config_has_the_train_and_the_bank_keys():
    cfg = make_cfg(config_name="bank_dg")
    assert missing(cfg, TRAIN_KEYS + BANK_DG_KEYS) == []
    assert cfg.task.name == "dg"


@pytest.mark.parametrize("option", options("data"))
def test_every_data_option_has_the_keys_load_splits_reads(option):
    for config_name in ("config", "eval"):
        cfg = make_cfg(f"data={option}", f"task={data_task(option)}", config_name=config_name)
        assert missing(cfg.data, DATA_KEYS + DATA_KEYS_BY_SOURCE[cfg.data.source]) == [], (config_name, option)


def test_every_model_option_has_the_keys_the_models_read():
    for option in options("model"):
        cfg = make_cfg(f"model={option}")
        assert missing(cfg.model, MODEL_KEYS) == [], option
        assert missing(cfg.model.optim, OPTIM_KEYS) == [], option


def test_wandb_logger_keys():
    cfg = make_cfg("logger=wandb")
    assert missing(cfg.logger, WANDB_KEYS) == []


def test_every_experiment_keeps_the_keys():
    for option in options("experiment"):
        cfg = make_cfg(f"experiment={option}")
        assert missing(cfg, TRAIN_KEYS) == [], option
        assert missing(cfg.data, DATA_KEYS) == [], option


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


def _top_keys(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text()) or {}
    return doc if isinstance(doc, dict) else {}


def test_paths_and_run_directories_have_one_home():
    """``paths.shared`` only in conf/paths/, hydra.run / hydra.sweep / hydra.job only in conf/run_dirs/."""
    for path in _files():
        rel = path.relative_to(CONF).as_posix()
        doc = _top_keys(path)
        if not rel.startswith("paths/"):
            assert "paths" not in doc, rel
        hydra = doc.get("hydra") or {}
        if not rel.startswith("run_dirs/"):
            assert not {"run", "sweep", "job"} & set(hydra), rel


@pytest.mark.parametrize("group", ["data", "model"])
def test_no_option_repeats_its_base(group):
    """A value equal to the group base's default is left to the base (one home per key)."""
    base = _top_keys(Path(CONF) / group / "base" / "defaults.yaml")
    for option in options(group):
        doc = _top_keys(Path(CONF) / group / f"{option}.yaml")
        assert "base/defaults@_here_" in str(doc.get("defaults")) or group == "data" and option == "synthetic_dg", option
        same = [k for k, v in doc.items() if k in base and v == base[k]]
        assert same == [], (option, same)
