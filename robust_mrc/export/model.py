"""Writing a checkpoint as a Hugging Face model directory (see :mod:`robust_mrc.export`)."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import torch

from robust_mrc.core.errors import UserError
from robust_mrc.core.json_input import READ_FAILURES, read_json_file
from robust_mrc.data.writers import atomic_write_json, atomic_write_text
from robust_mrc.export.card import model_card
from robust_mrc.models.backbone import TASK_HEADS, load_tokenizer
from robust_mrc.models.checkpoints import TASK_KEYS, load_checkpoint
from robust_mrc.models.pretrained import EXPORT_SETTINGS

log = logging.getLogger(__name__)


class ExportError(UserError, ValueError):
    """An export that cannot be written as asked (an output in the way, an unreadable report)."""


def run_dir_of(ckpt: Path) -> Path | None:
    """The training run directory of ``RUN/checkpoints/<name>.ckpt`` (``None`` for a loose file)."""
    return ckpt.parent.parent if ckpt.parent.name == "checkpoints" else None


def _read_json(path: Path, what: str) -> Any:
    return read_json_file(path, ExportError, label=f"{what}={path}")


def _run_files(run: Path | None) -> tuple[dict | None, dict | None, str | None]:
    """The training run's config (``config.yaml``), metrics (``metrics.json``) and command
    (``command.txt``), each ``None`` when absent or unreadable (the card says so)."""
    if run is None:
        return None, None, None
    import yaml

    config = metrics = command = None
    try:
        config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        pass
    try:
        metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    except READ_FAILURES:
        pass
    try:
        command = (run / "command.txt").read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        pass
    return (config if isinstance(config, dict) else None), (metrics if isinstance(metrics, dict) else None), command


def _check_reload(directory: Path, module) -> None:
    """``AutoModelFor<task>.from_pretrained(directory)`` must give back every weight of ``module``."""
    import transformers

    head = getattr(transformers, TASK_HEADS[module.task])
    reloaded, info = head.from_pretrained(str(directory), output_loading_info=True)
    problems = {k: sorted(v) for k, v in info.items() if k != "error_msgs" and v}
    if problems:
        raise ExportError(f"the exported {directory} does not load back whole with {TASK_HEADS[module.task]}: {problems}")
    ours, theirs = module.backbone.state_dict(), reloaded.state_dict()
    differ = [k for k, v in ours.items() if k not in theirs or not torch.equal(v.cpu(), theirs[k].cpu())]
    if differ:
        raise ExportError(f"the exported {directory} loads back with other weights: {differ[:4]}")


def check_report(evaluation: dict, path: Path, task: str, ckpt: Path) -> None:
    """An evaluation report goes into the card of the model it evaluated: of this task, and naming
    this checkpoint among its models; else an :class:`ExportError` (a card would show another
    model's scores as this one's)."""
    if evaluation.get("task") != task:
        raise ExportError(f"report={path} evaluates task={evaluation.get('task')} models; the checkpoint {ckpt} is task={task}")
    evaluated = [str(entry.get("ckpt")) for entry in evaluation["models"].values() if isinstance(entry, dict) and entry.get("ckpt")]
    same = [e for e in evaluated if Path(e).resolve() == ckpt.resolve()]
    if not same:
        raise ExportError(
            f"report={path} evaluates {', '.join(evaluated[:3]) or 'no checkpoint'}, not {ckpt}: give the report of "
            f"an evaluation of this checkpoint (evaluate.py ckpt_path={ckpt})"
        )


def is_export(path: Path) -> bool:
    """Whether the directory ``path`` is a model directory an export wrote: its settings file
    (``robust_mrc.json``) and ``config.json``, and nothing an export never writes (a subdirectory, a
    Lightning checkpoint, a run's metrics or config)."""
    if not path.is_dir() or not (path / EXPORT_SETTINGS).is_file() or not (path / "config.json").is_file():
        return False
    return not any(p.is_dir() or p.suffix == ".ckpt" or p.name in ("metrics.json", "config.yaml", "report.json") for p in path.iterdir())


def check_out(out: Path, overwrite: bool) -> None:
    """``out`` may be written: missing, an empty directory, or (with ``overwrite``) an earlier export
    (:func:`is_export`); anything else (a run, a checkpoints folder, a folder of other files, a
    file) is an :class:`ExportError`, with or without ``overwrite``: an export never deletes what it
    did not write."""
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return
    if is_export(out):
        if not overwrite:
            raise ExportError(f"out={out} holds an earlier export: add overwrite=true to replace it, or give another out")
        return
    held = sorted(p.name + ("/" if p.is_dir() else "") for p in out.iterdir()) if out.is_dir() else []
    what = "a file" if not out.is_dir() else "a directory of files that are no export: " + ", ".join(held[:4])
    raise ExportError(
        f"out={out} is {what}: an export writes a new directory (overwrite=true replaces only an earlier export); "
        f"give another out, e.g. out={out.parent / (out.name + '-hf')}"
    )


def clean_leftovers(out: Path) -> list[Path]:
    """Remove what a killed export of ``out`` left beside it (``.<name>.partial-<pid>``,
    ``.<name>.old-<pid>`` of a process no longer running); the removed paths."""
    removed = []
    for path in out.parent.glob(f".{out.name}.*-*"):
        kind, _, pid = path.name[len(out.name) + 2 :].rpartition("-")
        if kind not in ("partial", "old") or not pid.isdigit() or _alive(int(pid)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    if removed:
        log.info("removed what a killed export left: %s", ", ".join(map(str, removed)))
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _replace_directory(tmp: Path, out: Path) -> None:
    """``tmp`` becomes ``out``; an existing ``out`` is removed only once ``tmp`` is in place."""
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        out.rename(old)
    tmp.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def export_checkpoint(
    ckpt: str | Path,
    out: str | Path,
    *,
    report: str | Path | None = None,
    overwrite: bool = False,
    trust_remote_code: bool = False,
) -> dict[str, Any]:
    """Write checkpoint ``ckpt`` as the model directory ``out`` (see :mod:`robust_mrc.export`);
    ``report``: an evaluation's ``report.json`` whose table goes into the model card. Returns what
    was written."""
    ckpt, out = Path(ckpt), Path(out)
    check_out(out, overwrite)
    evaluation = _read_json(Path(report), "report") if report else None
    if evaluation is not None and not (isinstance(evaluation, dict) and isinstance(evaluation.get("models"), dict)):
        raise ExportError(f"report={report}: not a robust-mrc evaluation report (no models)")
    module = load_checkpoint(ckpt, trust_remote_code=trust_remote_code)
    if evaluation is not None:
        check_report(evaluation, Path(report), module.task, ckpt)
    tokenizer = getattr(module, "tokenizer", None) or load_tokenizer(module.model_cfg)
    task_settings = {k: module.task_cfg[k] for k in TASK_KEYS if k in module.task_cfg}
    if task_settings.get("max_length"):
        tokenizer.model_max_length = int(task_settings["max_length"])
    run_config, run_metrics, command = _run_files(run_dir_of(ckpt))
    settings = {
        "task": task_settings,
        "no_answer_threshold": getattr(module, "no_answer_threshold", None),
        "checkpoint": str(ckpt),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out)
    tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        module.backbone.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        atomic_write_json(tmp / EXPORT_SETTINGS, settings)
        card = model_card(
            name=out.name,
            task=module.task,
            model_cfg=module.model_cfg,
            task_settings=task_settings,
            run_config=run_config,
            run_metrics=run_metrics,
            command=command,
            report=evaluation,
            ckpt=str(ckpt),
        )
        atomic_write_text(tmp / "README.md", card)
        _check_reload(tmp, module)
        _replace_directory(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    files = sorted(p.name for p in out.iterdir())
    log.info("exported %s to %s (%s)", ckpt, out, ", ".join(files))
    return {"out": str(out), "task": module.task, "architecture": type(module.backbone).__name__, "files": files}
