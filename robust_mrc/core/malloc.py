"""The C heap of a training process (glibc malloc): freed memory given back before workers fork.

PyTorch on CPU allocates tensors with malloc. glibc serves a block below its mmap threshold from
the heap and keeps it when it is freed; the threshold itself rises to the size of the largest block
freed (up to 32 MiB). A training step allocates activations of a shape that changes from batch to
batch (dynamic padding, length-grouped batches, consistency groups), so the heap holds more and
more free memory, and a DataLoader worker forked from the process (anew each epoch when attacks
are drawn afresh) inherits all of it. :func:`trim` gives the heap's free pages back to the system
(``malloc_trim``); the data module calls it before the workers fork. It changes no computed value.

Bounding the heap for a whole run (``MALLOC_MMAP_THRESHOLD_=65536 MALLOC_TRIM_THRESHOLD_=16777216``
in the environment) keeps a long CPU training's memory flat, at a cost in speed (docs/guide.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:  # no glibc (musl): nothing to trim
        return None


def trim() -> bool:
    """Give the heap's free pages back to the system (glibc only); whether it could."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
