"""The configuration: its schema (types, defaults, allowed values), the checks across settings, and
the command-line plumbing shared by the commands. The configs themselves are package data:
:data:`CONFIG_DIR` (``robust_mrc/conf``) is the one place that finds them."""

from pathlib import Path

#: the Hydra config groups and primary configs, shipped inside the package
CONFIG_DIR = Path(__file__).resolve().parents[1] / "conf"
