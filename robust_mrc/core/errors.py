"""The mark of a user's mistake: an error whose message says what is wrong and what to do.

Errors that subclass :class:`UserError` (bad data, bad config, a model or checkpoint that cannot be
had) are printed by the command lines as one line, ``Error: <message>``, without a Python
traceback (``HYDRA_FULL_ERROR=1``, or a command's ``--debug``, shows the traceback):
:func:`run_with_one_line_errors`. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any


class UserError(Exception):
    """An error caused by the user's input (file, config key, environment); the message names it."""


class ConfigError(UserError, ValueError):
    """Config values that cannot work; the message names each key and what it accepts."""


FULL_ERROR_VARIABLE = "HYDRA_FULL_ERROR"  # =1: a user error's traceback, as Hydra's own errors


def run_with_one_line_errors(fn: Callable[..., Any], *args: Any, debug: bool = False, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` for a command line: a :class:`UserError` becomes ``Error: <message>``
    on stderr and exit status 1, without a traceback. ``debug`` (a command's ``--debug``) or
    ``HYDRA_FULL_ERROR=1`` raises it as it is, so the traceback shows. Anything else is a bug and
    keeps its traceback."""
    try:
        return fn(*args, **kwargs)
    except UserError as error:
        if debug or os.environ.get(FULL_ERROR_VARIABLE) == "1":
            raise
        print(f"Error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
