"""Suites: the clean test set plus named attacked or external versions of it, cached on disk.

A ``suite`` config (``conf/suite/*.yaml``) lists sets::

    name: advrace
    task: mc
    sets:
      - {name: addsent}                                # attack "addsent" with its defaults
      - {name: magnet, params: {pool: null}}           # pool null: options of other passages
      - {name: cs_strong, attack: charswap, params: {rate: 0.5}}
    extra: {}                                          # name -> a RACE / SQuAD file, or
                                                       #         {file: ..., format: ..., dpr: true}

Each attacked set is the clean set under one attack, every example attacked once with
``example_rng(seed, 0, id, attack)`` (the same copies the training module validates on); where the
attack gives up, the clean example stays (counted as a fallback). Sets are cached under
``cache_dir`` by a fingerprint of (clean examples, attack, parameters and the files they name,
seed), so a second evaluation reads them back instead of attacking again.
"""

from __future__ import annotations

from robust_mrc.errors import UserError

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from robust_mrc.attacks.apply import AttackSpecError, attack_examples, build_attack
from robust_mrc.attacks.resources import environment
from robust_mrc.evaluation.cache import DiskCache, examples_digest, fingerprint

log = logging.getLogger(__name__)

CLEAN = "clean"


class SuiteConfigError(UserError, ValueError):
    """A suite entry that cannot be built."""


@dataclass(frozen=True)
class SetSpec:
    """One set of a suite: an attack of the clean set, or an external file."""

    name: str
    attack: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None
    format: str = "auto"
    dpr: bool = False  # paired with the clean set by id; report the different-prediction ratio

    @property
    def external(self) -> bool:
        return self.file is not None


@dataclass
class EvalSet:
    """A built set: its examples and how they were made."""

    spec: SetSpec
    examples: list
    fingerprint: str
    cached: bool = False
    fallbacks: int = 0

    @property
    def name(self) -> str:
        return self.spec.name


def suite_specs(suite_cfg: Mapping[str, Any] | None, task: str) -> list[SetSpec]:
    """The non-clean sets of a suite config, checked (unique names, a task that fits)."""
    cfg = dict(suite_cfg or {})
    suite_task = cfg.get("task")
    name = cfg.get("name", "suite")
    if suite_task not in (None, "any", task):
        raise SuiteConfigError(f"suite={name} is for task={suite_task}, but the checkpoint is task={task}")
    specs: list[SetSpec] = []
    for i, entry in enumerate(cfg.get("sets") or []):
        if isinstance(entry, str):
            entry = {"name": entry}
        entry = dict(entry)
        if "name" not in entry:
            raise SuiteConfigError(f"suite={name}: set #{i} has no name: {entry}")
        unknown = set(entry) - {"name", "attack", "params", "file", "format", "dpr"}
        if unknown:
            raise SuiteConfigError(f"suite={name}: set {entry['name']!r} has unknown key(s) {sorted(unknown)}")
        if entry.get("file"):
            specs.append(SetSpec(entry["name"], file=str(entry["file"]), format=entry.get("format", "auto"), dpr=bool(entry.get("dpr", False))))
        else:
            specs.append(
                SetSpec(entry["name"], attack=entry.get("attack") or entry["name"], params=dict(entry.get("params") or {}), dpr=bool(entry.get("dpr", False)))
            )
    for set_name, value in (cfg.get("extra") or {}).items():
        value = {"file": value} if isinstance(value, str) else dict(value)
        if not value.get("file"):
            raise SuiteConfigError(f"suite.extra.{set_name}: give a file path (or {{file: ..., format: ...}})")
        specs.append(SetSpec(str(set_name), file=str(value["file"]), format=value.get("format", "auto"), dpr=bool(value.get("dpr", False))))
    names = [CLEAN] + [s.name for s in specs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise SuiteConfigError(f"suite={name}: the set name {dup!r} is used twice (clean is reserved)")
    return specs


def build_sets(
    specs: Sequence[SetSpec],
    clean: list,
    task: str,
    *,
    seed: int,
    cache: DiskCache,
    pool_examples: Sequence | None = None,
    strict: bool = True,
) -> dict[str, EvalSet]:
    """``{"clean": ..., name: ...}`` in suite order; attacked sets read from ``cache`` when present."""
    clean_digest = examples_digest(clean)
    sets = {CLEAN: EvalSet(SetSpec(CLEAN), list(clean), fingerprint("clean", clean_digest))}
    pool_digest = examples_digest(pool_examples) if pool_examples is not None else None
    resource_env = environment() if any(not s.external for s in specs) else None  # WordNet, tagger, homoglyphs
    for spec in specs:
        if spec.external:
            sets[spec.name] = _external_set(spec, task, strict)
            continue
        key = fingerprint("attacked", clean_digest, spec.attack, dict(spec.params), int(seed), pool_digest, task, resource_env)
        cached = cache.load_examples(spec.name, key)
        if cached is not None and len(cached) == len(clean):
            log.info("set %s: %d examples from the cache (%s)", spec.name, len(cached), key)
            sets[spec.name] = EvalSet(spec, cached, key, cached=True, fallbacks=_count_unchanged(clean, cached))
            continue
        try:
            attack = build_attack({"name": spec.attack, "params": dict(spec.params)}, task, pool_examples)
        except (AttackSpecError, ValueError) as err:
            raise SuiteConfigError(f"set {spec.name!r}: cannot build attack {spec.attack!r}: {err}") from None
        attacked = attack_examples(attack, clean, seed)
        examples, fallbacks = attacked.examples, attacked.fallbacks
        if fallbacks:
            log.info("set %s: %d of %d examples unchanged (the attack gave up)", spec.name, fallbacks, len(examples))
        cache.save_examples(spec.name, key, examples)
        sets[spec.name] = EvalSet(spec, examples, key, fallbacks=fallbacks)
    return sets


def _count_unchanged(clean: Sequence, attacked: Sequence) -> int:
    return sum(a == c for a, c in zip(attacked, clean))


def _external_set(spec: SetSpec, task: str, strict: bool) -> EvalSet:
    from robust_mrc.data.examples import MCExample, SpanExample
    from robust_mrc.data.readers import load_examples
    from robust_mrc.evaluation.cache import file_digest

    path = Path(spec.file).expanduser()
    if not path.exists():
        raise SuiteConfigError(f"set {spec.name!r}: no such file {path}")
    examples = list(load_examples(path, spec.format, strict=strict))
    expected = MCExample if task == "mc" else SpanExample
    if examples and not isinstance(examples[0], expected):
        raise SuiteConfigError(f"set {spec.name!r}: {path} holds {type(examples[0]).__name__}s, task={task} needs {expected.__name__}s")
    digest = file_digest(path) if path.is_file() else examples_digest(examples)
    return EvalSet(spec, examples, fingerprint("file", str(path.resolve()), digest))
