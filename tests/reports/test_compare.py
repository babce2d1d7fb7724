"""The Table-6 layout of finished runs."""

from __future__ import annotations

import json
import re

import pytest

from robust_mrc.cli.compare import main
from robust_mrc.reports.compare import RunResult, comparison_rows


def write_run(path, attack, metrics):
    path.mkdir()
    (path / "metrics.json").write_text(json.dumps(metrics))
    (path / "config.yaml").write_text(f"attack:\n  name: {attack}\ntask:\n  name: mc\n")
    return path


def test_rows_by_training_policy_and_test_attack(tmp_path):
    clean = write_run(tmp_path / "a", "none", {"test/acc": 0.8, "test/addsent/acc": 0.4, "test/charswap/acc": 0.6, "test/addsent/n": 10.0})
    mix = write_run(tmp_path / "b", "mix", {"test/acc": 0.78, "test/addsent/acc": 0.7, "test/charswap/acc": 0.7})
    out = tmp_path / "table.md"
    table = main([str(clean), str(mix), "--out", str(out)])
    assert out.read_text() == table
    lines = table.splitlines()
    assert [c.strip() for c in lines[0].split("|")[1:-1]] == ["training", "clean", "addsent", "charswap", "attack avg"]
    assert "| none " in table and "0.500" in table and "0.700" in table  # (0.4 + 0.6) / 2 and (0.7 + 0.7) / 2
    page = (tmp_path / "table.html").read_text()  # beside --out: the same table, and a dot per run and set
    main([str(clean), str(mix), "--out", str(out)])  # its own page is written again
    assert "<td>none</td><td>0.800</td><td>0.400</td><td>0.600</td><td>0.500</td>" in page
    assert sorted(float(v) for v in re.findall(r'class="dot" [^>]*data-value="([0-9.]+)"', page)) == [
        0.4,
        0.6,
        0.7,
        0.7,
        0.78,
        0.8,
    ]
    mine = tmp_path / "mine.html"  # a file of the page's name that is not a robust-mrc page stays as it was
    mine.write_text("<p>my notes</p>")
    with pytest.raises(SystemExit):
        main([str(clean), str(mix), "--out", str(tmp_path / "mine.md")])
    assert mine.read_text() == "<p>my notes</p>" and not (tmp_path / "mine.md").exists()
    table_in_html = tmp_path / "t.html"  # --out FILE.html: the table goes there, no page over it
    assert main([str(clean), str(mix), "--out", str(table_in_html)]) == table_in_html.read_text()


def test_attack_average_is_over_the_sets_every_run_has():
    a = RunResult.from_metrics("a", "span", {"val/f1": 70.0, "val/x/f1": 40.0, "val/y/f1": 10.0})
    b = RunResult.from_metrics("b", "span", {"val/f1": 70.0, "val/x/f1": 60.0})
    rows = comparison_rows([("a", a), ("b", b)], "f1")
    assert [r["attack avg"] for r in rows] == ["40.0", "60.0"] and rows[1]["y"] == "-"


def test_val_stage_when_a_run_has_no_test():
    rows = comparison_rows([("x", RunResult.from_metrics("x", "span", {"val/f1": 50.0, "val/char_noise/f1": 40.0}))], "f1")
    assert rows == [{"training": "x", "clean": "50.0", "char_noise": "40.0", "attack avg": "40.0"}]


def test_a_directory_without_metrics_says_so(tmp_path):
    with pytest.raises(SystemExit):
        main([str(tmp_path)])


def test_compare_reads_evaluation_reports_named_by_the_training_policy(tmp_path):
    import json

    from omegaconf import OmegaConf

    dirs = []
    for attack, seed, clean, adv in (("none", 1, 70.0, 40.0), ("mix", 1, 71.0, 55.0), ("mix", 2, 69.0, 53.0)):
        run = tmp_path / f"train_{attack}_{seed}"
        (run / "checkpoints").mkdir(parents=True)
        OmegaConf.save(OmegaConf.create({"attack": {"name": attack}, "task": {"name": "span"}, "seed": seed}), run / "config.yaml")
        ev = tmp_path / f"eval_{attack}_{seed}"
        ev.mkdir()
        sets = {"clean": {"n": 10, "f1": clean, "ci95": {"f1": [clean - 5, clean + 5]}}, "addsent": {"n": 10, "f1": adv, "drop": 0.1}}
        report = {
            "task": "span",
            "split": "validation",
            "primary": "f1",
            "models": {"m": {"ckpt": str(run / "checkpoints" / "best.ckpt"), "sets": sets}},
        }
        (ev / "report.json").write_text(json.dumps(report))
        dirs.append(str(ev))
    table = main([*dirs])
    lines = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert [line.split("|")[1].strip() for line in lines] == ["none s1", "mix s1", "mix s2", "mix mean of 2 seeds", "mix seed range"]
    assert "55.0" in lines[1] and "40.0" in lines[0]
    cells = lambda line: [c.strip() for c in line.split("|")[2:-1]]  # noqa: E731
    assert cells(lines[3]) == ["70.0", "54.0", "54.0"] and cells(lines[4]) == ["2.0", "2.0", "2.0"]
    with_ci = main([*dirs, "--ci"])
    assert "70.0 [65.0, 75.0]" in with_ci
    assert "mean of" not in main([*dirs, "--no-seed-means"])


