"""Prediction records of one model (checkpoint or Hugging Face model) on named sets, from Lightning's predict loop, cached by
(model, set, preprocessing).

A record is what the task module's ``predict_step`` gives per example id: for multiple choice
``{"pred", "label", "probs", "scores"}``, for span QA ``{"pred", "score", "golds", "confidence"}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from robust_mrc.core.digests import fingerprint
from robust_mrc.evaluation.cache import DiskCache, model_key

log = logging.getLogger(__name__)


class Predictor:
    """Runs one loaded module over sets with ``trainer.predict``; ``records(...)`` reuses cached
    predictions. ``loader_for(examples)`` gives the collated DataLoader of a set; ``scorer(batch_size)``
    the model as a :class:`~robust_mrc.attacks.search.Scorer` for model-in-the-loop sets."""

    def __init__(
        self,
        module,
        source: str | Path,
        make_trainer: Callable[[], Any],
        loader_for: Callable,
        cache: DiskCache,
        scorer: Callable[[int], Any] | None = None,
    ):
        self.module = module
        self.scorer = scorer
        self.source = str(source)
        self.make_trainer = make_trainer
        self.loader_for = loader_for
        self.cache = cache
        self.key = fingerprint("predictions", model_key(source, module.model_cfg.get("revision")), dict(module.task_cfg))

    def predict(self, examples: Sequence) -> dict[str, dict]:
        """Records of ``examples`` (no cache)."""
        if not examples:
            return {}
        batches = self.make_trainer().predict(self.module, dataloaders=self.loader_for(list(examples)), return_predictions=True)
        records: dict[str, dict] = {}
        for part in batches or []:
            self.module.merge_records(records, part)
        return records

    def records(self, name: str, examples: Sequence, set_fingerprint: str) -> dict[str, dict]:
        key = fingerprint(self.key, set_fingerprint)
        cached = self.cache.load_json("predictions", key)
        if cached is not None and len(cached) == len({ex.id for ex in examples}):
            log.info("set %s: predictions of %s from the cache", name, Path(self.source).name)
            return cached
        records = self.predict(examples)
        if records:
            self.cache.save_json("predictions", key, records)
        return records
