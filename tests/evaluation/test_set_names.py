"""A suite set's name goes into file names (cache entries, predictions, figures): a name that would
leave its folder (``..``, a separator) is refused before any work; the names the project ships pass."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from robust_mrc.config import CONFIG_DIR
from robust_mrc.evaluation.suites import SuiteConfigError, suite_specs


@pytest.mark.parametrize("name", ["../../metrics", "a/b", "..", ".hidden", "x" * 101, "a\\b", "evil\n"])
def test_a_set_name_that_leaves_its_folder_is_refused(name):
    with pytest.raises(SuiteConfigError, match="goes into file names: use letters, digits"):
        suite_specs({"name": "mine", "sets": [{"name": name, "attack": "charswap"}]}, "mc")
    with pytest.raises(SuiteConfigError, match="goes into file names"):
        suite_specs({"name": "mine", "extra": {name: "adv.json"}}, "mc")


@pytest.mark.parametrize("path", sorted((CONFIG_DIR / "suite").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_shipped_suites_pass(path: Path):
    suite = yaml.safe_load(path.read_text())
    task = suite.get("task") if suite.get("task") in ("mc", "span") else "mc"
    assert suite_specs(suite, task) is not None