def test_two_runs_of_one_policy_and_seed_are_told_apart_not_averaged(tmp_path):
    import json

    from omegaconf import OmegaConf

    dirs = []
    for run_name, adv in (("char_noise_s42", 80.0), ("char_noise_v2_s42", 55.0)):  # a variant, same seed
        run = tmp_path / run_name
        (run / "checkpoints").mkdir(parents=True)
        OmegaConf.save(OmegaConf.create({"attack": {"name": "char_noise"}, "task": {"name": "span"}, "seed": 42}), run / "config.yaml")
        ev = tmp_path / f"eval_{run_name}"
        ev.mkdir()
        sets = {"clean": {"n": 10, "f1": 72.0}, "char_noise": {"n": 10, "f1": adv}}
        models = {"m": {"ckpt": str(run / "checkpoints" / "best.ckpt"), "sets": sets}}
        (ev / "report.json").write_text(json.dumps({"task": "span", "split": "validation", "primary": "f1", "models": models}))
        dirs.append(str(ev))
    lines = [line for line in main(dirs).splitlines() if line.startswith("| ")][1:]
    names = [line.split("|")[1].strip() for line in lines]
    assert names == ["char_noise s42 [char_noise_s42]", "char_noise s42 [char_noise_v2_s42]"]
    # a second evaluation of one run (another set) joins that run's row
    extra = tmp_path / "eval_more"
    extra.mkdir()
    models = {
        "m": {
            "ckpt": str(tmp_path / "char_noise_v2_s42" / "checkpoints" / "best.ckpt"),
            "sets": {"clean": {"n": 10, "f1": 72.0}, "word_noise": {"n": 10, "f1": 66.0}},
        }
    }
    (extra / "report.json").write_text(json.dumps({"task": "span", "split": "validation", "primary": "f1", "models": models}))
    lines = [line for line in main([*dirs, str(extra)]).splitlines() if line.startswith("| ")]
    assert len(lines) == 3 and "word_noise" in lines[0] and "66.0" in lines[2] and "55.0" in lines[2]


def test_against_gives_paired_differences_from_the_prediction_records(tmp_path, capsys):
    import json

    from omegaconf import OmegaConf

    golds = {f"q{i}": ["Paris"] for i in range(20)}
    dirs = []
    for run_name, right in (("clean_s1", 10), ("noise_s1", 15)):  # 10 vs 15 of 20 questions right on char_noise
        run = tmp_path / run_name
        (run / "checkpoints").mkdir(parents=True)
        OmegaConf.save(OmegaConf.create({"attack": {"name": run_name[:-3]}, "task": {"name": "span"}, "seed": 1}), run / "config.yaml")
        ev = tmp_path / f"eval_{run_name}"
        preds = ev / "predictions" / "m"
        preds.mkdir(parents=True)
        for set_name, n_right in (("clean", 20), ("char_noise", right)):
            records = {q: {"pred": "Paris" if k < n_right else "Rome", "golds": g} for k, (q, g) in enumerate(golds.items())}
            (preds / f"{set_name}.json").write_text(json.dumps(records))
        sets = {"clean": {"n": 20, "f1": 100.0}, "char_noise": {"n": 20, "f1": 5.0 * right}}
        models = {"m": {"ckpt": str(run / "checkpoints" / "best.ckpt"), "sets": sets}}
        report = {"task": "span", "split": "validation", "primary": "f1", "metric": "squad_v1", "models": models}
        (ev / "report.json").write_text(json.dumps(report))
        dirs.append(str(ev))
    out = main([*dirs, "--against", "clean s1"])
    diff = [line for line in out.split("Difference against", 1)[1].splitlines() if line.startswith("| noise s1")]
    cells = [c.strip() for c in diff[0].split("|")[2:-1]]
    assert cells[0] == "+0.0 [+0.0, +0.0]"  # clean: the same answers
    value, interval = cells[1].split(" ", 1)
    assert value == "+25.0"  # 5 more questions of 20 right
    lo, hi = (float(x) for x in interval.strip("[]").split(", "))
    assert 0 < lo < 25 < hi <= 50
    with pytest.raises(SystemExit):
        main([*dirs, "--against", "nothing s9"])
    err = capsys.readouterr().err
    assert "no such row" in err and "clean s1" in err and "Traceback" not in err


