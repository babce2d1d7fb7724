"""Length-grouped sampling: batches of similar length, so dynamic padding pays off."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import torch
from torch.utils.data import DistributedSampler, Sampler


class LengthGroupedSampler(Sampler[int]):
    """Shuffled indices in which each run of ``batch_size`` has similar lengths.

    Random permutation (seeded by ``seed`` and the epoch) -> mega-batches of
    ``batch_size * mega_batches`` -> each sorted by length, longest first -> cut into batches ->
    batches shuffled (the longest batch first, so an out-of-memory error shows at once; a short
    last batch stays last). Meant for a DataLoader with the same ``batch_size``.

    With ``num_replicas > 1`` (DDP) every rank draws the same global batch order and takes whole
    batches, round robin (batch ``b`` to rank ``b % num_replicas``); the list of batches is padded
    by repeating its first batches so that every rank has the same number of steps. Each rank's
    stream still cuts into length-grouped batches, and the ranks together cover every index.
    """

    def __init__(
        self,
        lengths: Sequence[int],
        batch_size: int,
        seed: int = 0,
        mega_batches: int = 50,
        num_replicas: int = 1,
        rank: int = 0,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size} must be at least 1")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank={rank} must lie in [0, num_replicas={num_replicas})")
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.seed = seed
        self.mega = batch_size * mega_batches
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        # a run resumed within an epoch: how many of this rank's batches were trained already,
        # asked when iteration starts (the data module reads it from the checkpoint it resumed from)
        self.batches_to_skip: Callable[[], int] | None = None
        # the epoch, asked when iteration starts: a loader with workers draws its first indices
        # when it is iterated, which Lightning does before it calls set_epoch on a resumed run
        self.epoch_now: Callable[[], int | None] | None = None

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def batches(self) -> list[list[int]]:
        """The global batch order of the current epoch (all ranks)."""
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        perm = torch.randperm(len(self.lengths), generator=g).tolist()
        batches = []
        for i in range(0, len(perm), self.mega):
            chunk = sorted(perm[i : i + self.mega], key=lambda j: -self.lengths[j])
            batches.extend(chunk[k : k + self.batch_size] for k in range(0, len(chunk), self.batch_size))
        if not batches:
            return []
        # at most one batch is short (the last of the last mega-batch): keep it last, so the
        # index stream still cuts into the same batches for a DataLoader of ``batch_size``
        tail = [batches.pop()] if len(batches[-1]) < self.batch_size else []
        longest = max(range(len(batches)), key=lambda b: self.lengths[batches[b][0]]) if batches else None
        first = [batches.pop(longest)] if longest is not None else []
        order = torch.randperm(len(batches), generator=g).tolist()
        return first + [batches[b] for b in order] + tail

    def _shard(self, batches: list) -> list:
        """This rank's batches. Padding copies batches from the start, so the short tail batch
        (global last) stays the last batch of its rank."""
        if self.num_replicas == 1 or not batches:
            return batches
        steps = -(-len(batches) // self.num_replicas)
        padded = [batches[i % len(batches)] for i in range(steps * self.num_replicas)]
        return padded[self.rank :: self.num_replicas]

    def __len__(self) -> int:
        if self.num_replicas == 1:
            return len(self.lengths)
        n, bs = len(self.lengths), self.batch_size
        sizes = [bs] * (n // bs) + ([n % bs] if n % bs else [])  # the order does not change the sizes
        return sum(self._shard(sizes))

    def __iter__(self) -> Iterator[int]:
        """This rank's indices, batch after batch; the first ``batches_to_skip()`` batches left out
        (``len`` stays the whole epoch's: Lightning counts the skipped batches as done)."""
        epoch = self.epoch_now() if self.epoch_now is not None else None
        if epoch is not None:
            self.epoch = epoch
        skip = self.batches_to_skip() if self.batches_to_skip is not None else 0
        return iter([j for batch in self._shard(self.batches())[skip:] for j in batch])


class EpochShuffle(Sampler[int]):
    """Indices ``0..n-1`` in an order drawn from ``seed`` and the epoch ``epoch_now()`` (asked when
    iteration starts; None: the epoch of :meth:`set_epoch`): a run resumed in a later epoch draws that
    epoch's order, where a sampler with one generator across epochs would start again from the first
    epoch's."""

    def __init__(self, n: int, seed: int, epoch_now: Callable[[], int | None]):
        self.n, self.seed, self.epoch_now = n, seed, epoch_now
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[int]:
        epoch = self.epoch_now()
        g = torch.Generator().manual_seed(self.seed * 100_003 + (self.epoch if epoch is None else epoch))
        return iter(torch.randperm(self.n, generator=g).tolist())


class SkipFirst(Sampler[int]):
    """``sampler`` without its first ``skip()`` indices (asked when iteration starts), its length
    unchanged: the rest of an epoch that a resumed run goes on with (Lightning counts the batches
    trained before as done)."""

    def __init__(self, sampler: Sampler[int], skip: Callable[[], int]):
        self.sampler, self.skip = sampler, skip

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self) -> Iterator[int]:
        return itertools.islice(iter(self.sampler), self.skip(), None)


class DistributedLengthGroupedSampler(LengthGroupedSampler, DistributedSampler):
    """:class:`LengthGroupedSampler` sharded by rank, typed as a ``DistributedSampler`` so that
    Lightning keeps it (it would otherwise wrap it in a ``DistributedSamplerWrapper``, whose
    shuffle scatters the length groups across random positions)."""

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int = 0, mega_batches: int = 50, *, num_replicas: int, rank: int):
        LengthGroupedSampler.__init__(self, lengths, batch_size, seed, mega_batches, num_replicas, rank)
        self.shuffle, self.drop_last = True, False
