"""The attacked data is a pure function of (config, seed): digests recorded when they were made.

The training items of an epoch under the attack policies, the robust-validation sets and the
evaluation suites' attacked sets are hashed (every field, edits included) and compared with the
digests recorded below. A refactor that moves code must keep them; a change that alters attacked
text on purpose updates them in the same commit and says why in its message.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import pytest
from omegaconf import OmegaConf

os.environ.setdefault("ROBUST_MRC_VECTORS", "wordnet")

from robust_mrc.data.sources import load_splits  # noqa: E402
from robust_mrc.datamodules.qa import QADataModule  # noqa: E402
from robust_mrc.models.backbone import load_tokenizer  # noqa: E402
from tests.helpers import make_cfg  # noqa: E402


@pytest.fixture(autouse=True)
def pinned_resources(monkeypatch):
    """The digests were made with the WordNet nearest words and the heuristic tagger: pinned here, so
    that neither the tests run before (tests/attacks pins its own) nor spaCy being installed changes
    them; the resources' caches are emptied before and after."""
    from robust_mrc.attacks import resources as R

    monkeypatch.setenv("ROBUST_MRC_VECTORS", "wordnet")
    monkeypatch.setenv("ROBUST_MRC_TAGGER", "heuristic")
    R.clear_caches()
    yield
    monkeypatch.undo()
    R.clear_caches()


