"""The ``robust-mrc`` command answers its help and ``attacks list`` without loading the models'
libraries (Lightning, transformers), and lists every subcommand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from robust_mrc.cli import main
code = main(sys.argv[1:])
heavy = [m for m in ("pytorch_lightning", "lightning", "transformers") if m in sys.modules]
print("LOADED", heavy)
sys.exit(code)
"""


@pytest.mark.parametrize("argv", [["--help"], ["attacks", "list"]])
def test_help_and_the_attack_list_do_not_import_the_models(argv):
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout, done.stdout[-500:]
    if argv == ["--help"]:
        from robust_mrc.cli import COMMANDS

        assert all(f"robust-mrc {name}" in done.stdout for name in COMMANDS)
    else:
        assert "addsent" in done.stdout and "charswap" in done.stdout


def test_an_unknown_command_is_named_with_the_known_ones(capsys):
    from robust_mrc.cli import main

    assert main(["trian"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: unknown command 'trian'; one of train, evaluate, attacks") and "\n" not in err
