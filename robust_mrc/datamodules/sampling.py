"""Length-grouped sampling: batches of similar length, so dynamic padding pays off."""

from __future__ import annotations

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler


class LengthGroupedSampler(Sampler[int]):
    """Shuffled indices in which each run of ``batch_size`` has similar lengths.

    Random permutation (seeded by ``seed`` and the epoch) -> mega-batches of
    ``batch_size * mega_batches`` -> each sorted by length, longest first -> cut into batches ->
    batches shuffled (the longest batch first, so an out-of-memory error shows at once; a short
    last batch stays last). Meant for a DataLoader with the same ``batch_size``.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int = 0, mega_batches: int = 50):
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.seed = seed
        self.mega = batch_size * mega_batches
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[int]:
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        perm = torch.randperm(len(self.lengths), generator=g).tolist()
        batches = []
        for i in range(0, len(perm), self.mega):
            chunk = sorted(perm[i : i + self.mega], key=lambda j: -self.lengths[j])
            batches.extend(chunk[k : k + self.batch_size] for k in range(0, len(chunk), self.batch_size))
        if not batches:
            return iter([])
        # at most one batch is short (the last of the last mega-batch): keep it last, so the
        # index stream still cuts into the same batches for a DataLoader of ``batch_size``
        tail = batches.pop() if len(batches[-1]) < self.batch_size else []
        longest = max(range(len(batches)), key=lambda b: self.lengths[batches[b][0]]) if batches else None
        first = batches.pop(longest) if longest is not None else []
        order = torch.randperm(len(batches), generator=g).tolist()
        return iter(first + [j for b in order for j in batches[b]] + tail)
