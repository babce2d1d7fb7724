"""Start-up time of the commands, as ratios to ``python -c "import torch"`` measured in the same run.

    python benchmarks/startup.py [--rounds 5]

Each command runs ``--rounds`` times, interleaved with the baseline (the machine's noise hits both
alike); printed: the median wall time of each and its ratio to the baseline's median. Targets
(docs/architecture.md): ``robust-mrc --help`` and ``robust-mrc attacks list`` below 1.0 (they load
no model library), ``python train.py --help`` at most 1.5. Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BASELINE = ("import torch", [sys.executable, "-c", "import torch"])


def commands() -> list[tuple[str, list[str], float]]:
    """(name, argv, target ratio) of each command timed; ``robust-mrc`` from the PATH, else the module."""
    script = shutil.which("robust-mrc")
    command = [script] if script else [sys.executable, "-m", "robust_mrc.cli"]
    return [
        ("robust-mrc --help", [*command, "--help"], 1.0),
        ("robust-mrc attacks list", [*command, "attacks", "list"], 1.0),
        ("python train.py --help", [sys.executable, str(REPO / "train.py"), "--help"], 1.5),
    ]


def wall(argv: list[str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit status {done.returncode}\n{done.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    timed = commands()
    times: dict[str, list[float]] = {BASELINE[0]: [], **{name: [] for name, _, _ in timed}}
    wall(BASELINE[1])  # the first import fills the file cache: not timed
    for _ in range(args.rounds):
        times[BASELINE[0]].append(wall(BASELINE[1]))
        for name, command, _ in timed:
            times[name].append(wall(command))
    base = statistics.median(times[BASELINE[0]])
    rows = {BASELINE[0]: {"seconds": round(base, 3), "ratio": 1.0}}
    print(f"{'command':<28} {'median s':>9} {'ratio':>6}  target")
    print(f"{BASELINE[0]:<28} {base:>9.3f} {1.0:>6.2f}  (baseline)")
    for name, _, target in timed:
        median = statistics.median(times[name])
        ratio = median / base
        rows[name] = {"seconds": round(median, 3), "ratio": round(ratio, 2), "target": target, "met": ratio <= target}
        print(f"{name:<28} {median:>9.3f} {ratio:>6.2f}  <= {target} {'met' if ratio <= target else 'NOT MET'}")
    print(json.dumps({"rounds": args.rounds, "results": rows}))
    return rows


if __name__ == "__main__":
    main()
