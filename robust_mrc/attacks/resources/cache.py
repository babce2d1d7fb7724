"""Where the resources keep what they build (NLTK data directory, parsed vectors, the WordNet table,
banks), the lock that lets several processes build one of them at once, their error, and the
caches of attack code built on them (cleared with the resources)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from robust_mrc.core.errors import UserError


class ResourceMissing(UserError, RuntimeError):
    """A resource an attack needs is not installed; the message says what to install."""


def cache_dir() -> Path:
    """``$ROBUST_MRC_CACHE``, else ``~/.cache/robust_mrc``; created when missing."""
    root = os.environ.get("ROBUST_MRC_CACHE") or Path.home() / ".cache" / "robust_mrc"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (fcntl; no lock where fcntl is missing: the renames that publish
    a built resource are atomic all the same)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


DEPENDENT_CACHES: list[Callable] = []


def depends_on_resources(fn: Callable) -> Callable:
    """Mark a ``functools.lru_cache`` function of attack code whose answers come from the resources
    (WordNet, the tagger): :func:`robust_mrc.attacks.resources.clear_caches` clears it as well."""
    DEPENDENT_CACHES.append(fn)
    return fn