def test_rows_name_the_training_components_added_to_the_policy(tmp_path):
    """Two mix runs of one seed, one with consistency, balance and FreeLB: the row names say so,
    so they are neither merged nor averaged as seeds of one recipe."""
    import json

    from omegaconf import OmegaConf

    recipes = {
        "mix_s42": {"attack": {"name": "mix"}},
        "robust_s42": {
            "attack": {"name": "mix", "consistency": "kl", "consistency_weight": 0.5, "balance": 0.5},
            "embedding_adversary": {"method": "freelb"},
        },
        "options_s42": {"attack": {"name": "none", "consistency": None, "balance": 0.0}, "task": {"inputs": "options"}},
    }
    dirs = []
    for run_name, cfg in recipes.items():
        run = tmp_path / run_name
        (run / "checkpoints").mkdir(parents=True)
        OmegaConf.save(OmegaConf.merge({"task": {"name": "mc"}, "seed": 42}, cfg), run / "config.yaml")
        ev = tmp_path / f"eval_{run_name}"
        ev.mkdir()
        models = {"m": {"ckpt": str(run / "checkpoints" / "best.ckpt"), "sets": {"clean": {"n": 10, "acc": 0.5}}}}
        (ev / "report.json").write_text(json.dumps({"task": "mc", "split": "test", "primary": "acc", "models": models}))
        dirs.append(str(ev))
    lines = [line for line in main(dirs).splitlines() if line.startswith("| ")][1:]
    assert [line.split("|")[1].strip() for line in lines] == [
        "mix s42",
        "mix + consistency kl x0.5 + balance 0.5 + freelb s42",
        "none (options) s42",
    ]
    run = write_run(tmp_path / "train_dir", "mix", {"test/acc": 0.5})
    (run / "config.yaml").write_text("attack:\n  name: mix\n  consistency: kl\n  balance: 0.25\ntask:\n  name: mc\n")
    assert "| mix + consistency kl + balance 0.25 " in main([str(run)])


def test_by_clean_splits_each_attacked_set_by_the_clean_answer(tmp_path):
    """--by-clean: the attacked score over the questions answered right on clean and over those
    answered wrong, from each model's records (a mark that gives the answer away by elimination
    shows in the second)."""
    import json

    from omegaconf import OmegaConf

    run = tmp_path / "mix_s1"
    (run / "checkpoints").mkdir(parents=True)
    OmegaConf.save(OmegaConf.create({"attack": {"name": "mix"}, "task": {"name": "mc"}, "seed": 1}), run / "config.yaml")
    ev = tmp_path / "eval"
    preds = ev / "predictions" / "m"
    preds.mkdir(parents=True)
    right_on = {"clean": set(range(10)), "addsent": {0, 1, 2, 3, 4, *range(10, 18)}}  # of q0..q19
    for set_name, right in right_on.items():
        records = {f"q{i}": {"pred": 0 if i in right else 1, "label": 0, "probs": [0.6, 0.4]} for i in range(20)}
        (preds / f"{set_name}.json").write_text(json.dumps(records))
    sets = {"clean": {"n": 20, "acc": 0.5}, "addsent": {"n": 20, "acc": 0.65}}
    models = {"m": {"ckpt": str(run / "checkpoints" / "best.ckpt"), "sets": sets}}
    (ev / "report.json").write_text(json.dumps({"task": "mc", "split": "test", "primary": "acc", "models": models}))
    out = main([str(ev), "--by-clean"])
    row = [line for line in out.split("answered right on clean", 1)[1].splitlines() if line.startswith("| mix s1")]
    assert [c.strip() for c in row[0].split("|")[2:-1]] == ["0.500 (10) / 0.800 (10)"]
    assert "answered right on clean" not in main([str(ev)])
    trained = write_run(tmp_path / "train_dir", "mix", {"test/acc": 0.5})  # a training run has no records
    assert "no per-question records: give evaluate.py directories" in main([str(trained), "--by-clean"])
