"""Digests of files (what a cache key or a report records of a data file, bank or pool) and the
exclusive lock of a file that one process at a time may hold (a run directory's)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path


def file_digest(path: str | Path) -> str:
    """Digest of a file's bytes (streamed)."""
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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
