"""Suites: the clean test set plus named attacked or external versions of it, cached on disk.

A ``suite`` config (``robust_mrc/conf/suite/*.yaml``) lists sets::

    name: advrace
    task: mc
    sets:
      - {name: addsent}                                # attack "addsent" with its defaults
      - {name: magnet, screen: {questions: 50, pool_size: 500, top: 20}}   # screened per model
      - {name: random_option}                          # unscreened random options (a stand-in)
      - {name: cs_strong, attack: charswap, params: {rate: 0.5}}
      - {name: addany, model: true, limit: 200}        # searched against each evaluated model
    extra: {}                                          # name -> a RACE / SQuAD file, or
                                                       #   {file: ..., format: ..., dpr: true, adversarial: true}

Each attacked set is the clean set under one attack, every example attacked once with
``example_rng(seed, 0, id, attack)`` (the same copies the training module validates on); where the
attack gives up, the clean example stays (counted as a fallback). ``model: true`` runs the attack's
model-in-the-loop search (:mod:`robust_mrc.attacks.search`) against each evaluated checkpoint, which
gets its own version of the set; ``limit: N`` takes the first N clean questions only. ``screen:`` (the ``magnet`` attack only;
``{questions: 50, pool_size: 500, top: 20}`` by default, each key optional) screens magnet options
against each evaluated checkpoint, which gets its own set (Lin, Zou & Ding 2021): ``pool_size``
distinct options of the other passages of the training split (or of ``params.pool``, a file), a
deterministic sample, are scored with the first ``questions`` questions, ranked by the interference
score T_k, and the ``top`` first are the magnets; one wrong option of each question is replaced by
one of them (:mod:`robust_mrc.evaluation.magnet_screening`; the scores are cached by checkpoint,
questions and pool). An ensemble's own magnet set takes T_k averaged over its members, as the paper
averaged over three models. A ``magnet`` set with neither ``screen:`` nor ``params.pool`` is screened
with the defaults; with ``params.pool`` and no ``screen:`` the file is the ranked pool itself (its first
``params.top``), the same for every model. A file whose
ids are variants ``<clean id>-<suffix>`` (Jia & Liang's published sets), or one marked
``adversarial: true``, is scored by their grouped worst-case rules (``orig_*`` / ``adv_*``). Sets
are cached under ``cache_dir`` by a fingerprint of (clean examples, attack, parameters and the
files they name, seed, the attacks' resources, and for model sets the checkpoint), so a second
evaluation reads them back instead of attacking again. A model set's search journals each finished
lockstep group (``searches/<name>-<fingerprint>.partial.jsonl`` in the cache,
:mod:`robust_mrc.core.journal`): an evaluation stopped in the middle of an hours-long AddAny search goes on
from the last group when run again.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from robust_mrc.attacks.apply import AttackSpecError, attack_examples, attacks_code_digest, build_attack
from robust_mrc.attacks.resources import environment
from robust_mrc.attacks.search import run_search, searches
from robust_mrc.core.digests import fingerprint
from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import examples_digest
from robust_mrc.evaluation.cache import DiskCache
from robust_mrc.evaluation.search_journal import SearchJournal

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
    model: bool = False  # the attack searches against each evaluated model (its own set per model)
    # magnet screening against each evaluated model (its own set per model): {questions, pool_size, top}
    screen: Mapping[str, Any] | None = None
    limit: int | None = None  # the first N questions of the clean set only (costly searches)
    adversarial: bool = False  # Jia & Liang layout: variants <original id>-<suffix>, grouped scores

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
    search: dict | None = None  # a model-in-the-loop set: queries, seconds, queries/s
    # what ran: the attack's provenance (attack, method "paper" | "stand-in", paper, resources), or the file's
    provenance: dict | None = None

    @property
    def name(self) -> str:
        return self.spec.name


def suite_specs(suite_cfg: Mapping[str, Any] | None, task: str) -> list[SetSpec]:
    """The non-clean sets of a suite config, checked (unique names, a task that fits)."""
    # defaults kept: suite=null gives no suite, and a user's own suite file may leave keys out
    suite_cfg = dict(suite_cfg or {})
    suite_task = suite_cfg.get("task")
    name = suite_cfg.get("name", "suite")
    if suite_task not in (None, "any", task):
        raise SuiteConfigError(f"suite={name} is for task={suite_task}, but the checkpoint is task={task}")
    specs: list[SetSpec] = []
    for i, entry in enumerate(suite_cfg.get("sets") or []):
        if isinstance(entry, str):
            entry = {"name": entry}
        entry = dict(entry)
        if "name" not in entry:
            raise SuiteConfigError(f"suite={name}: set #{i} has no name: {entry}")
        specs.append(_set_spec(entry, f"suite={name}: set {entry['name']!r}", task))
    for set_name, value in (suite_cfg.get("extra") or {}).items():
        value = {"file": value} if isinstance(value, str) else dict(value)
        if not value.get("file"):
            raise SuiteConfigError(f"suite.extra.{set_name}: give a file path (or {{file: ..., format: ...}})")
        specs.append(_set_spec({**value, "name": str(set_name)}, f"suite.extra.{set_name}", task))
    names = [CLEAN] + [s.name for s in specs]
    for set_name in names[1:]:  # a set's name is part of file names (cache, predictions, report figures)
        if not SET_NAME.fullmatch(set_name) or set_name in (".", ".."):
            raise SuiteConfigError(
                f"suite={name}: the set name {set_name!r} goes into file names: use letters, digits, '_', '-' and '.' "
                "(no '/', no '..', at most 100 characters)"
            )
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise SuiteConfigError(f"suite={name}: the set name {dup!r} is used twice (clean is reserved)")
    return specs


#: what a set's name may hold: it names the set's files (cache entries, predictions, figures)
SET_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_SET_KEYS = {"name", "attack", "params", "file", "format", "dpr", "model", "limit", "adversarial", "screen"}
# the defaults of a set's screen: entry. The paper screened 8,372 options over 346 questions (2.9 M
# option scores, a GPU job); 50 x 500 = 25,000 option scores is ~18 min on a 2-core CPU at the ~23
# pairs/s measured with a small checkpoint (docs/results.md), about the cost of the rest of the suite
SCREEN_KEYS = {"questions": 50, "pool_size": 500, "top": 20}


def _set_spec(entry: Mapping[str, Any], where: str, task: str) -> SetSpec:
    unknown = set(entry) - _SET_KEYS
    if unknown:
        raise SuiteConfigError(f"{where} has unknown key(s) {sorted(unknown)}; a set takes {sorted(_SET_KEYS)}")
    limit = entry.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise SuiteConfigError(f"{where}: limit={limit!r} must be a whole number >= 1 (or null)")
    if entry.get("adversarial") and task != "span":
        raise SuiteConfigError(f"{where}: adversarial: true (Jia & Liang's grouped scores) is for span QA sets")
    if entry.get("file"):
        if entry.get("model") or entry.get("attack"):
            raise SuiteConfigError(f"{where}: a file set takes no attack and no model search")
        return SetSpec(
            entry["name"],
            file=str(entry["file"]),
            format=entry.get("format", "auto"),
            dpr=bool(entry.get("dpr", False)),
            limit=limit,
            adversarial=bool(entry.get("adversarial", False)),
        )
    return SetSpec(
        entry["name"],
        attack=entry.get("attack") or entry["name"],
        params=dict(entry.get("params") or {}),
        dpr=bool(entry.get("dpr", False)),
        model=bool(entry.get("model", False)),
        screen=_screen(entry, where),
        limit=limit,
    )


def _screen(entry: Mapping[str, Any], where: str) -> dict | None:
    """A set's ``screen:`` settings (magnet only) with their defaults, checked; None without one."""
    screen = entry.get("screen")
    magnet = (entry.get("attack") or entry["name"]) == "magnet"
    if screen is None and magnet and not (entry.get("params") or {}).get("pool"):
        screen = True  # magnets need a pool screened against a model: the evaluated ones
    if screen in (None, False):
        return None
    if not magnet:
        raise SuiteConfigError(f"{where}: screen: is for the magnet attack (screening a pool against each model)")
    screen = {} if screen is True else dict(screen)
    unknown = set(screen) - set(SCREEN_KEYS)
    if unknown:
        raise SuiteConfigError(f"{where}: screen has unknown key(s) {sorted(unknown)}; it takes {sorted(SCREEN_KEYS)}")
    out = {**SCREEN_KEYS, **screen}
    for key, value in out.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SuiteConfigError(f"{where}: screen.{key}={value!r} must be a whole number >= 1")
    return out


