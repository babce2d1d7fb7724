"""Loading a robust-mrc checkpoint for evaluation without running any code from it.

* The file is read with ``torch.load(weights_only=True)``: a pickle that would construct arbitrary
  Python objects (and so could run code) is refused with :class:`CheckpointError`.
* Of its saved hyper-parameters only an allow-list of settings is used (:data:`MODEL_KEYS`,
  :data:`TASK_KEYS`); HF config overrides must be plain values of attributes the architecture's
  config already has (checked in :func:`robust_mrc.models.backbone.load_backbone`). Whether remote
  code may run (``trust_remote_code``) is never read from a checkpoint: only the caller, i.e. the
  user's own command line, can allow it.
* Those settings pass the checks of the command line's own (:mod:`robust_mrc.core.checking`:
  types, ranges, ceilings on lengths and on the sizes ``model.config`` gives the architecture)
  before anything is built; a bad one is named as the checkpoint's (``checkpoint X holds
  task.max_length=...``), and so is a ``model.pretrained`` that cannot be loaded here.
* The module is built from those settings (architecture only, no weight download) and the
  checkpoint's ``state_dict`` is loaded into it strictly.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from robust_mrc.core import settings as S
from robust_mrc.core.checking import Checker, check_model_sizes, check_settings, check_task
from robust_mrc.core.errors import UserError
from robust_mrc.models import MODULES
from robust_mrc.models.backbone import ModelUnavailableError

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
    "length_buckets",
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


def check_saved_settings(path: Path, task_cfg: Mapping[str, Any], model_cfg: Mapping[str, Any]) -> None:
    """The checkpoint's task and model settings, by the checks of the command line; a
    :class:`CheckpointError` naming each bad one as the checkpoint's."""
    c = Checker({"task": task_cfg, "model": model_cfg})
    check_task(c, task_cfg["name"])
    check_settings(c, S.ModelSettings, "model.")
    c.text("model.pretrained")
    check_model_sizes(c)
    if c.problems:
        raise CheckpointError(f"checkpoint {path} holds " + "; ".join(c.problems))
    _check_local_model(path, model_cfg["pretrained"])


def _check_local_model(path: Path, name: str) -> None:
    """A ``model.pretrained`` written as a local path must be a model directory here."""
    local = Path(name).expanduser()
    if not (local.is_absolute() or name.startswith((".", "~"))) or (local / "config.json").is_file():
        return
    raise CheckpointError(
        f"checkpoint {path} holds model.pretrained={name}: expected the model directory its architecture "
        f"comes from, and {name} {'holds no config.json' if local.is_dir() else 'does not exist'} here: "
        "copy that directory to this path, or evaluate where the checkpoint was trained"
    )


def _build(path: Path, task: str, model_cfg: dict, task_cfg: dict, window_batch: int):
    """The module of the saved settings; a model they name that cannot be loaded here is named as the checkpoint's."""
    try:
        return MODULES[task](model_cfg, task_cfg, pretrained_weights=False, window_batch=window_batch)
    except ModelUnavailableError as err:
        name, text = model_cfg["pretrained"], str(err)
        if "hf download" in text:  # not here and not downloadable now: the hub's advice, without model.pretrained=
            text = (
                text.split(". ")[0] + f"; download it where you have internet (`hf download {name}`) and copy the Hugging Face cache here"
            )
        raise CheckpointError(f"checkpoint {path} holds model.pretrained={name}: {text}") from None


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
        why = f"{type(err).__name__}: {str(err)[:200]}" if _looks_saved(path) else "not a file torch.save wrote"
        raise CheckpointError(f"ckpt_path={path}: not a readable checkpoint ({why})") from None
    if not isinstance(content, dict) or not isinstance(content.get("state_dict"), Mapping):
        raise CheckpointError(f"ckpt_path={path}: not a Lightning checkpoint (no state_dict)")
    return content


def resume_shapes(path: str | Path, task: str) -> dict[str, tuple[int, ...]]:
    """The weight shapes of a checkpoint a training resumes from, read as :func:`read_checkpoint`
    does (a file that is not a checkpoint: a :class:`CheckpointError` naming it); one of another
    task is refused with the ``task=`` to add."""
    content = read_checkpoint(path)
    saved = (content.get("hyper_parameters") or {}).get("task_cfg")
    saved_task = saved.get("name") if isinstance(saved, Mapping) else None
    if saved_task is not None and saved_task != task:
        raise CheckpointError(f"checkpoint {path} was trained for task={saved_task}; add task={saved_task}")
    return {k: tuple(v.shape) for k, v in content["state_dict"].items() if isinstance(v, torch.Tensor)}


def check_weights_fit(path: str | Path, saved: Mapping[str, tuple[int, ...]], module: torch.nn.Module) -> None:
    """A :class:`CheckpointError` when the weights of ``saved`` (:func:`resume_shapes`) would not
    load strictly into ``module``, naming the first keys that differ."""
    own = {k: tuple(v.shape) for k, v in module.state_dict().items()}
    problems = [f"missing {k}" for k in own if k not in saved][:3]
    problems += [f"unexpected {k}" for k in saved if k not in own][:3]
    problems += [f"{k} is {list(saved[k])}, here {list(own[k])}" for k in own if k in saved and saved[k] != own[k]][:3]
    if problems:
        raise CheckpointError(
            f"checkpoint {path}: its weights do not fit the model configured here ({'; '.join(problems)}): "
            "resume with the model settings it was trained with"
        )


def _looks_saved(path: Path) -> bool:
    """Whether ``path`` starts as a file ``torch.save`` writes does (a zip archive, or a pickle)."""
    with open(path, "rb") as f:
        return f.read(2) in (b"PK", b"\x80\x02")


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
    check_saved_settings(path, task_cfg, model_cfg)
    if task_settings is not None:
        task_cfg = task_settings(task_cfg)
    module = _build(path, task, model_cfg, task_cfg, window_batch)
    try:
        module.load_state_dict(content["state_dict"], strict=True)
    except RuntimeError as err:
        raise CheckpointError(f"ckpt_path={path}: its weights do not fit the architecture it names ({str(err).splitlines()[0]})") from None
    if isinstance(content.get("no_answer_threshold"), (int, float)):  # span, no-answer on: tuned on validation
        module.no_answer_threshold = float(content["no_answer_threshold"])
    module.eval()
    return module
