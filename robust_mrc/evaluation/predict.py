"""Prediction records of one checkpoint on named sets, cached by (checkpoint, set, preprocessing).

A record is what the task module's ``predict_records`` gives per example id: for multiple choice
``{"pred", "label", "probs", "scores"}``, for span QA ``{"pred", "score", "golds", "confidence"}``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Sequence

from robust_mrc.evaluation.cache import DiskCache, checkpoint_key, fingerprint

log = logging.getLogger(__name__)


class Predictor:
    """Runs one loaded module over sets; ``records(...)`` reuses cached predictions."""

    def __init__(self, module, ckpt_path: str | Path, make_trainer: Callable[[], Any], datamodule, cache: DiskCache):
        self.module = module
        self.ckpt_path = str(ckpt_path)
        self.make_trainer = make_trainer
        self.datamodule = datamodule
        self.cache = cache
        task_cfg = dict(module.task_cfg)
        self.key = fingerprint("predictions", checkpoint_key(ckpt_path), task_cfg)

    def records(self, name: str, examples: Sequence, set_fingerprint: str) -> dict[str, dict]:
        key = fingerprint(self.key, set_fingerprint)
        cached = self.cache.load_json("predictions", key)
        if cached is not None and len(cached) == len({ex.id for ex in examples}):
            log.info("set %s: predictions of %s from the cache", name, Path(self.ckpt_path).name)
            return cached
        if not examples:
            return {}
        self.module.eval_set_names = {"test": [name]}
        trainer = self.make_trainer()
        trainer.test(self.module, dataloaders=self.datamodule.eval_loader(list(examples)), verbose=False)
        records = dict(self.module.last_predictions.get(name, {}))
        self.cache.save_json("predictions", key, records)
        return records
