"""DDP that is right, not only running: two real processes on CPU (gloo) against one process.

``python train.py trainer=ddp_cpu`` runs in a subprocess (Lightning starts the second rank);
the validation (27) and test (19) sets are not multiples of 2 ranks x eval batch 4, so the
DistributedSampler pads them with repeated examples. The checks:

* every evaluation set counts each example once (``n`` = the set's size), and the metrics of
  the DDP run equal those of a one-process evaluation of the same checkpoint on the same data;
* the on-the-fly attacked training items of each epoch, united over the two ranks, are the
  items (example id, attack, status, content digest) one process trains on;
* each rank trains on whole length-grouped batches of the global batch order (Lightning keeps
  our sampler instead of wrapping and reshuffling it).
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import pytorch_lightning as pl

from robust_mrc.datamodules.datasets import example_digest
from robust_mrc.datamodules.sampling import DistributedLengthGroupedSampler, LengthGroupedSampler
from robust_mrc.jobs.train import build_datamodule, train
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.checkpoints import load_checkpoint
from robust_mrc.trainer.batching import plan_batches
from tests.helpers import make_cfg

ROOT = Path(__file__).resolve().parents[2]
EVAL_BATCH = 4
RUN = [
    "model=tiny",
    "task=mc",
    "attack=charswap",
    "data.n_train=40",
    "data.n_val=27",
    "data.n_test=19",
    "batch_size=8",
    f"eval_batch_size={EVAL_BATCH}",
    "trainer.max_epochs=2",
    "record_train_items=true",
]
N_VAL, N_TEST, WORLD = 27, 19, 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train_on_two_ranks(overrides: list[str], out: Path) -> None:
    """``python train.py trainer=ddp_cpu <overrides>`` into ``out``, two gloo ranks on this machine."""
    launcher_vars = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "ROBUST_MRC_RUN_DIR")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k not in launcher_vars}
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WANDB_MODE="offline", HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "train.py", "trainer=ddp_cpu", *overrides, f"output_dir={out}", f"hydra.run.dir={out}"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]


def read_items(out: Path) -> dict[int, list[dict]]:
    """{rank: rows} of a run's TrainItemLog."""
    return {
        int(p.stem.removeprefix("rank")): [json.loads(line) for line in p.read_text().splitlines()]
        for p in sorted((out / "train_items").glob("rank*.jsonl"))
    }


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    assert N_VAL % (WORLD * EVAL_BATCH) and N_TEST % (WORLD * EVAL_BATCH)  # padding happens
    out = tmp_path_factory.mktemp("ddp")
    train_on_two_ranks(RUN, out)
    return out, json.loads((out / "metrics.json").read_text())


def test_two_ranks_ran_and_evaluation_counts_each_example_once(ddp_run):
    out, metrics = ddp_run
    assert sorted(read_items(out)) == [0, 1]  # two processes trained
    assert (out / "train_ddp_process_1.log").is_file()  # Lightning started rank 1 through Hydra
    for stage, n in (("val", N_VAL), ("test", N_TEST)):
        assert metrics[f"{stage}/n"] == n and metrics[f"{stage}/charswap/n"] == n  # not the padded 28 / 20


def test_ddp_metrics_equal_a_one_process_evaluation_of_the_same_checkpoint(ddp_run):
    out, metrics = ddp_run
    cfg = make_cfg(*RUN, f"output_dir={out}/single")
    datamodule = build_datamodule(cfg, load_tokenizer(cfg.model))
    datamodule.setup("fit")
    module = load_checkpoint(metrics["ckpt_path"])
    trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False, enable_model_summary=False)
    single = {
        **trainer.validate(module, datamodule=datamodule, verbose=False)[0],
        **trainer.test(module, datamodule=datamodule, verbose=False)[0],
    }
    keys = [k for k in metrics if k.startswith(("val/", "test/"))]
    assert set(keys) == set(single)
    assert {k: float(single[k]) for k in keys} == {k: metrics[k] for k in keys}
    assert len(module.last_predictions["clean"]) == N_TEST


