"""``robust-mrc metrics DATA_FILE PREDICTIONS_JSON``: score predictions as the official scripts do.

Prints one JSON object on stdout: ``exact_match`` and ``f1`` (percent, over every question of
DATA_FILE; a missing prediction scores 0, predictions for unknown ids are ignored); with
``--adversarial`` also ``orig_exact_match``, ``orig_f1``, ``adv_exact_match``, ``adv_f1`` (Jia &
Liang's grouping, :mod:`robust_mrc.metrics.adversarial`). Notes (missing predictions, the metric
chosen) go to stderr. A mistake in the inputs (a missing or unreadable file, a file past the size
cap, no questions, ``--adversarial`` on a set without variants) is one line, ``Error: ...``, and exit
status 1 (``--debug``: its traceback); a mistake in the arguments is argparse's usage line and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence

from robust_mrc.core.errors import run_with_one_line_errors
from robust_mrc.metrics import span_metric
from robust_mrc.metrics.adversarial import adversarial_scores, original_id
from robust_mrc.metrics.data_file import ScoringInputError, read_predictions, read_references

__all__ = ["main"]

_METRICS = ("squad_v1", "squad_v2", "dureader")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="robust-mrc metrics",
        description="Score span QA predictions exactly as the official SQuAD v1.1 / v2.0 and "
        "DuReader_robust scripts do, optionally with Jia & Liang's grouped adversarial scores.",
    )
    parser.add_argument("data_file", metavar="DATA_FILE", help="SQuAD-layout JSON (plain or .gz); only ids and answer texts are read")
    parser.add_argument("predictions", metavar="PREDICTIONS_JSON", help="JSON object {question id: answer text}")
    parser.add_argument(
        "--metric",
        choices=_METRICS + ("squad",),
        default=None,
        help="squad_v1 (evaluate-v1.1.py; 'squad' is an alias), squad_v2 (evaluate-v2.0.py) or "
        "dureader (DuReader_robust evaluate.py); default: squad_v2 when a question of DATA_FILE has "
        '"is_impossible": true, else squad_v1',
    )
    parser.add_argument(
        "--adversarial",
        action="store_true",
        help="also report orig_/adv_ exact_match and f1: variants '<original id>-<suffix>' grouped "
        "with their original, the worst (lowest-F1) answered variant per group",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error in the inputs")
    return parser


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def _default_metric(references: dict[str, list[str]], impossible: bool) -> str:
    if impossible:
        return "squad_v2"
    golds = [g for texts in references.values() for g in texts]
    if golds and sum(bool(_CJK.search(g)) for g in golds) > len(golds) / 2:
        _note("most gold answers are Chinese; pass --metric dureader for DuReader_robust's scorer")
    return "squad_v1"


def score(data_file: str, predictions_file: str, metric: str | None = None, adversarial: bool = False) -> dict[str, float]:
    """The figures the command prints (raises :class:`ScoringInputError` for bad inputs)."""
    references, impossible = read_references(data_file)
    if adversarial and all(original_id(qid) == qid for qid in references):
        raise ScoringInputError(
            f"--adversarial: data file {data_file} has no adversarial variants (question ids '<original id>-<suffix>'): "
            "its grouped scores would be the plain ones; give the attacked set, or drop --adversarial"
        )
    predictions = read_predictions(predictions_file)
    metric = metric or _default_metric(references, impossible)
    missing = sum(qid not in predictions for qid in references)
    if missing:
        _note(f"{missing} of {len(references)} questions have no prediction; each scores 0")
    extra = sum(qid not in references for qid in predictions)
    if extra:
        _note(f"{extra} of {len(predictions)} predicted ids are not questions of {data_file}; they are ignored")
    if adversarial:
        return adversarial_scores(predictions, references, metric)
    return span_metric(metric).scores(predictions, references)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    result = run_with_one_line_errors(score, args.data_file, args.predictions, args.metric, args.adversarial, debug=args.debug)
    print(json.dumps(result))
    return 0
