"""What every command of ``robust-mrc`` shares: a user's mistake as one line
(:func:`run_command`), a tool's function run under ``@hydra.main`` for a command line given as a
list (:func:`hydra_command`: Hydra's flags work, ``--help``, ``--cfg job``; a mistake in an
override is one line too), run directories that a refused command leaves behind removed, and the
refusal of Hydra settings in a W&B sweep's runs.

:func:`run_command` prints a user error (:class:`robust_mrc.core.errors.UserError`) as ``Error:
<message>`` on stderr and exits with status 1, without a traceback; ``HYDRA_FULL_ERROR=1`` raises
it as it is, and Hydra prints the whole traceback. Other exceptions are bugs and keep their
traceback. Light on imports: loaded before Hydra composes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from robust_mrc.config import CONFIG_DIR
from robust_mrc.config.compose import compose_config, register_resolvers
from robust_mrc.core.errors import ConfigError, run_with_one_line_errors


def run_command(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; a user error becomes ``Error: <message>`` on stderr and exit status 1
    (:func:`robust_mrc.core.errors.run_with_one_line_errors`, which the argparse tools below this
    room call with their ``--debug``); ``HYDRA_FULL_ERROR=1``: raised with its traceback. A refused
    command leaves no run directory behind (:func:`remove_refused_run_dir`)."""
    try:
        return run_with_one_line_errors(fn, *args, **kwargs)
    except SystemExit as refused:
        if refused.code == 1:
            remove_refused_run_dir()
        raise


def remove_refused_run_dir() -> Path | None:
    """After a refused command under ``@hydra.main``: remove the run directory Hydra made for it, when
    it is this process's own (named ``...-<pid>`` by ``robust_mrc/conf/run_dirs``, not a sweep job's or one the
    user named) and holds only Hydra's files (``.hydra/``, the job's log), and its date folder when that
    is left empty. Returns the removed directory, or None when there was nothing to remove."""
    import shutil

    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    try:
        hydra = HydraConfig.get()
        run_dir = Path(hydra.runtime.output_dir)
    except Exception:  # noqa: BLE001 - a config left by an earlier app in this process: not this run's
        return None
    own = {".hydra", f"{hydra.job.name}.log"}
    if not run_dir.name.endswith(f"-{os.getpid()}") or not run_dir.is_dir():
        return None
    if any(entry.name not in own for entry in run_dir.iterdir()):
        return None
    shutil.rmtree(run_dir, ignore_errors=True)
    try:
        run_dir.parent.rmdir()  # the date folder, when no other run is in it
    except OSError:
        pass
    return run_dir


def app_help(config_name: str, argv: Sequence[str], job_name: str = "app", config_dir: str | Path = CONFIG_DIR) -> bool:
    """For a command line asking for the app's help (``--help``, ``-h``; not ``--hydra-help``): print
    the text Hydra's ``--help`` prints (the config's ``hydra.help`` template: header, the config
    groups with their options, the composed config, footer) and return True; else False.

    The same text as Hydra's, made with one copy of Hydra's config repository: Hydra's own lists each
    group through a fresh deep copy of the whole repository, settings definitions included (about
    4 s on 2 cores, most of ``python train.py --help``). ``job_name``: what Hydra calls the job (the
    app's name in the help, unless the config names it)."""
    import string

    from hydra._internal.utils import get_args_parser
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.object_type import ObjectType
    from omegaconf import OmegaConf, flag_override

    parser = get_args_parser()
    args = parser.parse_args(list(argv))
    if not args.help or args.hydra_help:
        return False
    cfg = compose_config(config_dir, config_name, [*args.overrides, f"hydra.job.name={job_name}"], return_hydra_config=True)
    template = str(cfg.hydra.help.template)  # its ${hydra.help.header} / footer resolved

    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(Path(config_dir).resolve()), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        _, repo = loader._parse_overrides_and_create_caching_repo(config_name, list(args.overrides))

        def groups(parent: str = "") -> list[str]:
            found = []
            for group in repo.get_group_options(parent, ObjectType.GROUP):
                name = f"{parent}/{group}" if parent else group
                if repo.get_group_options(name, ObjectType.CONFIG):
                    found.append(name)
                if repo.get_group_options(name, ObjectType.GROUP):
                    found += groups(name)
            return found

        app_groups = "".join(
            f"{g}: {', '.join(sorted(repo.get_group_options(g, ObjectType.CONFIG)))}\n"
            for g in sorted(g for g in groups() if g != "hydra" and not g.startswith("hydra/"))
        )
    flags = "".join(f"{','.join(a.option_strings)} : {a.help}\n" for a in parser._actions if a.option_strings)
    overrides_help = next((a.help for a in parser._actions if not a.option_strings), "")
    with flag_override(cfg, ["struct", "readonly"], [False, False]):
        del cfg["hydra"]
    text = string.Template(template).safe_substitute(
        FLAGS_HELP=flags + "Overrides : " + overrides_help,
        APP_CONFIG_GROUPS=app_groups,
        HYDRA_CONFIG_GROUPS="(--hydra-help lists them)",
        CONFIG=OmegaConf.to_yaml(cfg, resolve=bool(args.resolve)),
    )
    print(text)
    return True


