"""Command-line plumbing of ``train.py`` and ``evaluate.py``: a user's mistake as one line, and
run directories that two runs never share. Light on imports: loaded before Hydra composes.

:func:`run_command` prints a user error (:class:`robust_mrc.core.errors.UserError`) as ``Error: <message>`` on stderr and
exits with status 1, without a traceback; ``HYDRA_FULL_ERROR=1`` raises it as it is, and Hydra
prints the whole traceback. Other exceptions are bugs and keep their traceback.

:func:`register_resolvers` adds ``${pid:}`` (this process's id) for the run directory in
``conf/config.yaml`` and ``conf/eval.yaml``: ``outputs/<date>/<time with microseconds>-<pid>``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from omegaconf import OmegaConf

from robust_mrc.core.errors import UserError


def is_user_error(error: BaseException) -> bool:
    """Whether ``error`` is a user's mistake whose message says what to do (not a bug)."""
    return isinstance(error, UserError)


def full_error_wanted() -> bool:
    return os.environ.get("HYDRA_FULL_ERROR") == "1"


def run_command(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; a user error becomes ``Error: <message>`` on stderr and exit status 1."""
    try:
        return fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - classified here, re-raised unless a user error
        if not is_user_error(error) or full_error_wanted():
            raise
        print(f"Error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None


def register_resolvers() -> None:
    """``${pid:}``: the id of this process (cached per config, like ``${now:}``)."""
    if not OmegaConf.has_resolver("pid"):
        OmegaConf.register_new_resolver("pid", os.getpid, use_cache=True)
