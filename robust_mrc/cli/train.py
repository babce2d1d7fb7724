"""``robust-mrc train [task=mc|span|dg] [model=...] [data=...] [attack=...] [trainer=...] [KEY=VALUE ...]``
(also ``python train.py ...``): :func:`robust_mrc.jobs.train.train` under ``@hydra.main`` with
``robust_mrc/conf/config.yaml``, the distractor banks of ``bank: auto`` made by
:func:`robust_mrc.jobs.extractor.distractor_banks`.

A mistake in the command line, the config or the data prints one line, ``Error: <message>``, and
exits with status 1; ``HYDRA_FULL_ERROR=1`` shows the whole traceback. Hydra's flags work
(``--help``, ``--cfg job``, ``--multirun``); the value of ``monitor`` is returned for sweepers.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import hydra
from omegaconf import DictConfig

from robust_mrc.cli.common import app_help, refuse_hydra_settings_in_sweep, run_command
from robust_mrc.config import CONFIG_DIR
from robust_mrc.config.compose import register_resolvers
from robust_mrc.core.errors import run_with_one_line_errors


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="config")
def train_app(cfg: DictConfig) -> float | None:
    from robust_mrc.jobs.train import train
    from robust_mrc.models import MODULES

    metrics = run_command(train, cfg)
    monitor = cfg.monitor or MODULES[cfg.task.name].monitor
    return metrics.get(monitor)  # for Hydra sweepers


def main(argv: Sequence[str] | None = None) -> None:
    """Train with the command line ``argv`` (default: this process's)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    run_with_one_line_errors(refuse_hydra_settings_in_sweep, argv)  # before Hydra reads them (and makes a run directory)
    register_resolvers()
    if run_command(app_help, "config", argv, "train"):  # Hydra's --help text, without its seconds of listing
        return
    saved = sys.argv
    sys.argv = [saved[0] if saved else "train", *argv]  # what @hydra.main reads
    try:
        train_app()
    finally:
        sys.argv = saved
