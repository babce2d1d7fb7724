"""The Lightning data module shared by both tasks: examples per split -> (attack policy) -> DataLoaders.

Training: the attack policy (``attack`` config) plans each epoch's items from (seed, epoch) in the
main process; attacks and tokenization run in ``__getitem__`` / the collator, inside DataLoader
workers. With a policy that draws afresh each epoch the trainer reloads the train loader every
epoch (``reload_dataloaders_every_n_epochs=1``) and the plan uses ``trainer.current_epoch``, so a
resumed run gets the same epochs.

Evaluation: the clean validation / test sets plus one version per evaluation attack (attacked once,
cached in memory), one dataloader each, clean first; :meth:`eval_set_names` names them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, Dataset

from robust_mrc.attacks.apply import attack_example, build_attacks
from robust_mrc.core import settings as S
from robust_mrc.core.malloc import trim
from robust_mrc.data.sources import load_splits
from robust_mrc.datamodules import generation, mc, span
from robust_mrc.datamodules.buckets import bucket_widths
from robust_mrc.datamodules.datasets import AttackedDataset, ExampleDataset, PolicyDataset, TaggedCollator
from robust_mrc.datamodules.lengths import LengthLine, TokenCounter, fit_attack_lengths
from robust_mrc.datamodules.pairs import PairedCollator, PairedPolicyDataset, check_pairing
from robust_mrc.datamodules.sampling import DistributedLengthGroupedSampler, EpochShuffle, LengthGroupedSampler, SkipFirst
from robust_mrc.policies import AttackPolicy, eval_attack_specs, policy_from_config

log = logging.getLogger(__name__)


def make_collator(task_cfg: Mapping[str, Any], tokenizer, train: bool = False) -> Callable:
    """The task's collator; ``train``: span examples keep at most ``task.max_windows`` windows."""
    task_cfg = S.complete_task(task_cfg)
    multiple = task_cfg.get("pad_to_multiple_of") or None  # batch widths rounded up: fewer distinct shapes on a GPU
    buckets = length_buckets(task_cfg)  # or padded to one of a few fixed widths: fewer still
    if task_cfg["name"] == "mc":
        return mc.MCCollator(
            tokenizer, max_length=int(task_cfg["max_length"]), inputs=task_cfg["inputs"], pad_to_multiple_of=multiple, buckets=buckets
        )
    if task_cfg["name"] == "dg":
        return generation.DGCollator(
            tokenizer,
            max_length=int(task_cfg["max_length"]),
            max_target_length=int(task_cfg["max_target_length"]),
            pad_to_multiple_of=multiple,
        )
    max_windows = task_cfg.get("max_windows") if train else None
    return span.SpanCollator(
        tokenizer,
        max_length=int(task_cfg["max_length"]),
        doc_stride=int(task_cfg["doc_stride"]),
        max_windows=int(max_windows) if max_windows else None,
        pad_to_multiple_of=multiple,
        buckets=buckets,
    )


