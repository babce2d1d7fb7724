"""The synthetic splits the policy tests attack (40 training questions of each task)."""

from __future__ import annotations

import pytest

from robust_mrc.data.synthetic import synthetic_splits

#: training questions in each synthetic split
N = 40


@pytest.fixture(scope="module")
def mc_splits():
    return synthetic_splits("mc", N, 12, 12, 0)


@pytest.fixture(scope="module")
def span_splits():
    return synthetic_splits("span", N, 12, 12, 0)
