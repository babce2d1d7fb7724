"""``robust-mrc train [task=mc|span|dg] [model=...] [data=...] [attack=...] [trainer=...] [KEY=VALUE ...]``
(also ``python train.py ...``): :func:`robust_mrc.jobs.train.train` under ``@hydra.main`` with
``robust_mrc/conf/config.yaml``, the distractor banks of ``bank: auto`` made by
:func:`robust_mrc.jobs.extractor.distractor_banks`.

A mistake in the command line, the config or the data prints one line, ``Error: <message>``, and
exits with status 1; ``HYDRA_FULL_ERROR=1`` shows the whole traceback. Hydra's flags work
(``--help``, ``--cfg job``, ``--multirun``); the value of ``monitor`` is returned for sweepers.
"""

from __future__ import annotations

from collections.abc import Sequence

import hydra
from omegaconf import DictConfig

from robust_mrc.cli.common import run_command, run_hydra_app
from robust_mrc.config import CONFIG_DIR


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="config")
def train_app(cfg: DictConfig) -> float | None:
    from robust_mrc.jobs.train import train
    from robust_mrc.models import MODULES

    metrics = run_command(train, cfg)
    monitor = cfg.monitor or MODULES[cfg.task.name].monitor
    return metrics.get(monitor)  # for Hydra sweepers


def main(argv: Sequence[str] | None = None) -> None:
    """Train with the command line ``argv`` (default: this process's)."""
    run_hydra_app(train_app, "config", "train", argv)
