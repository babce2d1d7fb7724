"""The process group as the framework's callbacks and modules see it: (world size, rank), and one
Python object from every rank. Without a process group (one process) both are trivial."""

from __future__ import annotations

from typing import Any

import torch.distributed as dist


def world() -> tuple[int, int]:
    """(world size, rank) of the process group; (1, 0) without one."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def gather_objects(obj: Any) -> list[Any]:
    """``obj`` of every rank, in rank order (``[obj]`` in one process). A collective: every rank
    must call it, the same number of times."""
    size, _ = world()
    if size == 1:
        return [obj]
    parts: list = [None] * size
    dist.all_gather_object(parts, obj)
    return parts
