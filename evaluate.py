"""python evaluate.py ckpt_path=path/to/best.ckpt [task=span] [data=...] [split=test|validation]

A mistake in the command line, the config or the data prints one line, ``Error: <message>``, and
exits with status 1; ``HYDRA_FULL_ERROR=1 python evaluate.py ...`` shows the whole traceback.
"""

import hydra
from omegaconf import DictConfig

from robust_mrc.cli import register_resolvers, run_command

register_resolvers()


def checked_evaluate(cfg: DictConfig):
    from robust_mrc.config_checks import check_config
    from robust_mrc.evaluating import evaluate

    check_config(cfg, "eval")
    return evaluate(cfg)


@hydra.main(version_base="1.3", config_path="conf", config_name="eval")
def main(cfg: DictConfig) -> None:
    run_command(checked_evaluate, cfg)


if __name__ == "__main__":
    main()
