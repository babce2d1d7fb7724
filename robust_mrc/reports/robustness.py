"""The robustness report: per model and set the metrics, the relative drop against clean and the
share of flipped predictions; written as JSON, CSV, Markdown and a PNG bar chart.

``report.json`` layout::

    {"task": "mc", "suite": "advrace", "split": "test", "primary": "acc",
     "models": {"best": {"ckpt": "...", "sets": {"clean": {"n": 200, "acc": 0.61, "drop": 0.0,
                                                          "flip": 0.0, ...}, "addsent": {...}},
                         "attack_avg": 0.48, "attack_avg_drop": 0.21}},
     "diagnostics": {...}}

``drop`` = (clean - attacked) / clean of the primary metric (0 when clean is 0); ``flip`` = share
of the examples present in both sets whose prediction differs from the clean one (multiple
choice: the chosen option's index, attacks keep the label's position; span QA: the answer text
after SQuAD normalization).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Mapping

from robust_mrc.data.writers import atomic_write_text
from robust_mrc.diagnostics._io import new_figure, save_png
from robust_mrc.diagnostics.report import flip_rate, relative_drop
from robust_mrc.reports.tables import format_table

CLEAN = "clean"


def model_summary(set_metrics: dict[str, dict], primary: str) -> dict[str, float]:
    attacked = [m[primary] for name, m in set_metrics.items() if name != CLEAN and primary in m]
    out: dict[str, float] = {}
    if attacked:
        out["attack_avg"] = sum(attacked) / len(attacked)
        if CLEAN in set_metrics:
            out["attack_avg_drop"] = relative_drop(set_metrics[CLEAN][primary], out["attack_avg"])
    return out


def set_entry(metrics: dict[str, float], records: Mapping, clean_records: Mapping | None, clean_metrics: dict | None, primary: str, task: str) -> dict:
    entry: dict[str, Any] = {"n": len(records), **metrics}
    if clean_records is not None and clean_metrics is not None:
        entry["drop"] = relative_drop(clean_metrics[primary], metrics[primary])
        # mc: the chosen option's index; span: answers after SQuAD (or, for Chinese, DuReader) normalization
        preds = lambda recs: {i: r["pred"] for i, r in recs.items()}  # noqa: E731
        entry["flip"] = flip_rate(preds(clean_records), preds(records), "mc" if task == "mc" else "auto")
        entry["paired"] = sum(i in clean_records for i in records)
    return entry


def build_report(*, task: str, suite: str, split: str, data: str | None, primary: str, seed: int,
                 sets: Mapping[str, Any], predictions: Mapping[str, Mapping[str, dict]],
                 checkpoints: Mapping[str, Any], metrics_of) -> dict[str, Any]:
    """The report of one evaluation: per set its provenance, per model and set the metrics, the
    drop and the flip against clean, and per model the attack average.

    ``sets``: name -> built set (``.examples``, ``.spec``, ``.fingerprint``, ``.cached``,
    ``.fallbacks``); ``predictions``: model -> set -> records; ``checkpoints``: model -> path(s);
    ``metrics_of``: records -> metrics (the task module's)."""
    report: dict[str, Any] = {
        "task": task, "suite": suite, "split": split, "data": data,
        "primary": primary, "seed": seed, "models": {}, "sets": {}, "notes": [],
    }
    for s in sets.values():
        report["sets"][s.name] = {
            "n": len(s.examples), "source": s.spec.file or s.spec.attack or CLEAN, "fingerprint": s.fingerprint,
            "cached": s.cached, "unchanged": s.fallbacks,
        }
    for model, per_set in predictions.items():
        entry: dict[str, Any] = {"ckpt": checkpoints[model], "sets": {}}
        clean_records = per_set.get(CLEAN)
        clean_metrics = metrics_of(clean_records) if clean_records else None
        for set_name, records in per_set.items():
            if not records:
                continue
            paired = set_name != CLEAN and clean_records is not None
            entry["sets"][set_name] = set_entry(
                metrics_of(records), records, clean_records if paired else None, clean_metrics if paired else None, primary, task
            )
        entry.update(model_summary(entry["sets"], primary))
        report["models"][model] = entry
    return report


def headline_metrics(report: Mapping[str, Any], model: str) -> dict[str, float]:
    """``metrics.json`` of an evaluation: ``<split>/<metric>`` for the clean set and
    ``<split>/<set>/<metric>`` (and drop, flip) for the others, of ``model``."""
    split = report["split"]
    metrics: dict[str, float] = {}
    for set_name, m in report["models"][model]["sets"].items():
        prefix = f"{split}/" if set_name == CLEAN else f"{split}/{set_name}/"
        for key in ("acc", "em", "f1", "n", "drop", "flip"):
            if key in m:
                metrics[prefix + key] = float(m[key])
    if "attack_avg" in report["models"][model]:
        metrics[f"{split}/attack_avg"] = float(report["models"][model]["attack_avg"])
    return metrics


def report_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Flat rows (model, set, n, metrics..., drop, flip) in model then suite order."""
    rows = []
    metric_names = ["acc"] if report["task"] == "mc" else ["em", "f1"]
    for model, entry in report["models"].items():
        for set_name, m in entry["sets"].items():
            row = {"model": model, "set": set_name, "n": int(m.get("n", 0))}
            for k in metric_names:
                row[k] = float(m.get(k, float("nan")))
            row["drop"] = float(m.get("drop", 0.0))
            row["flip"] = float(m.get("flip", 0.0))
            rows.append(row)
        if "attack_avg" in entry:
            row = {"model": model, "set": "attack avg", "n": 0}
            for k in metric_names:
                row[k] = entry["attack_avg"] if k == report["primary"] else float("nan")
            row["drop"] = float(entry.get("attack_avg_drop", 0.0))
            row["flip"] = float("nan")
            rows.append(row)
    return rows


def _csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def markdown(report: Mapping[str, Any]) -> str:
    rows = report_rows(report)
    lines = [f"# Robustness report: suite {report.get('suite')} ({report.get('split')})", ""]
    lines.append(f"Primary metric `{report['primary']}`; drop = relative to clean; flip = share of predictions changed against clean.")
    lines += ["", format_table(rows)]
    for note in report.get("notes", []):
        lines.append(f"- {note}")
    diagnostics = report.get("diagnostics") or {}
    if diagnostics:
        lines += ["", "## Diagnostics", "", "```json", json.dumps(diagnostics, indent=2, ensure_ascii=False)[:20000], "```"]
    return "\n".join(lines) + "\n"


def plot_report(report: Mapping[str, Any], path: str | Path) -> Path:
    """Grouped bars: the primary metric per set (x) and model (bars)."""
    primary = report["primary"]
    models = list(report["models"])
    sets = list(next(iter(report["models"].values()))["sets"]) if models else []
    fig, ax = new_figure(max(4.0, 1.1 * len(sets) * max(1, len(models)) ** 0.5 + 2), 3.6)
    width = 0.8 / max(1, len(models))
    for j, model in enumerate(models):
        values = [report["models"][model]["sets"].get(s, {}).get(primary, 0.0) for s in sets]
        xs = [i + (j - (len(models) - 1) / 2) * width for i in range(len(sets))]
        ax.bar(xs, values, width=width, label=model)
    ax.set_xticks(range(len(sets)))
    ax.set_xticklabels(sets, rotation=30, ha="right")
    ax.set_ylabel(primary)
    ax.set_title(f"suite {report.get('suite')}: {primary} per set")
    if len(models) > 1:
        ax.legend(fontsize=8)
    return save_png(fig, path)


def write_report(report: Mapping[str, Any], out: str | Path) -> dict[str, Path]:
    """report.json, report.csv, report.md and robustness.png in ``out``; returns their paths."""
    out = Path(out)
    paths = {"json": out / "report.json", "csv": out / "report.csv", "md": out / "report.md", "png": out / "robustness.png"}
    atomic_write_text(paths["json"], json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(paths["csv"], _csv(report_rows(report)))
    atomic_write_text(paths["md"], markdown(report))
    plot_report(report, paths["png"])
    return paths
