"""Training policy x test set: the layout of seed 000 Table 6, from finished runs.

Each run directory holds ``metrics.json`` and ``config.yaml`` (written by ``train``). A row per
run (named by its attack policy), a column per evaluation set (clean first, then each attack, then
the average over attacks), values of one metric (``acc`` for multiple choice, ``f1`` / ``em`` for
span QA) from one stage (``test``, or ``val`` when a run has no test metrics).

    python -m robust_mrc.reports.compare outputs/clean outputs/addsent outputs/mix --out table6.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from omegaconf import OmegaConf

from robust_mrc.data.writers import atomic_write_bytes
from robust_mrc.reports.tables import format_table


def load_run(run_dir: str | Path) -> tuple[str, str, dict]:
    """(row name, task, metrics) of a run directory."""
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.json"
    if not metrics_path.is_file():
        raise FileNotFoundError(f"{run_dir}: no metrics.json (is it a finished train run?)")
    metrics = json.loads(metrics_path.read_text())
    name, task = run_dir.name, "mc"
    if (run_dir / "config.yaml").is_file():
        cfg = OmegaConf.load(run_dir / "config.yaml")
        name = str(OmegaConf.select(cfg, "attack.name", default=name))
        task = str(OmegaConf.select(cfg, "task.name", default=task))
    return name, task, metrics


def comparison_rows(runs: list[tuple[str, dict]], metric: str, stage: str | None = None) -> list[dict]:
    """One row per run: ``{"training": name, "clean": x, <attack>: x, ..., "attack avg": x}``."""
    rows = []
    for name, metrics in runs:
        st = stage or ("test" if f"test/{metric}" in metrics else "val")
        row: dict = {"training": name, "clean": metrics.get(f"{st}/{metric}")}
        attacks = sorted(
            k[len(st) + 1 : -len(metric) - 1]
            for k in metrics
            if k.startswith(f"{st}/") and k.endswith(f"/{metric}") and k.count("/") == 2
        )
        for attack in attacks:
            row[attack] = metrics[f"{st}/{attack}/{metric}"]
        values = [row[a] for a in attacks]
        row["attack avg"] = sum(values) / len(values) if values else None
        rows.append(row)
    columns = ["training", "clean"] + sorted({c for r in rows for c in r} - {"training", "clean", "attack avg"}) + ["attack avg"]
    return [{c: ("-" if r.get(c) is None else r[c]) for c in columns} for r in rows]


def main(argv: list[str] | None = None) -> str:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="run directories of train.py")
    p.add_argument("--metric", default=None, help="acc (mc, default) | f1 (span, default) | em")
    p.add_argument("--stage", default=None, choices=["val", "test"])
    p.add_argument("--out", default=None, help="also write the table here (Markdown)")
    args = p.parse_args(argv)
    loaded = [load_run(r) for r in args.runs]
    metric = args.metric or ("f1" if loaded[0][1] == "span" else "acc")
    table = format_table(comparison_rows([(n, m) for n, _, m in loaded], metric, args.stage))
    print(table)
    if args.out:
        atomic_write_bytes(Path(args.out), table.encode())
    return table


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
