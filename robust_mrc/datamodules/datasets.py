"""Torch datasets and collator wrappers of the data module (the torch side of the attack policies).

* :class:`ExampleDataset` -- a list of examples.
* :class:`PolicyDataset` -- one epoch of training items planned by an
  :class:`~robust_mrc.policies.AttackPolicy`; reading an item applies its attack (in the worker).
* :class:`AttackedDataset` -- an evaluation set under one attack (epoch-0 copies), attacked in the
  workers when the data module has them.
* :class:`TaggedCollator` -- a task collator that also records each item's attack and status.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from torch.utils.data import Dataset

from robust_mrc.attacks import Attack
from robust_mrc.attacks.apply import attack_example
from robust_mrc.policies import AttackPolicy


class ExampleDataset(Dataset):
    """A list of examples; items are examples, not tensors."""

    def __init__(self, examples: Sequence):
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int):
        return self.examples[i]


class PolicyDataset(Dataset):
    """One epoch of training items; ``__getitem__`` applies the attack (in the DataLoader worker)
    and returns ``(example, attack name, status)``."""

    def __init__(self, examples: Sequence, policy: AttackPolicy, epoch: int):
        self.examples = list(examples)
        self.policy = policy
        self.epoch = int(epoch)
        self.items = policy.plan(len(self.examples), self.epoch)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int):
        index, attack = self.items[i]
        return self.policy.apply(self.examples[index], attack, self.epoch)


def example_digest(example) -> str:
    """A short fingerprint of an example's content (attacked text included)."""
    return hashlib.blake2b(repr(example).encode("utf-8"), digest_size=8).hexdigest()


@dataclass
class TaggedCollator:
    """Wraps a task collator: takes ``(example, attack, status)`` items and adds ``attack_tags``
    (and, with ``digests``, ``item_digests``: :func:`example_digest` of each item, to compare what
    two runs trained on)."""

    collator: Any
    digests: bool = False

    def __call__(self, items):
        batch = self.collator([ex for ex, _, _ in items])
        batch["attack_tags"] = [(name, status) for _, name, status in items]
        if self.digests:
            batch["item_digests"] = [example_digest(ex) for ex, _, _ in items]
        return batch


class AttackedDataset(Dataset):
    """An evaluation set under one attack, made once (``epoch`` 0); None falls back to clean."""

    def __init__(self, examples: Sequence, attack: Attack, seed: int):
        self.examples, self.attack, self.seed = list(examples), attack, seed

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int):
        return attack_example(self.attack, self.examples[i], self.seed, 0)
