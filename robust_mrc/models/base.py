"""What both task modules share: the backbone, the optimizer, predictions gathered by example id.

A module turns a batch into prediction records ``{example id: record}`` (:meth:`QAModule.predict_records`).
Lightning's predict loop returns them (:meth:`QAModule.predict_step`: what evaluation uses);
validation and test during training collect them per set, merged by id
(:meth:`QAModule.merge_records`: a span example's windows may come in several batches), gathered
from every rank at the end of the epoch, and compute their metrics from them, so the metrics are
right in Lightning's sanity check, with ``limit_val_batches``, and under DDP (a padded distributed
sampler repeats examples; by id they count once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytorch_lightning as pl

from robust_mrc.core import settings as S
from robust_mrc.core.distributed import gather_objects
from robust_mrc.models.backbone import load_backbone
from robust_mrc.models.optim import build_optimizer, clip_gradients, unscales_in_step


def gather_by_id(records: dict[str, dict]) -> dict[str, dict]:
    """Union of every rank's ``{id: record}``; duplicates (sampler padding) collapse."""
    merged: dict[str, dict] = {}
    for part in gather_objects(records):
        merged.update(part)
    return merged


class QAModule(pl.LightningModule):
    task: str = ""
    monitor: str = ""
    #: the train settings' ``embedding_adversary`` (FreeLB, SMART, R3F: robust_mrc/models/embedding_adversary.py); None: off
    embedding_adversary: dict | None = None

    def __init__(
        self,
        model_cfg: Mapping[str, Any],
        task_cfg: Mapping[str, Any],
        pretrained_weights: bool = True,
        window_batch: int = 32,
        require_head: bool = False,
    ):
        """``window_batch``: windows (span) per forward pass when predicting: the run's eval batch size;
        ``require_head``: the weights must hold a trained head (a model evaluated as it is)."""
        super().__init__()
        self.save_hyperparameters(ignore=["pretrained_weights", "window_batch", "require_head"])
        self.window_batch = int(window_batch)
        # completed from their definitions: a checkpoint's saved settings may lack newer keys
        self.model_cfg, self.task_cfg = S.complete(S.ModelSettings, model_cfg), S.complete_task(task_cfg)
        self.backbone = load_backbone(self.model_cfg, self.task, pretrained_weights=pretrained_weights, require_head=require_head)
        self.backbone.train()  # from_pretrained gives eval mode: dropout would stay off
        self._records: dict[tuple[str, int], dict[str, dict]] = {}
        self.last_predictions: dict[str, dict[str, dict]] = {}

    # -- optimisation ---------------------------------------------------------------------
    def configure_optimizers(self):
        # with loss scaling (16-mixed) a fused AdamW unscales inside its step, after clipping has run:
        # where both scaling and clipping are on, the unfused one
        scaled = self._loss_scaler() is not None and bool(self.trainer.gradient_clip_val)
        return build_optimizer(
            self.backbone, self.model_cfg["optim"], int(self.trainer.estimated_stepping_batches), fused=False if scaled else None
        )

    def _loss_scaler(self):
        return getattr(self.trainer.precision_plugin, "scaler", None)

    def configure_gradient_clipping(self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None):
        """Lightning refuses to clip for a fused AdamW under any mixed precision, bf16 too. Without a
        loss scaler (bf16-mixed, 32-true) its gradients are the true ones: they are clipped here."""
        if gradient_clip_val and unscales_in_step(optimizer) and self._loss_scaler() is None:
            clip_gradients(optimizer, float(gradient_clip_val), str(gradient_clip_algorithm or "norm"))
            return
        super().configure_gradient_clipping(optimizer, gradient_clip_val, gradient_clip_algorithm)

    def backbone_inputs(self, batch: dict) -> dict:
        return {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in batch}

    # -- evaluation bookkeeping -----------------------------------------------------------
    def predict_records(self, batch: dict) -> dict[str, dict]:  # pragma: no cover - abstract
        raise NotImplementedError

    def metrics_of(self, records: dict[str, dict]) -> dict[str, float]:  # pragma: no cover
        raise NotImplementedError

    def final_records(self, stage: str, name: str, records: dict[str, dict]) -> dict[str, dict]:
        """The records of a whole evaluation set (``stage`` val / test, set ``name``) as they are
        scored and kept; sets come clean first. The span module decides "no answer" here."""
        return records

    def merge_records(self, into: dict[str, dict], new: dict[str, dict]) -> dict[str, dict]:
        """Add the records of one batch to ``into`` (an id seen twice keeps the later record;
        the span module merges the windows of one example instead)."""
        into.update(new)
        return into

    def predict_step(self, batch: dict, batch_idx: int = 0, dataloader_idx: int = 0) -> dict[str, dict]:
        """The prediction records of a batch: what ``trainer.predict`` returns per batch."""
        return self.predict_records(batch)

    def _eval_step(self, stage: str, batch: dict, dataloader_idx: int) -> None:
        self.merge_records(self._records.setdefault((stage, dataloader_idx), {}), self.predict_records(batch))

    def validation_step(self, batch, batch_idx, dataloader_idx: int = 0):
        self._eval_step("val", batch, dataloader_idx)

    def test_step(self, batch, batch_idx, dataloader_idx: int = 0):
        self._eval_step("test", batch, dataloader_idx)

    def set_names(self, stage: str) -> list[str]:
        """The names of the eval sets of ``stage`` (``val`` / ``test``) in dataloader order (clean
        first), from the data module the Trainer runs with; ``["clean"]`` without one."""
        trainer = self._trainer  # None before the module is attached
        datamodule = getattr(trainer, "datamodule", None) if trainer is not None else None
        if datamodule is None or not hasattr(datamodule, "eval_set_names"):
            return ["clean"]
        return datamodule.eval_set_names("validation" if stage == "val" else stage)

    def set_name(self, stage: str, idx: int) -> str:
        names = self.set_names(stage)
        return names[idx] if idx < len(names) else f"set{idx}"

    @property
    def primary_metric(self) -> str:
        """The metric robustness is averaged over: ``acc`` (mc) or ``f1`` (span)."""
        return self.monitor.split("/")[-1]

    def _eval_epoch_end(self, stage: str) -> None:
        keys = sorted(k for k in self._records if k[0] == stage)
        attacked: list[float] = []
        for key in keys:
            name = self.set_name(stage, key[1])
            records = self.final_records(stage, name, gather_by_id(self._records.pop(key)))
            self.last_predictions[name] = records
            if not records:
                continue
            prefix = f"{stage}/" if name == "clean" else f"{stage}/{name}/"
            metrics = self.metrics_of(records)
            for metric, value in metrics.items():
                self.log(prefix + metric, value, prog_bar=name == "clean", sync_dist=False, add_dataloader_idx=False)
            self.log(prefix + "n", float(len(records)), sync_dist=False, add_dataloader_idx=False)
            if name != "clean":
                attacked.append(metrics[self.primary_metric])
        if attacked:
            # mean of the primary metric over the attacked sets: what robust checkpointing monitors
            self.log(f"{stage}/robust_avg", sum(attacked) / len(attacked), prog_bar=True, sync_dist=False, add_dataloader_idx=False)

    def on_validation_epoch_start(self) -> None:
        self._records = {k: v for k, v in self._records.items() if k[0] != "val"}

    def on_test_epoch_start(self) -> None:
        self._records = {k: v for k, v in self._records.items() if k[0] != "test"}
        self.last_predictions = {}

    def on_validation_epoch_end(self) -> None:
        self._eval_epoch_end("val")

    def on_test_epoch_end(self) -> None:
        self._eval_epoch_end("test")