def test_two_ranks_train_on_the_attacked_items_of_one_process(ddp_run, tmp_path):
    out, _ = ddp_run
    # eval sets play no part in what is trained: skip the attacked ones and the sanity check
    train(
        make_cfg(*RUN, "trainer=cpu", "test_after_fit=false", "attack.eval=[]", "+trainer.num_sanity_val_steps=0", f"output_dir={tmp_path}")
    )
    one = read_items(tmp_path)[0]
    ddp = read_items(out)

    def items(rows, epoch):
        return {(r["id"], r["attack"], r["status"], r["digest"]) for r in rows if r["epoch"] == epoch}

    datamodule = build_datamodule(make_cfg(*RUN), load_tokenizer(make_cfg(*RUN).model))
    datamodule.setup("fit")
    for epoch in (0, 1):
        union = items(ddp[0], epoch) | items(ddp[1], epoch)
        assert union == items(one, epoch)
        planned = datamodule.train_dataset(epoch)  # what PolicyDataset plans and attacks
        expected = {(ex.id, name, status, example_digest(ex)) for ex, name, status in (planned[i] for i in range(len(planned)))}
        assert items(one, epoch) == expected
        assert items(ddp[0], epoch) and items(ddp[1], epoch)  # both ranks had a share
        assert any(attack == "charswap" and status == "attacked" for _, attack, status, _ in union)
        # one process sees each planned item once: 40 clean + 25 % attacked copies
        assert len([r for r in one if r["epoch"] == epoch]) == len(items(one, epoch)) == 50
    assert items(one, 0) != items(one, 1)  # the sample is drawn afresh each epoch, also under DDP


def test_each_rank_trains_on_whole_length_grouped_batches(ddp_run):
    out, _ = ddp_run
    cfg = make_cfg(*RUN, f"output_dir={out}/plan")
    datamodule = build_datamodule(cfg, load_tokenizer(cfg.model))
    datamodule.setup("fit")
    # batch_size is per optimizer step over both ranks: each rank ran micro-batches of batch_size / 2
    datamodule.batch_size = plan_batches(int(cfg.batch_size), cfg.micro_batch_size, WORLD).micro_batch_size
    recorded = read_items(out)
    for epoch in (0, 1):
        for rank in range(WORLD):
            datamodule.distributed = lambda rank=rank: (WORLD, rank)
            loader = datamodule.train_dataloader(epoch)
            assert isinstance(loader.sampler, DistributedLengthGroupedSampler)
            loader.sampler.set_epoch(epoch)  # as Lightning does
            dataset = loader.dataset
            names = ["clean", *dataset.policy.attack_names]
            expected = [
                sorted((dataset.examples[i].id, names[0 if a is None else a + 1]) for i, a in (dataset.items[j] for j in batch))
                for batch in loader.batch_sampler
            ]
            batches = defaultdict(list)
            for r in recorded[rank]:
                if r["epoch"] == epoch:
                    batches[r["batch"]].append((r["id"], r["attack"]))
            assert [sorted(batches[b]) for b in sorted(batches)] == expected