def length_buckets(task_cfg: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The padded widths of ``task.length_buckets`` (multiple choice and span QA), or None."""
    count = task_cfg.get("length_buckets")
    if not count or task_cfg["name"] not in ("mc", "span"):
        return None
    return bucket_widths(int(task_cfg["max_length"]), int(count))


def approx_length(task_cfg: Mapping[str, Any], example) -> int:
    if task_cfg["name"] == "mc":
        return mc.approx_length(example, task_cfg["inputs"])
    if task_cfg["name"] == "dg":
        return generation.approx_length(example)
    return span.approx_length(example)


def data_task(task: str) -> str:
    """The kind of data a task reads: ``dg`` (distractor generation) reads multiple-choice sets."""
    return generation.DATA_TASK if task == "dg" else task


def prediction_loader(
    task_cfg: Mapping[str, Any], examples: Sequence, collator: Callable, batch_size: int, num_workers: int = 0, persistent: bool = False
) -> DataLoader:
    """Batches of ``examples`` for prediction, longest first: little padding, and memory errors
    show on the first batch.

    Under DDP Lightning replaces the sequential sampler by ``DistributedSampler(shuffle=False)``,
    which pads the last round with repeated examples; predictions are merged by example id, so
    each example counts once."""
    task_cfg = S.complete_task(task_cfg)
    ordered = sorted(examples, key=lambda ex: -approx_length(task_cfg, ex))
    return DataLoader(
        ExampleDataset(ordered),
        batch_size=batch_size,
        collate_fn=collator,
        num_workers=num_workers,
        persistent_workers=persistent and num_workers > 0,
        # its own generator: the worker seed each new iterator draws leaves the global random state
        # (dropout) alone. Without it a run resumed within an epoch, which skips the sanity check
        # whose validation iterator drew it, drew it at its first validation instead: other dropout
        generator=torch.Generator().manual_seed(0),
    )


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
        attack_cfg: Mapping[str, Any] | None = None,
        record_items: bool = False,
        banks=None,
    ):
        super().__init__()
        self.task_cfg, self.data_cfg = S.complete_task(task_cfg), data_cfg
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.eval_batch_size = eval_batch_size or batch_size
        self.num_workers = num_workers
        self.group_by_length = group_by_length
        self.seed = seed
        self.splits = dict(splits) if splits is not None else None
        self.collator = make_collator(task_cfg, tokenizer)
        self.train_collator = make_collator(task_cfg, tokenizer, train=True)
        self.attack_cfg = dict(attack_cfg or {})
        self.banks = banks  # makes the distractor banks of bank: auto (robust_mrc.attacks.base.BankMaker)
        # debug: training batches carry ``item_digests`` (a fingerprint of each trained example)
        self.record_items = record_items
        self.policy: AttackPolicy | None = None
        self._clean_tokens: list[int] | None = None  # token length of each training example
        self._attack_lengths: dict[str, LengthLine] = {}  # attacked length from clean, per attack
        self._resumed_at: tuple[int, int] | None = None  # (epoch, batches trained in it) of the checkpoint resumed from
        # {"validation": {"clean": [...], "addsent": [...]}, "test": {...}}
        self.eval_sets: dict[str, dict[str, list]] = {}

    def setup(self, stage: str | None = None) -> None:
        task = self.task_cfg["name"]
        if self.splits is None:
            self.splits = load_splits(self.data_cfg, data_task(task), seed=self.seed)
            log.info("data %s: %s", self.data_cfg.get("name"), {k: len(v) for k, v in self.splits.items()})
        if self.policy is None:
            self.policy = policy_from_config(
                self.attack_cfg, task, self.seed, self.splits.get("train"), self._attack_targets(), banks=self.banks
            )
            if self.policy.active:
                log.info(
                    "attack policy %s: %s on rate %.2f (%s)",
                    self.policy.policy,
                    self.policy.attack_names,
                    self.policy.rate,
                    self.policy.mode,
                )
                if self.group_by_length and self.splits.get("train"):
                    # runs each training attack here, before any worker forks: also loads its resources
                    self._attack_lengths = fit_attack_lengths(
                        TokenCounter(self.task_cfg, self.tokenizer), self.policy.attacks, self.splits["train"], self.seed
                    )
                else:
                    self._warm(self.policy.attacks)
                # cue copies (attack.balance) keep their attack's length line: the same mark on the other side
                self._warm(self.policy.cue_attacks)
        if not self.eval_sets:
            specs = eval_attack_specs(self.attack_cfg, task)
            attacks = build_attacks(specs, task, self.splits.get("train"), targets=self._attack_targets(), banks=self.banks)
            warmed = set(self.policy.attack_names) if self.policy and self.policy.active else set()
            self._warm([a for a in attacks if a.name not in warmed])
            for split in ("validation", "test"):
                sets = {"clean": list(self.splits.get(split) or [])}
                for attack in attacks:
                    if sets["clean"]:
                        sets[attack.name] = self._attacked_set(sets["clean"], attack)
                self.eval_sets[split] = sets

    def _attack_targets(self) -> list:
        """The examples the training and validation attacks are prepared for: every split (one
        distractor bank serves the training copies and the attacked validation / test sets)."""
        return [ex for split in ("train", "validation", "test") for ex in self.splits.get(split) or []]

    @property
    def fresh_each_epoch(self) -> bool:
        """True when the train loader must be rebuilt each epoch (attacks drawn afresh)."""
        return bool(self.policy and self.policy.active and self.policy.fresh_each_epoch)

    def eval_set_names(self, split: str = "validation") -> list[str]:
        return list(self.eval_sets.get(split, {"clean": []}))

    def _warm(self, attacks: Sequence) -> None:
        """With DataLoader workers, run each attack once here, in the main process, on the first
        training example (result dropped): the workers forked from it -- anew every epoch when
        attacks are drawn afresh -- inherit loaded resources (WordNet, word lists, caches) instead
        of each loading them again (AddSent's first call costs ~10 s in a fresh process). With
        length grouping, :func:`fit_attack_lengths` has run the training attacks already."""
        train = self.splits.get("train") if self.splits else None
        if self.num_workers == 0 or not train:
            return
        for attack in attacks:
            attack_example(attack, train[0], self.seed, 0)

    def _attacked_set(self, examples: list, attack) -> list:
        """``attack``'s version of an evaluation set (workers when configured); None -> clean."""
        dataset = AttackedDataset(examples, attack, self.seed)
        loader = self._loader(dataset, 64, None, collate_fn=list, persistent=False)
        out, fallbacks = [], 0
        for chunk in loader:
            for ex, ok in chunk:
                out.append(ex)
                fallbacks += not ok
        if fallbacks:
            log.info("eval set %s: %d of %d examples unchanged (attack gave up)", attack.name, fallbacks, len(out))
        return out

    # -- loaders ------------------------------------------------------------------------
    def _loader(self, dataset: Dataset, batch_size: int, sampler, collate_fn=None, persistent: bool = True, generator=None) -> DataLoader:
        return DataLoader(
            dataset,
            batch_size=batch_size,
            sampler=sampler,
            collate_fn=collate_fn or self.collator,
            num_workers=self.num_workers,
            persistent_workers=persistent and self.num_workers > 0,
            generator=generator,
        )

    def loader_epoch(self) -> int | None:
        """The epoch a training loader draws its order for when it is iterated: :meth:`current_epoch`
        under a trainer; None without one (the sampler's own ``set_epoch``)."""
        return self.current_epoch() if getattr(self, "trainer", None) is not None else None

    def current_epoch(self) -> int:
        """The attached trainer's epoch; in a resumed run, at least the epoch of the checkpoint (the
        loaders are made, and a loader with workers draws its first batches, before Lightning has
        restored its loops' progress)."""
        trainer = getattr(self, "trainer", None)
        epoch = int(trainer.current_epoch) if trainer is not None else 0
        return max(epoch, self._resumed_at[0]) if self._resumed_at is not None else epoch

    def train_dataset(self, epoch: int | None = None) -> PolicyDataset | PairedPolicyDataset:
        """The items of one epoch under the attack policy (attacks applied on access); with
        ``attack.consistency``, its groups (each example with its attacked copies)."""
        if self.policy is None:
            self.setup("fit")
        examples = self.splits["train"]
        if not examples:
            raise ValueError(f"data={self.data_cfg.get('name')}: the train split is empty")
        epoch = self.current_epoch() if epoch is None else epoch
        if self.consistency["consistency"]:  # attacked copies in the batch of their clean example
            check_pairing(self.policy.policy, self.consistency["consistency"])
            dataset = PairedPolicyDataset(examples, self.policy, epoch)
            log.info(
                "attack.consistency=%s: epoch %d trains %d examples with %d attacked copies beside them (batch_size counts examples)",
                self.consistency["consistency"],
                epoch,
                len(dataset),
                sum(len(group) - 1 for group in dataset.groups),
            )
            return dataset
        return PolicyDataset(examples, self.policy, epoch)

    @property
    def consistency(self) -> dict[str, Any]:
        """``attack.consistency`` and ``attack.consistency_weight`` (see :mod:`robust_mrc.datamodules.pairs`)."""
        cfg = S.complete(S.AttackSettings, self.attack_cfg)
        return {"consistency": cfg["consistency"], "weight": float(cfg["consistency_weight"])}

    def train_dataloader(self, epoch: int | None = None) -> DataLoader:
        dataset = self.train_dataset(epoch)
        seed = self.seed + 7919 * dataset.epoch if self.fresh_each_epoch else self.seed
        world, rank = self.distributed()
        if self.group_by_length:
            lengths = self.item_lengths(dataset)
            if world > 1:  # whole length-grouped batches per rank (Lightning keeps a DistributedSampler)
                sampler = DistributedLengthGroupedSampler(lengths, self.batch_size, seed=seed, num_replicas=world, rank=rank)
            else:
                sampler = LengthGroupedSampler(lengths, self.batch_size, seed=seed)
            sampler.epoch_now = self.loader_epoch
        else:  # under DDP Lightning swaps in a DistributedSampler (shuffled, seeded by the global seed)
            sampler = EpochShuffle(len(dataset), seed, self.loader_epoch)
        # a run resumed within this epoch goes on with the batches it had not trained; asked when
        # the loader is iterated (Lightning may build it before it restores the loops' progress)
        n_batches = -(-len(sampler) // self.batch_size)
        if self.group_by_length:
            sampler.batches_to_skip = lambda: self.batches_done(n_batches)
        elif world == 1:  # (under DDP Lightning's DistributedSampler replaces it, and starts the epoch again)
            sampler = SkipFirst(sampler, lambda: self.batches_done(n_batches) * self.batch_size)
        collate = TaggedCollator(self.train_collator, digests=self.record_items)
        if isinstance(dataset, PairedPolicyDataset):
            collate = PairedCollator(collate, self.task_cfg["name"], self.consistency["weight"])
        # rebuilt every epoch when attacks are drawn afresh: persistent workers would leak.
        # Its own generator: the worker seed drawn by each iterator leaves the global random state
        # (dropout) alone, so a run resumed within an epoch draws what the uninterrupted run drew.
        generator = torch.Generator().manual_seed(seed)
        # the workers fork from this process when the loader is iterated (each epoch under a fresh
        # policy): hand back the heap's free pages first, so that they do not inherit them
        trim()
        return self._loader(dataset, self.batch_size, sampler, collate, persistent=not self.fresh_each_epoch, generator=generator)

    def state_dict(self) -> dict[str, int]:
        """What a checkpoint keeps of the data: the epoch it was written in and the batches of that
        epoch trained by then (a checkpoint within an epoch: ``checkpoint_every_n_steps``, a requeue)."""
        trainer = getattr(self, "trainer", None)
        if trainer is None:
            return {}
        epoch, done = int(trainer.current_epoch), int(trainer.fit_loop.epoch_loop.batch_progress.current.processed)
        total = trainer.num_training_batches
        if isinstance(total, int) and done >= total:  # the epoch is complete: a resume starts the next one
            epoch, done = epoch + 1, 0
        return {"epoch": epoch, "batches_done": done}

    def load_state_dict(self, state_dict: dict[str, int]) -> None:
        """Restored by Lightning from the checkpoint resumed from, before any loader is iterated."""
        if state_dict and "epoch" in state_dict:
            self._resumed_at = (int(state_dict["epoch"]), int(state_dict.get("batches_done", 0)))

    def batches_done(self, n_batches: int) -> int:
        """Batches of the current epoch already trained when the attached trainer resumes from a
        checkpoint written within the epoch (``checkpoint_every_n_steps``, a SLURM requeue), so
        that the run goes on with the rest of the epoch's batches in the same order; else 0.

        Read from this data module's state in the checkpoint (:meth:`load_state_dict`): a loader
        with workers draws its first batches' indices as soon as it is iterated, before Lightning
        has restored its loops' progress (a checkpoint without that state: the loops' progress)."""
        trainer = getattr(self, "trainer", None)
        if trainer is None:
            return 0
        if self._resumed_at is not None:
            epoch, done = self._resumed_at
            done = done if epoch == self.current_epoch() else 0
        elif trainer.fit_loop.restarting:
            done = int(trainer.fit_loop.epoch_loop.batch_progress.current.processed)
        else:
            return 0
        if 0 < done < n_batches:
            log.info("resumed within epoch %d: the first %d of its %d batches are skipped", self.current_epoch(), done, n_batches)
            return done
        return 0

    def item_lengths(self, dataset: PolicyDataset | PairedPolicyDataset) -> list[float]:
        """Estimated token length of each item of an epoch, the key of length-grouped batching:
        the clean example's token count, through its attack's :class:`LengthLine` when attacked
        (see :mod:`robust_mrc.datamodules.lengths`); of a group, its longest item's."""
        if self._clean_tokens is None or len(self._clean_tokens) != len(dataset.examples):
            t = time.perf_counter()
            self._clean_tokens = TokenCounter(self.task_cfg, self.tokenizer)(dataset.examples)
            log.info("token lengths of %d training examples in %.1f s", len(dataset.examples), time.perf_counter() - t)
        lines = [self._attack_lengths.get(a.name, LengthLine()) for a in self.policy.attacks] if self.policy else []
        lengths = {(i, a): self._clean_tokens[i] if a is None else lines[a](self._clean_tokens[i]) for i, a in dataset.items}
        if isinstance(dataset, PairedPolicyDataset):
            return [max(lengths.get(item, self._clean_tokens[item[0]]) for item in group) for group in dataset.groups]
        return [lengths[item] for item in dataset.items]

    def distributed(self) -> tuple[int, int]:
        """(world size, global rank) of the attached trainer; (1, 0) without one."""
        trainer = getattr(self, "trainer", None)
        if trainer is None:
            return 1, 0
        return int(trainer.world_size), int(trainer.global_rank)

    def eval_loader(self, examples: Sequence) -> DataLoader:
        """See :func:`prediction_loader`."""
        return prediction_loader(self.task_cfg, examples, self.collator, self.eval_batch_size, self.num_workers, persistent=True)

    def _eval_loaders(self, split: str):
        sets = self.eval_sets.get(split) or {"clean": self.splits[split]}
        loaders = [self.eval_loader(examples) for examples in sets.values()]
        return loaders[0] if len(loaders) == 1 else loaders

    def val_dataloader(self):
        if not self.splits["validation"]:
            raise ValueError(f"data={self.data_cfg.get('name')}: no validation split (set data.validation or data.holdout)")
        return self._eval_loaders("validation")

    def test_dataloader(self):
        return self._eval_loaders("test")
