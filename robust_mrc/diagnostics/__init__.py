"""Model-free diagnostics over prediction records: pure functions, numpy in, numbers / files out.

One module per concern (none imports torch; matplotlib and scikit-learn are imported only by the
functions that draw or fit):

* :mod:`~robust_mrc.diagnostics.magnet` -- seed 002: interference scores ``T_k`` of irrelevant
  pool options, pool exclusion masks, ranking, the ranked-pool file and the sorted-score plot.
* :mod:`~robust_mrc.diagnostics.dpr` -- seed 003: different prediction ratio of paired predictions.
* :mod:`~robust_mrc.diagnostics.confidence` -- seed 004: normalized-entropy span confidence,
  top-probability option confidence, high-confidence errors, reliability bins / ECE and their plot.
* :mod:`~robust_mrc.diagnostics.error_analysis` -- seed 004 section 5: question types, accuracy per
  group, length buckets, example features and a gradient-boosting error predictor.
* :mod:`~robust_mrc.diagnostics.ensemble` -- seed 004: option-probability averaging, majority
  vote, and token voting over span answers.
* :mod:`~robust_mrc.diagnostics.report` -- relative drop and flip rate.

Import the submodule you need (``from robust_mrc.diagnostics.magnet import interference_scores``);
this package imports none of them eagerly.
"""

__all__ = ["confidence", "dpr", "ensemble", "error_analysis", "magnet", "report"]
