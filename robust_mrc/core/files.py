"""Digests of files: what a cache key or a report records of a data file, bank or pool."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_digest(path: str | Path) -> str:
    """Digest of a file's bytes (streamed)."""
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
