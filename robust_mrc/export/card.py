"""The model card (``README.md`` with the Hugging Face card metadata block) of an exported reader:
its base model, data, training policy and attacks, its clean and attacked metrics, the command that
trained it, and how to load it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from robust_mrc.models.backbone import OFFLINE_ORIGINS, TASK_HEADS

PIPELINE_TAGS = {"mc": "multiple-choice", "span": "question-answering", "dg": "text2text-generation"}
TASK_TITLES = {"mc": "multiple-choice reading comprehension", "span": "extractive question answering", "dg": "distractor generation"}
METRIC_NAMES = {"acc": "accuracy", "em": "exact_match", "f1": "f1"}


def _yaml_list(key: str, values: list[str]) -> list[str]:
    return [f"{key}:", *(f"- {json.dumps(v)}" for v in values)] if values else []


def base_model(model_cfg: Mapping[str, Any]) -> str | None:
    """The hub model the reader was fine-tuned from (``None``: random weights, or a local directory)."""
    if model_cfg.get("init") == "random":
        return None
    name = str(model_cfg.get("pretrained") or "")
    if name in OFFLINE_ORIGINS:
        return OFFLINE_ORIGINS[name]
    if not name or Path(name).is_absolute() or name.startswith(".") or name.count("/") > 1 or Path(name).exists():
        return None
    return name


def _data_lines(data: Mapping[str, Any] | None) -> tuple[list[str], list[str]]:
    """(card lines, hub data set names) of the training run's ``data`` settings."""
    if not data:
        return ["- data: unknown (the training run's config.yaml was not found beside the checkpoint)"], []
    lines = [f"- data: `{data.get('name')}` ({data.get('source')})"]
    hub = [str(data["hub_name"])] if data.get("source") == "hub" and data.get("hub_name") else []
    for split in ("train", "validation", "test"):
        if data.get(split):
            lines.append(f"  - {split}: `{data[split]}`" + (f" (first {data['limit']})" if isinstance(data.get("limit"), int) else ""))
    if isinstance(data.get("limit"), Mapping):
        lines.append(f"  - limit: {json.dumps(dict(data['limit']))}")
    return lines, hub


def _attack_lines(attack: Mapping[str, Any] | None, task: str) -> tuple[list[str], list[str]]:
    """(card lines, attack names) of the training run's ``attack`` settings."""
    if not attack or attack.get("policy") in (None, "none"):
        return ["- training policy: none (clean training)"], []
    lines = [f"- training policy: `{attack.get('policy')}` (option `{attack.get('name')}`)"]
    for key in ("rate", "mode", "amount", "fresh_each_epoch"):
        if attack.get(key) is not None:
            lines.append(f"  - {key}: {attack[key]}")
    if attack.get("balance"):  # cue-balanced copies (robust_mrc.policies.CUE_ATTACKS)
        lines.append(f"  - balance: {attack['balance']}")
    if attack.get("consistency"):
        lines.append(f"  - consistency: {attack['consistency']} (weight {attack.get('consistency_weight')})")
    attacks = attack.get("attacks")
    if attacks is None:
        attacks = (attack.get("attacks_by_task") or {}).get(task) or []
    names = []
    for a in attacks:
        name = a.get("name") if isinstance(a, Mapping) else str(a)
        names.append(str(name))
        params = {**dict(a.get("params") or {}), **dict(a.get("train_params") or {})} if isinstance(a, Mapping) else {}
        lines.append(f"  - attack `{name}`" + (f": {json.dumps(params, default=str)}" if params else ""))
    return lines, names


def _embedding_adversary_lines(run_config: Mapping[str, Any] | None) -> list[str]:
    """The embedding-space adversary of the training run (FreeLB, SMART, R3F), when one was on."""
    adversary = (run_config or {}).get("embedding_adversary")
    if not isinstance(adversary, Mapping) or not adversary.get("method"):
        return []
    return [f"- embedding-space adversarial training: {json.dumps(dict(adversary), default=str)}"]


def _optimiser_lines(run_config: Mapping[str, Any] | None) -> list[str]:
    """The optimiser settings of the training run (a checkpoint does not keep them)."""
    model = (run_config or {}).get("model")
    optim = model.get("optim") if isinstance(model, Mapping) else None
    return [f"- optimiser: {json.dumps(dict(optim), default=str)}"] if isinstance(optim, Mapping) else []


