"""Evaluating a Hugging Face model as it is: a model directory or a hub name, no checkpoint of ours.

    python evaluate.py model.pretrained=deepset/roberta-base-squad2 task=span suite=squad_adv
    python evaluate.py model.pretrained=runs/x/hf task=mc suite=advrace

* The weights must hold a trained head for the task: a model whose ``AutoModelForMultipleChoice`` /
  ``AutoModelForQuestionAnswering`` head would be initialised at random is refused in one line
  (:class:`~robust_mrc.models.backbone.MissingHeadError`); a model whose config names the other
  task's head says which ``task=`` to use.
* Tokenizer and maximum length come from the directory: the task's ``max_length`` is capped at the
  tokenizer's ``model_max_length``. A directory written by ``robust-mrc export`` also holds
  :data:`EXPORT_SETTINGS`: the preprocessing it was trained with (the same allow-list of task
  settings a checkpoint may carry) and its no-answer threshold, so it predicts exactly as its
  checkpoint did.
* ``model.revision`` picks a branch, tag or commit of a hub name. Code shipped with a model runs only
  with ``trust_remote_code=true`` on the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from robust_mrc.core import settings as S
from robust_mrc.core.checking import Checker, check_task
from robust_mrc.core.errors import UserError
from robust_mrc.core.json_input import read_json_file
from robust_mrc.models import MODULES
from robust_mrc.models.backbone import hub_access, load_tokenizer, resolve_pretrained, revision_of, unavailable_error
from robust_mrc.models.checkpoints import TASK_KEYS, CheckpointError, load_checkpoint

#: what ``robust-mrc export`` writes beside the weights: task settings, no-answer threshold
EXPORT_SETTINGS = "robust_mrc.json"

#: architecture-name endings of each task's head (``config.architectures``)
_HEAD_SUFFIXES = {
    "mc": ("ForMultipleChoice",),
    "span": ("ForQuestionAnswering", "ForQuestionAnsweringSimple"),
    "dg": ("ForConditionalGeneration", "EncoderDecoderModel"),
}

# a tokenizer without a real limit says so with a huge model_max_length
_NO_LIMIT = 1_000_000


class PretrainedModelError(CheckpointError):
    """A model directory or hub name that cannot be evaluated as asked."""


def is_checkpoint(source: str) -> bool:
    """Whether ``source`` names a checkpoint file (an existing file, or a ``.ckpt`` path) rather than
    a Hugging Face model directory or hub name."""
    path = Path(source)
    return path.is_file() or path.suffix == ".ckpt"


def exported_settings(name: str) -> dict[str, Any]:
    """The contents of :data:`EXPORT_SETTINGS` in a model directory (``{}`` when there is none)."""
    path = Path(name) / EXPORT_SETTINGS
    if not path.is_file():
        return {}
    content = read_json_file(path, PretrainedModelError)
    if not isinstance(content, dict) or not isinstance(content.get("task"), Mapping):
        raise PretrainedModelError(f"{path}: not a robust-mrc export (no task settings)")
    refused = sorted(k for k in content["task"] if k not in TASK_KEYS)
    if refused:
        raise PretrainedModelError(
            f"{path}: task setting(s) {refused} are never taken from a model directory (allowed: {', '.join(TASK_KEYS)})"
        )
    c = Checker({"task": content["task"]})
    if content["task"].get("name") in S.TASKS:
        check_task(c, content["task"]["name"])
    else:
        c.choice("task.name", tuple(S.TASKS))
    if c.problems:  # the command line's checks, as for a checkpoint's saved settings
        raise PretrainedModelError(f"{path} holds " + "; ".join(c.problems))
    return content


#: the files a tokenizer is saved as (any one of them)
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "spm.model",
    "sentencepiece.bpe.model",
)


def _weight_load_errors() -> tuple[type[BaseException], ...]:
    import pickle

    errors: list[type[BaseException]] = [OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError]
    try:
        from safetensors import SafetensorError

        errors.append(SafetensorError)
    except ImportError:  # pragma: no cover - safetensors comes with transformers
        pass
    return tuple(errors)


WEIGHT_LOAD_ERRORS = _weight_load_errors()


def check_model_directory(name: str, local: str, config, trust_remote_code: bool) -> None:
    """A model directory's sizes and tokenizer, before any weight is allocated: every size its
    ``config.json`` gives within the ceilings of a ``model.config`` override
    (:data:`robust_mrc.core.checking.MODEL_SIZE_CEILINGS`: a million layers or a vocabulary of 10**9
    would allocate without end), and tokenizer files beside the weights (without them the tokenizer
    loader makes a generic one that reads every word as unknown), which ask to run their own code
    only with ``trust_remote_code=true``. A :class:`PretrainedModelError` naming the file."""
    import json

    from robust_mrc.core.checking import MODEL_SIZE_CEILINGS

    sizes = config.to_dict() if hasattr(config, "to_dict") else {}
    nested = [sizes, *(v for v in sizes.values() if isinstance(v, dict))]  # encoder-decoder configs nest theirs
    for values in nested:
        for key, ceiling in MODEL_SIZE_CEILINGS.items():
            value = values.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= ceiling:
                raise PretrainedModelError(
                    f"model.pretrained={name}: config.json gives {key}={value!r}: expected a whole number in [0, {ceiling}] "
                    "(a size beyond it would allocate gigabytes before anything could fail)"
                )
    directory = Path(local)
    if not directory.is_dir():
        return  # a hub name: its files come with it
    if not any((directory / f).is_file() for f in TOKENIZER_FILES):
        raise PretrainedModelError(
            f"model.pretrained={name}: no tokenizer files ({', '.join(TOKENIZER_FILES[:3])}, ...) in the directory: "
            "without them every word would be read as unknown; save the tokenizer beside the weights (tokenizer.save_pretrained(DIR))"
        )
    tokenizer_config = directory / "tokenizer_config.json"
    if tokenizer_config.is_file() and not trust_remote_code:
        try:
            auto_map = json.loads(tokenizer_config.read_text(encoding="utf-8")).get("auto_map")
        except (ValueError, AttributeError, UnicodeDecodeError, OSError):
            raise PretrainedModelError(f"model.pretrained={name}: {tokenizer_config} is not a readable JSON object") from None
        if auto_map:
            raise PretrainedModelError(
                f"model.pretrained={name}: {tokenizer_config.name} asks to run its own tokenizer code (auto_map); robust-mrc runs it "
                "only with trust_remote_code=true on your command line (else a generic tokenizer would read it differently)"
            )


def head_task(config) -> str | None:
    """The task whose head ``config.architectures`` names (``None``: a bare encoder or unknown)."""
    for arch in getattr(config, "architectures", None) or []:
        for task, suffixes in _HEAD_SUFFIXES.items():
            if arch.endswith(suffixes):
                return task
    return None


def model_settings(name: str, revision: str | None = None, trust_remote_code: bool = False) -> dict[str, Any]:
    """The model settings that load ``name`` as it is (its own weights and head, no overrides)."""
    short = Path(name).name if Path(name).is_dir() else name
    return S.complete(
        S.ModelSettings,
        {"name": short, "pretrained": name, "revision": revision, "init": "pretrained", "trust_remote_code": trust_remote_code},
    )


def load_pretrained(
    name: str,
    task_cfg: Mapping[str, Any],
    *,
    revision: str | None = None,
    trust_remote_code: bool = False,
    task_settings: Callable[[dict], dict] | None = None,
    window_batch: int = 32,
):
    """The evaluation-mode module of a Hugging Face model (see the module doc). ``task_cfg``: the
    evaluation's task settings, of which a robust-mrc export keeps its own preprocessing;
    ``task_settings``: as for :func:`~robust_mrc.models.checkpoints.load_checkpoint`."""
    from transformers import AutoConfig

    task = task_cfg["name"]
    model_cfg = model_settings(name, revision, trust_remote_code)
    exported = exported_settings(name)
    saved_task = dict(exported.get("task") or {})
    if saved_task and saved_task.get("name") != task:
        raise PretrainedModelError(
            f"model.pretrained={name} is a {saved_task.get('name')!r} model but task={task}: add task={saved_task.get('name')}"
        )
    local = resolve_pretrained(name)
    access = {**hub_access(local, "model"), **revision_of(model_cfg)}
    try:
        config = AutoConfig.from_pretrained(local, trust_remote_code=trust_remote_code, **access)
    except (OSError, ValueError) as err:
        if "trust_remote_code" in str(err):
            raise PretrainedModelError(
                f"model.pretrained={name} ships its own code; robust-mrc runs it only with trust_remote_code=true on your command line"
            ) from None
        if not Path(local).is_dir():
            raise unavailable_error(name, "model", err) from None
        raise PretrainedModelError(
            f"model.pretrained={name}: not a Hugging Face model ({type(err).__name__}: {str(err).splitlines()[0][:200]})"
        ) from None
    check_model_directory(name, local, config, trust_remote_code)
    own = head_task(config)
    if own is not None and own != task:
        raise PretrainedModelError(f"model.pretrained={name} is a {', '.join(config.architectures)} model but task={task}: add task={own}")
    if saved_task:
        task_cfg = {**dict(task_cfg), **saved_task}
    else:
        task_cfg = dict(task_cfg)
        limit = int(getattr(load_tokenizer(model_cfg), "model_max_length", 0) or 0)
        if "max_length" in task_cfg and 0 < limit < _NO_LIMIT:
            task_cfg["max_length"] = min(int(task_cfg["max_length"]), limit)
    if task_settings is not None:
        task_cfg = task_settings(task_cfg)
    try:
        module = MODULES[task](model_cfg, task_cfg, pretrained_weights=True, window_batch=window_batch, require_head=True)
    except UserError:  # a missing head, a checkpoint's own checks: already one line
        raise
    except WEIGHT_LOAD_ERRORS as err:  # damaged or mismatched weights, a pickle the weights-only loader refuses
        files = Path(local).glob("*") if Path(local).is_dir() else []
        weights = sorted(p.name for p in files if p.suffix in (".safetensors", ".bin", ".pt", ".pth"))
        raise PretrainedModelError(
            f"model.pretrained={name}: its weights ({', '.join(weights) or 'none found'}) cannot be loaded: "
            f"{type(err).__name__}: {str(err).splitlines()[0][:240] if str(err) else ''} "
            "(weights load from safetensors, or a pickle through torch's weights-only loader: no code runs)"
        ) from None
    if isinstance(exported.get("no_answer_threshold"), (int, float)):
        module.no_answer_threshold = float(exported["no_answer_threshold"])
    module.eval()
    return module


def load_model(
    source: str,
    task_cfg: Mapping[str, Any],
    *,
    revision: str | None = None,
    trust_remote_code: bool = False,
    task_settings: Callable[[dict], dict] | None = None,
    window_batch: int = 32,
):
    """The evaluation-mode module of ``source``: a robust-mrc checkpoint file
    (:func:`~robust_mrc.models.checkpoints.load_checkpoint`) or a Hugging Face model directory or hub
    name (:func:`load_pretrained`)."""
    if is_checkpoint(source):
        return load_checkpoint(
            source,
            expected_task=task_cfg["name"],
            trust_remote_code=trust_remote_code,
            task_settings=task_settings,
            window_batch=window_batch,
        )
    return load_pretrained(
        source, task_cfg, revision=revision, trust_remote_code=trust_remote_code, task_settings=task_settings, window_batch=window_batch
    )
