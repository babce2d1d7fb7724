"""logger=wandb, offline: what the run files hold (config, per-epoch robust metrics, test tables,
group and tags), and one finished run per job of a Hydra multirun.

An offline run writes ``run-<id>.wandb`` (wandb's record log: a 7-byte header, then 32 KiB
blocks of records, each a 7-byte header -- checksum, length, kind -- and a protobuf ``Record``;
long records are split FIRST/MIDDLE/LAST across blocks) and the tables under
``files/media/table/``. wandb 0.31 ships the protobuf classes but no Python reader, so
:func:`wandb_records` reads the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robust_mrc.jobs.train import train
from tests.helpers import make_cfg

pytest.importorskip("wandb")
from wandb.proto import wandb_internal_pb2 as pb  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUN = [
    "model=tiny",
    "attack=charswap",
    "data.n_train=48",
    "data.n_val=16",
    "data.n_test=16",
    "trainer.max_epochs=2",
    "batch_size=16",
    "logger=wandb",
]
BLOCK = 32 * 1024
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def wandb_records(path: Path):
    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path}: not a wandb run log"
    pos, buf = 7, b""
    while pos + 7 <= len(data):
        if BLOCK - pos % BLOCK < 7:  # a block's tail too short for a header is padding
            pos += BLOCK - pos % BLOCK
            continue
        length, kind = int.from_bytes(data[pos + 4 : pos + 6], "little"), data[pos + 6]
        payload = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (FULL, FIRST):
            buf = payload
        elif kind in (MIDDLE, LAST):
            buf += payload
        if kind in (FULL, LAST):
            record = pb.Record()
            record.ParseFromString(buf)
            yield record


class OfflineRun:
    """What one offline run logged: run record, config, history rows, summary, tables."""

    def __init__(self, run_dir: Path):
        self.dir = run_dir
        self.run = None
        self.config: dict = {}
        self.history: list[dict] = []
        self.summary: dict = {}
        self.exited = False
        for record in wandb_records(next(run_dir.glob("run-*.wandb"))):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                self.run = record.run
                self.config.update({i.key: json.loads(i.value_json) for i in record.run.config.update})
            elif kind == "config":
                self.config.update({i.key: json.loads(i.value_json) for i in record.config.update})
            elif kind == "history":
                self.history.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item})
            elif kind == "summary":
                self.summary.update({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.summary.update})
            elif kind == "exit":
                self.exited = True

    def table(self, key: str) -> dict:
        path = self.summary[f"{key}/path"]
        return json.loads((self.dir / "files" / path).read_text())


def offline_runs(out: Path, wait: float = 30.0) -> list[OfflineRun]:
    """The offline runs under ``out``, read again until each holds its exit record or ``wait``
    seconds pass: the wandb service writes the file's last records after ``wandb.finish()``
    returns (a fresh-clone CI once read it before the exit record was there)."""
    deadline = time.monotonic() + wait
    while True:
        runs = [OfflineRun(p) for p in sorted((out / "wandb").glob("offline-run-*"))]
        if (runs and all(r.exited for r in runs)) or time.monotonic() > deadline:
            return runs
        time.sleep(0.5)


def test_offline_run_holds_config_robust_metrics_and_test_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb_dir"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    metrics = train(make_cfg(*RUN, "logger.group=advrace_tiny", "seed=7", f"output_dir={tmp_path}"))
    (run,) = offline_runs(tmp_path)
    assert run.exited  # wandb.finish() ran

    # the resolved config, grouped and tagged
    assert run.config["model"]["name"] == "tiny" and run.config["attack"]["attacks"][0]["name"] == "charswap"
    assert run.config["data"]["n_train"] == 48 and run.config["seed"] == 7
    assert "${" not in json.dumps(run.config["logger"])  # resolved
    assert run.run.run_group == "advrace_tiny"
    assert {"attack:charswap", "model:tiny", "seed:7", "task:mc"} <= set(run.run.tags)

    # per-epoch robust validation metrics
    rows = [row for row in run.history if "val/robust_avg" in row]
    # one row per training epoch (the sanity check is not logged), then the best checkpoint's
    assert [row["epoch"] for row in rows] == [0, 1, 2]
    assert all({"val/acc", "val/charswap/acc", "val/charswap/n"} <= set(row) for row in rows)
    assert all(row["val/robust_avg"] == row["val/charswap/acc"] for row in rows)
    assert rows[-1]["val/acc"] == pytest.approx(metrics["val/acc"])

    # robustness table: one row per test set
    table = run.table("test/robustness")
    assert table["columns"] == ["set", "metric", "clean", "attacked", "drop", "abs_drop"]
    rows = {r[0]: r for r in table["data"]}
    assert set(rows) == {"clean", "charswap"}
    _, metric, clean, attacked, drop, abs_drop = rows["charswap"]
    assert metric == "acc" and clean == pytest.approx(metrics["test/acc"]) and attacked == pytest.approx(metrics["test/charswap/acc"])
    # one meaning of drop everywhere: relative, as in the evaluation report; abs_drop absolute
    assert abs_drop == pytest.approx(clean - attacked) and rows["clean"][4] == 0 and rows["clean"][5] == 0
    assert drop == pytest.approx((clean - attacked) / clean if clean else 0.0)
    assert run.summary["test/charswap/drop"] == pytest.approx(drop)
    assert run.summary["test/charswap/abs_drop"] == pytest.approx(abs_drop)

    # sample attacked examples with prediction and gold
    samples = run.table("test/samples")
    cols = samples["columns"]
    assert {"set", "id", "question", "edits", "prediction", "clean_prediction", "gold", "correct"} <= set(cols)
    assert 1 <= len(samples["data"]) <= 3
    for row in samples["data"]:
        r = dict(zip(cols, row))
        assert r["set"] == "charswap" and r["edits"].startswith("charswap")
        assert r["prediction"][:2] in ("A.", "B.", "C.", "D.") and r["gold"][:2] in ("A.", "B.", "C.", "D.")
        assert r["correct"] == (r["prediction"] == r["gold"])


@pytest.mark.slow  # a multirun of W&B runs in a subprocess
def test_every_multirun_job_gets_its_own_finished_run_grouped_by_experiment(tmp_path):
    cmd = [
        sys.executable,
        "train.py",
        "-m",
        "experiment=noise_amounts",
        "attack.amount=none,full",
        "model=tiny",
        "data=synthetic_span",
        "trainer=cpu",
        "trainer.precision=32-true",
        "data.n_train=16",
        "data.n_val=8",
        "data.n_test=8",
        "trainer.max_epochs=1",
        "batch_size=16",
        "logger=wandb",
        "logger.mode=offline",
        f"hydra.sweep.dir={tmp_path}",
    ]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True, timeout=600)
    runs = {}
    for job in sorted(p for p in tmp_path.iterdir() if p.is_dir()):
        (run,) = offline_runs(job)  # a run of its own: not the first job's run reused
        runs[run.config["attack"]["amount"]] = run
    assert set(runs) == {"none", "full"}
    assert runs["none"].run.run_id != runs["full"].run.run_id
    for amount, run in runs.items():
        assert run.exited and run.run.run_group == "noise_amounts"
        assert {"experiment:noise_amounts", f"attack:amount_{amount}", "model:tiny", "task:span"} <= set(run.run.tags)
        assert any("val/char_noise/f1" in row for row in run.history)
        assert run.table("test/robustness")["data"][0][:2] == ["clean", "f1"]


def test_sweep_file_gives_hydra_overrides_that_compose():
    import itertools

    import yaml
    from wandb.sdk.launch.sweeps.utils import create_sweep_command_args

    sweep = yaml.safe_load((ROOT / "slurm" / "wandb_sweep.yaml").read_text())
    assert sweep["program"] == "train.py" and sweep["metric"] == {"name": "val/robust_avg", "goal": "maximize"}
    assert "${args_no_hyphens}" in sweep["command"]
    names = list(sweep["parameters"])
    grid = list(itertools.product(*(sweep["parameters"][n]["values"] for n in names)))
    assert len(grid) == 8
    for combo in grid:
        # what `wandb agent` puts in place of ${args_no_hyphens}
        args = create_sweep_command_args({"args": {n: {"value": v} for n, v in zip(names, combo)}})["args_no_hyphens"]
        command = [a for c in sweep["command"] for a in (args if c == "${args_no_hyphens}" else [c])]
        overrides = [a for a in command if "=" in a]
        assert command[:3] == ["${env}", "python", "${program}"] and len(overrides) == len(command) - 3
        cfg = make_cfg(*overrides)
        assert (cfg.attack.name, cfg.model.optim.lr) == combo
        assert cfg.logger.name == "wandb" and cfg.logger.mode == "online"
        assert len(cfg.attack.eval) == 4  # val/robust_avg averages the four AdvRACE attacks
