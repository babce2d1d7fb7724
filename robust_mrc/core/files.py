"""Digests of files (what a cache key or a report records of a data file, bank or pool), the one
cache root of the project (:func:`cache_root`), and the two locks of a file: one a process holds or
is refused (:func:`exclusive_lock`, a run directory's), one a process waits for
(:func:`waiting_lock`, a cached resource several processes may build at once)."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path


def file_digest(path: str | Path) -> str:
    """Digest of a file's bytes (streamed)."""
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_root() -> Path:
    """Where everything the project caches lives (attacked sets, predictions, banks, resources, the
    micro-batch probe): ``$ROBUST_MRC_CACHE``, else ``$XDG_CACHE_HOME/robust_mrc``, else
    ``~/.cache/robust_mrc``. Not created here."""
    if root := os.environ.get("ROBUST_MRC_CACHE"):
        return Path(root).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "robust_mrc"


@contextlib.contextmanager
def waiting_lock(path: str | Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (fcntl ``flock``), waited for while another process holds it;
    no lock where fcntl is missing (the renames that publish a built resource are atomic all the same)."""
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


@contextlib.contextmanager
def exclusive_lock(path: str | Path, note: str) -> Iterator[None]:
    """Hold an exclusive, non-blocking lock on ``path`` (fcntl ``flock``; the file is made when
    missing and kept) while the block runs, with ``note`` (who holds it) written in the file.

    Held by another process: :class:`LockHeld` carrying that process's note. The operating system
    releases the lock when its process ends, however it ends, so a lock file left by a dead process
    does not block. Where ``flock`` is missing or not supported by the file system the block runs
    unlocked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a+", encoding="utf-8") as fh:
        held = _flock(fh, Path(path))
        if held:
            fh.seek(0)
            fh.truncate()
            fh.write(note)
            fh.flush()
        try:
            yield
        finally:
            if held:
                fcntl.flock(fh, fcntl.LOCK_UN)


def _flock(fh, path: Path) -> bool:
    """Lock ``fh`` at once: True; False where the file system has no locks; :class:`LockHeld` when
    another process holds it."""
    import fcntl

    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        raise LockHeld(path, fh.read().strip() or "another process") from None
    except OSError:  # ENOLCK and the like
        return False
    return True


class LockHeld(RuntimeError):
    """The lock file ``path`` is held by another process; ``holder``: the note it wrote."""

    def __init__(self, path: Path, holder: str):
        self.path, self.holder = path, holder
        super().__init__(f"{path} is held by {holder}")
