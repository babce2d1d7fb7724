"""The checks of a setting's value by its definition (:mod:`robust_mrc.core.settings`), for every
source of settings: the command line (:func:`robust_mrc.config.checks.check_config`) and a
checkpoint's saved ones (:func:`robust_mrc.models.checkpoints.load_checkpoint`).

A :class:`Checker` reads dotted keys of a config and collects one problem per bad value, the key
and what it accepts named; :func:`check_settings` checks every setting of a definition by its
declared check; :func:`check_task` adds the rules across a task's settings; :func:`check_model_sizes`
bounds the sizes a ``model.config`` override may give an architecture.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from robust_mrc.core import settings as S

# ``model.config`` overrides that size an architecture, and their ceilings (well above any released
# model; a larger value would allocate gigabytes before anything could fail)
MODEL_SIZE_CEILINGS = {
    "num_hidden_layers": 256,
    "num_layers": 256,
    "num_decoder_layers": 256,
    "encoder_layers": 256,
    "decoder_layers": 256,
    "n_layer": 256,
    "n_layers": 256,
    "num_attention_heads": 1024,
    "n_head": 1024,
    "hidden_size": 1 << 16,
    "d_model": 1 << 16,
    "n_embd": 1 << 16,
    "dim": 1 << 16,
    "intermediate_size": 1 << 18,
    "d_ff": 1 << 18,
    "hidden_dim": 1 << 18,
    "vocab_size": 1 << 20,
    "type_vocab_size": 1 << 10,
    "max_position_embeddings": S.MAX_LENGTH,
    "n_positions": S.MAX_LENGTH,
}


class Checker:
    """The values of ``cfg`` (a config, or plain nested mappings) checked key by key;
    :attr:`problems` lists each bad one."""

    def __init__(self, cfg: DictConfig | Mapping[str, Any]):
        self.cfg = cfg
        self.problems: list[str] = []

    def value(self, key: str) -> Any:
        if isinstance(self.cfg, DictConfig):
            return OmegaConf.select(self.cfg, key, default=None, throw_on_missing=False)
        return self._plain(key)

    def has(self, key: str) -> bool:
        parent, _, leaf = key.rpartition(".")
        node = self.cfg if not parent else self.value(parent)
        return isinstance(node, (DictConfig, Mapping)) and leaf in node

    def _plain(self, key: str) -> Any:
        """The value at ``key`` of plain mappings (a checkpoint's settings: never resolved, so a
        saved ``${...}`` stays text)."""
        node: Any = self.cfg
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def bad(self, key: str, value: Any, expected: str) -> None:
        self.problems.append(f"{key}={value!r}: expected {expected}")

    def integer(self, key: str, lo: int | None = None, hi: int | None = None, null: bool = False) -> int | None:
        v = self.value(key)
        if v is None and (null or not self.has(key)):
            return None
        rng = (f" >= {lo}" if hi is None else f" in [{lo}, {hi}]") if lo is not None else ""
        if not isinstance(v, int) or isinstance(v, bool) or (lo is not None and v < lo) or (hi is not None and v > hi):
            self.bad(key, v, f"an integer{rng}" + (" or null" if null else ""))
            return None
        return v

    def number(
        self, key: str, lo: float, hi: float | None = None, *, hi_open: bool = False, lo_open: bool = False, null: bool = False
    ) -> float | None:
        v = self.value(key)
        if v is None and (null or not self.has(key)):
            return None
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        if ok and not math.isfinite(v):  # inf passes every lower bound, and nan compares false to all
            self.bad(key, v, "a finite number" + (" or null" if null else ""))
            return None
        ok = ok and (v > lo if lo_open else v >= lo) and (hi is None or (v < hi if hi_open else v <= hi))
        if not ok:
            left, right = ("(" if lo_open else "["), (")" if hi_open else "]")
            rng = f"in {left}{lo}, {hi}{right}" if hi is not None else f"{'>' if lo_open else '>='} {lo}"
            self.bad(key, v, f"a number {rng}" + (" or null" if null else ""))
            return None
        return float(v)

    def boolean(self, key: str) -> None:
        v = self.value(key)
        if self.has(key) and not isinstance(v, bool):
            self.bad(key, v, "true or false")

    def choice(self, key: str, choices, null: bool = False, as_text: bool = False) -> None:
        """``as_text``: the value is compared as a string (YAML reads ``32`` as a number)."""
        v = self.value(key)
        if (v is None and (null or not self.has(key))) or (str(v) if as_text else v) in choices:
            return
        self.bad(key, v, "one of " + ", ".join(map(str, choices)) + (" or null" if null else ""))

    def subset(self, key: str, choices) -> None:
        """A list whose every item is one of ``choices`` (``[]``: none)."""
        v = self.value(key)
        if not self.has(key) or v is None:
            return
        if isinstance(v, str) or not isinstance(v, (list, tuple, ListConfig)):
            self.bad(key, v, "a list of " + ", ".join(map(str, choices)) + " (e.g. [" + ",".join(map(str, choices[:2])) + "]; [] = none)")
            return
        unknown = [item for item in v if item not in choices]
        if unknown:
            self.bad(key, list(v), f"items of {', '.join(map(str, choices))} ({', '.join(map(str, unknown))} is none of them)")

    def text(self, key: str) -> None:
        v = self.value(key)
        if v is not None and not isinstance(v, str):
            self.bad(key, v, "a string or null")

    def whole(self, key: str) -> int | None:
        """A setting already checked as an integer, or None when it is not one."""
        value = self.value(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


def choices(spec: Any) -> tuple:
    """The allowed values of a ``choice`` setting: its tuple, or the tuple a ``"module:NAME"`` names."""
    if isinstance(spec, str):
        module, _, name = spec.partition(":")
        return tuple(getattr(importlib.import_module(module), name))
    return tuple(spec)


def check_settings(checker: Checker, cls: type, prefix: str = "") -> None:
    """Check every setting of ``cls`` under ``prefix`` with ``checker`` by its declared check."""
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
        elif kind == "subset":
            checker.subset(key, choices(meta["choices"]))


def check_task(c: Checker, name: str, prefix: str = "task.") -> None:
    """The settings of task ``name`` (one of :data:`~robust_mrc.core.settings.TASKS`) by their
    definitions, and the rules across them (padding multiple, span windows)."""
    check_settings(c, S.TASKS[name], prefix)
    max_length, multiple = c.whole(f"{prefix}max_length"), c.whole(f"{prefix}pad_to_multiple_of")
    if max_length is not None and multiple and max_length % multiple:
        c.problems.append(
            f"{prefix}pad_to_multiple_of={multiple} must divide {prefix}max_length={max_length}: a batch "
            f"padded up to the next multiple would be longer than max_length (and than the model's positions)"
        )
    if name != "span":
        return
    stride = c.whole(f"{prefix}doc_stride")
    no_answer = c.value(f"{prefix}no_answer")
    if c.has(f"{prefix}no_answer") and no_answer != "auto" and not isinstance(no_answer, bool):
        c.bad(f"{prefix}no_answer", no_answer, "auto, true or false")
    if max_length is not None and stride is not None and stride >= max_length:
        c.problems.append(
            f"{prefix}doc_stride={stride} must be smaller than {prefix}max_length={max_length} "
            "(the overlap of two windows; 128 for 384 is usual)"
        )


def check_model_sizes(c: Checker, prefix: str = "model.config.") -> None:
    """The sizes a ``model.config`` override gives the architecture, each within its ceiling
    (:data:`MODEL_SIZE_CEILINGS`)."""
    overrides = c.value(prefix.rstrip("."))
    if not isinstance(overrides, (DictConfig, Mapping)):
        return
    for key in overrides:
        if key in MODEL_SIZE_CEILINGS:
            c.integer(f"{prefix}{key}", 1, MODEL_SIZE_CEILINGS[key])
