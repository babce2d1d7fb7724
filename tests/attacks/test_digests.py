"""The attacked data stays byte-identical: every registered attack, fixed examples, fixed seeds.

The digests are recorded per environment (WordNet, nearest-word backend, tagger, homoglyph
source) in ``digests.json`` by ``python tests/attacks/attack_digests.py --real --record``; a test
run in an environment without a record skips. A change that is meant to alter the attacked data
records again (and says so in its commit).
"""

from __future__ import annotations

import pytest
from attack_digests import attack_digests, environment, recorded, shared_data


def test_attacked_data_matches_the_recorded_digests():
    env = environment()
    expected = recorded(env)
    if expected is None:
        pytest.skip(f"no digests recorded for this environment {env}: python tests/attacks/attack_digests.py --real --record")
    real = shared_data() is not None and any(k.endswith("/squad") for k in expected)
    got = attack_digests(real=real)
    assert set(got) <= set(expected), sorted(set(got) - set(expected))
    changed = sorted(k for k in got if got[k] != expected[k])
    assert not changed, f"attacked data changed for {changed}"
