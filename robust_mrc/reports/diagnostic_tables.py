"""The diagnostics of ``report.json`` as Markdown tables for ``report.md`` (see
:mod:`robust_mrc.evaluation.diagnose` for what each measures). Missing values (an empty
reliability bin, an error predictor without cross-validation, a NaN) are written as ``-``."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from robust_mrc.reports.tables import format_table

MISSING = "-"


def cell(value: Any, digits: int = 4) -> str:
    """A table cell: floats with ``digits`` decimals, ``-`` for None and NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return " ".join(str(value).split()).replace("|", "\\|")  # one line; a pipe would split the cell


def _table(rows: list[dict[str, Any]]) -> list[str]:
    return [format_table([{k: cell(v) for k, v in r.items()} for r in rows])] if rows else []


def confidence_section(conf: Mapping[str, Any]) -> list[str]:
    lines = ["### Confidence and calibration (clean set)", ""]
    lines += _table(
        [
            {
                "model": m,
                "n": c.get("n"),
                "mean confidence": c.get("mean_confidence"),
                "accuracy": c.get("accuracy"),
                f"high-confidence error rate (>= {c.get('threshold', 0.9)})": c.get("high_confidence_error_rate"),
                "ECE": c.get("ece"),
            }
            for m, c in conf.items()
        ]
    )
    for model, c in conf.items():
        bins = [b for b in c.get("bins", []) if b.get("count")]
        lines += ["", f"Reliability bins of `{model}` (non-empty bins)" + (f"; diagram: `{c['plot']}`" if c.get("plot") else ""), ""]
        lines += _table(
            [
                {
                    "confidence": f"{b['lo']:.1f}-{b['hi']:.1f}",
                    "count": b["count"],
                    "mean confidence": b.get("mean_conf"),
                    "accuracy": b.get("accuracy"),
                }
                for b in bins
            ]
        )
    return lines


def error_section(errors: Mapping[str, Any]) -> list[str]:
    lines = ["### Error analysis (clean set)", ""]
    for model, e in errors.items():
        rows = [
            {"feature": label, "value": value, "n": g.get("n"), "accuracy": g.get("acc")}
            for key, label in (
                ("by_question_type", "question type"),
                ("by_answer_length", "answer words"),
                ("by_context_length", "context words"),
            )
            for value, g in (e.get(key) or {}).items()
        ]
        lines += [f"Accuracy of `{model}` by question type, answer length and context length", ""] + _table(rows) + [""]
    predictors = {m: e["error_predictor"] for m, e in errors.items() if e.get("error_predictor")}
    if predictors:
        lines += ["Error predictor (gradient boosting, k-fold) against the majority baseline", ""]
        lines += _table(
            [
                {
                    "model": m,
                    "status": p.get("status"),
                    "n": p.get("n"),
                    "errors": p.get("n_errors"),
                    "folds": p.get("folds"),
                    "F1 (errors)": p.get("f1"),
                    "accuracy": p.get("accuracy"),
                    "baseline F1": p.get("baseline_f1"),
                    "baseline accuracy": p.get("baseline_accuracy"),
                    "majority": p.get("majority"),
                }
                for m, p in predictors.items()
            ]
        )
        for m, p in predictors.items():
            top = ", ".join(f"{name} ({weight:.3f})" for name, weight in (p.get("top_features") or [])[:5])
            if top:
                lines += ["", f"Top features of `{m}`: {top}"]
            if p.get("warning"):
                lines += ["", f"Note (`{m}`): {p['warning']}"]
    return lines


def pq_section(pq: Mapping[str, Any]) -> list[str]:
    rows = [
        {
            "model": m,
            "options only": p.get("options_only"),
            "accuracy": p.get("acc"),
            "chance": p.get("chance"),
            "above chance": p.get("above_chance"),
            "note": p.get("note") or "",
        }
        for m, p in pq.items()
    ]
    return ["### PQ-remove (options-only accuracy against chance)", "", *_table(rows)]


def dpr_section(dpr: Mapping[str, Any]) -> list[str]:
    lines = ["### Different-prediction ratio (paraphrased sets against clean)", ""]
    if "note" in dpr:
        return lines + [str(dpr["note"])]
    rows = [
        {"model": m, "set": s, "n": r.get("n"), "changed": r.get("n_changed"), "DPR": r.get("dpr"), "missing": r.get("n_missing")}
        for m, per_set in dpr.items()
        for s, r in per_set.items()
    ]
    return lines + (_table(rows) or ["no DPR set was predicted"])


def magnet_section(info: Mapping[str, Any]) -> list[str]:
    lines = ["### Magnet screening (interference score T of pool options)", ""]
    summary = {
        "model": info.get("model"),
        "questions": info.get("questions"),
        "pool": info.get("pool"),
        "pairs": info.get("pairs"),
        "pairs/s": info.get("pairs_per_s"),
        "mean T": info.get("mean_T"),
    }
    lines += _table([summary]) + [
        "",
        "Top options" + (f" (all in {', '.join(f'`{f}`' for f in info['files'])})" if info.get("files") else ""),
        "",
    ]
    return lines + _table([{"rank": i, "option": t.get("option"), "T": t.get("T")} for i, t in enumerate(info.get("top") or [], 1)])


SECTIONS = {
    "confidence": confidence_section,
    "error_analysis": error_section,
    "pq_remove": pq_section,
    "dpr": dpr_section,
    "magnet_screen": magnet_section,
}


def diagnostics_markdown(diagnostics: Mapping[str, Any]) -> list[str]:
    """``## Diagnostics`` with one section of tables per diagnostic (in :data:`SECTIONS` order);
    a diagnostic without a section of its own is shown as JSON."""
    if not diagnostics:
        return []
    lines = ["## Diagnostics"]
    for name in [*(k for k in SECTIONS if k in diagnostics), *(k for k in diagnostics if k not in SECTIONS)]:
        section = SECTIONS.get(name)
        body = (
            section(diagnostics[name])
            if section
            else [f"### {name}", "", "```json", json.dumps(diagnostics[name], indent=2, ensure_ascii=False), "```"]
        )
        lines += ["", *body]
    return lines
