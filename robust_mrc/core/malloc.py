"""The C heap of a training process (glibc malloc): bounded retention of freed memory.

PyTorch on CPU allocates tensors with malloc. glibc serves a block below its mmap threshold from
the heap and keeps it when it is freed; the threshold itself rises to the size of the largest block
freed (up to 32 MiB). A training step allocates activations of a shape that changes from batch to
batch (dynamic padding, length-grouped batches, consistency groups of 1-2 rows): the heap fills
with free holes it never returns, and the process's RSS creeps up step after step. A DataLoader
worker forked from it (anew each epoch when attacks are drawn afresh) inherits that heap as well.

:func:`bound_heap` fixes the mmap threshold (blocks from 64 KiB up are mapped and unmapped: their
memory goes back to the system when the tensor is freed) and the trim threshold (a free heap top over
16 MiB is given back), like the environment variables ``MALLOC_MMAP_THRESHOLD_=65536
MALLOC_TRIM_THRESHOLD_=16777216``, which win when set.
:func:`trim` returns the heap's free pages now (``malloc_trim``). Neither changes a computed value.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 64 * 1024
TRIM_THRESHOLD = 16 * 1024 * 1024


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:  # no glibc (musl): nothing to tune
        return None


def bound_heap() -> bool:
    """Fixed mmap and trim thresholds for this process (glibc only; environment settings kept)."""
    libc = _libc()
    if libc is None:
        return False
    done = False
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        done |= bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        done |= bool(libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return done


def trim() -> None:
    """Give the heap's free pages back to the system (glibc only): before forking workers."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
