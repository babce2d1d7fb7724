"""The examples behind the numbers: per attacked set, the questions whose answer flipped and a
sample of the others, each with what the attack changed and what every model chose on the clean
and on the attacked version. ``report.html``'s examples browser and W&B's ``eval/examples`` table
show these rows.

A row's ``status`` is the headline model's (the single model, or the ensemble): ``flipped``
(right on one side, wrong on the other; ``direction`` says which way), ``held`` (right on both) or
``wrong`` (wrong on both); "right" as the report counts it (multiple choice: the gold option;
span QA: exact match under the task's scorer). A set shows at most ``per_set`` rows: the flipped
first (right -> wrong before wrong -> right), then a seeded sample of the others; ``counts`` says
how many of each status the set has and ``shown`` how many the page holds (the rest are in
``predictions/``). The page's size is bounded besides: the sets share :data:`TEXT_BUDGET`
characters of example text evenly, and a set stops adding rows when its share is spent (a
corpus of very long passages shows fewer examples, and says so).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from robust_mrc.data.examples import LETTERS, MCExample, SpanExample
from robust_mrc.diagnostics.drops import record_correct
from robust_mrc.diagnostics.error_analysis import question_type
from robust_mrc.metrics.adversarial import original_id
from robust_mrc.reports.marks import diff_segments, find_span, overlay

CLEAN = "clean"
PER_SET = 30
TEXT_BUDGET = 4_000_000  # characters of example text over all sets (about that many bytes of page)
STATUSES = ("flipped", "held", "wrong")
RIGHT_TO_WRONG, WRONG_TO_RIGHT = "right → wrong", "wrong → right"


def browser_sets(
    set_examples: Mapping[str, Sequence[MCExample | SpanExample]],
    predictions: Mapping[str, Mapping[str, Mapping[str, dict]]],
    headline: str,
    *,
    metric: str = "squad_v1",
    per_set: int = PER_SET,
    seed: int = 0,
    budget: int = TEXT_BUDGET,
) -> dict[str, dict[str, Any]]:
    """``{set: {"counts": {status: n}, "shown": {status: n}, "rows": [row, ...]}}`` for every set
    of ``set_examples`` but clean that ``headline`` predicted (see the module doc);
    ``predictions``: model -> set -> records, as ``report.json`` was built from."""
    clean = {ex.id: ex for ex in set_examples.get(CLEAN, ())}
    share = budget // max(1, sum(1 for name in set_examples if name != CLEAN))
    out: dict[str, dict[str, Any]] = {}
    for name, examples in set_examples.items():
        records = predictions.get(headline, {}).get(name)
        clean_records = predictions.get(headline, {}).get(CLEAN, {})
        if name == CLEAN or not records:
            continue
        by_status: dict[str, list] = {s: [] for s in STATUSES}
        for ex in examples:
            original = _clean_id(ex.id, clean)
            if ex.id not in records or original is None or original not in clean_records:
                continue
            status, direction = _status(clean_records[original], records[ex.id], metric)
            by_status[status].append((ex, original, status, direction))
        flipped = sorted(by_status["flipped"], key=lambda t: t[3] != RIGHT_TO_WRONG)
        others = by_status["held"] + by_status["wrong"]
        random.Random(f"{seed}:{name}").shuffle(others)
        rows, spent = [], 0
        for ex, original, status, direction in (flipped + others)[: max(0, per_set)]:
            row = _row(name, ex, clean[original], original, status, direction, predictions, headline, metric)
            spent += _text_size(row)
            if spent > share:
                break
            rows.append(row)
        out[name] = {
            "counts": {s: len(v) for s, v in by_status.items()},
            "shown": {s: sum(r["status"] == s for r in rows) for s in STATUSES},
            "rows": rows,
        }
    return out


def _text_size(row: Mapping[str, Any]) -> int:
    """The characters of text a row puts on the page."""
    segments = [*row["question"], *row["passage"], *(s for o in row.get("options", ()) for s in o["text"])]
    answers = [str(c.get("answer", "")) for m in row["models"] for c in (m["clean"], m["attacked"])]
    return sum(len(t) for t, _ in segments) + sum(map(len, answers)) + sum(map(len, row["edits"]))


def _clean_id(example_id: str, clean: Mapping[str, Any]) -> str | None:
    """The clean question an attacked one pairs with: the same id, or the original of a variant
    ``<original id>-<suffix>`` (Jia & Liang's files)."""
    if example_id in clean:
        return example_id
    original = original_id(example_id)
    return original if original in clean else None


def _status(clean_record: Mapping, record: Mapping, metric: str) -> tuple[str, str]:
    before, after = bool(record_correct(clean_record, metric)), bool(record_correct(record, metric))
    if before and after:
        return "held", ""
    if not before and not after:
        return "wrong", ""
    return "flipped", RIGHT_TO_WRONG if before else WRONG_TO_RIGHT


def _row(set_name, ex, clean_ex, original, status, direction, predictions, headline, metric) -> dict[str, Any]:
    models = []
    for model, per_set in predictions.items():
        record, clean_record = per_set.get(set_name, {}).get(ex.id), per_set.get(CLEAN, {}).get(original)
        if record is None or clean_record is None:
            continue
        models.append({"model": model, "clean": _choice(clean_ex, clean_record, metric), "attacked": _choice(ex, record, metric)})
    row: dict[str, Any] = {
        "set": set_name,
        "id": ex.id,
        "status": status,
        "direction": direction,
        "qtype": question_type(clean_ex.question),
        "question": diff_segments(clean_ex.question, ex.question),
        "edits": [f"{e.attack}: {e.detail}" if e.detail else e.attack for e in ex.edits],
        "models": models,
        "headline": headline,
    }
    if isinstance(ex, MCExample):
        row["passage"] = diff_segments(clean_ex.passage, ex.passage)
        row["options"] = [
            {
                "letter": LETTERS[i],
                "text": diff_segments(clean_ex.options[i] if i < len(clean_ex.options) else "", option),
                "gold": i == ex.label,
            }
            for i, option in enumerate(ex.options)
        ]
    else:
        spans = [(a.start, a.end, "gold") for a in ex.answers]
        mine = next((m for m in models if m["model"] == headline), None)
        gold_at = ex.answers[0].start if ex.answers else None
        for side, cls in (("clean", "pred-clean"), ("attacked", "pred")):
            found = find_span(ex.context, mine[side]["answer"], gold_at) if mine else None
            if found:
                spans.append((*found, cls))
        row["passage"] = overlay(diff_segments(clean_ex.context, ex.context), spans)
        row["golds"] = list(dict.fromkeys(ex.answer_texts)) or ["(no answer)"]
    return row


def _choice(ex, record: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """What a model chose: the answer as text, its probability (multiple choice: of the chosen
    option; span QA: the model's confidence), whether it is right, and (span QA) its F1 (0-100)."""
    pred = record.get("pred")
    out: dict[str, Any] = {"correct": bool(record_correct(record, metric))}
    if isinstance(ex, MCExample):
        k = int(pred)
        out["answer"] = f"{LETTERS[k]}. {ex.options[k]}" if 0 <= k < len(ex.options) else str(pred)
        probs = record.get("probs")
        out["prob"] = float(probs[k]) if probs and 0 <= k < len(probs) else None
    else:
        from robust_mrc.metrics import question_f1

        out["answer"] = str(pred)
        out["prob"] = float(record["confidence"]) if record.get("confidence") is not None else None
        out["f1"] = 100.0 * question_f1(metric, str(pred), record.get("golds") or [])
    if record.get("members"):
        out["members"] = [str(m) for m in record["members"]]
    return out
