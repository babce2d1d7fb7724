"""attack.consistency keeps each attacked copy in the batch of its clean example: under every
policy, with DataLoader workers or none, and on every DDP rank, whole micro-batches included."""

from __future__ import annotations

import os

import pytest
from omegaconf import OmegaConf

os.environ.setdefault("ROBUST_MRC_VECTORS", "wordnet")

from robust_mrc.datamodules.pairs import PairedPolicyDataset, group_items  # noqa: E402
from robust_mrc.datamodules.qa import QADataModule  # noqa: E402
from robust_mrc.models.backbone import load_tokenizer  # noqa: E402
from robust_mrc.policies import PolicyConfigError  # noqa: E402
from robust_mrc.trainer.batching import plan_batches  # noqa: E402
from tests.helpers import make_cfg  # noqa: E402

MIX_STAND_INS = "attack.attacks_by_task.mc=[{name: addsent}, {name: charswap}, {name: de_lexical}, {name: dg_retrieval}]"


def datamodule(*overrides: str, batch_size: int = 4, num_workers: int = 0, group_by_length: bool = True) -> QADataModule:
    cfg = make_cfg("model=tiny", "data.n_train=24", "data.n_val=4", "data.n_test=4", "attack.eval=[]", *overrides)
    dm = QADataModule(
        cfg.task,
        cfg.data,
        load_tokenizer(cfg.model),
        batch_size=batch_size,
        num_workers=num_workers,
        group_by_length=group_by_length,
        seed=3,
        attack_cfg=OmegaConf.to_container(cfg.attack, resolve=True),
    )
    dm.setup("fit")
    return dm


def check_whole_pairs(batch) -> int:
    """Every attacked row of ``batch`` has its clean example in it, and its pair entries point at
    the two; the number of pairs."""
    ids, tags = batch["ids"], batch["attack_tags"]
    clean_rows = {ids[r]: r for r, (name, _) in enumerate(tags) if name == "clean"}
    attacked = [r for r, (name, _) in enumerate(tags) if name != "clean"]
    assert all(ids[r] in clean_rows for r in attacked)
    entries = batch["consistency"]["entries"][0]
    assert len(entries["clean"]) == len(attacked)
    for p, r in enumerate(attacked):
        assert int(entries["attacked"][p, 0, 0]) == r and int(entries["clean"][p, 0, 0]) == clean_rows[ids[r]]
    return len(attacked)


def test_groups_hold_each_example_once_with_all_its_copies():
    add = [(0, None), (1, None), (2, None), (1, 0), (2, 0), (1, 1)]  # mix, mode=add: example 1 twice attacked
    assert group_items(add) == [[(0, None)], [(1, None), (1, 0), (1, 1)], [(2, None), (2, 0)]]
    replace = [(0, None), (1, 1), (2, None), (3, 0)]  # mode=replace: the copy stands for its clean example
    assert group_items(replace) == [[(0, None)], [(1, None), (1, 1)], [(2, None)], [(3, None), (3, 0)]]


@pytest.mark.parametrize(
    "overrides",
    [
        ["attack=charswap", "attack.rate=0.5"],
        ["attack=charswap", "attack.rate=0.5", "attack.mode=replace"],
        ["attack=mix", MIX_STAND_INS, "attack.rate=0.5"],
        ["attack=amount", "attack.attacks=[{name: charswap}]", "attack.amount=both"],
        ["attack=augmented_option"],
    ],
    ids=["targeted", "replace", "mix", "amount", "augmented_option"],
)
def test_every_policy_trains_each_copy_beside_its_clean_example(overrides):
    dm = datamodule(*overrides, "attack.consistency=kl")
    dataset = dm.train_dataset(0)
    assert isinstance(dataset, PairedPolicyDataset)
    assert sorted(g[0][0] for g in dataset.groups) == list(range(24))  # every example once
    assert sum(len(g) - 1 for g in dataset.groups) == sum(a is not None for _, a in dataset.items)  # every copy
    pairs = sum(check_whole_pairs(batch) for batch in dm.train_dataloader(0))
    assert pairs == sum(a is not None for _, a in dataset.items) > 0


@pytest.mark.parametrize("num_workers", [0, 2])
def test_pairs_stay_together_and_the_epoch_is_the_same_under_any_number_of_workers(num_workers):
    dm = datamodule("attack=charswap", "attack.rate=0.5", "attack.consistency=kl", num_workers=num_workers)
    batches = list(dm.train_dataloader(1))
    assert sum(check_whole_pairs(b) for b in batches) == 12
    reference = datamodule("attack=charswap", "attack.rate=0.5", "attack.consistency=kl")
    assert [b["ids"] for b in batches] == [b["ids"] for b in reference.train_dataloader(1)]
    assert [b["input_ids"].tolist() for b in batches] == [b["input_ids"].tolist() for b in reference.train_dataloader(1)]


@pytest.mark.parametrize("group_by_length", [True, False])
def test_every_ddp_rank_and_micro_batch_gets_whole_pairs(group_by_length):
    """Two ranks, batch_size 8 per optimizer step in micro-batches of 2 (2 accumulated x 2 ranks):
    each micro-batch of each rank holds whole groups, and the ranks together train every copy."""
    plan = plan_batches(8, 2, 2)
    dm = datamodule(
        "attack=charswap", "attack.rate=0.5", "attack.consistency=kl", batch_size=plan.micro_batch_size, group_by_length=group_by_length
    )
    dataset = dm.train_dataset(0)
    seen = []
    for rank in range(2):
        dm.distributed = lambda rank=rank: (2, rank)
        loader = dm.train_dataloader(0)
        if group_by_length:
            loader.sampler.set_epoch(0)
            indices = list(loader.sampler)
        else:  # under DDP Lightning shards the groups with a DistributedSampler
            from torch.utils.data import DistributedSampler

            indices = list(DistributedSampler(loader.dataset, num_replicas=2, rank=rank, shuffle=True, seed=3))
        micro = [indices[k : k + plan.micro_batch_size] for k in range(0, len(indices), plan.micro_batch_size)]
        for batch in micro:
            collated = loader.collate_fn([loader.dataset[i] for i in batch])
            check_whole_pairs(collated)
            seen.extend((ex.id, name) for ex, name, _ in (item for i in batch for item in loader.dataset[i]))
    copies = {(dataset.examples[i].id, "charswap") for i, a in dataset.items if a is not None}
    assert copies and copies <= set(seen)


def test_consistency_without_attacked_copies_is_refused():
    dm = datamodule("attack.consistency=kl")
    with pytest.raises(PolicyConfigError, match=r"attack.consistency=kl .* attack=none makes none"):
        dm.train_dataset(0)


def test_without_consistency_batches_are_as_before():
    dm = datamodule("attack=charswap", "attack.rate=0.5")
    batch = next(iter(dm.train_dataloader(0)))
    assert "consistency" not in batch and len(batch["ids"]) == 4