def build_sets(
    specs: Sequence[SetSpec],
    clean: list,
    task: str,
    *,
    seed: int,
    cache: DiskCache,
    pool_examples: Sequence | None = None,
    strict: bool = True,
    scorer=None,
    banks=None,
) -> dict[str, EvalSet]:
    """``{"clean": ..., name: ...}`` in suite order; attacked sets read from ``cache`` when present.
    ``banks`` makes the distractor banks of ``bank: auto`` (:class:`~robust_mrc.attacks.base.BankMaker`).

    Sets with ``model: true`` are searched against ``scorer`` (a
    :class:`~robust_mrc.attacks.search.Scorer` of the evaluated model; its ``key`` joins the
    cache fingerprint): build them once per model."""
    sets = {CLEAN: EvalSet(SetSpec(CLEAN), list(clean), fingerprint("clean", examples_digest(clean)))}
    pool_digest = examples_digest(pool_examples) if pool_examples is not None else None
    resource_env = environment() if any(not s.external for s in specs) else None  # WordNet, tagger, homoglyphs
    for spec in specs:
        if spec.external:
            sets[spec.name] = _external_set(spec, task, strict, clean)
            continue
        base = list(clean[: spec.limit]) if spec.limit else list(clean)
        if spec.model and scorer is None:
            raise SuiteConfigError(f"set {spec.name!r}: model: true needs a model to search against")
        if spec.screen:
            raise SuiteConfigError(
                f"set {spec.name!r}: screen: needs a model to screen against (an evaluation screens each checkpoint, "
                "robust_mrc.evaluation.magnet_screening.screen_models); give params.pool=FILE, a ranked pool, instead"
            )
        key = attacked_set_fingerprint(
            base,
            spec.attack,
            spec.params,
            seed,
            task,
            pool_digest=pool_digest,
            resource_env=resource_env,
            scorer_key=scorer.key if spec.model else None,
        )
        provenance = cache.load_json("provenance", key)  # what made the set (read first: a damaged entry is named and remade)
        cached = cache.load_examples(spec.name, key)
        if cached is not None and len(cached) == len(base):
            log.info("set %s: %d examples from the cache (%s)", spec.name, len(cached), key)
            search = cache.load_json("search", key) if spec.model else None
            if provenance is None:  # a set cached without it: build the attack to say what ran
                provenance = _build_attack(spec, task, pool_examples, base, banks).provenance()
            sets[spec.name] = EvalSet(
                spec, cached, key, cached=True, fallbacks=_count_unchanged(base, cached), search=search, provenance=provenance
            )
            continue
        attack = _build_attack(spec, task, pool_examples, base, banks)
        search = None
        if spec.model:
            if not searches(attack):
                raise SuiteConfigError(f"set {spec.name!r}: attack {spec.attack!r} has no model-in-the-loop search (drop model: true)")
            where = cache.root / "searches" / f"{spec.name}-{key}.partial.jsonl" if cache.enabled and cache.writable else None
            journal = SearchJournal(where, {"set": spec.name, "key": key})
            try:
                attacked, stats = run_search(attack, base, scorer, seed, finished=journal.resume(), on_group=journal.add)
            finally:
                journal.close()
            search = {
                "queries": stats.queries,
                "rounds": stats.rounds,
                "seconds": round(stats.seconds, 2),
                "queries_per_second": round(stats.queries_per_second, 1),
                "queries_per_example": round(stats.queries / max(1, len(base)), 1),
            }
            log.info(
                "set %s: %d model queries in %.1f s (%.1f queries/s)", spec.name, stats.queries, stats.seconds, stats.queries_per_second
            )
            cache.save_json("search", key, search)
        else:
            attacked = attack_examples(attack, base, seed)
        provenance = attack.provenance()
        cache.save_json("provenance", key, provenance)
        examples, fallbacks = attacked.examples, attacked.fallbacks
        if fallbacks:
            log.info("set %s: %d of %d examples unchanged (the attack gave up)", spec.name, fallbacks, len(examples))
        cache.save_examples(spec.name, key, examples)
        if spec.model and cache.writable:
            journal.finish()  # the set is in the cache now
        sets[spec.name] = EvalSet(spec, examples, key, fallbacks=fallbacks, search=search, provenance=provenance)
    return sets