def test_sharded_length_grouped_sampler_covers_everything_in_equal_steps():
    lengths = [(i * 37) % 101 for i in range(203)]
    whole = LengthGroupedSampler(lengths, batch_size=8, seed=5)
    global_batches = whole.batches()
    for world in (2, 3, 4):
        shards = [DistributedLengthGroupedSampler(lengths, 8, seed=5, num_replicas=world, rank=r) for r in range(world)]
        streams = [list(s) for s in shards]
        assert [len(s) for s in streams] == [len(s) for s in shards]
        assert set().union(*map(set, streams)) == set(range(len(lengths)))
        steps = {-(-len(s) // 8) for s in streams}
        assert len(steps) == 1  # the same number of optimizer steps on every rank
        for r, stream in enumerate(streams):
            own = [stream[k : k + 8] for k in range(0, len(stream), 8)]
            assert all(b in global_batches for b in own)  # whole batches of the global order
            assert own[: len(global_batches[r::world])] == global_batches[r::world]
    with pytest.raises(ValueError, match="rank=2"):
        DistributedLengthGroupedSampler(lengths, 8, num_replicas=2, rank=2)


# -- plumbing: strategy from config, SLURM plugin, run directory of DDP children, resume choice --


def test_strategy_dict_builds_ddp_with_gloo_and_names_a_bad_strategy():
    from pytorch_lightning.strategies import DDPStrategy

    from robust_mrc.trainer.build import build_strategy

    cfg = make_cfg("trainer=ddp_cpu")
    strategy = build_strategy(dict(cfg.trainer.strategy))
    assert isinstance(strategy, DDPStrategy) and strategy._process_group_backend == "gloo" and strategy._start_method == "popen"
    assert build_strategy("ddp") == "ddp"
    with pytest.raises(ValueError, match="trainer.strategy.name='dpp' is not a Lightning strategy"):
        build_strategy({"name": "dpp"})


def test_slurm_tasks_get_the_slurm_environment_and_the_batch_end_requeue_on_sigusr1(monkeypatch):
    import signal

    from lightning_fabric.plugins.environments import SLURMEnvironment

    from robust_mrc.trainer.slurm import RequeueOnSignal, cluster_callbacks, cluster_plugins

    for key in [k for k in os.environ if k.startswith("SLURM_")]:
        monkeypatch.delenv(key)
    assert cluster_plugins() == [] and cluster_callbacks() == []
    monkeypatch.setenv("SLURM_NTASKS", "1")
    monkeypatch.setenv("SLURM_JOB_NAME", "robust-mrc")
    (env,) = cluster_plugins()
    assert isinstance(env, SLURMEnvironment) and not env.auto_requeue  # Lightning's in-handler save is off
    (requeue,) = cluster_callbacks()
    assert isinstance(requeue, RequeueOnSignal) and requeue.signum == signal.SIGUSR1
    monkeypatch.setenv("SLURM_JOB_NAME", "bash")  # an interactive allocation: no SLURM environment
    assert cluster_plugins() == [] and cluster_callbacks() == []


def test_ddp_children_inherit_rank_zeros_run_dir(monkeypatch, tmp_path):
    from lightning_fabric.utilities.rank_zero import rank_zero_only

    from robust_mrc.trainer import run_dir as runtime

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(runtime.RUN_DIR_ENV, "")  # unset at teardown (run_dir sets it)
    cfg = make_cfg("model=tiny")
    first = runtime.run_dir(cfg)
    assert os.environ[runtime.RUN_DIR_ENV] == str(first)
    monkeypatch.setattr(rank_zero_only, "rank", 1)  # a process Lightning started for rank 1
    assert runtime.run_dir(cfg) == first
    monkeypatch.setattr(rank_zero_only, "rank", 0)  # a new run of rank 0: a new directory
    assert runtime.run_dir(cfg) != first


def test_ckpt_path_last_takes_the_newest_of_last_and_hpc_checkpoints(tmp_path):
    import time

    from robust_mrc.jobs.train import resolve_resume

    ckpts = tmp_path / "checkpoints"
    ckpts.mkdir()
    from robust_mrc.config.checks import ConfigError

    with pytest.raises(ConfigError, match="ckpt_path=last: no checkpoint to resume from"):
        resolve_resume("last", ckpts, tmp_path)  # nothing yet: an error, not a silent fresh start
    assert resolve_resume("last_or_new", ckpts, tmp_path) is None  # the SLURM scripts: a fresh start
    (ckpts / "last.ckpt").write_bytes(b"x")
    assert resolve_resume("last", ckpts, tmp_path) == str(ckpts / "last.ckpt")
    time.sleep(0.01)
    (tmp_path / "hpc_ckpt_1.ckpt").write_bytes(b"x")  # saved on SIGUSR1, after the last epoch
    assert resolve_resume("last", ckpts, tmp_path) == str(tmp_path / "hpc_ckpt_1.ckpt")
    assert resolve_resume("last_or_new", ckpts, tmp_path) == str(tmp_path / "hpc_ckpt_1.ckpt")
    time.sleep(0.01)
    (ckpts / "last.ckpt").write_bytes(b"y")  # an epoch finished after the requeue
    assert resolve_resume("last", ckpts, tmp_path) == str(ckpts / "last.ckpt")
    with pytest.raises(ConfigError, match="ckpt_path=nope.ckpt: no such checkpoint file"):
        resolve_resume("nope.ckpt", ckpts)


def _attack_counts_on_rank(rank: int, port: int, counts: dict, out: list) -> None:
    import torch.distributed as dist

    from robust_mrc.trainer.callbacks import AttackCounts

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    logged: dict = {}

    class Module:
        def log(self, key, value, **kwargs):
            logged[key] = (value, kwargs)

    class Trainer:
        current_epoch = 0

    callback = AttackCounts()
    callback.counts.update(counts)
    callback.on_train_epoch_end(Trainer(), Module())
    out.append((rank, logged))
    dist.destroy_process_group()


def test_attack_counts_sum_the_union_of_the_ranks_keys():
    """A status that only one rank met (a rare fallback) is counted, and no rank waits on a
    collective the other never makes (per-key ``log(sync_dist=True)`` hung there)."""
    import torch.multiprocessing as mp

    per_rank = [
        {("clean", "clean"): 6, ("charswap", "attacked"): 2},
        {("clean", "clean"): 5, ("charswap", "attacked"): 1, ("charswap", "fallback"): 1},
    ]
    ctx = mp.get_context("spawn")
    results = ctx.Manager().list()
    port = free_port()
    procs = [ctx.Process(target=_attack_counts_on_rank, args=(r, port, per_rank[r], results)) for r in range(WORLD)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0], "a rank hung or failed"
    expected = {"train/items/clean": 11.0, "train/items/charswap/attacked": 3.0, "train/items/charswap/fallback": 1.0}
    for _, logged in sorted(results):
        assert {k: v for k, (v, _) in logged.items()} == expected
        assert not any(kw.get("sync_dist") for _, kw in logged.values())


# 32 questions, mix at rate 0.5 (4 attacks): 96 items an epoch in 2 ranks x 8 = 6 steps; a checkpoint
# every 2 steps. The ranks' attack counts of a part of an epoch differ in their keys.
RESUME_RUN = [
    "trainer=ddp_cpu",
    "model=tiny",
    "task=mc",
    "attack=mix",
    "attack.rate=0.5",
    "data.n_train=32",
    "data.n_val=8",
    "data.n_test=8",
    "batch_size=8",
    "trainer.max_epochs=2",
    "checkpoint_every_n_steps=2",
    "+model.config.hidden_dropout_prob=0.1",
    "test_after_fit=false",
]


def _ddp_train(out: Path, *extra: str, kill_after_first_checkpoint: bool = False) -> subprocess.CompletedProcess | None:
    import signal
    import time

    launcher_vars = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "ROBUST_MRC_RUN_DIR")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k not in launcher_vars}
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WANDB_MODE="offline", HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "train.py", *RESUME_RUN, *extra, f"output_dir={out}", f"hydra.run.dir={out}"]
    if not kill_after_first_checkpoint:
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    last = out / "checkpoints" / "last.ckpt"
    deadline = time.monotonic() + 600
    while not last.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # both ranks, wherever they are: a node lost
    proc.wait()
    return None


