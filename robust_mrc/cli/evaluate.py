"""``robust-mrc evaluate ckpt_path=path/to/best.ckpt [task=span] [data=...] [split=test|validation] [suite=...]``
(also ``python evaluate.py ...``): :func:`robust_mrc.jobs.evaluate.evaluate` under ``@hydra.main`` with
``robust_mrc/conf/eval.yaml``, the distractor banks of ``bank: auto`` made by
:func:`robust_mrc.jobs.extractor.distractor_banks`.

A mistake in the command line, the config or the data prints one line, ``Error: <message>``, and
exits with status 1; ``HYDRA_FULL_ERROR=1`` shows the whole traceback. Hydra's flags work
(``--help``, ``--cfg job``, ``--multirun``).
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


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="eval")
def evaluate_app(cfg: DictConfig) -> None:
    from robust_mrc.jobs.evaluate import evaluate

    run_command(evaluate, cfg)


def main(argv: Sequence[str] | None = None) -> None:
    """Evaluate with the command line ``argv`` (default: this process's)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    run_with_one_line_errors(refuse_hydra_settings_in_sweep, argv)  # before Hydra reads them (and makes a run directory)
    register_resolvers()
    if run_command(app_help, "eval", argv, "evaluate"):  # Hydra's --help text, without its seconds of listing
        return
    saved = sys.argv
    sys.argv = [saved[0] if saved else "evaluate", *argv]  # what @hydra.main reads
    try:
        evaluate_app()
    finally:
        sys.argv = saved
