"""The ``robust-mrc`` command: every command line of the project, one subcommand each.

    robust-mrc train [KEY=VALUE ...]                   train a reader (as python train.py)
    robust-mrc evaluate ckpt_path=... [KEY=VALUE ...]  evaluate under attack (as python evaluate.py)
    robust-mrc attacks list|apply|stats|audit ...      the attacks: list, attacked copies, statistics, audits
    robust-mrc banks de|dg ...                         distractor banks made by the project's models
    robust-mrc export ckpt=... out=...                 a checkpoint as a Hugging Face model directory
    robust-mrc compare DIRS... [--ci]                  training policy x test set over runs
    robust-mrc metrics DATA_FILE PREDICTIONS           score predictions as the official scripts do

``train``, ``evaluate``, ``attacks``, ``banks`` and ``export`` read Hydra overrides (``KEY=VALUE``,
``--help``, ``--cfg job``) of the configs in ``robust_mrc/conf`` (:data:`robust_mrc.config.CONFIG_DIR`);
a user's own config folder joins them through Hydra's search path
(``hydra.searchpath=[file:///path/to/conf]`` or ``--config-dir``). ``compare`` and ``metrics`` take
files and flags. A mistake is one line, ``Error: ...``, exit status 1. Each subcommand imports what it
uses when it runs: ``robust-mrc --help`` and ``robust-mrc attacks list`` start without the models.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

USAGE = __doc__.split("\n\n")[1]


def _train(argv: Sequence[str]) -> int:
    from robust_mrc.cli.train import main

    main(argv)
    return 0


def _evaluate(argv: Sequence[str]) -> int:
    from robust_mrc.cli.evaluate import main

    main(argv)
    return 0


def _attacks(argv: Sequence[str]) -> int:
    from robust_mrc.cli.attacks import main

    return main(list(argv))


def _banks(argv: Sequence[str]) -> int:
    from robust_mrc.cli.banks import main

    return main(list(argv))


def _export(argv: Sequence[str]) -> int:
    from robust_mrc.cli.export import main

    return main(list(argv))


def _compare(argv: Sequence[str]) -> int:
    from robust_mrc.cli.compare import main

    return 0 if main(list(argv)) else 1


def _metrics(argv: Sequence[str]) -> int:
    from robust_mrc.cli.metrics import main

    return main(list(argv))


#: subcommand -> what runs it
COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "train": _train,
    "evaluate": _evaluate,
    "attacks": _attacks,
    "banks": _banks,
    "export": _export,
    "compare": _compare,
    "metrics": _metrics,
}


def main(argv: Sequence[str] | None = None) -> int:
    """``robust-mrc COMMAND ARGS...``; the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print("usage: robust-mrc COMMAND [ARGS ...]   (robust-mrc COMMAND --help: its arguments)\n")
        print(USAGE)
        return 0
    if argv[0] == "--version":
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"robust-mrc {version('robust-mrc')}")
        except PackageNotFoundError:
            print("robust-mrc (not installed: run from a checkout)")
        return 0
    command = COMMANDS.get(argv[0])
    if command is None:
        print(f"Error: unknown command {argv[0]!r}; one of {', '.join(COMMANDS)} (robust-mrc --help)", file=sys.stderr)
        return 2
    return command(argv[1:])
