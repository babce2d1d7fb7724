"""A hub data set when the hub does not answer: the 2 s probe, then the local cache only (no
retries), and the one-line HubUnavailableError when the set is not there."""

from __future__ import annotations

import time

import pytest

from robust_mrc.core.hub import hub_endpoint
from robust_mrc.data.readers import HubUnavailableError, load_examples
from robust_mrc.data.readers import hub as hub_reader

ROW = {"example_id": "m1.txt", "article": "Tom has a red ball.", "question": "What colour?", "options": ["red", "blue"], "answer": "A"}


@pytest.fixture
def hub_online(monkeypatch):
    """Offline mode off (the test session sets HF_HUB_OFFLINE=1), as on a user's machine."""
    import datasets
    from huggingface_hub import constants

    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def offline_flags() -> tuple[bool, bool]:
    import datasets
    from huggingface_hub import constants

    return datasets.config.HF_HUB_OFFLINE, constants.HF_HUB_OFFLINE


def test_an_unreachable_hub_fails_at_once_without_retries(hub_online, monkeypatch):
    monkeypatch.setattr(hub_reader, "hub_reachable", lambda: False, raising=False)
    t0 = time.monotonic()
    with pytest.raises(HubUnavailableError) as caught:
        load_examples("robust-mrc-tests/no-such-set", "hub_race", split="validation")
    assert time.monotonic() - t0 < 10  # the library's own retries take 30 s
    host, port = hub_endpoint()
    assert str(caught.value) == (
        f"data set 'robust-mrc-tests/no-such-set': the Hugging Face hub could not be reached (no connection to {host}:{port} "
        "within 2 s, and not in the local cache); give a local file instead, e.g. data=race_local data.train=<file> data.validation=<file>"
    )
    assert offline_flags() == (False, False)  # offline only for that call


def test_a_cached_set_is_read_in_offline_mode_when_the_hub_does_not_answer(hub_online, monkeypatch):
    import datasets

    seen = []

    def cached(name, subset, split):
        seen.append(offline_flags())
        return [ROW]

    monkeypatch.setattr(datasets, "load_dataset", cached)
    monkeypatch.setattr(hub_reader, "hub_reachable", lambda: False, raising=False)
    (example,) = load_examples("ehovy/race", "hub_race", split="validation")
    assert example.id == "m1.txt" and seen == [(True, True)] and offline_flags() == (False, False)
    monkeypatch.setattr(hub_reader, "hub_reachable", lambda: True, raising=False)  # the hub answers: as it is
    load_examples("ehovy/race", "hub_race", split="validation")
    assert seen[-1] == (False, False)
