"""The Lightning data module shared by both tasks: examples per split -> DataLoaders.

Tokenization happens in the collator (inside DataLoader workers), so whatever produces the
examples of an epoch -- clean data now, on-the-fly attack policies later -- stays model-free.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler

from robust_mrc.data.sources import load_splits
from robust_mrc.datamodules import mc, span
from robust_mrc.datamodules.sampling import LengthGroupedSampler

log = logging.getLogger(__name__)


class ExampleDataset(Dataset):
    """A list of examples; items are examples, not tensors."""

    def __init__(self, examples: Sequence):
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int):
        return self.examples[i]


def make_collator(task_cfg: Mapping[str, Any], tokenizer) -> Callable:
    if task_cfg["name"] == "mc":
        return mc.MCCollator(tokenizer, max_length=int(task_cfg["max_length"]), inputs=task_cfg.get("inputs", "full"))
    return span.SpanCollator(tokenizer, max_length=int(task_cfg["max_length"]), doc_stride=int(task_cfg["doc_stride"]))


def approx_length(task_cfg: Mapping[str, Any], example) -> int:
    if task_cfg["name"] == "mc":
        return mc.approx_length(example, task_cfg.get("inputs", "full"))
    return span.approx_length(example)


class QADataModule(pl.LightningDataModule):
    def __init__(
        self,
        task_cfg: Mapping[str, Any],
        data_cfg: Mapping[str, Any],
        tokenizer,
        *,
        batch_size: int = 16,
        eval_batch_size: int | None = None,
        num_workers: int = 0,
        group_by_length: bool = True,
        seed: int = 0,
        splits: Mapping[str, list] | None = None,
    ):
        super().__init__()
        self.task_cfg, self.data_cfg = task_cfg, data_cfg
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.eval_batch_size = eval_batch_size or batch_size
        self.num_workers = num_workers
        self.group_by_length = group_by_length
        self.seed = seed
        self.splits = dict(splits) if splits is not None else None
        self.collator = make_collator(task_cfg, tokenizer)

    def setup(self, stage: str | None = None) -> None:
        if self.splits is None:
            self.splits = load_splits(self.data_cfg, self.task_cfg["name"], seed=self.seed)
            log.info("data %s: %s", self.data_cfg.get("name"), {k: len(v) for k, v in self.splits.items()})

    # -- loaders ------------------------------------------------------------------------
    def _loader(self, dataset: Dataset, batch_size: int, sampler) -> DataLoader:
        return DataLoader(
            dataset,
            batch_size=batch_size,
            sampler=sampler,
            collate_fn=self.collator,
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader:
        examples = self.splits["train"]
        if not examples:
            raise ValueError(f"data={self.data_cfg.get('name')}: the train split is empty")
        dataset = ExampleDataset(examples)
        if self.group_by_length:
            lengths = [approx_length(self.task_cfg, ex) for ex in examples]
            sampler = LengthGroupedSampler(lengths, self.batch_size, seed=self.seed)
        else:
            sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(self.seed))
        return self._loader(dataset, self.batch_size, sampler)

    def eval_loader(self, examples: Sequence) -> DataLoader:
        """Longest first: little padding, and memory errors show on the first batch."""
        ordered = sorted(examples, key=lambda ex: -approx_length(self.task_cfg, ex))
        return self._loader(ExampleDataset(ordered), self.eval_batch_size, None)

    def val_dataloader(self) -> DataLoader:
        if not self.splits["validation"]:
            raise ValueError(f"data={self.data_cfg.get('name')}: no validation split (set data.validation or data.holdout)")
        return self.eval_loader(self.splits["validation"])

    def test_dataloader(self) -> DataLoader:
        return self.eval_loader(self.splits["test"])