def run_hydra_app(app: Callable[[], Any], config_name: str, job_name: str, argv: Sequence[str] | None = None) -> None:
    """Run ``app`` (a function under ``@hydra.main`` with ``config_name``: ``train``, ``evaluate``) for
    the command line ``argv`` (default: this process's): Hydra settings refused under a W&B sweep agent
    before Hydra reads them (and makes a run directory), ``--help`` by :func:`app_help`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    run_with_one_line_errors(refuse_hydra_settings_in_sweep, argv)
    register_resolvers()
    if run_command(app_help, config_name, argv, job_name):
        return
    saved = sys.argv
    sys.argv = [saved[0] if saved else job_name, *argv]  # what @hydra.main reads
    try:
        app()
    finally:
        sys.argv = saved


def hydra_command(task: Callable[[DictConfig], Any], config_name: str, argv: Sequence[str], config_dir: str | Path = CONFIG_DIR) -> None:
    """``task(cfg)`` under ``@hydra.main(config_path=config_dir, config_name=config_name)`` for the
    command-line arguments ``argv`` (overrides and Hydra's flags: ``--help``, ``--cfg job``, ...),
    as if typed; returns after ``task`` or Hydra's help. The overrides are composed first
    (:func:`compose_config`: a mistake is a one-line :class:`~robust_mrc.core.errors.ConfigError`,
    where Hydra would print several lines), and ``task`` runs in :func:`run_command`. The run
    directory is the config's (``robust_mrc/conf/run_dirs/``)."""
    import hydra
    from hydra._internal.utils import get_args_parser

    argv = list(argv)
    args = get_args_parser().parse_args(argv)
    if app_help(config_name, argv, config_name, config_dir):
        return
    if not (args.multirun or args.config_path or args.config_dir or args.experimental_rerun or args.shell_completion):
        compose_config(config_dir, args.config_name or config_name, args.overrides)

    register_resolvers()

    @hydra.main(version_base="1.3", config_path=str(config_dir), config_name=config_name)
    def _main(cfg: DictConfig) -> None:
        run_command(task, cfg)

    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    saved = sys.argv
    sys.argv = [saved[0] if saved else "robust_mrc", *argv]  # what @hydra.main reads
    try:
        _main()
    except SystemExit as done:  # Hydra's --help, --cfg, ... exit 0
        if done.code not in (None, 0):
            raise
    finally:
        sys.argv = saved
        # called in-process (tests, notebooks): leave no Hydra state behind for a later train(cfg)
        HydraConfig.instance().cfg = None
        GlobalHydra.instance().clear()


#: what a W&B sweep agent sets in the environment of each run it starts (wandb/wandb_agent.py)
SWEEP_VARIABLES = ("WANDB_SWEEP_ID", "WANDB_SWEEP_PARAM_PATH")


def refuse_hydra_settings_in_sweep(argv: Sequence[str]) -> None:
    """Under a W&B sweep agent (:data:`SWEEP_VARIABLES`), a :class:`ConfigError` for any argument
    that sets Hydra itself (:func:`sets_hydra`): a sweep's parameters become command-line arguments,
    and ``hydra.callbacks`` (or a config from another ``--config-dir``) runs any Python callable
    before the job starts. Called by ``train.py`` and ``evaluate.py`` before Hydra reads ``argv``."""
    variable = next((v for v in SWEEP_VARIABLES if os.environ.get(v)), None)
    refused = [a for a in argv if sets_hydra(a)]
    if variable and refused:
        raise ConfigError(
            f"{' '.join(refused)}: a W&B sweep run ({variable} is set) takes no Hydra settings (hydra.*, --config-dir and "
            "Hydra's other flags) from its command line: a sweep's parameters become arguments, and hydra.callbacks runs "
            "any Python callable; put Hydra settings in a config under robust_mrc/conf/ (see the Security notes of docs/bad-inputs.md)"
        )


def sets_hydra(argument: str) -> bool:
    """Whether a command-line argument sets Hydra itself: an override of its config (``hydra.run.dir=...``,
    ``+hydra.callbacks...``, ``hydra/launcher=...``) or one of its flags (``--config-dir``, ``-cn``, ...)."""
    text = argument.strip()
    key = text.split("=", 1)[0].lstrip("~+")
    return text.startswith("-") or key == "hydra" or key.startswith(("hydra.", "hydra/"))
