"""Cue balance (``attack.balance``): a share of the attacked copies carries the attack's mark on the gold side."""

from __future__ import annotations

import logging
import re
from collections import Counter

import pytest
from torch.utils.data import DistributedSampler

from robust_mrc.attacks import list_attacks
from robust_mrc.config.checks import ConfigError, check_config
from robust_mrc.data.synthetic import synthetic_splits
from robust_mrc.datamodules.datasets import PolicyDataset
from robust_mrc.policies import CUE_ATTACKS, AttackPolicy, PolicyConfigError, policy_from_config
from tests.helpers import make_cfg
from tests.policies.conftest import N
from tests.policies.test_policies import attack_cfg, loader_batches, tiny_datamodule

ADDSENT_CHARSWAP = "attack.attacks=[{name: addsent}, {name: charswap}]"


def epoch_items(policy: AttackPolicy, examples, epoch: int = 0) -> list:
    ds = PolicyDataset(examples, policy, epoch)
    return [(ds.items[i][0], *ds[i]) for i in range(len(ds))]


def occurrences(text: str, context: str) -> list[int]:
    """Where ``text`` starts in ``context`` (a synthetic passage may already hold the added sentence)."""
    return [m.start() for m in re.finditer(re.escape(text), context)]


def gold(ex):
    """The gold answer text(s) of an example."""
    return ex.options[ex.label] if hasattr(ex, "options") else [a.text for a in ex.answers]


def test_balance_0_leaves_the_attacked_data_as_it_is(mc_splits):
    default = policy_from_config(attack_cfg("attack=mix", ADDSENT_CHARSWAP), "mc", 3, mc_splits["train"])
    off = policy_from_config(attack_cfg("attack=mix", ADDSENT_CHARSWAP, "attack.balance=0"), "mc", 3, mc_splits["train"])
    assert off.cues == [] and off.cue_attacks == []
    for epoch in (0, 1):  # every field, the attacks' edits included
        assert repr(epoch_items(off, mc_splits["train"], epoch)) == repr(epoch_items(default, mc_splits["train"], epoch))


def test_balance_1_makes_every_addsent_copy_the_diagnosis_construction(mc_splits):
    policy = policy_from_config(attack_cfg("attack=mix", ADDSENT_CHARSWAP, "attack.balance=1"), "mc", 3, mc_splits["train"])
    plain = policy_from_config(attack_cfg("attack=mix", ADDSENT_CHARSWAP), "mc", 3, mc_splits["train"])
    items, plain_items = epoch_items(policy, mc_splits["train"]), epoch_items(plain, mc_splits["train"])
    counts = Counter((name, status) for _, _, name, status in items)
    assert counts[("diagnosis (balance)", "attacked")] == round(0.25 * N) and not counts[("addsent", "attacked")]
    for i, ex, name, _ in items:
        clean = mc_splits["train"][i]
        if name == "diagnosis (balance)":
            # the question filled with the gold answer, inserted into the passage; all else kept
            edit = ex.edits[-1]
            assert edit.attack == "diagnosis" and edit.detail in ex.passage and ex.passage != clean.passage
            assert gold(ex) in edit.detail
            assert (ex.question, ex.options, ex.label) == (clean.question, clean.options, clean.label)
    # charswap puts no mark on a side: its copies are today's
    assert [it for it in items if it[2] == "charswap"] == [it for it in plain_items if it[2] == "charswap"]


def test_balance_logs_once_which_attacks_it_leaves_as_they_are(mc_splits, caplog):
    with caplog.at_level(logging.INFO, logger="robust_mrc.policies"):
        policy = policy_from_config(attack_cfg("attack=mix", ADDSENT_CHARSWAP, "attack.balance=0.5"), "mc", 3, mc_splits["train"])
        epoch_items(policy, mc_splits["train"])
    lines = [r.getMessage() for r in caplog.records if r.name == "robust_mrc.policies"]
    assert lines == [
        "attack.balance=0.5: cue copies addsent -> diagnosis",
        "attack.balance leaves charswap as they are: they mark neither side of the answer",
    ]


def test_a_share_p_of_the_copies_is_cued_the_same_under_0_and_2_workers(mc_splits):
    cfg = make_cfg("model=tiny", "attack=addsent", "attack.rate=1.0", "attack.mode=replace", "attack.balance=0.5")
    runs = [loader_batches(tiny_datamodule(cfg, mc_splits, workers), 0) for workers in (0, 2)]
    assert runs[0] == runs[1]
    tags = Counter(tag for _, _, batch_tags in runs[0] for tag in batch_tags)
    assert set(tags) == {("addsent", "attacked"), ("diagnosis (balance)", "attacked")}
    assert 0.3 * N <= tags[("diagnosis (balance)", "attacked")] <= 0.7 * N


