"""A training process's C heap gives freed activations back (robust_mrc/core/malloc.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# blocks of 1-7 MiB (a step's activations of changing shapes) between small live tensors, freed
PROGRAM = """
import sys
import torch
from robust_mrc.core.malloc import bound_heap

def rss_mb():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) // 1024

if sys.argv[1] == "bounded":
    assert bound_heap()
torch.empty(8 << 20, dtype=torch.uint8).fill_(1)  # freed at once: glibc's mmap threshold rises to 8 MiB
start = rss_mb()
blocks = [torch.empty((1 + i % 7) << 20, dtype=torch.uint8).fill_(1) for i in range(60)]
small = [torch.empty(1000).fill_(1) for _ in range(60)]
peak = rss_mb()
del blocks
print(start, peak, rss_mb())
"""


def run(mode: str) -> tuple[int, int, int]:
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}  # no MALLOC_* settings from outside
    out = subprocess.run([sys.executable, "-c", PROGRAM, mode], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    start, peak, end = map(int, out.stdout.split())
    return start, peak, end


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
def test_bound_heap_gives_freed_blocks_back_where_glibc_keeps_them():
    start, peak, end = run("default")
    assert peak - start > 200 and end - start > 150  # glibc keeps the freed blocks in its heap
    start, peak, end = run("bounded")
    assert peak - start > 200 and end - start < 30  # with bound_heap they go back to the system
