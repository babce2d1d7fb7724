"""A process's C heap gives freed activations back when trimmed (robust_mrc/core/malloc.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# blocks of 1-7 MiB (a step's activations of changing shapes) between small live tensors, freed
PROGRAM = """
import torch
from robust_mrc.core.malloc import trim

def rss_mb():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) // 1024

torch.empty(8 << 20, dtype=torch.uint8).fill_(1)  # freed at once: glibc's mmap threshold rises to 8 MiB
start = rss_mb()
blocks = [torch.empty((1 + i % 7) << 20, dtype=torch.uint8).fill_(1) for i in range(60)]
small = [torch.empty(1000).fill_(1) for _ in range(60)]
peak = rss_mb()
del blocks
kept = rss_mb()
assert trim()
print(start, peak, kept, rss_mb())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
def test_trim_gives_back_the_freed_blocks_glibc_keeps():
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}  # no MALLOC_* settings from outside
    out = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    start, peak, kept, trimmed = map(int, out.stdout.split())
    assert peak - start > 200 and kept - start > 150  # glibc keeps the freed blocks in its heap
    assert trimmed - start < 30  # trim gives them back
