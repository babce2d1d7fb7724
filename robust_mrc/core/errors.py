"""The mark of a user's mistake: an error whose message says what is wrong and what to do.

Errors that subclass :class:`UserError` (bad data, bad config, a model or checkpoint that cannot be
had) are printed by the command lines as one line, ``Error: <message>``, without a Python
traceback (``HYDRA_FULL_ERROR=1`` shows the traceback). Anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """An error caused by the user's input (file, config key, environment); the message names it."""


class ConfigError(UserError, ValueError):
    """Config values that cannot work; the message names each key and what it accepts."""
