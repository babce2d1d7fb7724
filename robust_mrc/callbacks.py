"""Lightning callbacks of the framework."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import pytorch_lightning as pl

log = logging.getLogger(__name__)


class AttackCounts(pl.Callback):
    """Counts the training items of each epoch by attack and status (attacked / fallback / clean)
    from the ``attack_tags`` of the batches, and logs them at the end of the epoch as
    ``train/items/<attack>/<status>`` (summed over ranks) and ``train/items/clean``.

    ``history`` keeps ``{epoch: {(attack, status): count}}`` of this rank.
    """

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.history: dict[int, dict[tuple[str, str], int]] = {}

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self.counts = Counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.counts.update(tuple(tag) for tag in batch.get("attack_tags", ()))

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        counts = dict(self.counts)
        self.history[trainer.current_epoch] = counts
        for (attack, status), n in sorted(counts.items()):
            key = "train/items/clean" if attack == "clean" else f"train/items/{attack}/{status}"
            pl_module.log(key, float(n), reduce_fx="sum", sync_dist=True)
        if any(a != "clean" for a, _ in counts):
            log.info("epoch %d training items: %s", trainer.current_epoch,
                     ", ".join(f"{a}/{s}={n}" for (a, s), n in sorted(counts.items())))


class TrainItemLog(pl.Callback):
    """Debug record of what each rank trained on: one JSON line per training item,
    ``{"epoch", "batch", "id", "attack", "status", "digest"}``, in ``<dirpath>/rank<global rank>.jsonl``
    (written at the end of each epoch). The union over ranks of a DDP run is what one process
    trains on (DDP padding may repeat a few items). Needs batches with ``item_digests``
    (``record_train_items=true``)."""

    def __init__(self, dirpath: str | Path) -> None:
        self.dirpath = Path(dirpath)
        self.rows: list[dict] = []

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self.rows = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        digests = batch.get("item_digests")
        if digests is None:
            raise ValueError("TrainItemLog needs batches with item_digests: build the data module with record_items=True")
        for ex_id, (attack, status), digest in zip(batch["ids"], batch["attack_tags"], digests):
            self.rows.append({"epoch": trainer.current_epoch, "batch": batch_idx, "id": ex_id, "attack": attack, "status": status,
                              "digest": digest})

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        self.dirpath.mkdir(parents=True, exist_ok=True)
        with open(self.dirpath / f"rank{trainer.global_rank}.jsonl", "a", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in self.rows)
