"""The settings' definitions (:mod:`robust_mrc.core.settings`) in Hydra and in the checks.

:func:`register` stores each group's definition in Hydra's ConfigStore, where ``conf/`` files take
it as their base: ``<group>/base/defaults`` (model, data, attack), ``task/base/<task>``, and the
top-level keys of ``train.py`` / ``evaluate.py`` as ``train_settings`` / ``eval_settings``. The
nodes are plain (untyped) mappings, so a wrong value reaches :func:`check_settings`, which names the
key and what it accepts, instead of an OmegaConf type error.
"""

from __future__ import annotations

import importlib
from typing import Any

from robust_mrc.core import settings as S


def register() -> None:
    """Store the definitions in Hydra's ConfigStore (idempotent)."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    for group, cls in S.GROUPS.items():
        cs.store(group=f"{group}/base", name="defaults", node=S.defaults(cls))
    for name, cls in S.TASKS.items():
        cs.store(group="task/base", name=name, node=S.defaults(cls))
    cs.store(name="train_settings", node=S.defaults(S.TrainSettings))
    cs.store(name="eval_settings", node=S.defaults(S.EvalSettings))


def choices(spec: Any) -> tuple:
    """The allowed values of a ``choice`` setting: its tuple, or the tuple a ``"module:NAME"`` names."""
    if isinstance(spec, str):
        module, _, name = spec.partition(":")
        return tuple(getattr(importlib.import_module(module), name))
    return tuple(spec)


def check_settings(checker, cls: type, prefix: str = "") -> None:
    """Check every setting of ``cls`` under ``prefix`` with ``checker``
    (:class:`robust_mrc.config.checks._Checker`) by its declared check."""
    for key, f in S.walk(cls, prefix):
        meta = f.metadata
        kind, null = meta.get("check"), bool(meta.get("null", False))
        if kind == "int":
            checker.integer(key, meta.get("lo"), meta.get("hi"), null=null)
        elif kind == "number":
            checker.number(
                key, meta["lo"], meta.get("hi"), hi_open=meta.get("hi_open", False), lo_open=meta.get("lo_open", False), null=null
            )
        elif kind == "bool":
            checker.boolean(key)
        elif kind == "text":
            checker.text(key)
        elif kind == "choice":
            checker.choice(key, choices(meta["choices"]), null=null, as_text=bool(meta.get("as_text")))
