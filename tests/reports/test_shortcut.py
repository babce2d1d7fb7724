"""Cue probes in the reports: marked as probes, kept out of the attack average, "shortcut" = probe - clean."""

from __future__ import annotations

import json
import re

import pytest

from robust_mrc.cli.compare import main as compare_main
from robust_mrc.data.examples import MCExample
from robust_mrc.evaluation.suites import EvalSet, SetSpec
from robust_mrc.reports.robustness import build_report, headline_metrics, markdown, report_rows
from tests.reports.test_tables import mc_metrics, mc_records

RIGHT = {"clean": 30, "addsent": 12, "charswap": 20, "diagnosis": 16, "extraction_cue": 34}  # of 40


def mc_report(names=tuple(RIGHT)) -> dict:
    examples = [MCExample(f"q{i}", "P.", "Q?", ("a", "b"), 0) for i in range(40)]
    sets = {name: EvalSet(SetSpec(name, attack=None if name == "clean" else name), examples, name) for name in names}
    predictions = {"best": {name: mc_records(40, RIGHT[name], seed=i) for i, name in enumerate(names)}}
    return build_report(
        task="mc",
        suite="advrace",
        split="test",
        data=None,
        primary="acc",
        seed=0,
        sets=sets,
        predictions=predictions,
        checkpoints={"best": "best.ckpt"},
        metrics_of=mc_metrics,
    )


def test_probes_are_marked_kept_out_of_the_attack_average_and_get_their_shortcut():
    report = mc_report()
    assert {name for name, info in report["sets"].items() if info.get("probe")} == {"diagnosis", "extraction_cue"}
    entry = report["models"]["best"]
    assert entry["attack_avg"] == pytest.approx((12 + 20) / 2 / 40)  # addsent and charswap only
    assert entry["sets"]["diagnosis"]["shortcut"] == pytest.approx((16 - 30) / 40)  # fell: follows the mark
    assert entry["sets"]["extraction_cue"]["shortcut"] == pytest.approx((34 - 30) / 40)  # gained: reads
    assert all("shortcut" not in entry["sets"][s] for s in ("clean", "addsent", "charswap"))
    assert headline_metrics(report, "best")["test/diagnosis/shortcut"] == pytest.approx(-14 / 40)
    rows = {r["set"]: r for r in report_rows(report)}
    assert rows["diagnosis"]["shortcut"] == pytest.approx(-0.35) and rows["addsent"]["shortcut"] is None
    assert rows["attack avg"]["n"] == 80 and rows["attack avg"]["shortcut"] is None
    text = markdown(report)
    header = next(line for line in text.splitlines() if line.startswith("| model"))
    assert "Cue probes (diagnosis, extraction_cue)" in text and header.split("|")[-2].strip() == "shortcut"
    assert "-0.3500" in text
    addsent_line = next(line for line in text.splitlines() if line.startswith("| best") and "| addsent " in line)
    assert re.search(r"\|\s+-\s+\|$", addsent_line)  # no shortcut on an attack's row
    from robust_mrc.export.card import _report_table  # the model card's copy of the table

    assert any(line.startswith("| best | addsent |") and line.endswith("| - |") for line in _report_table(report))


def test_a_report_without_probes_has_no_shortcut_column():
    report = mc_report(("clean", "addsent", "charswap"))
    assert all("shortcut" not in r for r in report_rows(report))
    assert "Cue probes" not in markdown(report)


def test_compare_shows_probe_columns_after_the_attack_average_and_never_averages_them(tmp_path):
    dirs = []
    for policy, values in (("none", (0.7, 0.4, 0.8)), ("mix", (0.72, 0.6, 0.3))):
        ev = tmp_path / policy
        ev.mkdir()
        clean, addsent, diagnosis = values
        report = {
            "task": "mc",
            "split": "test",
            "primary": "acc",
            "sets": {"clean": {}, "addsent": {}, "diagnosis": {"probe": True}},
            "models": {
                policy: {
                    "sets": {
                        "clean": {"n": 10, "acc": clean},
                        "addsent": {"n": 10, "acc": addsent},
                        "diagnosis": {"n": 10, "acc": diagnosis, "shortcut": diagnosis - clean},
                    }
                }
            },
        }
        (ev / "report.json").write_text(json.dumps(report))
        dirs.append(str(ev))
    table = compare_main(dirs)
    lines = table.splitlines()
    assert [c.strip() for c in lines[0].split("|")[1:-1]] == ["training", "clean", "addsent", "attack avg", "diagnosis"]
    cells = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in lines[2:4]}
    assert cells == {"none": ["0.700", "0.400", "0.400", "0.800"], "mix": ["0.720", "0.600", "0.600", "0.300"]}
    assert "Cue probes (diagnosis)" in table
