"""Loading a robust-mrc checkpoint for evaluation without running any code from it.

* The file is read with ``torch.load(weights_only=True)``: a pickle that would construct arbitrary
  Python objects (and so could run code) is refused with :class:`CheckpointError`.
* Of its saved hyper-parameters only an allow-list of settings is used (:data:`MODEL_KEYS`,
  :data:`TASK_KEYS`); HF config overrides must be plain values of attributes the architecture's
  config already has (checked in :func:`robust_mrc.models.backbone.load_backbone`). Whether remote
  code may run (``trust_remote_code``) is never read from a checkpoint: only the caller, i.e. the
  user's own command line, can allow it.
* The module is built from those settings (architecture only, no weight download) and the
  checkpoint's ``state_dict`` is loaded into it strictly.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from robust_mrc.core.errors import UserError
from robust_mrc.models import MODULES

# what a checkpoint may say about its model and its preprocessing
MODEL_KEYS = ("name", "pretrained", "revision", "tokenizer", "init", "init_seed", "cross_attention_init", "config")
TASK_KEYS = (
    "name",
    "inputs",
    "max_length",
    "doc_stride",
    "n_best",
    "max_answer_length",
    "metric",
    "max_windows",
    "no_answer",
    "pad_to_multiple_of",
    # task=dg (distractor generation)
    "max_target_length",
    "max_new_tokens",
    "no_repeat_ngram_size",
    "val_generate",
)


class CheckpointError(UserError, ValueError):
    """A checkpoint that cannot be evaluated as asked."""


def _allowed(settings: Any, keys: tuple[str, ...], what: str, path: Path) -> dict:
    if not isinstance(settings, Mapping):
        raise CheckpointError(f"ckpt_path={path}: not a robust-mrc checkpoint (its {what} settings are missing)")
    refused = sorted(k for k in settings if k not in keys and k != "optim")
    if refused:
        raise CheckpointError(
            f"ckpt_path={path}: its {what} settings hold key(s) {refused} that robust-mrc never takes from a "
            f"checkpoint (allowed: {', '.join(keys)}); trust_remote_code can only come from your command line"
        )
    return {k: settings[k] for k in keys if k in settings}


def require_file(path: str | Path) -> Path:
    """``path``, a file; else a :class:`CheckpointError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"ckpt_path={path}: no such checkpoint file")
    return path


def read_checkpoint(path: str | Path) -> dict:
    """The checkpoint's contents, loaded with ``weights_only=True`` (tensors and plain containers)."""
    path = require_file(path)
    try:
        content = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        text = str(err)
        if "GLOBAL" not in text and "Unsupported global" not in text:  # not a pickle of objects at all
            raise CheckpointError(f"ckpt_path={path}: not a readable checkpoint (not a file torch.save wrote: {_load_key(text)})") from None
        raise CheckpointError(
            f"ckpt_path={path}: refused: it holds Python objects that only a full unpickling could build, "
            f"which can run code ({_global_named(text)}). robust-mrc loads checkpoints with weights_only=True; "
            "re-save the weights from a trusted source"
        ) from None
    except Exception as err:  # not a torch file at all (text, truncated zip, ...)
        raise CheckpointError(f"ckpt_path={path}: not a readable checkpoint ({type(err).__name__}: {str(err)[:200]})") from None
    if not isinstance(content, dict) or not isinstance(content.get("state_dict"), Mapping):
        raise CheckpointError(f"ckpt_path={path}: not a Lightning checkpoint (no state_dict)")
    return content


def _load_key(text: str) -> str:
    import re

    found = re.search(r"invalid load key, [^.]*|could not find MARK|[^.\n]*truncated[^.\n]*", text)
    return found.group(0).strip() if found else "unpickling failed"


def _global_named(text: str) -> str:
    """The object the pickle asked for, from torch's weights-only error message."""
    import re

    found = re.search(r"(?:Unsupported global: )?GLOBAL ([\w.]+)", text)
    return f"it asks for {found.group(1)}" if found else "it asks for a Python object"


def load_checkpoint(
    path: str | Path,
    *,
    expected_task: str | None = None,
    trust_remote_code: bool = False,
    task_settings: Callable[[dict], dict] | None = None,
    window_batch: int = 32,
):
    """The evaluation-mode Lightning module of a robust-mrc checkpoint (see the module doc).

    ``expected_task`` (``mc`` / ``span`` / ``dg``): a checkpoint of the other task is refused with a message
    saying which ``task=`` to use. ``task_settings``: the task settings the module is built with,
    from the saved ones (an evaluation decides the metric and no-answer on its data);
    ``window_batch``: windows per forward pass when predicting."""
    path = Path(path)
    content = read_checkpoint(path)
    hparams = content.get("hyper_parameters") or {}
    task_cfg = _allowed(hparams.get("task_cfg"), TASK_KEYS, "task", path)
    task = task_cfg.get("name")
    if task not in MODULES:
        raise CheckpointError(f"ckpt_path={path}: not a robust-mrc checkpoint (no task in its hyper-parameters)")
    if expected_task is not None and task != expected_task:
        raise CheckpointError(f"ckpt_path={path} is a {task!r} model but task={expected_task}: add task={task}")
    saved_model = dict(hparams.get("model_cfg") or {}) if isinstance(hparams.get("model_cfg"), Mapping) else hparams.get("model_cfg")
    if isinstance(saved_model, dict) and saved_model.pop("trust_remote_code", False) and not trust_remote_code:
        raise CheckpointError(
            f"ckpt_path={path}: its model settings ask to run remote code (trust_remote_code); robust-mrc takes that "
            "only from your command line: add trust_remote_code=true if you trust the code its model directory holds"
        )
    model_cfg = _allowed(saved_model, MODEL_KEYS, "model", path)
    if not model_cfg.get("pretrained"):
        raise CheckpointError(f"ckpt_path={path}: its model settings name no architecture (model_cfg.pretrained)")
    model_cfg["trust_remote_code"] = bool(trust_remote_code)
    if task_settings is not None:
        task_cfg = task_settings(task_cfg)
    module = MODULES[task](model_cfg, task_cfg, pretrained_weights=False, window_batch=window_batch)
    try:
        module.load_state_dict(content["state_dict"], strict=True)
    except RuntimeError as err:
        raise CheckpointError(f"ckpt_path={path}: its weights do not fit the architecture it names ({str(err).splitlines()[0]})") from None
    if isinstance(content.get("no_answer_threshold"), (int, float)):  # span, no-answer on: tuned on validation
        module.no_answer_threshold = float(content["no_answer_threshold"])
    module.eval()
    return module
