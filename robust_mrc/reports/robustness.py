"""The robustness report: per model and set the metrics, the relative drop against clean and the
share of flipped predictions; written as JSON, CSV, Markdown, a PNG bar chart and a self-contained
HTML page with the examples behind the numbers (:mod:`robust_mrc.reports.html`).

``report.json`` layout::

    {"task": "mc", "suite": "advrace", "split": "test", "primary": "acc",
     "models": {"best": {"ckpt": "...", "sets": {"clean": {"n": 200, "acc": 0.61, "ci95": [0.54, 0.68],
                                                          "drop": 0.0, "flip": 0.0, ...}, "addsent": {...}},
                         "attack_avg": 0.48, "attack_avg_drop": 0.21}},
     "sets": {"diagnosis": {"probe": true, ...}, ...},
     "diagnostics": {...}}

``drop`` = (clean - attacked) / clean of the primary metric (0 when clean is 0); ``flip`` = share
of the examples present in both sets whose prediction differs from the clean one (multiple
choice: the chosen option's index, attacks keep the label's position; span QA: the answer text
after SQuAD normalization).

Cue probes (``diagnosis``, ``extraction_cue``, ``magnet_cue``, ``addsent_cue``: an attack's surface
mark on the gold side, :func:`robust_mrc.attacks.is_probe`) are marked ``"probe": true`` in
``sets``, left out of the attack average, and their entries get ``shortcut`` = the probe's primary
metric minus clean on the same questions: a reader holds or gains (>= 0), a model that learnt the
mark falls (< 0). The tables show it in a "shortcut" column.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from robust_mrc.attacks import is_probe
from robust_mrc.data.writers import atomic_write_text
from robust_mrc.diagnostics.dpr import different_prediction_ratio
from robust_mrc.diagnostics.drops import relative_drop
from robust_mrc.diagnostics.figures import new_figure, save_png
from robust_mrc.metrics.adversarial import adversarial_scores, original_id
from robust_mrc.reports.charts import bar_chart
from robust_mrc.reports.diagnostic_tables import diagnostics_markdown
from robust_mrc.reports.examples import PER_SET
from robust_mrc.reports.html import browser_html, contents, embedded_image, markdown_html, page
from robust_mrc.reports.intervals import bootstrap_ci, question_scores
from robust_mrc.reports.tables import format_table

CLEAN = "clean"


AVERAGED = ("acc", "em", "f1", "flip")


def model_summary(set_metrics: dict[str, dict], primary: str, probes: Collection[str] = ()) -> dict[str, Any]:
    """``attack_avg`` (the primary metric averaged over the attacked sets, the cue ``probes`` left
    out), its relative drop ``attack_avg_drop`` and absolute ``attack_avg_abs_drop`` against clean,
    and ``attack_means``: the mean of every metric over the attacked sets (the report's "attack avg" row)."""
    attacked = [m for name, m in set_metrics.items() if name != CLEAN and name not in probes and primary in m]
    out: dict[str, Any] = {}
    if attacked:
        out["attack_avg"] = sum(m[primary] for m in attacked) / len(attacked)
        out["attack_means"] = {k: sum(m[k] for m in attacked) / len(attacked) for k in AVERAGED if all(k in m for m in attacked)}
        if CLEAN in set_metrics:
            out["attack_avg_drop"] = relative_drop(set_metrics[CLEAN][primary], out["attack_avg"])
            out["attack_avg_abs_drop"] = set_metrics[CLEAN][primary] - out["attack_avg"]
    return out


def set_entry(
    records: Mapping[str, dict],
    clean_records: Mapping[str, dict] | None,
    *,
    metrics_of,
    primary: str,
    task: str,
    metric: str = "squad_v1",
    adversarial: bool = False,
    order: Sequence[str] | None = None,
    model_set: bool = False,
    seed: int = 0,
) -> dict:
    """Metrics of one set and, against the clean set, ``drop`` (relative), ``abs_drop`` (clean -
    attacked) and ``flip`` over the paired questions.

    Pairing: an attacked set's question with the clean question of the same id; in an
    ``adversarial`` set (Jia & Liang's files: variants ``<original id>-<suffix>``) each variant
    with its original, and the set also gets ``orig_em/orig_f1/adv_em/adv_f1`` by their grouped
    rules (:mod:`robust_mrc.metrics.adversarial`, in the data file's ``order``), which the drop
    then compares. A model-in-the-loop set (one adversarial variant per question) reports
    ``orig_*`` (clean, same questions) and ``adv_*`` (the set) the same way.

    ``ci95``: the 95 % bootstrap interval of the primary metric over the set's questions
    (:mod:`robust_mrc.reports.intervals`, seeded with ``seed``); ``abs_drop_ci95`` (sets with one
    attacked question per clean one): the paired interval of ``abs_drop``, resampling the questions'
    clean - attacked differences."""
    entry: dict[str, Any] = {"n": len(records), **metrics_of(records)}
    scores = question_scores(records, primary, metric)
    if scores:
        entry["ci95"] = bootstrap_ci(scores, seed=seed)
    if clean_records is None:
        return entry
    original = original_id if adversarial else (lambda i: i)
    pairs = [(original(i), i) for i in records if original(i) in clean_records]
    entry["paired"] = len(pairs)
    if not pairs:
        return entry
    paired_clean = metrics_of({o: clean_records[o] for o, _ in pairs})
    clean_value, attacked_value = paired_clean[primary], entry[primary]
    if adversarial and task == "span":
        ids = [i for i in (order or records) if i in records or original(i) in clean_records]
        preds = {i: r["pred"] for i, r in records.items()}
        golds = {i: records[i]["golds"] for i in ids if i in records}
        for o, _ in pairs:  # the originals, scored on the clean set, join their groups
            preds.setdefault(o, clean_records[o]["pred"])
            golds.setdefault(o, clean_records[o]["golds"])
        ordered = {i: golds[i] for i in dict.fromkeys([o for o, _ in pairs] + ids) if i in golds}
        grouped = adversarial_scores(preds, ordered, metric)
        entry.update(
            {
                "orig_em": grouped["orig_exact_match"],
                "orig_f1": grouped["orig_f1"],
                "adv_em": grouped["adv_exact_match"],
                "adv_f1": grouped["adv_f1"],
            }
        )
        clean_value, attacked_value = entry[f"orig_{primary}"], entry[f"adv_{primary}"]
    elif model_set and task == "span":
        entry.update({"orig_em": paired_clean["em"], "orig_f1": paired_clean["f1"], "adv_em": entry["em"], "adv_f1": entry["f1"]})
    entry["drop"] = relative_drop(clean_value, attacked_value)
    entry["abs_drop"] = clean_value - attacked_value
    if scores and not adversarial:  # one attacked question per clean one: a paired interval of the drop
        attacked_scores = dict(zip(records, scores))
        clean_scores = question_scores({o: clean_records[o] for o, _ in pairs}, primary, metric)
        if clean_scores:
            diffs = [c - attacked_scores[i] for c, (_, i) in zip(clean_scores, pairs)]
            entry["abs_drop_ci95"] = bootstrap_ci(diffs, seed=seed)
    # mc: the chosen option's index; span: answers compared under the task's scorer
    flip = different_prediction_ratio(
        {o: clean_records[o]["pred"] for o, _ in pairs}, {i: r["pred"] for i, r in records.items()}, pairs, "mc" if task == "mc" else metric
    )
    entry["flip"] = flip["dpr"]
    return entry


def build_report(
    *,
    task: str,
    suite: str,
    split: str,
    data: str | None,
    primary: str,
    seed: int,
    sets: Mapping[str, Any],
    predictions: Mapping[str, Mapping[str, dict]],
    checkpoints: Mapping[str, Any],
    metrics_of,
    metric: str = "squad_v1",
    model_sets: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The report of one evaluation: per set its provenance, per model and set the metrics, the
    drop and the flip against clean (:func:`set_entry`), and per model the attack average.

    ``sets``: name -> built set shared by all models (``.examples``, ``.spec``, ``.fingerprint``,
    ``.cached``, ``.fallbacks``); ``model_sets``: model -> name -> its own model-in-the-loop set;
    ``predictions``: model -> set -> records; ``checkpoints``: model -> path(s); ``metrics_of``:
    records -> metrics (the task module's); ``metric``: the span scorer's name."""
    model_sets = model_sets or {}
    report: dict[str, Any] = {
        "task": task,
        "suite": suite,
        "split": split,
        "data": data,
        "primary": primary,
        "metric": metric,
        "seed": seed,
        "models": {},
        "sets": {},
        "notes": [],
    }
    for s in sets.values():
        report["sets"][s.name] = _provenance(s, task)
    for model, own in model_sets.items():
        for s in own.values():
            entry = report["sets"].setdefault(s.name, {**_provenance(s, task), "by_model": {}})
            entry["by_model"][model] = {k: v for k, v in _provenance(s, task).items() if k not in ("n", "source", "probe")}
    probes = probe_sets(report)
    for model, per_set in predictions.items():
        entry: dict[str, Any] = {"ckpt": checkpoints[model], "sets": {}}
        clean_records = per_set.get(CLEAN)
        for set_name, records in per_set.items():
            if not records:
                continue
            built = sets.get(set_name) or model_sets.get(model, {}).get(set_name)
            spec = getattr(built, "spec", None)
            entry["sets"][set_name] = set_entry(
                records,
                clean_records if set_name != CLEAN else None,
                metrics_of=metrics_of,
                primary=primary,
                task=task,
                metric=metric,
                adversarial=bool(getattr(spec, "adversarial", False)),
                order=[ex.id for ex in built.examples] if built is not None else None,
                model_set=bool(getattr(spec, "model", False)),
                seed=seed,
            )
        add_shortcuts(entry["sets"], probes, primary)
        entry.update(model_summary(entry["sets"], primary, probes))
        report["models"][model] = entry
    return report


def probe_sets(report: Mapping[str, Any]) -> set[str]:
    """The names of the report's cue-probe sets."""
    return {name for name, info in report.get("sets", {}).items() if info.get("probe")}


def add_shortcuts(set_metrics: dict[str, dict], probes: Collection[str], primary: str) -> None:
    """Each probe's ``shortcut``: its ``primary`` metric minus clean's, on the same questions (the
    negated ``abs_drop``; without pairing, minus the clean set's)."""
    clean = set_metrics.get(CLEAN, {})
    for name in probes:
        m = set_metrics.get(name)
        if m is None or primary not in m:
            continue
        if "abs_drop" in m:
            m["shortcut"] = -m["abs_drop"]
        elif primary in clean:
            m["shortcut"] = m[primary] - clean[primary]


def _provenance(s, task: str) -> dict[str, Any]:
    info = {
        "n": len(s.examples),
        "source": s.spec.file or s.spec.attack or CLEAN,
        "fingerprint": s.fingerprint,
        "cached": s.cached,
        "unchanged": s.fallbacks,
    }
    if not s.spec.file and is_probe(s.spec.attack, task):
        info["probe"] = True
    if getattr(s, "search", None):
        info["search"] = s.search
    if getattr(s, "provenance", None):  # what ran: the attack, paper method or stand-in, its paper and resources
        info.update({k: s.provenance.get(k) for k in ("attack", "method", "paper", "resources")})
    return info


def what_ran(report: Mapping[str, Any]) -> list[dict[str, str]]:
    """One row per attacked or external set: the attack that made it, ``method`` ("paper": the
    paper's method; "stand-in": a substitute under its own name; "file"), the paper by name and the
    resources it drew on (neighbour source, bank, generator, option pool, screening model)."""
    rows = []
    for name, info in report.get("sets", {}).items():
        if name == CLEAN or "method" not in info:
            continue
        resources = info.get("resources") or {}
        if info.get("by_model"):  # a set made per model: each model's own resources (the top level repeats the first's)
            resources = {f"{k} ({model})": v for model, own in info["by_model"].items() for k, v in (own.get("resources") or {}).items()}
        rows.append(
            {
                "set": name,
                "attack": str(info.get("attack") or "-"),
                "method": str(info.get("method")),
                "paper": str(info.get("paper") or "-"),
                "resources": "; ".join(f"{k}: {v}" for k, v in resources.items()) or "-",
            }
        )
    return rows


def headline_metrics(report: Mapping[str, Any], model: str) -> dict[str, float]:
    """``metrics.json`` of an evaluation: ``<split>/<metric>`` for the clean set and
    ``<split>/<set>/<metric>`` (and drop, flip) for the others, of ``model``."""
    split = report["split"]
    metrics: dict[str, float] = {}
    for set_name, m in report["models"][model]["sets"].items():
        prefix = f"{split}/" if set_name == CLEAN else f"{split}/{set_name}/"
        for key in ("acc", "em", "f1", "n", "drop", "abs_drop", "flip", "orig_em", "orig_f1", "adv_em", "adv_f1", "shortcut"):
            if key in m:
                metrics[prefix + key] = float(m[key])
    if "attack_avg" in report["models"][model]:
        metrics[f"{split}/attack_avg"] = float(report["models"][model]["attack_avg"])
    return metrics


def report_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Flat rows (model, set, n, metrics..., drop, abs_drop, flip) in model then suite order;
    the "attack avg" row of a model holds the means over its attacked sets (not the cue probes).
    With cue probes, a last column "shortcut": a probe's metric minus clean (None on other rows)."""
    rows = []
    metric_names = ["acc"] if report["task"] == "mc" else ["em", "f1"]
    probes = probe_sets(report)
    for model, entry in report["models"].items():
        for set_name, m in entry["sets"].items():
            row = {"model": model, "set": set_name, "n": int(m.get("n", 0))}
            for k in metric_names:
                row[k] = float(m.get(k, 0.0))
            row["drop"] = float(m.get("drop", 0.0))
            row["abs_drop"] = float(m.get("abs_drop", 0.0))
            row["flip"] = float(m.get("flip", 0.0))
            if probes:
                row["shortcut"] = float(m["shortcut"]) if "shortcut" in m else None
            rows.append(row)
        if "attack_avg" in entry:
            means = entry.get("attack_means", {})
            attacked = [m for s, m in entry["sets"].items() if s != CLEAN and s not in probes]
            row = {"model": model, "set": "attack avg", "n": sum(int(m.get("n", 0)) for m in attacked)}
            for k in metric_names:
                row[k] = float(means.get(k, entry["attack_avg"] if k == report["primary"] else 0.0))
            row["drop"] = float(entry.get("attack_avg_drop", 0.0))
            row["abs_drop"] = float(entry.get("attack_avg_abs_drop", 0.0))
            row["flip"] = float(means.get("flip", 0.0))
            if probes:
                row["shortcut"] = None
            rows.append(row)
    return rows


def _csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _ci_column(report: Mapping[str, Any], rows: list[dict]) -> list[dict]:
    """The report rows with the 95 % interval of the primary metric after it and the paired one of
    ``abs_drop`` after that (``-`` where none)."""
    out = []
    for row in rows:
        entry = report["models"][row["model"]]["sets"].get(row["set"], {})
        ci, drop_ci = entry.get("ci95"), entry.get("abs_drop_ci95")
        cells = {}
        for k, v in row.items():
            cells[k] = v
            if k == report["primary"]:
                cells["95% CI"] = f"{ci[0]:.4f}-{ci[1]:.4f}" if ci else "-"
            if k == "abs_drop":
                cells["abs_drop 95% CI"] = f"{drop_ci[0]:.4f}-{drop_ci[1]:.4f}" if drop_ci else "-"
        out.append(cells)
    return out


def markdown(report: Mapping[str, Any]) -> str:
    """``report.md``: the robustness table (with 95 % intervals), the notes, and the diagnostics as
    tables (:mod:`robust_mrc.reports.diagnostic_tables`)."""
    rows = report_rows(report)
    lines = [f"# Robustness report: suite {report.get('suite')} ({report.get('split')})", ""]
    lines.append(
        f"Primary metric `{report['primary']}` (95% CI: bootstrap over questions; abs_drop's: paired, same questions); "
        "drop = relative to clean; "
        "flip = share of predictions changed against clean."
    )
    probes = probe_sets(report)
    if probes:
        lines += [
            "",
            f"Cue probes ({', '.join(sorted(probes))}): an attack's surface mark on the correct answer, not in the attack avg; "
            "shortcut = probe - clean on the same questions (a reader holds or gains; below 0: the model follows the mark).",
        ]
    lines += ["", format_table(_ci_column(report, rows)) if rows else "no predictions"]
    for note in report.get("notes", []):
        lines.append(f"- {note}")
    ran = what_ran(report)
    if ran:
        lines += [
            "",
            "## What ran",
            "",
            "method: `paper` = the paper's method; `stand-in` = a substitute under its own name; "
            "`probe` = a cue probe built like the paper's attack.",
            "",
        ]
        lines += [format_table(ran)]
    lines += diagnostics_markdown(report.get("diagnostics") or {})
    return "\n".join(lines) + "\n"


def plot_report(report: Mapping[str, Any], path: str | Path) -> Path:
    """Grouped bars: the primary metric per set (x) and model (bars), with the 95 % bootstrap
    interval of each bar as an error bar and each model's clean level as a dashed line."""
    primary = report["primary"]
    models = list(report["models"])
    sets = list(next(iter(report["models"].values()))["sets"]) if models else []
    fig, ax = new_figure(max(4.0, 1.1 * len(sets) * max(1, len(models)) ** 0.5 + 2), 3.6)
    width = 0.8 / max(1, len(models))
    for j, model in enumerate(models):
        entries = [report["models"][model]["sets"].get(s, {}) for s in sets]
        values = [e.get(primary, 0.0) for e in entries]
        xs = [i + (j - (len(models) - 1) / 2) * width for i in range(len(sets))]
        errors = [
            [max(0.0, v - e["ci95"][0]) if "ci95" in e else 0.0 for v, e in zip(values, entries)],
            [max(0.0, e["ci95"][1] - v) if "ci95" in e else 0.0 for v, e in zip(values, entries)],
        ]
        bars = ax.bar(xs, values, width=width, label=model, yerr=errors, capsize=3, error_kw={"linewidth": 0.8})
        clean = report["models"][model]["sets"].get(CLEAN, {}).get(primary)
        if clean is not None:
            ax.axhline(
                clean,
                color=bars.patches[0].get_facecolor() if bars.patches else None,
                linestyle="--",
                linewidth=1,
                label=f"clean ({model})" if len(models) > 1 else "clean",
            )
    ax.set_xticks(range(len(sets)))
    ax.set_xticklabels(sets, rotation=30, ha="right")
    ax.set_ylabel(primary)
    ax.set_title(f"suite {report.get('suite')}: {primary} per set (95% CI)")
    if models:
        ax.legend(fontsize=7)
    return save_png(fig, path)


def drop_charts(report: Mapping[str, Any]) -> str:
    """Per model, the absolute drop (clean - attacked) of each attacked set with its paired 95 %
    interval, and the cue probes' shortcut apart (probe - clean, its interval the drop's negated)."""
    probes = probe_sets(report)
    charts = []
    for model, entry in report["models"].items():
        sets = {name: m for name, m in entry["sets"].items() if name != CLEAN}
        attacks = [(name, m["abs_drop"], m.get("abs_drop_ci95")) for name, m in sets.items() if name not in probes and "abs_drop" in m]
        shortcuts = [
            (name, m["shortcut"], [-m["abs_drop_ci95"][1], -m["abs_drop_ci95"][0]] if m.get("abs_drop_ci95") else None)
            for name, m in sets.items()
            if name in probes and "shortcut" in m
        ]
        charts.append(bar_chart(attacks, title=f"{model}: drop of {report['primary']} per set (clean - attacked, 95% CI)", axis="abs_drop"))
        title = f"{model}: cue probes, shortcut (probe - clean, 95% CI)"
        charts.append(bar_chart(shortcuts, title=title, axis="shortcut", higher_is_worse=False))
    charts = [c for c in charts if c]
    return f'<h2 id="drop">Drop per set</h2><div class="charts">{"".join(charts)}</div>' if charts else ""


def html_report(
    report: Mapping[str, Any],
    examples: Mapping[str, Mapping[str, Any]] | None = None,
    images: Sequence[Path] = (),
    per_set: int = PER_SET,
) -> str:
    """``report.html``: :func:`markdown`'s report rendered as HTML (the same numbers), the drop
    charts after the table, the diagnostics' figures, then the examples browser
    (``examples``: :func:`robust_mrc.reports.examples.browser_sets`)."""
    md = markdown(report)
    cut = md.find("\n## ")
    head, rest = (md, "") if cut < 0 else (md[:cut], md[cut:])
    figures = "".join(embedded_image(Path(p), Path(p).stem.replace("_", " ")) for p in images)
    body = [markdown_html(head), drop_charts(report), markdown_html(rest)]
    if figures:
        body.append(f'<h2 id="figures">Figures</h2><div class="charts">{figures}</div>')
    body.append(browser_html(examples or {}, per_set))
    html = "\n".join(b for b in body if b)
    html = html.replace("</h1>", "</h1>" + contents(html), 1)
    return page(f"Robustness report: suite {report.get('suite')} ({report.get('split')})", html)


def write_report(
    report: Mapping[str, Any],
    out: str | Path,
    examples: Mapping[str, Mapping[str, Any]] | None = None,
    images: Sequence[Path] = (),
    per_set: int = PER_SET,
) -> dict[str, Path]:
    """report.json, report.csv, report.md, robustness.png and report.html (:func:`html_report`:
    ``examples``, ``images``) in ``out``; returns their paths."""
    out = Path(out)
    paths = {
        "json": out / "report.json",
        "csv": out / "report.csv",
        "md": out / "report.md",
        "png": out / "robustness.png",
        "html": out / "report.html",
    }
    atomic_write_text(paths["json"], json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(paths["csv"], _csv(report_rows(report)))
    atomic_write_text(paths["md"], markdown(report))
    plot_report(report, paths["png"])
    atomic_write_text(paths["html"], html_report(report, examples, images, per_set))
    return paths
