"""Stable digests of values: :func:`fingerprint`, the cache key of anything the project caches
(attacked sets, predictions, banks, probes) from config values, digests and names."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from robust_mrc.core.files import file_digest

CACHE_VERSION = 1  # bump when the meaning of a cached entry changes


def _digest(data: bytes, size: int = 12) -> str:
    return hashlib.blake2b(data, digest_size=size).hexdigest()


def _canonical(obj: Any) -> Any:
    """JSON-able form of config values; a string naming an existing file stands for its content."""
    if isinstance(obj, dict) or hasattr(obj, "items"):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, str) and len(obj) < 4096 and ("/" in obj or "." in obj):
        try:
            if Path(obj).is_file():
                return {"file_digest": file_digest(obj)}  # content, not where it lies
        except OSError:
            pass
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return repr(obj)


def fingerprint(*parts: Any) -> str:
    """A short stable digest of ``parts`` (config values, digests, names)."""
    text = json.dumps([CACHE_VERSION, *(_canonical(p) for p in parts)], sort_keys=True, ensure_ascii=False)
    return _digest(text.encode("utf-8"))
