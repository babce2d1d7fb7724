"""The one seam through which every attack is built and applied.

Training policies, robust validation, evaluation suites and the attacks command all come here:

    >>> attack = build_attack({"name": "magnet", "params": {}}, "mc", pool_examples=train)
    >>> attacked, changed = attack_example(attack, example, seed=0, epoch=0)
    >>> result = attack_examples(attack, test_set, seed=0)      # result.examples, result.fallbacks

An attack spec is ``"name"`` or ``{"name": ..., "params": {...}, "train_params": {...}}`` (the
entries of the ``attack`` and ``suite`` config groups); ``train_params`` apply on top of ``params``
to the training copies only (``build_attack(..., training=True)``, what the training policies
call), so the attacked validation / test sets made from the same entry follow ``params`` alone.
:func:`build_attack` checks the parameters against the attack's
declared ones and runs its declared preparation hook (:meth:`~robust_mrc.attacks.base.Attack.prepare`)
with the data beside it: the one rule by which a pool attack gets its pool (its ``pool=``
parameter, else the options of ``pool_examples``) and a bank attack its bank.

Each example is attacked with ``example_rng(seed, epoch, example id, attack name)``; where the
attack gives up (``None``) the clean example stays and counts as a fallback.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robust_mrc.attacks.base import Attack, AttackContext, BankMaker, example_rng, get_attack
from robust_mrc.core.errors import UserError


class AttackSpecError(UserError, ValueError):
    """An attack entry of a config that does not name a usable attack."""


@dataclass(frozen=True)
class AttackSpec:
    """An attack by name with its parameters, as written in a config."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    train_params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, entry: str | Mapping[str, Any] | AttackSpec) -> AttackSpec:
        if isinstance(entry, AttackSpec):
            return entry
        if isinstance(entry, str):
            return cls(entry)
        if not isinstance(entry, Mapping) or not entry.get("name"):
            raise AttackSpecError(f"an attack entry needs a name: {entry!r} (write {{name: charswap, params: {{}}}})")
        unknown = sorted(set(entry) - {"name", "params", "train_params"})
        if unknown:
            raise AttackSpecError(
                f"attack entry {entry.get('name')!r} has unknown key(s) {unknown}; it takes name, params and train_params"
            )
        return cls(str(entry["name"]), dict(entry.get("params") or {}), dict(entry.get("train_params") or {}))


ATTACKS_DIR = Path(__file__).resolve().parent
TEXT_HELPERS = (ATTACKS_DIR.parent / "data" / "text.py",)
NOT_ATTACK_CODE = ("audit.py",)  # the validity audits: they attack nothing themselves


@functools.lru_cache(maxsize=4)
def attacks_code_digest(root: Path = ATTACKS_DIR) -> str:
    """A digest of the attack code (every ``.py`` under ``robust_mrc/attacks``, word lists and
    rules included, and the data files of ``resources/data`` (contrast sets, names, homoglyphs), but not
    :data:`NOT_ATTACK_CODE`: the validity audits ``audit.py``, which attack nothing themselves; and
    ``robust_mrc/data/text.py``, the word splitting they use):
    cached attacked sets carry it in their fingerprint, so a version of the package that attacks
    differently never reuses sets made by another."""
    h = hashlib.blake2b(digest_size=12)
    for path in sorted(p for p in root.rglob("*.py") if p.relative_to(root).as_posix() not in NOT_ATTACK_CODE):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for path in sorted(p for p in (root / "resources" / "data").glob("*") if p.is_file()):  # word lists: contrast sets, names
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for path in TEXT_HELPERS:  # the word splitting and normalisation the attacks use
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def build_attack(
    spec: str | Mapping[str, Any] | AttackSpec,
    task: str,
    pool_examples: Sequence | None = None,
    training: bool = False,
    targets: Sequence | None = None,
    banks: BankMaker | None = None,
) -> Attack:
    """The attack of ``spec`` for ``task``, prepared with ``pool_examples`` (see the module doc) and
    ``targets`` (the examples it will attack, where known: a bank attack makes its bank for them,
    with ``banks``, :class:`~robust_mrc.attacks.base.BankMaker`); ``training`` adds the spec's
    ``train_params``."""
    spec = AttackSpec.parse(spec)
    params = {**spec.params, **spec.train_params} if training else dict(spec.params)
    try:
        attack = get_attack(spec.name, task, **params)
    except TypeError as err:  # an undeclared parameter
        raise AttackSpecError(str(err)) from None
    return attack.setup(AttackContext(task, pool_examples, targets, banks))


def build_attacks(
    specs: Iterable | None,
    task: str,
    pool_examples: Sequence | None = None,
    training: bool = False,
    targets: Sequence | None = None,
    banks: BankMaker | None = None,
) -> list[Attack]:
    return [build_attack(spec, task, pool_examples, training, targets, banks) for spec in specs or []]


def attack_example(attack: Attack, example, seed: int, epoch: int = 0):
    """``(attacked example, True)``, or ``(example, False)`` when the attack gives up."""
    attacked = attack(example, example_rng(seed, epoch, example.id, attack.name))
    return (example, False) if attacked is None else (attacked, True)


@dataclass
class AttackedSet:
    """An attacked version of a set: the examples (clean where the attack gave up) and how many
    it gave up on."""

    examples: list
    fallbacks: int = 0


def attack_examples(attack: Attack, examples: Sequence, seed: int, epoch: int = 0, progress: bool = True) -> AttackedSet:
    """``attack``'s version of ``examples`` (copies of ``epoch``, 0 for evaluation sets)."""
    out, fallbacks = [], 0
    items = _progress(examples, f"attack {attack.name}") if progress else examples
    for ex in items:
        attacked, ok = attack_example(attack, ex, seed, epoch)
        out.append(attacked)
        fallbacks += not ok
    return AttackedSet(out, fallbacks)


def _progress(examples: Sequence, desc: str):
    from tqdm.auto import tqdm

    return tqdm(examples, total=len(examples), desc=desc, leave=False, mininterval=1.0, disable=None)
