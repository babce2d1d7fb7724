"""Fixtures of the attack tests: small hand-made examples, the WordNet switch, a tiny vector file."""

from __future__ import annotations

import os

import pytest

# the tests use the WordNet nearest-word backend unless a test picks another: fast, no vector file
os.environ.setdefault("ROBUST_MRC_VECTORS", "wordnet")
# ... and the heuristic tagger, so that their expected sentences do not depend on spaCy being
# installed (the spaCy tests in test_resources.py ask for it by name)
os.environ.setdefault("ROBUST_MRC_TAGGER", "heuristic")

from attack_samples import TINY_VECTORS, mc_examples, span_examples  # noqa: E402

from robust_mrc.attacks import resources as R  # noqa: E402


@pytest.fixture
def mc():
    return mc_examples()


@pytest.fixture
def spans():
    return span_examples()


@pytest.fixture
def wordnet_ok():
    if not R.has_wordnet():  # CI (ROBUST_MRC_CI=1) installs WordNet: there its absence is a failure
        (pytest.fail if os.environ.get("ROBUST_MRC_CI") == "1" else pytest.skip)(
            "WordNet is absent: apt-get install wordnet-base wordnet-sense-index"
        )
    return True


@pytest.fixture
def tiny_vectors(tmp_path, monkeypatch):
    """A 4-dimensional GloVe-format file; the cache goes to tmp_path."""
    path = tmp_path / "tiny.txt"
    path.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in TINY_VECTORS.items()))
    monkeypatch.setenv("ROBUST_MRC_CACHE", str(tmp_path / "cache"))
    return str(path)


@pytest.fixture
def no_wordnet(monkeypatch):
    """Pretend WordNet is not installed (and forget every cached resource before and after)."""
    monkeypatch.setenv("ROBUST_MRC_NO_WORDNET", "1")
    R.clear_caches()
    yield
    monkeypatch.delenv("ROBUST_MRC_NO_WORDNET")
    R.clear_caches()
