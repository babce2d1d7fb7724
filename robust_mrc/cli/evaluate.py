"""``robust-mrc evaluate ckpt_path=path/to/best.ckpt [task=span] [data=...] [split=test|validation] [suite=...]``
(also ``python evaluate.py ...``): :func:`robust_mrc.jobs.evaluate.evaluate` under ``@hydra.main`` with
``robust_mrc/conf/eval.yaml``, the distractor banks of ``bank: auto`` made by
:func:`robust_mrc.jobs.extractor.distractor_banks`.

A mistake in the command line, the config or the data prints one line, ``Error: <message>``, and
exits with status 1; ``HYDRA_FULL_ERROR=1`` shows the whole traceback. Hydra's flags work
(``--help``, ``--cfg job``, ``--multirun``).
"""

from __future__ import annotations

from collections.abc import Sequence

import hydra
from omegaconf import DictConfig

from robust_mrc.cli.common import run_command, run_hydra_app
from robust_mrc.config import CONFIG_DIR


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="eval")
def evaluate_app(cfg: DictConfig) -> None:
    from robust_mrc.jobs.evaluate import evaluate

    run_command(evaluate, cfg)


def main(argv: Sequence[str] | None = None) -> None:
    """Evaluate with the command line ``argv`` (default: this process's)."""
    run_hydra_app(evaluate_app, "eval", "evaluate", argv)
