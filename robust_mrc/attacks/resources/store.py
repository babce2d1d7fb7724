"""Where the resources keep what they build (NLTK data directory, parsed vectors, the WordNet table,
banks: under the project's cache root), their error, and the caches of attack code built on them
(cleared with the resources)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from robust_mrc.core.errors import UserError
from robust_mrc.core.files import cache_root


class ResourceMissing(UserError, RuntimeError):
    """A resource an attack needs is not installed; the message says what to install."""


def cache_dir() -> Path:
    """The project's cache root (:func:`robust_mrc.core.files.cache_root`), created when missing."""
    path = cache_root()
    path.mkdir(parents=True, exist_ok=True)
    return path


DEPENDENT_CACHES: list[Callable] = []


def depends_on_resources(fn: Callable) -> Callable:
    """Mark a ``functools.lru_cache`` function of attack code whose answers come from the resources
    (WordNet, the tagger): :func:`robust_mrc.attacks.resources.clear_caches` clears it as well."""
    DEPENDENT_CACHES.append(fn)
    return fn
