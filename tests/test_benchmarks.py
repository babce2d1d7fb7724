"""The benchmarks' own set-up steps run: a benchmark that cannot start measures nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_attack_throughput_builds_its_untrained_span_module_from_the_configs():
    bench = load("attack_throughput")
    module, key, description = bench.span_module(None)
    assert key == "untrained" and "untrained" in description
    assert type(module).__name__ == "SpanQAModule"


def test_attack_throughput_runs_the_bank_attacks_model_free():
    bench = load("attack_throughput")
    specs = dict(bench.attack_specs("mc", {"distractor_extraction", "distractor_generation", "charswap"}, None))
    assert specs["distractor_extraction"]["params"] == {"bank": "none"}
    assert specs["distractor_generation"]["params"] == {"bank": "none"}
    assert specs["charswap"]["params"] == {}


def test_magnet_screening_composes_its_evaluation_config(tmp_path):
    bench = load("magnet_screening")
    cfg = bench.screening_config(
        "run/best.ckpt", "race_local", 10, 40, tmp_path / "cache", tmp_path / "out", ["eval_batch_size=8", "split=validation"]
    )
    assert cfg.magnet_screen.enabled and cfg.magnet_screen.max_pool == 40 and cfg.eval_batch_size == 8


def test_train_throughput_reads_its_attack_configs_from_the_package():
    bench = load("train_throughput")
    for name in ("none", "mix", "charswap", "addsent", "augmented_option"):  # what its variants train with
        cfg = bench.attack_config(name)
        assert isinstance(cfg, dict) and cfg["name"] == name, name
    mix = bench.attack_config("mix")
    de = [s for specs in (mix.get("attacks_by_task") or {}).values() for s in specs if s["name"] == "distractor_extraction"]
    assert de and all(s["params"]["bank"] == "none" for s in de)


def test_the_startup_benchmark_times_the_commands_it_names():
    bench = load("startup")
    names = [name for name, _, _ in bench.commands()]
    assert names == ["robust-mrc --help", "robust-mrc attacks list", "python train.py --help"]
    for _, argv, target in bench.commands():
        assert target in (1.0, 1.5) and argv[-1] in ("--help", "list")
