"""The random-number state of a run, kept in its checkpoints so that a resumed run goes on as the
uninterrupted run would: same dropout masks, same draws from the global generators.

:class:`RandomStateCheckpoint` puts the states of Python's ``random``, NumPy's global generator,
torch's CPU generator and every CUDA device's generator into each checkpoint (as plain lists and
tensors: a ``weights_only`` load reads them), and restores them when Lightning restores the
callback from the checkpoint, which happens after the model and data are built and before the
first training batch (Lightning skips the sanity-check validation when it restarts, so nothing
draws in between). Checked by ``tests/jobs/test_train.py::test_resume_with_dropout_equals_an_uninterrupted_run``:
one epoch, then a resume for the second, gives bit-identical weights to two epochs in one go.

Under DDP every rank's state is saved (gathered into the checkpoint that rank 0 writes, under
``ranks``) and each rank restores its own: the ranks start from one seed, but their length-grouped
batches differ in shape, so their dropout draws, and their generators, part after the first step.
Restoring rank 0's state everywhere gave other weights than the uninterrupted run
(``tests/trainer/test_ddp.py::test_a_killed_ddp_run_resumes_within_the_epoch_to_the_uninterrupted_run``). A
run resumed with another number of ranks restores rank 0's state on every rank.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch

from robust_mrc.core.distributed import gather_objects, world


def capture() -> dict[str, Any]:
    """The states of the global generators, as lists, tuples and tensors."""
    version, internal, gauss = random.getstate()
    np_state = np.random.get_state(legacy=True)
    state = {
        "python": [version, list(internal), gauss],
        "numpy": [np_state[0], torch.from_numpy(np_state[1].astype(np.int64)), int(np_state[2]), int(np_state[3]), float(np_state[4])],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore(state: dict[str, Any]) -> None:
    """Put back the states :func:`capture` returned (a CUDA state only where there are GPUs)."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if state.get("cuda") is not None and torch.cuda.is_available():
        states = state["cuda"][: torch.cuda.device_count()]
        torch.cuda.set_rng_state_all(states)


class RandomStateCheckpoint(pl.Callback):
    """Saves the random-number states in every checkpoint; restores them on resume."""

    @property
    def state_key(self) -> str:
        return "RandomState"

    def state_dict(self) -> dict[str, Any]:
        # called on every rank when a checkpoint is saved (Trainer.save_checkpoint runs on all ranks)
        ranks = gather_objects(capture())
        return ranks[0] if len(ranks) == 1 else {**ranks[0], "ranks": ranks}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not state_dict:
            return
        size, rank = world()
        ranks = state_dict.get("ranks")
        restore(ranks[rank] if ranks and len(ranks) == size else state_dict)
