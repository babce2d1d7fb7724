"""The diagnostics of ``report.json`` as Markdown tables for ``report.md`` (see
:mod:`robust_mrc.evaluation.diagnose` for what each measures). Missing values (an empty
reliability bin, an error predictor without cross-validation, a NaN) are written as ``-``."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from robust_mrc.papers import cite
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


def _paper_table6(entry: Mapping[str, Any]) -> str:
    paper = entry.get("paper") or {}
    if not paper:
        return ""
    return ", ".join(f"{emb} {v[0]:.2f} / {v[1]:.2f}" for emb, v in paper.items() if emb != "perturbation" and isinstance(v, list))


def _score(p: Mapping[str, Any]) -> str:
    if p.get("micro_f1") is None:
        return MISSING
    return f"{p['micro_f1']:.4f} ± {p.get('micro_f1_std') or 0.0:.4f}"


def error_section(errors: Mapping[str, Any]) -> list[str]:
    """Wu et al. 2021 section 6: the error predictor's cross-validated scores (all rows, then per
    set, beside Table 6), its feature importances sorted (beside what Figure 6 says), the median
    readability (beside Table 5), then accuracy by question type, answer and context length per
    model and set."""
    lines = [f"### Error prediction ({cite('wu')} section 6)", ""]
    predictor = errors.get("predictor") or {}
    models = ", ".join(f"`{m}` ({t})" for m, t in (errors.get("models") or {}).items())
    lines += [
        f"{errors.get('n', 0)} rows (model x set x question) from the sets {', '.join(f'`{s}`' for s in errors.get('sets') or [])}; "
        f"{errors.get('n_errors', 0)} errors (wrong: {errors.get('error') or 'the model is wrong'}). "
        f"Training amount: {models or MISSING}. Features: {', '.join(errors.get('features') or [])}.",
        "",
        f"Gradient boosting with XGBoost's defaults, {predictor.get('folds') or MISSING}-fold shuffled cross-validation: "
        f"micro F1 (mean ± std over the folds) against the majority class; {cite('wu')} Table 6 (SQuAD, majority / micro F1) "
        "beside the sets of its perturbation types.",
        "",
    ]
    fits = [("all sets", predictor), *((f"`{s}`", p) for s, p in (errors.get("by_set") or {}).items())]
    lines += _table(
        [
            {
                "rows": name,
                "n": p.get("n"),
                "errors": p.get("n_errors"),
                "folds": p.get("folds"),
                "micro F1": _score(p),
                "majority": p.get("baseline_micro_f1"),
                "error F1": p.get("error_f1"),
                "AUC": p.get("auc"),
                "top columns": ", ".join(f"{c} ({v:.2f})" for c, v in (p.get("importances") or [])[:3]),
                f"{cite('wu')} Table 6": _paper_table6(p),
            }
            for name, p in fits
        ]
    )
    figure6 = (errors.get("paper") or {}).get("figure6") or {}
    grouped = predictor.get("feature_importance") or []
    if grouped:
        constant = set(predictor.get("constant") or [])
        lines += ["", "Feature importance (gain, summed over a feature's one-hot columns; all rows), sorted", ""]
        lines += _table(
            [
                {
                    "feature": f + (" (constant)" if f in constant else ""),
                    "importance": float(v),
                    f"{cite('wu')} Figure 6": figure6.get(f, ""),
                }
                for f, v in grouped
            ]
        )
        lines += ["", "Top columns (all rows), as Figure 6", ""]
        lines += _table([{"column": c, "importance": float(v)} for c, v in (predictor.get("importances") or [])[:10]])
    for name, p in fits:
        if p.get("warning"):
            lines += ["", f"Note ({name}): {p['warning']}"]
    readability = errors.get("readability") or {}
    if readability:
        paper = readability.get("paper") or {}
        lines += ["", "Median Flesch-Kincaid grade of the contexts (Table 5)", ""]
        lines += _table(
            [{"data": "this evaluation", "correct": readability.get("correct"), "errors": readability.get("error")}]
            + [{"data": f"{cite('wu')} {d}", "correct": v.get("correct"), "errors": v.get("error")} for d, v in paper.items()]
        )
    for model, tables in (errors.get("accuracy") or {}).items():
        set_names = list(dict.fromkeys(s for t in tables.values() for s in t))
        rows = []
        labels = (("question_type", "question type"), ("answer_length", "model answer words"), ("context_length", "context words"))
        for key, label in labels:
            per_set = tables.get(key) or {}
            for value in dict.fromkeys(g for s in set_names for g in per_set.get(s, {})):
                row: dict[str, Any] = {"feature": label, "value": value}
                for s in set_names:
                    g = per_set.get(s, {}).get(value)
                    row[s] = f"{g['acc']:.3f} ({g['n']})" if g else MISSING
                rows.append(row)
        lines += ["", f"Accuracy (n) of `{model}` per set", ""] + _table(rows)
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
