"""Attack policies in the data module: the composition of an epoch, determinism, fallbacks,
robust validation, and train(cfg) with attack policies on the tiny model."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from torch.utils.data import DistributedSampler

from robust_mrc.datamodules.datasets import PolicyDataset
from robust_mrc.datamodules.qa import QADataModule
from robust_mrc.jobs.train import train
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.policies import AttackPolicy, PolicyConfigError, policy_from_config
from tests.helpers import make_cfg
from tests.policies.conftest import N

ROOT = Path(__file__).resolve().parents[2]


def attack_cfg(*overrides: str, task: str = "mc") -> dict:
    cfg = make_cfg(f"task={task}", *overrides)
    return OmegaConf.to_container(cfg.attack, resolve=True)


def composition(policy: AttackPolicy, examples, epoch: int = 0) -> Counter:
    ds = PolicyDataset(examples, policy, epoch)
    return Counter((name, status) for _, name, status in (ds[i] for i in range(len(ds))))


def by_attack(counts: Counter) -> Counter:
    out = Counter()
    for (name, _), n in counts.items():
        out[name] += n
    return out


def test_none_is_the_clean_set(mc_splits):
    policy = policy_from_config(attack_cfg("attack=none"), "mc", 0, mc_splits["train"])
    assert composition(policy, mc_splits["train"]) == Counter({("clean", "clean"): N})


def test_targeted_adds_a_quarter(mc_splits):
    policy = policy_from_config(attack_cfg("attack=charswap"), "mc", 0, mc_splits["train"])
    counts = by_attack(composition(policy, mc_splits["train"]))
    assert counts == Counter({"clean": N, "charswap": N // 4})
    ds = PolicyDataset(mc_splits["train"], policy, 0)
    attacked = [(ex, ds.examples[i]) for (i, a), (ex, _, st) in zip(ds.items, ds) if st == "attacked"]
    assert attacked and all(ex.passage != clean.passage or ex.question != clean.question for ex, clean in attacked)
    assert all(ex.options[ex.label] == clean.options[clean.label] for ex, clean in attacked)


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_targeted_replace_keeps_the_size(mc_splits, rate):
    cfg = attack_cfg("attack=charswap", "attack.mode=replace", f"attack.rate={rate}")
    counts = by_attack(composition(policy_from_config(cfg, "mc", 0, mc_splits["train"]), mc_splits["train"]))
    assert counts == Counter({"clean": N - round(rate * N), "charswap": round(rate * N)})


def test_mix_adds_each_attack_on_its_own_sample(mc_splits):
    policy = policy_from_config(attack_cfg("attack=mix"), "mc", 0, mc_splits["train"])
    assert policy.attack_names == ["addsent", "charswap", "distractor_extraction", "distractor_generation"]
    ds = PolicyDataset(mc_splits["train"], policy, 0)
    assert len(ds) == 2 * N  # four 25 % samples added: the epoch doubles
    counts = by_attack(composition(policy, mc_splits["train"]))
    assert counts == Counter({"clean": N, **{name: N // 4 for name in policy.attack_names}})
    samples = [{i for i, a in ds.items if a == k} for k in range(4)]
    assert len({frozenset(s) for s in samples}) == 4  # independent samples, not one shared


def test_mix_for_span_uses_the_span_attacks(span_splits):
    policy = policy_from_config(attack_cfg("attack=mix", task="span"), "span", 0, span_splits["train"])
    assert policy.attack_names == ["addsent", "char_noise", "word_noise"]  # addsentmod: a held-out probe
    ds = PolicyDataset(span_splits["train"], policy, 0)
    for ex, _, _ in (ds[i] for i in range(len(ds))):
        assert all(ex.context[a.start : a.end] == a.text for a in ex.answers)


def test_mix_replace_uses_disjoint_samples(mc_splits):
    cfg = attack_cfg("attack=mix", "attack.mode=replace", "attack.rate=0.2")
    ds = PolicyDataset(mc_splits["train"], policy_from_config(cfg, "mc", 0, mc_splits["train"]), 0)
    assert len(ds) == N and sorted(i for i, _ in ds.items) == list(range(N))
    assert Counter(a for _, a in ds.items) == Counter({None: N - 4 * 8, 0: 8, 1: 8, 2: 8, 3: 8})
    with pytest.raises(PolicyConfigError, match="rate x attacks"):
        policy_from_config(attack_cfg("attack=mix", "attack.mode=replace", "attack.rate=0.5"), "mc", 0)


def test_augmented_option_gives_every_question_a_fifth_option(mc_splits):
    policy = policy_from_config(attack_cfg("attack=augmented_option"), "mc", 0, mc_splits["train"])
    ds = PolicyDataset(mc_splits["train"], policy, 0)
    assert len(ds) == N
    for (i, _), (ex, _, status) in zip(ds.items, (ds[j] for j in range(N))):
        clean = ds.examples[i]
        assert status == "attacked" and len(ex.options) == len(clean.options) + 1 == 5
        assert ex.options[ex.label] == clean.options[clean.label]
        extra = (set(ex.options) - set(clean.options)).pop()
        assert extra not in clean.passage  # drawn from other passages


def test_augmented_option_pool_file(mc_splits, tmp_path):
    pool = tmp_path / "pool.txt"
    pool.write_text("a purple elephant\nthe moon landing\n")
    cfg = attack_cfg("attack=augmented_option", f"attack.attacks.0.params.pool={pool}")
    ds = PolicyDataset(mc_splits["train"], policy_from_config(cfg, "mc", 0, mc_splits["train"]), 0)
    extras = {(set(ds[i][0].options) - set(ds.examples[i].options)).pop() for i in range(N)}
    assert extras <= {"a purple elephant", "the moon landing"}


@pytest.mark.parametrize("amount,size,perturbed", [("none", N, 0), ("half", N, N // 2), ("full", N, N), ("both", 2 * N, N)])
def test_amounts(span_splits, amount, size, perturbed):
    policy = policy_from_config(attack_cfg("attack=amount", f"attack.amount={amount}", task="span"), "span", 0, span_splits["train"])
    counts = by_attack(composition(policy, span_splits["train"]))
    assert sum(counts.values()) == size and counts["char_noise"] == perturbed
    assert counts["clean"] == size - perturbed


def test_attacks_are_drawn_afresh_each_epoch_unless_switched_off(mc_splits):
    fresh = policy_from_config(attack_cfg("attack=charswap"), "mc", 0, mc_splits["train"])
    e0, e1 = (PolicyDataset(mc_splits["train"], fresh, e) for e in (0, 1))
    assert e0.items != e1.items
    assert [e0[i] for i in range(len(e0))] == [PolicyDataset(mc_splits["train"], fresh, 0)[i] for i in range(len(e0))]
    fixed = policy_from_config(attack_cfg("attack=charswap", "attack.fresh_each_epoch=false"), "mc", 0, mc_splits["train"])
    f0, f1 = (PolicyDataset(mc_splits["train"], fixed, e) for e in (0, 1))
    assert f0.items == f1.items and [f0[i] for i in range(len(f0))] == [f1[i] for i in range(len(f1))]


class GiveUpOnOdd:
    """An attack that has nothing to do for every other example."""

    name = "give_up"

    def __call__(self, ex, rng):
        return None if int(ex.id.rsplit("-", 1)[-1]) % 2 else ex.replace(question=ex.question + " ?", attack="give_up")


def test_an_attack_that_gives_up_falls_back_to_the_clean_example(mc_splits):
    policy = AttackPolicy("t", "targeted", [GiveUpOnOdd()], rate=1.0, mode="replace", seed=0)
    ds = PolicyDataset(mc_splits["train"], policy, 0)
    for (i, _), (ex, _, status) in zip(ds.items, (ds[j] for j in range(len(ds)))):
        clean = ds.examples[i]
        assert (ex == clean) == (status == "fallback")
    counts = composition(policy, mc_splits["train"])
    assert counts[("give_up", "fallback")] > 0 and counts[("give_up", "attacked")] > 0


def loader_batches(dm, epoch):
    out = []
    for batch in dm.train_dataloader(epoch=epoch):
        out.append((batch["input_ids"].tolist(), batch["labels"].tolist(), batch["attack_tags"]))
    return out


def tiny_datamodule(cfg, splits, workers: int) -> QADataModule:
    """The data module of ``cfg`` (a tiny model's tokenizer, batches of 8, seed 3) on ``splits``
    with ``workers`` DataLoader workers, set up for fitting."""
    dm = QADataModule(
        cfg.task,
        cfg.data,
        load_tokenizer(cfg.model),
        batch_size=8,
        num_workers=workers,
        seed=3,
        splits=splits,
        attack_cfg=OmegaConf.to_container(cfg.attack, resolve=True),
    )
    dm.setup("fit")
    return dm


def test_the_same_epoch_under_0_and_2_workers(mc_splits):
    cfg = make_cfg("model=tiny", "attack=mix")
    dms = [tiny_datamodule(cfg, mc_splits, workers) for workers in (0, 2)]
    for epoch in (0, 1):
        assert loader_batches(dms[0], epoch) == loader_batches(dms[1], epoch)
    assert loader_batches(dms[0], 0) != loader_batches(dms[0], 1)


def test_the_same_attacked_example_whichever_rank_gets_it(mc_splits):
    policy = policy_from_config(attack_cfg("attack=mix"), "mc", 5, mc_splits["train"])
    whole = PolicyDataset(mc_splits["train"], policy, 2)
    seen = {}
    for rank in (0, 1):
        # each rank builds its own policy and dataset, as a DDP process does
        own = PolicyDataset(mc_splits["train"], policy_from_config(attack_cfg("attack=mix"), "mc", 5, mc_splits["train"]), 2)
        sampler = DistributedSampler(own, num_replicas=2, rank=rank, shuffle=True, seed=1)
        sampler.set_epoch(2)
        for i in sampler:
            seen[i] = own[i]
    assert len(seen) == len(whole)
    assert all(seen[i] == whole[i] for i in seen)


def test_the_same_attacked_data_in_another_process(mc_splits):
    code = (
        "from collections import Counter;"
        "from robust_mrc.data.synthetic import synthetic_splits;"
        "from robust_mrc.datamodules.datasets import PolicyDataset; from robust_mrc.policies import policy_from_config;"
        "from tests.policies.test_policies import attack_cfg;"
        f"s = synthetic_splits('mc', {N}, 12, 12, 0);"
        "ds = PolicyDataset(s['train'], policy_from_config(attack_cfg('attack=mix'), 'mc', 0, s['train']), 1);"
        "print(repr([ds[i][0] for i in range(len(ds))]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    ds = PolicyDataset(mc_splits["train"], policy_from_config(attack_cfg("attack=mix"), "mc", 0, mc_splits["train"]), 1)
    assert out.strip() == repr([ds[i][0] for i in range(len(ds))])


def test_robust_validation_sets_are_made_once(mc_splits):
    tok = load_tokenizer(make_cfg("model=tiny").model)
    cfg = make_cfg("model=tiny", "attack=mix")
    dm = QADataModule(cfg.task, cfg.data, tok, splits=mc_splits, attack_cfg=OmegaConf.to_container(cfg.attack, resolve=True))
    dm.setup("fit")
    assert dm.eval_set_names("validation") == ["clean", "addsent", "charswap", "distractor_extraction", "distractor_generation"]
    first = dm.eval_sets["validation"]["charswap"]
    assert len(first) == 12 and first != mc_splits["validation"]
    dm.setup("validate")
    assert dm.eval_sets["validation"]["charswap"] is first
    assert len(dm.val_dataloader()) == 5


def test_bad_policies_say_what_is_wrong():
    with pytest.raises(PolicyConfigError, match="attack.policy='sometimes'"):
        AttackPolicy("x", "sometimes")
    with pytest.raises(PolicyConfigError, match="exactly one attack"):
        policy_from_config({"policy": "targeted", "attacks": ["charswap", "addsent"]}, "mc", 0)
    with pytest.raises(PolicyConfigError, match="attack.amount='most'"):
        policy_from_config(attack_cfg("attack=amount", "attack.amount=most"), "mc", 0)
    with pytest.raises(PolicyConfigError, match="needs task=mc"):
        policy_from_config(attack_cfg("attack=augmented_option"), "span", 0)


TINY = ["model=tiny", "data.n_train=48", "data.n_val=16", "data.n_test=16", "trainer.max_epochs=2", "batch_size=16"]


def test_train_with_mix_logs_robust_validation_and_counts(tmp_path):
    metrics = train(make_cfg(*TINY, "attack=mix", "monitor=val/robust_avg", f"output_dir={tmp_path}"))
    attacks = ["addsent", "charswap", "distractor_extraction", "distractor_generation"]
    for stage in ("val", "test"):
        values = [metrics[f"{stage}/{a}/acc"] for a in attacks]
        assert all(metrics[f"{stage}/{a}/n"] == 16 for a in attacks)
        assert metrics[f"{stage}/robust_avg"] == pytest.approx(sum(values) / 4)
    rows = (tmp_path / "csv" / "version_0" / "metrics.csv").read_text().splitlines()
    header = rows[0].split(",")
    counts = [dict(zip(header, r.split(","))) for r in rows[1:]]
    counts = [r for r in counts if r.get("train/items/clean")]
    assert len(counts) == 2  # one row per epoch
    for row in counts:
        assert float(row["train/items/clean"]) == 48
        assert sum(float(row[f"train/items/{a}/attacked"] or 0) + float(row.get(f"train/items/{a}/fallback") or 0) for a in attacks) == 48


def test_train_with_augmented_options_composes_with_roberta_and_runs_tiny(tmp_path, caplog):
    import json
    import logging

    cfg = make_cfg("attack=mix", "model=roberta")
    assert cfg.model.pretrained == "roberta-large" and cfg.attack.policy == "mix"
    with caplog.at_level(logging.WARNING, logger="robust_mrc.attacks.mc.options"):
        metrics = train(make_cfg(*TINY, "attack=augmented_option", "task.inputs=options_only", f"output_dir={tmp_path}"))
    assert "val/random_option/acc" in metrics and "test/robust_avg" in metrics
    assert metrics["attack_provenance"][0]["method"] == "stand-in"  # no screened pool given: random options, said so
    # said in a WARNING line and recorded in the run's metrics.json
    assert any(r.levelno == logging.WARNING and "extra_option: no screened pool" in r.getMessage() for r in caplog.records)
    (saved,) = json.loads((Path(metrics["run_dir"]) / "metrics.json").read_text())["attack_provenance"]
    assert saved["attack"] == "extra_option" and saved["method"] == "stand-in" and "random options" in saved["resources"]["pool"]


ATTACK_ENTRIES = sorted(p.stem for p in (ROOT / "conf" / "attack").glob("*.yaml"))  # base/targeted.yaml: a base, in its own folder


@pytest.mark.parametrize("entry", ATTACK_ENTRIES)
def test_every_attack_entry_builds_a_policy_for_its_tasks(entry, mc_splits, span_splits):
    from robust_mrc.attacks import list_attacks

    built = 0
    for task, splits in (("mc", mc_splits), ("span", span_splits)):
        cfg = attack_cfg(f"attack={entry}", task=task)
        names = {a["name"] for a in list_attacks(task)}
        specs = cfg.get("attacks") or (cfg.get("attacks_by_task") or {}).get(task) or []
        if any(s["name"] not in names for s in specs) or (entry == "augmented_option" and task == "span"):
            continue
        if entry == "paraphrase":  # needs a user-supplied paraphraser
            continue
        if entry == "magnet":  # needs a screened pool (a ranked file): here the first options of the training set
            cfg["attacks"][0]["params"]["pool"] = [o for ex in splits["train"][:5] for o in ex.options]
        policy = policy_from_config(cfg, task, 0, splits["train"])
        size = len(PolicyDataset(splits["train"], policy, 0))
        assert policy.policy == cfg["policy"]
        assert size == len(splits["train"]) if policy.mode == "replace" or not policy.active else size > len(splits["train"])
        built += 1
    assert built or entry == "paraphrase"


@pytest.mark.slow  # a four-job multirun in a subprocess
def test_noise_amounts_experiment_sweeps_the_four_amounts(tmp_path):
    cmd = [
        sys.executable,
        "train.py",
        "-m",
        "experiment=noise_amounts",
        "model=tiny",
        "data=synthetic_span",
        "trainer=cpu",
        "trainer.precision=32-true",
        "data.n_train=32",
        "data.n_val=8",
        "data.n_test=8",
        "trainer.max_epochs=1",
        "batch_size=16",
        f"hydra.sweep.dir={tmp_path}",
    ]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
    amounts = []
    for job in sorted(p for p in tmp_path.iterdir() if p.is_dir()):
        cfg = OmegaConf.load(job / "config.yaml")
        amounts.append(cfg.attack.amount)
        assert "val/char_noise/f1" in (job / "metrics.json").read_text()
    assert amounts == ["none", "half", "full", "both"]


@pytest.mark.parametrize("workers", [0, 1])
def test_attack_resources_load_in_setup_before_workers_fork(workers):
    # setup() runs each training attack in the main process (to fit its length line), so the
    # workers forked every epoch inherit WordNet instead of loading it again; the same with 0 workers
    code = (
        "from omegaconf import OmegaConf;"
        "from robust_mrc.attacks import resources;"
        "from robust_mrc.datamodules.qa import QADataModule;"
        "from robust_mrc.data.synthetic import synthetic_splits;"
        "from robust_mrc.models.backbone import load_tokenizer;"
        "from tests.helpers import make_cfg;"
        "cfg = make_cfg('model=tiny', 'attack=addsent', 'attack.eval=[]');"
        f"s = synthetic_splits('mc', {N}, 0, 0, 0);"
        f"dm = QADataModule(cfg.task, cfg.data, load_tokenizer(cfg.model), num_workers={workers}, splits=s,"
        " attack_cfg=OmegaConf.to_container(cfg.attack, resolve=True));"
        "print(resources._wordnet._wordnet_cached.cache_info().currsize);"
        "dm.setup('fit');"
        "print(resources._wordnet._wordnet_cached.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split()[-2:] == ["0", "1"]


@pytest.mark.parametrize("task,entry", [("mc", "mix"), ("span", "mix"), ("mc", "charswap")])
def test_length_grouping_keys_track_the_attacked_length(task, entry, mc_splits, span_splits):
    # the sampler orders an epoch before the workers attack it: its key for an attacked item is the
    # clean token length through the attack's fitted line, closer to the true length than the clean one
    from robust_mrc.datamodules.lengths import TokenCounter

    cfg = make_cfg("model=tiny", f"task={task}", f"attack={entry}", "attack.eval=[]")
    splits = mc_splits if task == "mc" else span_splits
    dm = QADataModule(
        cfg.task, cfg.data, load_tokenizer(cfg.model), seed=1, splits=splits, attack_cfg=OmegaConf.to_container(cfg.attack, resolve=True)
    )
    dm.setup("fit")
    ds = dm.train_dataset(0)
    keys = dm.item_lengths(ds)
    counter = TokenCounter(cfg.task, dm.tokenizer)
    true = counter([ds[i][0] for i in range(len(ds))])
    clean = counter(ds.examples)
    attacked = [k for k, (_, a) in enumerate(ds.items) if a is not None and ds[k][2] == "attacked"]
    assert attacked
    for k, (i, a) in enumerate(ds.items):
        if a is None:
            assert keys[k] == true[k] == clean[i]
    err_key = sum(abs(keys[k] - true[k]) for k in attacked) / len(attacked)
    err_clean = sum(abs(clean[ds.items[k][0]] - true[k]) for k in attacked) / len(attacked)
    grew = sum(true[k] - clean[ds.items[k][0]] for k in attacked) / len(attacked)
    assert grew > 1  # these attacks lengthen the text
    assert err_key < 0.5 * err_clean, (err_key, err_clean)


def test_token_counter_matches_the_collators(mc_splits, span_splits):
    from robust_mrc.datamodules.lengths import TokenCounter
    from robust_mrc.datamodules.qa import make_collator

    for task, splits in (("mc", mc_splits), ("span", span_splits)):
        cfg = make_cfg("model=tiny", f"task={task}", "task.max_length=64")
        tok = load_tokenizer(cfg.model)
        counts = TokenCounter(cfg.task, tok)(splits["train"][:10])
        for ex, n in zip(splits["train"][:10], counts):
            if task == "mc":
                mask = make_collator(cfg.task, tok)([ex])["attention_mask"]
                assert n == int(mask.sum(-1).max())
            else:
                assert n == len(tok(ex.question.lstrip(), ex.context)["input_ids"])
