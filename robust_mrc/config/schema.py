"""The settings' definitions (:mod:`robust_mrc.core.settings`) in Hydra and in the checks.

:func:`register` stores each group's definition in Hydra's ConfigStore, where ``robust_mrc/conf/`` files take
it as their base: ``<group>/base/defaults`` (model, data, attack), ``task/base/<task>``, and the
top-level keys of ``train.py`` / ``evaluate.py`` as ``train_settings`` / ``eval_settings``, the
tool commands' keys as ``export_settings``, ``attacks_settings``, ``bank_de_settings``, ``bank_dg_settings``. The
nodes are plain (untyped) mappings, so a wrong value reaches :func:`check_settings`
(:mod:`robust_mrc.core.checking`), which names the key and what it accepts, instead of an OmegaConf
type error.
"""

from __future__ import annotations

from robust_mrc.core import settings as S
from robust_mrc.core.checking import check_settings, choices

__all__ = ["check_settings", "choices", "register"]


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
    for name, cls in S.COMMAND_SETTINGS.items():
        cs.store(name=name, node=S.defaults(cls))
