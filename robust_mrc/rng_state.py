"""The random-number state of a run, kept in its checkpoints so that a resumed run goes on as the
uninterrupted run would: same dropout masks, same draws from the global generators.

:class:`RandomStateCheckpoint` puts the states of Python's ``random``, NumPy's global generator,
torch's CPU generator and every CUDA device's generator into each checkpoint (as plain lists and
tensors: a ``weights_only`` load reads them), and restores them when Lightning restores the
callback from the checkpoint, which happens after the model and data are built and before the
first training batch (Lightning skips the sanity-check validation when it restarts, so nothing
draws in between). Checked by ``tests/test_train.py::test_resume_with_dropout_equals_an_uninterrupted_run``:
one epoch, then a resume for the second, gives bit-identical weights to two epochs in one go.

Under DDP each process restores rank 0's state; ``seed_everything`` gives every rank the same seed
in the first place, so the ranks' states agree.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch


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
        return capture()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if state_dict:
            restore(state_dict)
