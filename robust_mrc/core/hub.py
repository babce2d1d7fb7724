"""Whether the Hugging Face hub can be reached, asked once per process in at most 2 s.

A hub model (:func:`robust_mrc.models.backbone.hub_access`) and a hub data set
(:mod:`robust_mrc.data.readers.hub`) ask :func:`hub_reachable` before any hub call: the libraries
themselves would retry for tens of seconds before saying that the hub is out of reach.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from urllib.parse import urlparse

HUB_PROBE_SECONDS = 2.0
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def hub_endpoint() -> tuple[str, int]:
    """Host and port of the hub endpoint (``HF_ENDPOINT``, else huggingface.co)."""
    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    return url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)


@functools.cache
def hub_reachable(timeout: float = HUB_PROBE_SECONDS) -> bool:
    """Whether a TCP connection to the hub endpoint (``HF_ENDPOINT``) opens within ``timeout``
    seconds, name lookup included. With a proxy in the environment the probe cannot tell: True."""
    if any(os.environ.get(v) for v in _PROXY_VARIABLES):
        return True
    result: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection(hub_endpoint(), timeout=timeout).close()
            result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    return bool(result and result[0])


def offline_mode() -> bool:
    """Whether ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` is on (the libraries then fail fast)."""
    return any(os.environ.get(v, "").upper() in ("1", "ON", "YES", "TRUE") for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
