"""Multiple-choice reader on ``AutoModelForMultipleChoice``.

The collator flattens the real options of a batch into rows; the backbone scores all rows as
one "question" of N choices (its head is per row), and the scores are scattered back into a
(batch, max options) grid where padded slots hold the lowest float: never predicted, no loss.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchmetrics.functional.classification import multiclass_accuracy

from robust_mrc.data.examples import MAX_OPTIONS
from robust_mrc.models.base import QAModule
from robust_mrc.models.consistency import add_consistency
from robust_mrc.models.embedding_adversary import add_embedding_adversary


class MultipleChoiceModule(QAModule):
    task = "mc"
    monitor = "val/acc"

    def forward(self, batch: dict) -> torch.Tensor:
        """Option logits (batch, max options); padded options at the dtype's minimum."""
        inputs = {k: v.unsqueeze(0) for k, v in self.backbone_inputs(batch).items()}
        flat = self.backbone(**inputs).logits.reshape(-1)
        mask = batch["option_mask"]
        logits = torch.full(mask.shape, torch.finfo(flat.dtype).min, dtype=flat.dtype, device=flat.device)
        return logits.masked_scatter(mask, flat)

    def training_step(self, batch, batch_idx):
        logits = self(batch)
        loss = F.cross_entropy(logits.float(), batch["labels"])
        loss = add_embedding_adversary(self, loss, batch, logits)  # embedding_adversary: FreeLB, SMART, R3F
        loss = add_consistency(self, loss, batch, logits)  # attack.consistency: pairs in the batch
        acc = (logits.argmax(-1) == batch["labels"]).float().mean()
        n = len(batch["labels"])
        self.log("train/loss", loss, prog_bar=True, batch_size=n)
        self.log("train/acc", acc, batch_size=n)
        return loss

    def train_outputs(self, batch: dict) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The task loss and the option logits: one forward pass of the embedding adversary."""
        logits = self(batch)
        return F.cross_entropy(logits.float(), batch["labels"]), [logits]

    def distribution_masks(self, batch: dict) -> list[torch.Tensor]:
        """Where :meth:`train_outputs`' logits hold an answer distribution: the real options."""
        return [batch["option_mask"]]

    def predict_records(self, batch: dict) -> dict[str, dict]:
        logits = self(batch).float()
        probs = logits.softmax(-1).cpu()
        scores = logits.cpu()
        preds = probs.argmax(-1).tolist()
        counts = batch["option_mask"].sum(-1).tolist()
        return {
            # probs: softmax over the real options; scores: the head's raw option logits S(o)
            ex_id: {
                "pred": p,
                "label": int(y),
                "probs": [round(x, 6) for x in pr[:c].tolist()],
                "scores": [round(x, 5) for x in sc[:c].tolist()],
            }
            for ex_id, p, y, pr, sc, c in zip(batch["ids"], preds, batch["labels"].tolist(), probs, scores, counts)
        }

    def metrics_of(self, records: dict[str, dict]) -> dict[str, float]:
        preds = torch.tensor([r["pred"] for r in records.values()])
        labels = torch.tensor([r["label"] for r in records.values()])
        acc = multiclass_accuracy(preds, labels, num_classes=MAX_OPTIONS, average="micro")
        return {"acc": float(acc)}
