"""``python -m robust_mrc.metrics DATA_FILE PREDICTIONS_JSON [--metric ...] [--adversarial]``."""

from robust_mrc.metrics.cli import main

raise SystemExit(main())
