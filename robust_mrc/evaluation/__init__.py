"""Robustness evaluation: suites of attacked test sets (cached on disk), predictions, ensembles.

``robust_mrc.jobs.evaluate.evaluate`` drives these rooms; ``robust_mrc.reports.robustness`` writes
the report and ``robust_mrc.diagnostics`` holds the model-free spurious-cue measures.
"""
