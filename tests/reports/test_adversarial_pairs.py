"""The report's pairing of adversarial sets with the clean set: Jia & Liang's grouped scores,
drop, abs_drop and flip by original question (hand-made records)."""

from __future__ import annotations

import pytest

from robust_mrc.reports.robustness import model_summary, report_rows, set_entry


def metrics_of(records):
    from robust_mrc.metrics import get_span_metric

    r = get_span_metric("squad_v1")({k: v["pred"] for k, v in records.items()}, {k: v["golds"] for k, v in records.items()})
    return {"em": r["exact_match"], "f1": r["f1"]}


def rec(pred, golds=("Denver Broncos",)):
    return {"pred": pred, "golds": list(golds)}


CLEAN = {"a": rec("Denver Broncos"), "b": rec("Panthers"), "c": rec("Denver Broncos")}


def entry(records, order=None):
    return set_entry(records, CLEAN, metrics_of=metrics_of, primary="f1", task="span", adversarial=True, order=order or list(records))


def test_original_wrong_and_variant_right_counts_the_variant():
    e = entry({"b-1": rec("Denver Broncos")})
    # group b: original wrong (0), its only variant right (100): adversarial takes the variant
    assert e["orig_f1"] == 0.0 and e["adv_f1"] == 100.0 and e["drop"] == 0.0 and e["abs_drop"] == -100.0


def test_the_lowest_f1_variant_wins_and_equal_f1_keeps_the_first_in_file_order():
    records = {"a-1": rec("Broncos"), "a-2": rec("the Denver Broncos"), "a-3": rec("Panthers")}
    e = entry(records)
    assert e["adv_f1"] == 0.0 and e["orig_f1"] == 100.0 and e["flip"] == pytest.approx(2 / 3)
    # two variants with equal F1 (100: the same tokens) and different EM (0, then 1)
    tie2 = {"a-1": rec("Broncos Denver"), "a-2": rec("Denver Broncos")}
    assert entry(tie2)["adv_em"] == 0.0  # the first in file order keeps its place
    assert entry(tie2, order=["a-2", "a-1"])["adv_em"] == 100.0


def test_unanswered_variants_fall_back_to_the_original():
    # group c has no variant record at all (unanswered): its original stands in
    e = entry({"a-1": rec("Panthers")}, order=["a-1", "c-1"])
    assert e["paired"] == 1 and e["adv_f1"] == pytest.approx(0.0)


def test_the_attack_average_row_has_no_empty_cells():
    sets = {
        "clean": {"n": 3, "em": 66.7, "f1": 70.0},
        "x": {"n": 3, "em": 30.0, "f1": 40.0, "drop": 0.43, "abs_drop": 30.0, "flip": 0.5},
        "y": {"n": 3, "em": 10.0, "f1": 20.0, "drop": 0.71, "abs_drop": 50.0, "flip": 0.7},
    }
    report = {"task": "span", "primary": "f1", "models": {"m": {"sets": sets, **model_summary(sets, "f1")}}}
    avg = [r for r in report_rows(report) if r["set"] == "attack avg"][0]
    assert avg["em"] == pytest.approx(20.0) and avg["f1"] == pytest.approx(30.0) and avg["flip"] == pytest.approx(0.6)
    assert avg["abs_drop"] == pytest.approx(40.0) and avg["drop"] == pytest.approx(40.0 / 70.0)
    assert all(v == v for v in avg.values() if isinstance(v, float))  # no nan
