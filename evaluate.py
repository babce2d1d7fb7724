"""python evaluate.py ckpt_path=path/to/best.ckpt [task=span] [data=...] [split=test|validation]"""

import hydra
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path="conf", config_name="eval")
def main(cfg: DictConfig) -> None:
    from robust_mrc.jobs.evaluate import evaluate

    evaluate(cfg)


if __name__ == "__main__":
    main()
