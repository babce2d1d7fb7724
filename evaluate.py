"""python evaluate.py ckpt_path=path/to/best.ckpt [task=span] [data=...] [split=test|validation]

A mistake in the command line, the config or the data prints one line, ``Error: <message>``, and
exits with status 1; ``HYDRA_FULL_ERROR=1 python evaluate.py ...`` shows the whole traceback.
"""

import sys

import hydra
from omegaconf import DictConfig

from robust_mrc.config.cli import refuse_hydra_settings_in_sweep, register_resolvers, run_command

register_resolvers()


@hydra.main(version_base="1.3", config_path="conf", config_name="eval")
def main(cfg: DictConfig) -> None:
    from robust_mrc.jobs.evaluate import evaluate

    run_command(evaluate, cfg)


if __name__ == "__main__":
    run_command(refuse_hydra_settings_in_sweep, sys.argv[1:])  # before Hydra reads them
    main()
