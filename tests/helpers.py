"""Compose configs the way a user's command line does."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir

from robust_mrc.config.cli import register_resolvers

CONF = str(Path(__file__).resolve().parents[1] / "conf")


def make_cfg(*overrides: str, config_name: str = "config"):
    register_resolvers()  # ${pid:} and the settings' definitions (robust_mrc/core/settings.py)
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name=config_name, overrides=list(overrides))
