"""python train.py [task=mc|span|dg] [model=...] [data=...] [attack=...] [trainer=...] [key=value ...]

A mistake in the command line, the config or the data prints one line, ``Error: <message>``, and
exits with status 1; ``HYDRA_FULL_ERROR=1 python train.py ...`` shows the whole traceback.
"""

import sys

import hydra
from omegaconf import DictConfig

from robust_mrc.config.cli import refuse_hydra_settings_in_sweep, register_resolvers, run_command

register_resolvers()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    from robust_mrc.jobs.train import train
    from robust_mrc.models import MODULES

    metrics = run_command(train, cfg)
    monitor = cfg.monitor or MODULES[cfg.task.name].monitor
    return metrics.get(monitor)  # for Hydra sweepers


if __name__ == "__main__":
    run_command(refuse_hydra_settings_in_sweep, sys.argv[1:])  # before Hydra reads them
    main()
