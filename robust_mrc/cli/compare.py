"""``robust-mrc compare RUN_OR_EVAL_DIRS... [--ci] [--against ROW] [--by-clean] [--out FILE]``: training
policy x test set, the layout of Si et al. 2021 (AdvRACE), Table 6 (:mod:`robust_mrc.reports.compare`)."""

from __future__ import annotations

import argparse

from robust_mrc.core.errors import run_with_one_line_errors
from robust_mrc.reports.compare import __doc__ as compare_doc
from robust_mrc.reports.compare import compare


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="robust-mrc compare", description=compare_doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="run directories of train.py or evaluate.py")
    p.add_argument("--ci", action="store_true", help="add the 95%% bootstrap intervals of evaluation reports")
    p.add_argument("--metric", default=None, help="acc (mc, default) | f1 (span, default) | em")
    p.add_argument("--stage", default=None, choices=["val", "test"])
    p.add_argument(
        "--out",
        default=None,
        help="also write the table here (Markdown), and the page beside it (.html; never over a file robust-mrc did not write)",
    )
    p.add_argument("--html", default=None, help="write the page (tables and a dot per seed, per set) here (default: --out's .html)")
    p.add_argument("--no-seed-means", action="store_true", help="no mean / range rows for policies run with several seeds")
    p.add_argument(
        "--against",
        default=None,
        metavar="ROW",
        help='also a table of each row minus this one ("none s42"), paired 95%% bootstrap intervals',
    )
    p.add_argument(
        "--by-clean",
        action="store_true",
        help="also each attacked set's score over the questions a model answered right on clean and over those it answered wrong",
    )
    p.add_argument("--debug", action="store_true", help="show the traceback of a mistake in the runs")
    return p


def main(argv: list[str] | None = None) -> str:
    """The comparison table of the command line ``argv`` (printed, and written to ``--out``); a
    mistake: ``Error: ...`` (one line) and exit status 1."""
    args = _parser().parse_args(argv)
    return run_with_one_line_errors(
        compare,
        args.runs,
        ci=args.ci,
        metric=args.metric,
        stage=args.stage,
        out=args.out,
        seed_means=not args.no_seed_means,
        against=args.against,
        by_clean=args.by_clean,
        html=args.html,
        debug=args.debug,
    )