def digest(examples) -> str:
    h = hashlib.blake2b(digest_size=8)
    for ex in examples:
        h.update(json.dumps(dataclasses.asdict(ex), sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()


def datamodule(*overrides: str) -> QADataModule:
    cfg = make_cfg("data.n_train=48", "data.n_val=16", "data.n_test=16", *overrides)
    dm = QADataModule(
        cfg.task,
        cfg.data,
        load_tokenizer(cfg.model),
        seed=int(cfg.seed),
        group_by_length=False,
        attack_cfg=OmegaConf.to_container(cfg.attack, resolve=True),
    )
    dm.setup("fit")
    return dm


def epoch_digest(dm: QADataModule, epoch: int) -> str:
    ds = dm.train_dataset(epoch)
    items = [ds[i] for i in range(len(ds))]
    return digest(ex for ex, _, _ in items) + "/" + ",".join(f"{n}:{s}" for _, n, s in items[-3:])


# the model-free stand-ins for AdvRACE's DE and DG: the model-made banks (distractor_extraction
# bank=auto) depend on a trained extractor's floating point, not a pure function of config and seed
STAND_INS = {"distractor_extraction": "de_lexical", "distractor_generation": "dg_retrieval"}
MIX_STAND_INS = "attack.attacks_by_task.mc=[{name: addsent}, {name: charswap}, {name: de_lexical}, {name: dg_retrieval}]"

# (overrides) -> {epoch 0 items, epoch 1 items, validation sets}
RECORDED = {
    ("attack=mix", MIX_STAND_INS): {
        "epoch0": "7b826c4f796edaa2/dg_retrieval:attacked,dg_retrieval:attacked,dg_retrieval:attacked",
        "epoch1": "49b606085746d1b7/dg_retrieval:attacked,dg_retrieval:attacked,dg_retrieval:attacked",
        "validation": {
            "clean": "ead6a9f8f4b5acd4",
            "addsent": "9172d9844a7593d9",
            "charswap": "4096483cc4524d2b",
            "de_lexical": "38e5caff713c087b",
            "dg_retrieval": "42422d7725a2151f",
        },
    },
    # span mix leaves addsentmod out (a held-out probe, as Jia & Liang 2017)
    ("task=span", "attack=mix"): {
        "epoch0": "f59ba52d031a8166/word_noise:attacked,word_noise:attacked,word_noise:attacked",
        "epoch1": "28fab10897f3caff/word_noise:attacked,word_noise:attacked,word_noise:attacked",
        "validation": {
            "clean": "8cacb5f9a33c349b",
            "addsent": "bba857c283bd0e7b",
            "char_noise": "619abaa940398948",
            "word_noise": "1ccc029706534caa",
        },
    },
    ("attack=augmented_option",): {
        "epoch0": "d8296cedb80eeeb5/extra_option:attacked,extra_option:attacked,extra_option:attacked",
        "epoch1": "18411b3490ee9511/extra_option:attacked,extra_option:attacked,extra_option:attacked",
        "validation": {"clean": "ead6a9f8f4b5acd4", "random_option": "4e4b6d46ad39d92d"},
    },
    ("task=span", "attack=amount", "attack.amount=half"): {
        "epoch0": "addfb21ec8414430/clean:clean,clean:clean,char_noise:attacked",
        "epoch1": "af8499d239e5f35f/char_noise:attacked,char_noise:attacked,clean:clean",
        "validation": {"clean": "8cacb5f9a33c349b", "char_noise": "619abaa940398948"},
    },
    ("attack=random_option",): {
        "epoch0": "de0a4ed9f52e7cc2/random_option:attacked,random_option:attacked,random_option:attacked",
        "epoch1": "c5a916cc46e2284d/random_option:attacked,random_option:attacked,random_option:attacked",
        "validation": {"clean": "ead6a9f8f4b5acd4", "random_option": "4e4b6d46ad39d92d"},
    },
}


@pytest.mark.parametrize("overrides", list(RECORDED))
def test_training_and_validation_data_match_the_recorded_digests(overrides):
    dm = datamodule(*overrides)
    got = {
        "epoch0": epoch_digest(dm, 0),
        "epoch1": epoch_digest(dm, 1),
        "validation": {name: digest(exs) for name, exs in dm.eval_sets["validation"].items()},
    }
    assert got == RECORDED[overrides]


SUITES = {
    "advrace": {
        "clean": "3f86eb63749d3402",
        "addsent": "09fe0e68524095e1",
        "charswap": "7e0520adcab1074b",
        "de_lexical": "4805e98555fad7bf",
        "dg_retrieval": "fd050c2e2dad8975",
        "diagnosis": "01429a83557f5cb2",
        "random_option": "6e5522c76e940fa3",
        "extraction_cue": "83568ef789d34225",
        "magnet_cue": "3f86eb63749d3402",
    },
    "squad": {
        "clean": "de85df4229686d4f",
        "addsent": "117e29542e2c3056",
        "addonesent": "10744e79ec1724c7",
        "addsentmod": "b60458cc52ef8d13",
        "random_words": "029f6d535192e939",
        "char_noise": "3ecab2fefa062880",
        "char_noise_all": "cb147a3552d70929",
        "word_noise": "7972be45bddd962a",
        "addsent_cue": "db7b0264bc748e2c",
    },
}


@pytest.mark.parametrize("task,suite", [("mc", "advrace"), ("span", "squad")])
def test_suite_sets_match_the_recorded_digests(task, suite):
    from robust_mrc.evaluation.cache import DiskCache
    from robust_mrc.evaluation.suites import SetSpec, build_sets, suite_specs

    cfg = make_cfg(f"task={task}", "data.n_train=48", "data.n_val=16", "data.n_test=16", f"suite={suite}", config_name="eval")
    splits = load_splits(cfg.data, task, seed=int(cfg.seed))
    specs = suite_specs(OmegaConf.to_container(cfg.suite, resolve=True), task)
    specs = [SetSpec(STAND_INS[s.name], attack=STAND_INS[s.name]) if s.name in STAND_INS else s for s in specs]
    # the screened magnet set needs a model: its model-free stand-in here
    specs = [SetSpec("random_option", attack="random_option") if s.screen else s for s in specs]
    sets = build_sets(specs, splits["test"], task, seed=int(cfg.seed), cache=DiskCache(None), pool_examples=splits["train"])
    assert {name: digest(s.examples) for name, s in sets.items()} == SUITES[suite]
