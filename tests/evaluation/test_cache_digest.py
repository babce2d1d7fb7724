"""A cached attacked set is verified by the digest written with it: a file replaced by another set
(valid as it may be), moved from another entry, or edited is a damaged entry: named, removed and
remade, never used."""

from __future__ import annotations

import gzip
import logging
import shutil

import pytest

from robust_mrc.data.examples import MCExample
from robust_mrc.evaluation.cache import DiskCache
from robust_mrc.evaluation.suites import SetSpec, build_sets

CLEAN = [
    MCExample(f"q{i}", "The quick brown fox jumps over the lazy sleeping dog near the river bank.", "What jumps?", ("fox", "dog"), 0)
    for i in range(4)
]
OTHER = [MCExample(f"q{i}", "A different passage entirely.", "What?", ("a", "b"), 1) for i in range(4)]


def entry(cache: DiskCache, name: str, key: str):
    return cache.root / "sets" / f"{name}-{key}.jsonl.gz"


def test_a_set_replaced_by_another_valid_set_is_remade(tmp_path, caplog):
    cache = DiskCache(tmp_path / "cache")
    cache.save_examples("charswap", "k1", CLEAN)
    cache.save_examples("charswap", "k2", OTHER)  # a valid entry of another key, the same length
    shutil.copyfile(entry(cache, "charswap", "k2"), entry(cache, "charswap", "k1"))
    with caplog.at_level(logging.WARNING):
        assert cache.load_examples("charswap", "k1") is None
    path = entry(cache, "charswap", "k1")
    assert f"cache entry {path} is damaged" in caplog.text and "does not match its digest" in caplog.text
    assert not path.exists()
    assert cache.load_examples("charswap", "k2") == OTHER


@pytest.mark.parametrize("change", ["edited", "no_digest"])
def test_an_edited_set_or_one_without_its_digest_is_damaged(tmp_path, caplog, change):
    cache = DiskCache(tmp_path / "cache")
    cache.save_examples("charswap", "k1", CLEAN)
    path = entry(cache, "charswap", "k1")
    header, _, body = gzip.decompress(path.read_bytes()).partition(b"\n")
    if change == "edited":  # the right answer moved: still valid JSON lines under the old header
        data = header + b"\n" + body.replace(b'"label": 0', b'"label": 1')
    else:  # plain JSON lines, every line a valid example
        data = body
    path.write_bytes(gzip.compress(data))
    with caplog.at_level(logging.WARNING):
        assert cache.load_examples("charswap", "k1") is None
    assert f"cache entry {path} is damaged" in caplog.text and not path.exists()


def test_a_suite_remakes_a_replaced_set_instead_of_using_it(tmp_path, caplog):
    cache = DiskCache(tmp_path / "cache")
    specs = [SetSpec("charswap", attack="charswap")]
    first = build_sets(specs, CLEAN, "mc", seed=0, cache=cache)["charswap"]
    assert not first.cached
    path = entry(cache, "charswap", first.fingerprint)
    cache.save_examples("impostor", first.fingerprint, OTHER)
    shutil.copyfile(entry(cache, "impostor", first.fingerprint), path)  # the same length, other examples
    with caplog.at_level(logging.WARNING):
        again = build_sets(specs, CLEAN, "mc", seed=0, cache=cache)["charswap"]
    assert f"cache entry {path} is damaged" in caplog.text
    assert not again.cached and again.examples == first.examples
    assert build_sets(specs, CLEAN, "mc", seed=0, cache=cache)["charswap"].cached  # remade and verified