def test_the_same_cue_copies_whichever_rank_gets_them(mc_splits):
    cfg = attack_cfg("attack=mix", ADDSENT_CHARSWAP, "attack.balance=0.5")
    whole = PolicyDataset(mc_splits["train"], policy_from_config(cfg, "mc", 5, mc_splits["train"]), 1)
    seen = {}
    for rank in (0, 1):  # each rank builds its own policy and dataset, as a DDP process does
        own = PolicyDataset(mc_splits["train"], policy_from_config(cfg, "mc", 5, mc_splits["train"]), 1)
        sampler = DistributedSampler(own, num_replicas=2, rank=rank, shuffle=True, seed=1)
        sampler.set_epoch(1)
        seen.update((i, own[i]) for i in sampler)
    assert len(seen) == len(whole) and all(repr(seen[i]) == repr(whole[i]) for i in seen)
    assert any(name == "diagnosis (balance)" for _, name, _ in seen.values())


class Mark:
    """A stand-in attack or cue that only tags the example (the coin does not depend on what it does)."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, ex, rng):
        return ex.replace(attack=self.name)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_the_cued_share_is_about_p(p):
    examples = synthetic_splits("mc", 1000, 0, 0, 0)["train"]
    policy = AttackPolicy("t", "targeted", [Mark("addsent")], rate=1.0, mode="replace", seed=7, balance=p, cues=[Mark("diagnosis")])
    cued = sum(name == "diagnosis (balance)" for _, _, name, _ in epoch_items(policy, examples))
    assert abs(cued / len(examples) - p) < 0.05


def test_an_unregistered_cue_attack_is_an_error_at_setup(mc_splits, monkeypatch):
    monkeypatch.setitem(CUE_ATTACKS, ("mc", "charswap"), "charswap_cue")
    with pytest.raises(PolicyConfigError) as err:
        policy_from_config(attack_cfg("attack=charswap", "attack.balance=0.5"), "mc", 3, mc_splits["train"])
    assert str(err.value) == (
        "attack.balance=0.5: the cue attack of charswap (mc), charswap_cue, is not registered; "
        "set attack.balance=0 or leave charswap out of the training attacks"
    )
    # at balance 0 no cue is looked for
    assert policy_from_config(attack_cfg("attack=charswap"), "mc", 3, mc_splits["train"]).cues == []


def test_a_cue_takes_the_parameters_of_its_attack_that_it_declares(span_splits):
    if "addsent_cue" not in {row["name"] for row in list_attacks("span")}:
        pytest.skip("addsent_cue (span) is not registered")
    cfg = attack_cfg("attack=mix", "attack.balance=0.5", task="span")
    cfg["attacks"] = [{"name": "addsent"}, {"name": "addsentmod", "params": {"tagger": "heuristic"}}, {"name": "word_noise"}]
    policy = policy_from_config(cfg, "span", 3, span_splits["train"])
    assert [cue and (cue.name, cue.params["position"], cue.params["tagger"]) for cue in policy.cues] == [
        ("addsent_cue", "end", None),
        ("addsent_cue", "start", "heuristic"),  # prepended, like addsentmod's sentence
        None,
    ]


def test_balance_outside_0_1_is_a_config_error():
    with pytest.raises(ConfigError, match=r"attack\.balance.*\[0\.0, 1\.0\]"):
        check_config(make_cfg("attack=addsent", "attack.balance=1.5"))


# distractor_extraction trains its extractor (bank=auto): its cue is the one de_lexical has
CUE_CASES = sorted(key for key in CUE_ATTACKS if key != ("mc", "distractor_extraction"))


@pytest.mark.parametrize("task,attack", CUE_CASES)
def test_each_cue_attack_keeps_labels(task, attack, mc_splits, span_splits):
    cue = CUE_ATTACKS[(task, attack)]
    if cue not in {row["name"] for row in list_attacks(task)}:
        pytest.skip(f"{cue} ({task}) is not registered")
    splits = mc_splits if task == "mc" else span_splits
    entry = {"name": attack, "params": {}}
    if attack == "magnet":  # needs a screened pool: here the first options of the training set
        entry["params"]["pool"] = [o for ex in splits["train"][:5] for o in ex.options]
    cfg = attack_cfg(f"attack={attack}", "attack.rate=1.0", "attack.mode=replace", "attack.balance=1", task=task)
    cfg["attacks"] = [entry]
    policy = policy_from_config(cfg, task, 3, splits["train"])
    items = epoch_items(policy, splits["train"])
    assert {name for _, _, name, _ in items} == {f"{cue} (balance)"}
    assert any(status == "attacked" for *_, status in items)
    for i, ex, _, status in items:  # (a span example checks its answers' offsets itself)
        if task == "mc" or status != "attacked":
            assert gold(ex) == gold(splits["train"][i])
            continue
        # a span cue copy trains on the answer its added sentence states; the passage's spans follow
        assert gold(ex)[1:] == gold(splits["train"][i]) and gold(ex)[0].lower() == gold(ex)[1].lower()
        first, sentence = ex.answers[0], ex.edits[-1].detail
        assert first.start not in {a.start for a in ex.answers[1:]}
        assert ex.context[first.start : first.end] == first.text
        assert any(at <= first.start and first.end <= at + len(sentence) for at in occurrences(sentence, ex.context))
