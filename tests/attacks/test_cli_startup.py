"""`python -m robust_mrc.attacks list` answers without loading the models' libraries (Lightning)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import runpy, sys
sys.argv = ["robust_mrc.attacks", "list"]
try:
    runpy.run_module("robust_mrc.attacks", run_name="__main__")
except SystemExit as done:
    assert not done.code, done.code
print("LOADED", "pytorch_lightning" in sys.modules)
"""


def test_listing_the_attacks_does_not_import_lightning():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "addsent" in done.stdout and "charswap" in done.stdout
    assert "LOADED False" in done.stdout, done.stdout[-500:]