def attacked_set_fingerprint(
    base: Sequence,
    attack: str,
    params: Mapping[str, Any],
    seed: int,
    task: str,
    *,
    pool_digest: str | None,
    resource_env: Mapping[str, str] | None,
    scorer_key: str | None = None,
) -> str:
    """The fingerprint of the attacked set of the clean examples ``base`` under ``attack`` (its
    name as the suite gives it) with ``params`` (as given, not resolved), ``seed``: what its cache
    entry and ``report.json`` (``sets.<name>.fingerprint``) carry. ``pool_digest``: the
    :func:`~robust_mrc.evaluation.cache.examples_digest` of the examples beside the attack (an
    evaluation's: its training split, else the evaluated one); ``resource_env``:
    :func:`robust_mrc.attacks.resources.environment`; ``scorer_key``: the searched model of a
    ``model: true`` set. ``robust-mrc attacks apply format=hf`` puts the same on its card."""
    return fingerprint(
        "attacked",
        examples_digest(base),
        attack,
        dict(params),
        int(seed),
        pool_digest,
        task,
        resource_env,
        attacks_code_digest(),
        scorer_key,
    )


def _build_attack(spec: SetSpec, task: str, pool_examples: Sequence | None, base: list, banks=None):
    """The attack of ``spec``, prepared to attack ``base``; a bad entry is a :class:`SuiteConfigError`."""
    try:
        return build_attack({"name": spec.attack, "params": dict(spec.params)}, task, pool_examples, targets=base, banks=banks)
    except (AttackSpecError, ValueError) as err:
        raise SuiteConfigError(f"set {spec.name!r}: cannot build attack {spec.attack!r}: {err}") from None


