"""Command-line plumbing of the bank builders: Hydra-style ``key=value`` arguments split into the
builder's own keys, the multiple-choice data config's and the training config's, each config
composed from ``conf/`` with Hydra's compose API (as ``train.py`` would), composition errors as one
line (:class:`~robust_mrc.banks.BankError`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from omegaconf import DictConfig

from robust_mrc.banks import BankError
from robust_mrc.data.sources import SPLITS

CONF = Path(__file__).resolve().parents[2] / "conf"
# the keys of the multiple-choice data config (and what its paths and generator depend on)
DATA_KEYS = ("data", "paths", "seed")


def override_key(override: str) -> str:
    """The config key of a Hydra override: ``+trainer.x=1`` -> ``trainer.x``."""
    if "=" not in override and not override.startswith("~"):
        raise BankError(f"expected key=value, got {override!r} (see --help)")
    return override.split("=", 1)[0].lstrip("~+")


def split_arguments(argv: Sequence[str], own: Iterable[str]) -> tuple[dict[str, str], list[str], list[str]]:
    """``(own key -> value, data overrides, training overrides)`` of ``argv``. ``seed`` and
    ``paths.*`` go to both configs; ``task`` is refused (the builder picks it)."""
    own = set(own)
    mine: dict[str, str] = {}
    data: list[str] = []
    training: list[str] = []
    for arg in argv:
        key = override_key(arg)
        root = key.split(".", 1)[0]
        if key in own:
            mine[key] = arg.split("=", 1)[1]
        elif key == "task":
            raise BankError(f"{arg}: the bank builder sets the task itself (mc data, span or generation model)")
        elif root in DATA_KEYS:
            data.append(arg)
            if root != "data":
                training.append(arg)
        else:
            training.append(arg)
    return mine, data, training


def compose(overrides: Sequence[str], config_name: str = "config") -> DictConfig:
    """The config ``conf/<config_name>.yaml`` with ``overrides``, as ``train.py`` composes it."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException, OverrideParseException
    from omegaconf.errors import OmegaConfBaseException

    from robust_mrc.config.cli import register_resolvers

    if not (CONF / f"{config_name}.yaml").is_file():
        raise BankError(f"{CONF}/{config_name}.yaml is missing: run the bank builders from a robust-mrc checkout")
    register_resolvers()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            return hydra_compose(config_name=config_name, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as err:
        problem = composition_problem(err)
        if isinstance(err, OverrideParseException):
            bad = [o for o in overrides if not _parses(o)]
            problem = f"cannot read the argument(s) {' '.join(bad or overrides)}: {problem}"
        raise BankError(problem) from None


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
    if "Available options" in str(err):
        options = [line.strip() for line in str(err).split("Available options", 1)[1].split("Config search path")[0].splitlines()[1:]]
        text += f"; available: {', '.join(o for o in options if o)}"
    return text


def parse_splits(value: str | None, available: dict[str, list]) -> list[str]:
    """``splits=train,test`` (or ``[train,test]``); None: every split with examples."""
    if value in (None, "", "null"):
        return [s for s in SPLITS if available.get(s)]
    names = [s.strip() for s in value.strip("[]").split(",") if s.strip()]
    unknown = [s for s in names if s not in SPLITS]
    if unknown or not names:
        raise BankError(f"splits={value}: expected a comma-separated list of {', '.join(SPLITS)}")
    empty = [s for s in names if not available.get(s)]
    if empty:
        raise BankError(f"splits={value}: the data config has no examples in {', '.join(empty)}")
    return names
