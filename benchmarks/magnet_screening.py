"""Magnet screening throughput (Lin, Zou & Ding 2021 (magnet options)): option-question pairs scored
per second, by pool size, and what a cached re-run costs, measured in the same run.

    python benchmarks/magnet_screening.py --ckpt RUN/checkpoints/best.ckpt --questions 10 --pools 20,40,80

Each pool size runs ``evaluate`` with ``magnet_screen.enabled=true`` on a fresh cache, then again on
the same cache. Printed: pairs, seconds, pairs/s, the ratio of each size's pairs/s to the smallest
pool's (1.0 = linear scaling), and the cached re-run's screening time as a share of the first.
Any multiple-choice checkpoint works (throughput depends on the architecture and lengths, not on
the weights); data defaults to the RACE-M file of ../shared (``--data synthetic_mc`` needs nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robust_mrc.config.compose import compose_config  # noqa: E402
from robust_mrc.jobs.evaluate import evaluate  # noqa: E402


def screening(ckpt: str, data: str, questions: int, pool: int, cache: Path, out: Path, extra: list[str]) -> tuple[dict, float]:
    cfg = screening_config(ckpt, data, questions, pool, cache, out, extra)
    started = time.perf_counter()
    evaluate(cfg)
    total = time.perf_counter() - started
    return json.loads((out / "report.json").read_text())["diagnostics"]["magnet_screen"], total


def screening_config(ckpt: str, data: str, questions: int, pool: int, cache: Path, out: Path, extra: list[str]):
    """The evaluation config of one screening run, composed as evaluate.py composes it."""
    overrides = [
        f"ckpt_path={ckpt}",
        f"data={data}",
        f"cache_dir={cache}",
        f"output_dir={out}",
        "diagnostics=[]",
        "magnet_screen.enabled=true",
        f"magnet_screen.questions={questions}",
        f"magnet_screen.max_pool={pool}",
        "magnet_screen.attack_top=false",
        *extra,
    ]
    return compose_config(None, "eval", overrides)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--data", default="race_local")
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--pools", default="20,40,80")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--split", default="validation")
    args, extra = ap.parse_known_args()
    extra = [*extra, f"eval_batch_size={args.batch_size}", f"split={args.split}"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for pool in (int(p) for p in args.pools.split(",")):
            cache = Path(tmp) / f"cache{pool}"
            first, _ = screening(args.ckpt, args.data, args.questions, pool, cache, Path(tmp) / f"a{pool}", extra)
            again, _ = screening(args.ckpt, args.data, args.questions, pool, cache, Path(tmp) / f"b{pool}", extra)
            rows.append((pool, first["pairs"], first["seconds"], first["pairs_per_s"], again["seconds"]))
    base = rows[0][3]
    print(f"\n{'pool':>6} {'pairs':>7} {'seconds':>9} {'pairs/s':>9} {'vs first':>9} {'cached s':>9} {'cached/first':>12}")
    for pool, pairs, sec, pps, cached in rows:
        print(f"{pool:>6} {pairs:>7} {sec:>9.2f} {pps:>9.1f} {pps / base:>8.2f}x {cached:>9.3f} {cached / sec:>12.4f}")


if __name__ == "__main__":
    main()