def _count_unchanged(clean: Sequence, attacked: Sequence) -> int:
    return sum(a == c for a, c in zip(attacked, clean))


def _external_set(spec: SetSpec, task: str, strict: bool, clean: Sequence) -> EvalSet:
    from robust_mrc.core.files import file_digest
    from robust_mrc.data.examples import MCExample, SpanExample
    from robust_mrc.data.readers import load_examples

    path = Path(spec.file).expanduser()
    if not path.exists():
        raise SuiteConfigError(f"set {spec.name!r}: no such file {path}")
    examples = list(load_examples(path, spec.format, strict=strict))
    expected = MCExample if task == "mc" else SpanExample
    if examples and not isinstance(examples[0], expected):
        raise SuiteConfigError(f"set {spec.name!r}: {path} holds {type(examples[0]).__name__}s, task={task} needs {expected.__name__}s")
    if spec.limit:
        examples = examples[: spec.limit]
    if task == "span" and not spec.adversarial and _has_variants(examples, clean):
        log.info("set %s: ids <original id>-<suffix> of clean questions: scored as an adversarial set (Jia & Liang)", spec.name)
        spec = replace(spec, adversarial=True)
    digest = file_digest(path) if path.is_file() else examples_digest(examples)
    provenance = {"attack": None, "method": "file", "paper": "", "resources": {"file": str(path)}}
    return EvalSet(spec, examples, fingerprint("file", str(path.resolve()), digest, spec.limit), provenance=provenance)


def _has_variants(examples: Sequence, clean: Sequence) -> bool:
    """Whether some ids are variants ``<clean id>-<suffix>`` of the clean set's questions."""
    from robust_mrc.metrics.adversarial import original_id

    clean_ids = {ex.id for ex in clean}
    return any(original_id(ex.id) != ex.id and original_id(ex.id) in clean_ids for ex in examples)
