"""Command-line plumbing of the bank builders: the configs of ``conf/`` composed with Hydra's
compose API (as ``train.py`` composes them), composition errors as one line
(:class:`~robust_mrc.banks.BankError`), the ``splits`` a bank covers. The commands themselves run
under ``@hydra.main`` (``conf/bank_de.yaml``, ``conf/bank_dg.yaml``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig

from robust_mrc.banks import BankError
from robust_mrc.core.errors import ConfigError
from robust_mrc.data.sources import SPLITS

CONF = Path(__file__).resolve().parents[2] / "conf"


def compose(overrides: Sequence[str], config_name: str = "config") -> DictConfig:
    """The config ``conf/<config_name>.yaml`` with ``overrides``, as ``train.py`` composes it."""
    from robust_mrc.config.cli import compose_config

    if not (CONF / f"{config_name}.yaml").is_file():
        raise BankError(f"{CONF}/{config_name}.yaml is missing: run the bank builders from a robust-mrc checkout")
    try:
        return compose_config(CONF, config_name, overrides)
    except ConfigError as err:
        raise BankError(str(err)) from None


def parse_splits(value: str | Sequence[str] | None, available: dict[str, list]) -> list[str]:
    """The splits of ``splits=[train,test]`` (a list), ``splits=test`` or ``"train,test"``; None:
    every split with examples."""
    if value in (None, "", "null"):
        return [s for s in SPLITS if available.get(s)]
    names = [s.strip() for s in value.strip("[]").split(",")] if isinstance(value, str) else [str(s).strip() for s in value]
    names = [s for s in names if s]
    spelled = value if isinstance(value, str) else ",".join(str(s) for s in value)
    unknown = [s for s in names if s not in SPLITS]
    if unknown or not names:
        raise BankError(f"splits={spelled}: expected a comma-separated list of {', '.join(SPLITS)}")
    empty = [s for s in names if not available.get(s)]
    if empty:
        raise BankError(f"splits={spelled}: the data config has no examples in {', '.join(empty)}")
    return names
