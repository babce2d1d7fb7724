"""python train.py [task=mc|span] [model=...] [data=...] [attack=...] [trainer=...] [key=value ...]"""

import hydra
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    from robust_mrc.training import train

    metrics = train(cfg)
    monitor = cfg.get("monitor") or ("val/acc" if cfg.task.name == "mc" else "val/f1")
    return metrics.get(monitor)  # for Hydra sweepers


if __name__ == "__main__":
    main()
