"""How a span task's data-dependent settings are decided, and said."""

from __future__ import annotations

import logging

from robust_mrc.data.examples import Answer, SpanExample
from robust_mrc.datamodules.span import resolve_span_task


def test_unanswerable_rows_switch_to_squad_v2_with_one_warning_that_counts_them(caplog):
    answered = SpanExample("a", "ctx here", "q?", (Answer("ctx", 0),))
    unanswerable = SpanExample("b", "ctx here", "q?", ())
    caplog.set_level(logging.INFO)
    task = resolve_span_task({"name": "span"}, {"train": [answered] * 9 + [unanswerable], "validation": [answered]})
    assert task["metric"] == "squad_v2" and task["no_answer"] is True
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "unanswerable questions in the data (1 of 10 in train)" in warnings[0]
    caplog.clear()
    task = resolve_span_task({"name": "span", "no_answer": False, "metric": "squad_v1"}, {"train": [answered, unanswerable]})
    assert task["metric"] == "squad_v1" and task["no_answer"] is False and not caplog.records  # the user decided
    assert resolve_span_task({"name": "span"}, {"train": [answered]})["metric"] == "squad_v1" and not caplog.records
