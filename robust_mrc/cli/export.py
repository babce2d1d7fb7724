"""``robust-mrc export ckpt=RUN/checkpoints/best.ckpt out=DIR [report=...] [overwrite=false]``
(``--help``: the keys of ``robust_mrc/conf/export.yaml``); a mistake: ``Error: ...`` (one line), exit status 1."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from omegaconf import DictConfig

from robust_mrc.core.errors import ConfigError


def _export(cfg: DictConfig) -> None:
    from robust_mrc.data.writers import check_writable
    from robust_mrc.export import export_checkpoint

    missing = [k for k in ("ckpt", "out") if not cfg[k]]
    if missing:
        raise ConfigError(f"give {' and '.join(f'{k}=...' for k in missing)} (robust-mrc export --help)")
    check_writable(Path(str(cfg.out)))  # the directory is written beside out, then renamed into place: before any work
    result = export_checkpoint(
        cfg.ckpt, cfg.out, report=cfg.report, overwrite=bool(cfg.overwrite), trust_remote_code=bool(cfg.trust_remote_code)
    )
    print(json.dumps(result, indent=2))


def main(argv: list[str] | None = None) -> int:
    from robust_mrc.cli.common import hydra_command, run_command

    argv = ["--help" if a == "help" else a for a in (sys.argv[1:] if argv is None else argv)]
    logging.basicConfig(level=logging.INFO, format="[%(name)s] %(message)s")
    run_command(hydra_command, _export, "export", argv)
    return 0
