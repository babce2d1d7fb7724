"""Shared fixtures: the ../shared folder (skip when absent), the offline model zoo, a clean Hydra state."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ROBUST_MRC_SHARED", REPO.parent / "shared"))

os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# evaluation caches (attacked sets, predictions) of the tests stay out of the checkout
os.environ.setdefault("ROBUST_MRC_CACHE", tempfile.mkdtemp(prefix="robust_mrc_cache_"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; tests that need it skip in a user's clone."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"{path} is absent (it exists only in the development workplace)")
    return path


@pytest.fixture(scope="module")
def one_torch_thread():
    """Torch on one thread for a module of tiny-model tests: they run fastest so, as more threads
    only wait on each other (and on other processes)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_zoo(tmp_path_factory) -> dict[str, Path]:
    """``{robust_mrc/conf/model option: directory}``: a tiny random model and tokenizer of each hub
    architecture (:mod:`tests.zoo`), built once per session (about a second)."""
    from tests.zoo import build_zoo

    return build_zoo(tmp_path_factory.mktemp("zoo"))
