"""Where the resources keep what they build (NLTK data directory, parsed vectors), and their error."""

from __future__ import annotations

import os
from pathlib import Path

from robust_mrc.errors import UserError


class ResourceMissing(UserError, RuntimeError):
    """A resource an attack needs is not installed; the message says what to install."""


def cache_dir() -> Path:
    """``$ROBUST_MRC_CACHE``, else ``~/.cache/robust_mrc``; created when missing."""
    root = os.environ.get("ROBUST_MRC_CACHE") or Path.home() / ".cache" / "robust_mrc"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
