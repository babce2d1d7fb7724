"""On-disk cache of attacked sets and predictions, keyed by fingerprints.

A fingerprint is a BLAKE2b digest of everything a result depends on (the clean examples, the
attack, its parameters and its code, the seed, files the parameters name, the checkpoint), so a cached
entry is reused only when it would be made again identically. Entries are written atomically
(temporary file + rename): an interrupted evaluation leaves whole entries or none, and the next
run reuses what was finished.

The cache heals: an entry that cannot be read back (truncated, corrupt: damaged on disk or by
another tool), or an attacked set whose content does not match the digest written with it (a file
replaced by another set, valid as it may be), is named in a warning, removed, and remade. A cache that cannot be written
(read-only directory, full disk) is named in one warning and evaluation goes on uncached: entries
already there are still read, nothing new is saved.

Layout under ``cache_dir``::

    sets/<set name>-<fingerprint>.jsonl.gz      {entry, n, digest}, then the attacked examples, one JSON object a line
    predictions/<fingerprint>.json              {example id: prediction record}
    scores/<fingerprint>.npy                    magnet screening scores
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import zlib
from pathlib import Path
from typing import Any

from robust_mrc.core.digests import fingerprint
from robust_mrc.data.examples import example_from_dict, example_to_dict
from robust_mrc.data.writers import atomic_write_bytes, write_problem

log = logging.getLogger(__name__)


# what reading a damaged entry raises: truncated gzip (EOFError), bad deflate data (zlib.error),
# bad magic (gzip.BadGzipFile, an OSError), bad JSON / npy header (ValueError), a wrong shape
DAMAGED = (OSError, EOFError, zlib.error, ValueError, KeyError, TypeError)


def set_digest(entry: str, body: bytes) -> str:
    """The digest a cached set's file carries: of its JSON lines and its entry name
    (``<set name>-<fingerprint>``), so neither another set nor another entry's file passes for it."""
    return hashlib.blake2b(entry.encode("utf-8") + b"\n" + body, digest_size=12).hexdigest()


def check_set_digest(entry: str, header: Any, body: bytes) -> None:
    """A ``ValueError`` (a damaged entry) when ``body`` is not what ``header`` says entry ``entry`` holds."""
    if not isinstance(header, dict) or "digest" not in header:
        raise ValueError("no content digest in its first line")
    if header["digest"] != set_digest(entry, body):
        raise ValueError(f"its content does not match its digest (the file is not the set {entry} was written as)")


class DiskCache:
    """Attacked sets, prediction records and score arrays under one directory (``None``: off)."""

    def __init__(self, root: str | Path | None):
        self.root = Path(root).expanduser() if root else None
        self.writable = self.root is not None

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def _path(self, kind: str, name: str) -> Path | None:
        return None if self.root is None else self.root / kind / name

    def _load(self, path: Path | None, read):
        """``read(path)``, or None when there is no entry; a damaged entry is named, removed, remade."""
        if path is None or not path.is_file():
            return None
        try:
            return read(path)
        except DAMAGED as err:
            log.warning("cache entry %s is damaged (%s: %s): removing it and remaking it", path, type(err).__name__, err)
            try:
                path.unlink()
            except OSError:
                pass
            return None

    def _save(self, path: Path | None, data: bytes) -> None:
        """Write an entry; the first failure (read-only, full disk) warns once and stops saving."""
        if path is None or not self.writable:
            return
        try:
            atomic_write_bytes(path, data)
        except OSError as err:
            self.writable = False
            cause = err.__cause__ if isinstance(err.__cause__, OSError) else err
            log.warning(
                "evaluation cache %s cannot be written (%s): this evaluation runs uncached "
                "from here on (set cache_dir= to a writable directory, or cache_dir=null)",
                self.root,
                write_problem(path, cause),
            )

    # examples
    def load_examples(self, name: str, key: str) -> list | None:
        """The attacked set cached as ``name`` under ``key``; an entry whose content does not match
        its digest (:func:`set_digest`) is damaged: named, removed and remade."""

        def read(path: Path) -> list:
            if path.stat().st_size == 0:  # gzip reads an empty file as an empty text
                raise EOFError("empty file")
            with gzip.open(path, "rb") as f:
                header, _, body = f.read().partition(b"\n")
            check_set_digest(f"{name}-{key}", json.loads(header), body)
            return [example_from_dict(json.loads(line)) for line in body.decode("utf-8").splitlines() if line.strip()]

        return self._load(self._path("sets", f"{name}-{key}.jsonl.gz"), read)

    def save_examples(self, name: str, key: str, examples: list) -> None:
        """The attacked set as JSON lines under a first line holding its digest (:func:`set_digest`)."""
        path = self._path("sets", f"{name}-{key}.jsonl.gz")
        if path is None or not self.writable:
            return
        body = "".join(json.dumps(example_to_dict(ex), ensure_ascii=False) + "\n" for ex in examples).encode("utf-8")
        header = json.dumps({"entry": f"{name}-{key}", "n": len(examples), "digest": set_digest(f"{name}-{key}", body)})
        self._save(path, gzip.compress(header.encode("utf-8") + b"\n" + body, mtime=0))

    # JSON (prediction records)
    def load_json(self, kind: str, key: str) -> Any | None:
        return self._load(self._path(kind, f"{key}.json"), lambda path: json.loads(path.read_text(encoding="utf-8")))

    def save_json(self, kind: str, key: str, obj: Any) -> None:
        self._save(self._path(kind, f"{key}.json"), json.dumps(obj, ensure_ascii=False).encode("utf-8"))

    # numpy arrays (screening scores)
    def load_array(self, kind: str, key: str):
        import numpy as np

        return self._load(self._path(kind, f"{key}.npy"), lambda path: np.load(path, allow_pickle=False))

    def save_array(self, kind: str, key: str, array) -> None:
        import numpy as np

        if self.root is None or not self.writable:
            return
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        self._save(self._path(kind, f"{key}.npy"), buf.getvalue())


def model_key(source: str | Path, revision: str | None = None) -> str:
    """Identity of a model for caching its predictions: a checkpoint file by its resolved path, size
    and mtime; a model directory by those of its files; a hub name by the name, ``revision`` and the
    commit of its local copy (when there is one)."""
    path = Path(source)
    if path.is_file():
        st = path.stat()
        return fingerprint("ckpt", str(path.resolve()), st.st_size, st.st_mtime_ns)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file())
        return fingerprint("model_dir", str(path.resolve()), [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files])
    return fingerprint("hub", str(source), revision, _hub_snapshot(str(source), revision))


def _hub_snapshot(name: str, revision: str | None) -> str | None:
    """The commit of the locally cached copy of hub model ``name`` (``None``: not cached)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json", revision=revision)
    except Exception:  # noqa: BLE001 - an invalid repository name is simply not cached
        return None
    return Path(found).parent.name if isinstance(found, str) else None
