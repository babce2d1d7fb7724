"""Composing the configs of ``robust_mrc/conf/`` (:data:`robust_mrc.config.CONFIG_DIR`) as a
command line does, from code: :func:`compose_config` (Hydra's compose API; a mistake in an override
or a config is one :class:`~robust_mrc.core.errors.ConfigError` line, :func:`composition_problem`)
and the resolvers the configs use (:func:`register_resolvers`). Light on imports."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from robust_mrc.config import CONFIG_DIR
from robust_mrc.core.errors import ConfigError
from robust_mrc.core.files import cache_root


def register_resolvers() -> None:
    """What composing ``robust_mrc/conf/`` needs: ``${pid:}``, the id of this process (cached per config, like
    ``${now:}``), ``${cache_root:}`` (:func:`robust_mrc.core.files.cache_root`), and the settings' definitions in Hydra's ConfigStore
    (:func:`robust_mrc.config.schema.register`)."""
    from robust_mrc.config.schema import register

    if not OmegaConf.has_resolver("pid"):
        OmegaConf.register_new_resolver("pid", os.getpid, use_cache=True)
    if not OmegaConf.has_resolver("cache_root"):
        OmegaConf.register_new_resolver("cache_root", lambda: str(cache_root()))
    register()


def compose_config(
    config_dir: str | Path | None, config_name: str, overrides: Sequence[str], return_hydra_config: bool = False
) -> DictConfig:
    """``<config_dir>/<config_name>.yaml`` (``config_dir`` None: the package's configs) with
    ``overrides``, composed with Hydra's compose API as ``@hydra.main`` composes it (without the
    ``hydra`` node unless ``return_hydra_config``); a mistake in an override or a config is a
    :class:`~robust_mrc.core.errors.ConfigError` with Hydra's message in one line."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException, OverrideParseException
    from hydra.initialize import get_gh_backup, restore_gh_from_backup
    from omegaconf.errors import OmegaConfBaseException

    register_resolvers()
    config_dir = CONFIG_DIR if config_dir is None else config_dir
    outer = None  # under @hydra.main (a tool composing another config): its Hydra, put back after
    if GlobalHydra.instance().is_initialized():
        outer = get_gh_backup()
        GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(Path(config_dir).resolve()), version_base="1.3"):
            return compose(config_name=config_name, overrides=list(overrides), return_hydra_config=return_hydra_config)
    except (HydraException, OmegaConfBaseException) as err:
        problem = composition_problem(err)
        if isinstance(err, OverrideParseException):
            bad = [o for o in overrides if not _parses(o)]
            problem = f"cannot read the argument(s) {' '.join(bad or overrides)}: {problem}"
        raise ConfigError(problem) from None
    finally:
        if outer is not None:
            restore_gh_from_backup(outer)


def _parses(override: str) -> bool:
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    try:
        OverridesParser.create().parse_overrides([override])
        return True
    except OverrideParseException:
        return False


def composition_problem(err: Exception) -> str:
    """Hydra's composition error in one line: its first line, the hint after it, the options."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    text = lines[0]
    if len(lines) > 1 and lines[1].startswith("To append"):
        text += f" ({lines[1]})"
    if text.startswith("Ambiguous value") and len(lines) > 2:  # a bare comma list: Hydra's sweep
        text += f" ({lines[1].split('. ', 1)[-1]}; {lines[2].split('. ', 1)[-1]})"
    if "Available options" in str(err):
        options = [line.strip() for line in str(err).split("Available options", 1)[1].split("Config search path")[0].splitlines()[1:]]
        text += f"; available: {', '.join(o for o in options if o)}"
    return text