@pytest.mark.slow  # two DDP trainings and a killed one (~70 s)
def test_a_killed_ddp_run_resumes_within_the_epoch_to_the_uninterrupted_run(tmp_path):
    import torch

    whole = _ddp_train(tmp_path / "whole")
    assert whole.returncode == 0, whole.stdout[-2000:] + whole.stderr[-4000:]
    _ddp_train(tmp_path / "killed", kill_after_first_checkpoint=True)
    saved = torch.load(tmp_path / "killed" / "checkpoints" / "last.ckpt", weights_only=False)
    assert saved["epoch"] == 0 and 0 < saved["global_step"] < 6  # written within the first epoch
    resumed = _ddp_train(tmp_path / "killed", "ckpt_path=last")
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-4000:]
    assert "resumed within epoch 0" in (tmp_path / "killed" / "train.log").read_text()
    a = torch.load(tmp_path / "whole" / "checkpoints" / "last.ckpt", weights_only=False)
    b = torch.load(tmp_path / "killed" / "checkpoints" / "last.ckpt", weights_only=False)
    assert a["global_step"] == b["global_step"] == 12
    assert all(torch.equal(a["state_dict"][k], b["state_dict"][k]) for k in a["state_dict"])


PAIRED_RUN = [
    "model=tiny",
    "task=mc",
    "attack=mix",
    "attack.attacks=[{name: charswap},{name: addsent}]",
    "attack.consistency=kl",
    "attack.balance=0.5",
    "embedding_adversary.method=freelb",
    "data.n_train=40",
    "data.n_val=27",
    "data.n_test=19",
    "batch_size=8",
    f"eval_batch_size={EVAL_BATCH}",
    "trainer.max_epochs=2",
    "record_train_items=true",
    "test_after_fit=false",
]


def test_two_ranks_keep_consistency_groups_whole_under_freelb(tmp_path):
    """attack.consistency=kl, attack.balance and FreeLB together in two real processes: each clean
    example trains in one batch of one rank with all its attacked copies (balanced ones included),
    the two ranks share the epoch's examples, and the consistency and FreeLB losses are logged finite."""
    train_on_two_ranks(PAIRED_RUN, tmp_path)
    ranks = read_items(tmp_path)
    assert set(ranks) == {0, 1}
    for epoch in (0, 1):
        where: dict[str, set] = defaultdict(set)  # id -> {(rank, batch)}
        rows: dict[str, list] = defaultdict(list)
        for rank, items in ranks.items():
            for r in items:
                if r["epoch"] == epoch:
                    where[r["id"]].add((rank, r["batch"]))
                    rows[(r["id"], rank, r["batch"])].append(r["attack"])
        assert len(where) == 40  # every training example, split between the ranks
        assert {rank for places in where.values() for rank, _ in places} == {0, 1}
        attacked = 0
        for (ex_id, _, _), attacks in rows.items():
            assert attacks.count("clean") == 1, (ex_id, attacks)  # a copy never trains without its clean example
            attacked += len(attacks) - 1
        assert attacked >= 20  # mix: 25 % per attack, each with its clean partner
        names = {a for attacks in rows.values() for a in attacks}
        assert {"charswap", "clean"} <= names and any(a.startswith("diagnosis") for a in names)
    logged = (tmp_path / "csv").rglob("metrics.csv")
    header, *lines = next(logged).read_text().splitlines()
    columns = header.split(",")
    for name in ("train/consistency", "train/adv_loss"):
        values = [float(line.split(",")[columns.index(name)]) for line in lines if line.split(",")[columns.index(name)]]
        assert values and all(math.isfinite(v) for v in values), name
