"""The evaluation cache heals: damaged entries are named and remade; a cache that
cannot be written warns once and evaluation goes on uncached. Output files that cannot be written
name their directory."""

from __future__ import annotations

import errno
import logging
import os

import numpy as np
import pytest

from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.data.writers import OutputWriteError, atomic_write_bytes
from robust_mrc.evaluation.cache import DiskCache

EXAMPLES = [
    MCExample("a-0", "Tom has a ball.", "What?", ("ball", "cat"), 0),
    SpanExample("s1", "The cat sat.", "Who?", (Answer("cat", 4),)),
]


def filled(tmp_path) -> tuple[DiskCache, dict]:
    cache = DiskCache(tmp_path / "cache")
    cache.save_examples("charswap", "k1", EXAMPLES)
    cache.save_json("predictions", "k2", {"a-0": {"pred": 1}})
    cache.save_array("scores", "k3", np.arange(1000, dtype=np.float32))
    paths = {
        "sets": tmp_path / "cache" / "sets" / "charswap-k1.jsonl.gz",
        "predictions": tmp_path / "cache" / "predictions" / "k2.json",
        "scores": tmp_path / "cache" / "scores" / "k3.npy",
    }
    return cache, paths


def load_all(cache: DiskCache):
    return cache.load_examples("charswap", "k1"), cache.load_json("predictions", "k2"), cache.load_array("scores", "k3")


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage"])
def test_damaged_entries_are_named_removed_and_remade(tmp_path, caplog, damage):
    cache, paths = filled(tmp_path)
    sets, preds, scores = load_all(cache)
    assert sets == EXAMPLES and preds == {"a-0": {"pred": 1}} and scores.shape == (1000,)
    for path in paths.values():
        data = path.read_bytes()
        path.write_bytes({"truncate": data[: len(data) // 2], "empty": b"", "garbage": b"\x1f\x8b\x08garbage"}[damage])
    with caplog.at_level(logging.WARNING):
        assert load_all(cache) == (None, None, None)
    for path in paths.values():
        assert f"cache entry {path} is damaged" in caplog.text
        assert not path.exists()  # removed, so the next save remakes it
    cache.save_examples("charswap", "k1", EXAMPLES)
    assert cache.load_examples("charswap", "k1") == EXAMPLES


def test_a_truncated_gzip_entry_counts_as_damaged(tmp_path):
    """A truncated gzip entry raises EOFError, which the cache treats as any other damage: a miss."""
    cache, paths = filled(tmp_path)
    data = paths["sets"].read_bytes()
    paths["sets"].write_bytes(data[:-8])  # the gzip trailer cut off: EOFError while reading
    assert cache.load_examples("charswap", "k1") is None


def test_an_unwritable_cache_warns_once_and_runs_uncached(tmp_path, caplog):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the cache directory should be")
    cache = DiskCache(blocker / "cache")
    with caplog.at_level(logging.WARNING):
        cache.save_examples("charswap", "k1", EXAMPLES)
        cache.save_json("predictions", "k2", {})
        cache.save_array("scores", "k3", np.zeros(3))
    warnings = [r.getMessage() for r in caplog.records if "cannot be written" in r.getMessage()]
    assert len(warnings) == 1 and str(blocker / "cache") in warnings[0] and "runs uncached" in warnings[0]
    assert f"{blocker} is a file, not a directory" in warnings[0]
    assert not cache.writable and cache.load_examples("charswap", "k1") is None


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "no space left on the disk holding"), (errno.EROFS, "is not writable")])
def test_a_full_or_read_only_disk_under_the_cache(tmp_path, monkeypatch, caplog, code, words):
    cache, paths = filled(tmp_path)
    real_fdopen = os.fdopen

    def failing_write(fd, mode):
        f = real_fdopen(fd, mode)

        class Full:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                f.close()

            def write(self, data):
                raise OSError(code, "simulated")

        return Full()

    import robust_mrc.data.writers as writers

    monkeypatch.setattr(writers.os, "fdopen", failing_write)
    with caplog.at_level(logging.WARNING):
        cache.save_json("predictions", "new", {"x": 1})
        cache.save_json("predictions", "new2", {"x": 1})
    assert caplog.text.count("cannot be written") == 1 and words in caplog.text
    assert cache.load_json("predictions", "k2") == {"a-0": {"pred": 1}}  # old entries still read
    assert sorted(p.name for p in paths["predictions"].parent.iterdir()) == ["k2.json"]  # no temp files


@pytest.mark.parametrize(
    "code, words",
    [
        (errno.ENOSPC, "no space left on the disk holding {dir}"),
        (errno.EACCES, "the directory {dir} is not writable"),
        (errno.EROFS, "the directory {dir} is not writable"),
    ],
)
def test_output_files_that_cannot_be_written_name_the_directory(tmp_path, monkeypatch, code, words):
    import robust_mrc.data.writers as writers

    def refuse(*args, **kwargs):
        raise OSError(code, "simulated")

    monkeypatch.setattr(writers.tempfile, "mkstemp", refuse)
    target = tmp_path / "run" / "metrics.json"
    with pytest.raises(OutputWriteError) as excinfo:
        atomic_write_bytes(target, b"{}")
    assert isinstance(excinfo.value, UserError) and isinstance(excinfo.value, OSError)
    assert excinfo.value.errno == code
    assert str(excinfo.value).startswith(f"cannot write {target}: ")
    assert words.format(dir=target.parent) in str(excinfo.value)
