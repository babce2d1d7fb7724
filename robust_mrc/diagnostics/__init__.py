"""Model-free diagnostics over prediction records: pure functions, numpy in, numbers / files out.

One module per concern (none imports torch; matplotlib and scikit-learn are imported only by the
functions that draw or fit):

* :mod:`~robust_mrc.diagnostics.interference` -- Lin, Zou & Ding 2021 (magnet options):
  interference scores ``T_k`` of irrelevant
  pool options, pool exclusion masks, ranking, the ranked-pool file and the sorted-score plot.
* :mod:`~robust_mrc.diagnostics.dpr` -- Tang et al. 2021 (DuReader_robust): different prediction
  ratio of paired predictions.
* :mod:`~robust_mrc.diagnostics.calibration` -- Wu et al. 2021: high-confidence errors, reliability bins /
  ECE and their plot (the confidence measures: :mod:`robust_mrc.metrics.confidence`).
* :mod:`~robust_mrc.diagnostics.error_analysis` -- Wu et al. 2021 sections 5-6: accuracy per question
  type, answer and context length; the error predictor over every evaluated set (training amount,
  perturbation type, question type, lengths, readability) with its feature importances.
* :mod:`~robust_mrc.diagnostics.drops` -- relative drop, flip rate, whether a record is correct.
* :mod:`~robust_mrc.diagnostics.figures` -- headless PNG figures (also used by the reports).

Ensembles of models (averaging, votes): :mod:`robust_mrc.evaluation.ensemble`.

Import the submodule you need (``from robust_mrc.diagnostics.interference import interference_scores``);
this package imports none of them eagerly.
"""

__all__ = ["calibration", "dpr", "drops", "error_analysis", "figures", "interference"]
