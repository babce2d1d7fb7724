"""A run's output is about the run: Lightning's cloud advertisements and its own deprecation
warnings are left out."""

from __future__ import annotations

import logging
import warnings

from pytorch_lightning.utilities._pytree import _tree_flatten

from robust_mrc.trainer.build import build_trainer, quiet_lightning
from tests.helpers import make_cfg


def test_building_a_trainer_prints_no_lightning_advertisement(tmp_path):
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("pytorch_lightning.utilities.rank_zero")
    logger.addHandler(handler)
    try:
        build_trainer(make_cfg("trainer.max_epochs=1"), tmp_path)
    finally:
        logger.removeHandler(handler)
    messages = [r.getMessage() for r in records]
    assert any("available" in m for m in messages)  # Lightning's own lines about the run still come
    assert not [m for m in messages if "Tip:" in m], messages


def test_lightnings_internal_deprecation_is_not_shown():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        _tree_flatten(1)  # Lightning builds a deprecated LeafSpec
        assert any(issubclass(w.category, FutureWarning) for w in shown)  # it warns unless quieted
        shown.clear()
        quiet_lightning()
        _tree_flatten(1)
    assert not [w for w in shown if issubclass(w.category, FutureWarning)], [str(w.message) for w in shown]