def _metrics_table(metrics: Mapping[str, Any]) -> list[str]:
    """The training run's ``metrics.json`` (``val/acc``, ``val/<set>/f1``, ``test/...``) as a table:
    a row per split and set, a column per metric."""
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for key, value in metrics.items():
        parts = key.split("/")
        if not isinstance(value, (int, float)) or len(parts) not in (2, 3) or parts[0] not in ("val", "test"):
            continue
        stage, name, metric = (parts[0], "clean", parts[1]) if len(parts) == 2 else parts
        if metric in METRIC_NAMES or metric == "n":
            rows.setdefault((stage, name), {})[metric] = float(value)
    if not rows:
        return []
    columns = [m for m in ("n", "acc", "em", "f1") if any(m in r for r in rows.values())]
    ordered = sorted(rows, key=lambda k: (k[0] != "val", k[1] != "clean", k[1]))
    out = ["| split | set | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for stage, name in ordered:
        cells = [_cell(rows[(stage, name)].get(c), c) for c in columns]
        out.append(f"| {'validation' if stage == 'val' else stage} | {name} | " + " | ".join(cells) + " |")
    return out


def _cell(value: float | None, column: str) -> str:
    if value is None:
        return ""
    return str(int(value)) if column == "n" else f"{value:.4f}"


def _report_table(report: Mapping[str, Any]) -> list[str]:
    from robust_mrc.reports.robustness import report_rows

    rows = report_rows(report)
    if not rows:
        return []
    columns = [c for c in rows[0] if c != "model"]
    out = ["| model | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for r in rows:
        out.append(
            f"| {r['model']} | "
            + " | ".join(f"{r[c]:.4f}" if isinstance(r[c], float) else "-" if r[c] is None else str(r[c]) for c in columns)
            + " |"
        )
    return out


def _command(run_config: Mapping[str, Any] | None, command: str | None) -> str:
    """The command that trained the reader: the run's own (``command.txt``), else one rebuilt from
    its config's option names."""
    if command:
        return command
    if not run_config:
        return "unknown (no config.yaml beside the checkpoint)"
    parts = ["python", "train.py"]
    for group in ("task", "model", "data", "attack"):
        name = (run_config.get(group) or {}).get("name") if isinstance(run_config.get(group), Mapping) else None
        if name:
            parts.append(f"{group}={name}")
    parts.append(f"seed={run_config.get('seed')}")
    return " ".join(parts) + "   # rebuilt from the run's config.yaml: overrides of single keys are in that file"


def model_card(
    *,
    name: str,
    task: str,
    model_cfg: Mapping[str, Any],
    task_settings: Mapping[str, Any],
    run_config: Mapping[str, Any] | None,
    run_metrics: Mapping[str, Any] | None,
    command: str | None,
    report: Mapping[str, Any] | None,
    ckpt: str,
) -> str:
    base = base_model(model_cfg)
    data_lines, hub_data = _data_lines((run_config or {}).get("data"))
    attack_lines, attack_names = _attack_lines((run_config or {}).get("attack"), task)
    metrics = ["accuracy"] if task == "mc" else (["exact_match", "f1"] if task == "span" else [])
    meta = [
        "---",
        "library_name: transformers",
        f"pipeline_tag: {PIPELINE_TAGS[task]}",
        *([f"base_model: {json.dumps(base)}"] if base else []),
        *_yaml_list("datasets", hub_data),
        *_yaml_list("metrics", metrics),
        *_yaml_list("tags", ["robust-mrc", "machine-reading-comprehension", "adversarial-training", *attack_names]),
        "---",
    ]
    head = TASK_HEADS[task]
    body = [
        f"# {name}",
        "",
        f"A reader for {TASK_TITLES[task]}, trained with robust-mrc and exported from `{ckpt}`.",
        "",
        "## Training",
        "",
        f"- base model: `{model_cfg.get('pretrained')}`"
        + (f" ({base})" if base and base != model_cfg.get("pretrained") else "")
        + (" with fresh random weights (`init: random`)" if model_cfg.get("init") == "random" else ""),
        *([f"- config overrides: {json.dumps(dict(model_cfg['config']))}"] if model_cfg.get("config") else []),
        *data_lines,
        *attack_lines,
        *([f"- seed: {run_config.get('seed')}, batch size: {run_config.get('batch_size')}"] if run_config else []),
        *_embedding_adversary_lines(run_config),
        *_optimiser_lines(run_config),
        "",
        "The command that trained it:",
        "",
        "```",
        _command(run_config, command),
        "```",
        "",
        "## Results",
        "",
    ]
    metrics_rows = _metrics_table(run_metrics or {})
    if metrics_rows:
        body += ["The training run's best checkpoint on its validation (and test) sets, clean and attacked:", "", *metrics_rows, ""]
    if report:
        body += [
            f"An evaluation (`evaluate.py`): data `{report.get('data')}`, split `{report.get('split')}`, suite `{report.get('suite')}`,"
            f" seed {report.get('seed')}:",
            "",
            *_report_table(report),
            "",
        ]
    if not metrics_rows and not report:
        body += ["No metrics were found beside the checkpoint (the run's metrics.json) and no report= was given.", ""]
    body += [
        "## Preprocessing",
        "",
        f"`robust_mrc.json` holds the settings the reader was trained with: {json.dumps(dict(task_settings), default=str)}.",
        "",
        "## Use",
        "",
        "```python",
        f"from transformers import AutoTokenizer, {head}",
        f'model = {head}.from_pretrained("{name}")',
        f'tokenizer = AutoTokenizer.from_pretrained("{name}")',
        "```",
        "",
        "Its robustness under the attacks of robust-mrc, with the same preprocessing:",
        "",
        "```",
        f"python evaluate.py model.pretrained={name} task={task} suite={'advrace' if task == 'mc' else 'squad_adv'} data=...",
        "```",
        "",
    ]
    return "\n".join(meta + body)
