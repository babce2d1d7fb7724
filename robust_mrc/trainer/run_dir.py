"""The run directory of a training or an evaluation, its saved config, the lock one training holds
on it, and rank 0 known early."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from lightning_fabric.utilities.rank_zero import rank_zero_only
from omegaconf import DictConfig, OmegaConf

from robust_mrc.core.errors import UserError
from robust_mrc.core.files import LockHeld, exclusive_lock
from robust_mrc.data.writers import OutputWriteError, atomic_write_text

#: the lock file of a run directory (:func:`hold_run_dir`); it names the process holding it
RUN_LOCK = ".run.lock"


class RunDirBusy(UserError, RuntimeError):
    """Another process runs in the same run directory."""


class RunDirTaken(UserError, RuntimeError):
    """A run directory that holds results a command would overwrite."""


def refuse_finished_run(out: Path) -> None:
    """A training started afresh (no ``ckpt_path``) in ``out`` must not overwrite the results of an
    earlier run there (its ``metrics.json``, its checkpoints): a :class:`RunDirTaken` naming them."""
    found = ["metrics.json"] if (out / "metrics.json").is_file() else []
    if (out / "checkpoints").is_dir():
        found += sorted(f"checkpoints/{p.name}" for p in (out / "checkpoints").glob("*.ckpt"))
    if found:
        raise RunDirTaken(
            f"output_dir={out} holds a run ({', '.join(found[:3])}{', ...' if len(found) > 3 else ''}): ckpt_path=last resumes "
            "it; to train afresh give a new output_dir (nothing there is overwritten)"
        )


def refuse_training_run(out: Path) -> None:
    """An evaluation must not write into a training run's directory (its ``report.json`` and
    ``metrics.json`` would replace the training's): a :class:`RunDirTaken` with where to write."""
    if (out / "checkpoints").is_dir() or ((out / "metrics.json").is_file() and not (out / "report.json").is_file()):
        raise RunDirTaken(
            f"output_dir={out} is a training run's directory (checkpoints/, metrics.json): an evaluation writes its "
            f"own metrics.json and report.json; give output_dir={out / 'eval'} or another directory"
        )


def save_config(cfg: DictConfig, path: Path) -> Path:
    """The resolved config as YAML, atomically (a read-only or full run directory: a clear error)."""
    return atomic_write_text(path, OmegaConf.to_yaml(cfg, resolve=True))


def save_command(path: Path, script: str = "train.py") -> Path | None:
    """The command line of a run under Hydra (``python train.py <overrides>``), atomically; ``None``
    when the run was not started from the command line (``train(cfg)`` from Python)."""
    import shlex

    try:
        from hydra.core.hydra_config import HydraConfig

        overrides = list(HydraConfig.get().overrides.task)
    except ValueError:  # not under @hydra.main
        return None
    return atomic_write_text(path, " ".join(["python", script, *(shlex.quote(o) for o in overrides)]) + "\n")


RUN_DIR_ENV = "ROBUST_MRC_RUN_DIR"


def run_dir(cfg: DictConfig) -> Path:
    """``cfg.output_dir``, else Hydra's output directory, else ``outputs/<timestamp>`` (rank 0's
    timestamp in every DDP process: Lightning's children inherit it through the environment).

    Processes started by SLURM (srun) do not share an environment with rank 0: give them
    ``output_dir`` (the sbatch scripts key it by the job id)."""
    if cfg.output_dir:
        path = Path(cfg.output_dir)
    else:
        try:
            from hydra.core.hydra_config import HydraConfig

            path = Path(HydraConfig.get().runtime.output_dir)
        except ValueError:  # not under @hydra.main (tests, notebooks)
            inherited = os.environ.get(RUN_DIR_ENV)
            if inherited and not is_global_zero():
                path = Path(inherited)  # a DDP child process started by rank 0: rank 0's directory
            else:
                path = new_run_dir(Path("outputs"))
                os.environ[RUN_DIR_ENV] = str(path)  # inherited by the DDP processes Lightning starts
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputWriteError(path / "config.yaml", err) from err
    return path


def new_run_dir(root: Path) -> Path:
    """A directory ``root/<date>/<time with microseconds>-<pid>`` made by this call alone: two runs
    started in the same second (or microsecond) never share one."""
    stamp = datetime.now().strftime("%Y-%m-%d/%H-%M-%S-%f")
    base = root / f"{stamp}-{os.getpid()}"
    for n in range(1000):
        path = base if n == 0 else base.with_name(f"{base.name}-{n}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as err:
            raise OutputWriteError(path / "config.yaml", err) from err
    raise OutputWriteError(base, OSError(None, "1000 run directories of this name exist"))


def is_global_zero() -> bool:
    """Rank 0 of the job, known before the Trainer exists (from RANK / LOCAL_RANK / SLURM_PROCID)."""
    return rank_zero_only.rank == 0


@contextlib.contextmanager
def hold_run_dir(path: Path) -> Iterator[None]:
    """An exclusive lock on the run directory ``path`` while the block runs (rank 0 only: the DDP
    processes it starts share its directory). Another live process holding it: a
    :class:`RunDirBusy` naming it (pid, host). The lock goes with its process, so a directory left
    by a run that died, or a finished run resumed, is free."""
    if not is_global_zero():
        yield
        return
    note = f"pid {os.getpid()} on host {socket.gethostname()}, since {datetime.now().isoformat(timespec='seconds')}"
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(exclusive_lock(path / RUN_LOCK, note))
    except LockHeld as err:
        raise RunDirBusy(
            f"output_dir={path} is in use by another run ({err.holder}): two runs in one directory overwrite "
            "each other's checkpoints and results; wait for it to end or give another output_dir"
        ) from None
    except OSError as err:
        raise OutputWriteError(path / RUN_LOCK, err) from err
    with stack:
        yield
