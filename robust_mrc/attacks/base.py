"""The Attack protocol, the registry, and the per-example random generator.

An attack is a callable ``(example, rng) -> example | None``: a new example made with
``example.replace(attack=name, detail=...)`` (so the edit is recorded), or ``None`` when it cannot
apply. Randomness comes only from ``rng``; :func:`example_rng` derives it from (seed, epoch,
example id, attack name) by hashing, so the same inputs give the same output in any process.

Parameters are declared by :meth:`Attack.defaults`; each becomes a read-only attribute
(``attack.rate``) and ``attack.params`` keeps them all, never changed after construction.
Resources that depend on the data an attack runs on (an option pool drawn from the training set,
a distractor bank) are set up by the declared hook :meth:`Attack.prepare`, which
:func:`robust_mrc.attacks.apply.build_attack` calls with an :class:`AttackContext`; what it
resolves lives in private attributes, never in ``params``. Attacks are plain module-level classes:
they pickle (DataLoader workers) and load their resources lazily, once per process.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import MCExample, SpanExample

TASKS = ("mc", "span")
_REGISTRY: dict[tuple[str, str], type[Attack]] = {}


class AttackUnavailable(UserError, RuntimeError):
    """An attack that cannot run as configured (e.g. no paraphraser); the message says what to do."""


class MadeBank(Protocol):
    """A distractor bank a :class:`BankMaker` gave: ``{id: distractors}`` and the file it is kept in."""

    bank: Mapping[str, Sequence[str]]
    path: Path


class BankMaker(Protocol):
    """What makes the distractor banks of ``bank: auto`` (DE, DG), handed to the attacks in the
    :class:`AttackContext` by the commands and jobs that build them (as a model-in-the-loop search
    gets a scorer): :class:`robust_mrc.banks.auto.DistractorBanks` trains and reads the models and
    caches what they made. An attack asks; it never trains or loads a model itself."""

    def de_bank(
        self,
        train_examples: Sequence,
        targets: Sequence,
        *,
        extractor: str,
        epochs: int,
        max_length: int,
        batch_size: int,
        top: int,
        label: str,
    ) -> MadeBank:
        """The DE bank of ``targets``: spans of an ``extractor`` (a model config name) trained on ``train_examples``."""
        ...

    def dg_bank(self, generator: str | Path, targets: Sequence, *, beams: int, batch_size: int, label: str) -> MadeBank:
        """The DG bank of ``targets``: what the generator checkpoint ``generator`` makes with ``beams`` beams."""
        ...


@dataclass(frozen=True)
class AttackContext:
    """What :meth:`Attack.prepare` may draw on: the data the attack runs beside.

    ``pool_examples``: examples whose options a pool attack may draw (the training set, or the
    input file of the attacks command); never the attacked example's own passage. It is also the
    training data of an attack that trains a model first (``distractor_extraction bank=auto``).
    ``targets``: the examples the attack will be applied to, where the caller knows them (the
    base examples of a suite's set, the training set of a policy, the validation and test sets,
    the input file): an attack that prepares per-example resources (a distractor bank) makes them
    for these; None when unknown.
    ``banks``: what makes the banks of ``bank: auto`` (:class:`BankMaker`); None: such an attack
    runs its model-free stand-in, and says so.
    """

    task: str
    pool_examples: Sequence | None = None
    targets: Sequence | None = None
    banks: BankMaker | None = None


class Attack:
    """Base class: subclasses set ``name``, ``task``, ``paper``, ``description``, declare their
    parameters in :meth:`defaults` and implement :meth:`apply` (and :meth:`prepare` when they draw
    on data beside the example)."""

    name: ClassVar[str] = ""
    task: ClassVar[str] = ""
    paper: ClassVar[str] = ""  # the paper it follows, as people cite it (robust_mrc.papers)
    description: ClassVar[str] = ""
    # "paper": the paper's method; "stand-in": a model-free substitute under its own name; "probe": a
    # cue probe the project builds like the paper's attack
    method: ClassVar[str] = "paper"
    # a cue probe: the attack family's surface mark put on the gold side (a reader holds, a model that
    # learnt the mark falls); reports show it apart from the attacks
    probe: ClassVar[bool] = False
    _prepared: bool = False

    def __init__(self, **params: Any):
        declared = self.defaults()
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise TypeError(f"attack {self.name!r} ({self.task}) got unknown parameter(s) {unknown}; it takes {sorted(declared)}")
        self.params: dict[str, Any] = {**declared, **params}
        for key, value in self.params.items():
            object.__setattr__(self, key, value)
        if "tagger" in declared:  # a part-of-speech tagger's name is checked when the attack is made
            from robust_mrc.attacks.resources.tagger import check_tagger

            check_tagger(self.params["tagger"], self.name)

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The declared parameters and their default values."""
        return {}

    def __setattr__(self, key: str, value: Any) -> None:
        if key in self.__dict__.get("params", ()):
            raise AttributeError(f"attack {self.name!r}: parameter {key!r} is read-only (build a new attack)")
        object.__setattr__(self, key, value)

    def prepare(self, context: AttackContext) -> None:
        """Set up what the attack draws on beside the example (pools, banks); default: nothing.

        Called once by :func:`robust_mrc.attacks.apply.build_attack`, before the first
        ``apply``; stores what it resolves in private attributes."""

    def resources(self) -> dict[str, str]:
        """What the attacked text depends on besides the code, parameters and seed, as short strings
        (neighbour source, bank, generator, option pool and screening model); called after
        :meth:`prepare`. Default: nothing."""
        return {}

    def provenance(self) -> dict[str, Any]:
        """What ran, for reports: the attack, whether it is the paper's method or a stand-in, the paper
        by name and :meth:`resources`."""
        return {"attack": self.name, "method": self.method, "paper": self.paper, "resources": self.resources()}

    def setup(self, context: AttackContext) -> Attack:
        """Run :meth:`prepare` once with ``context``; returns the attack."""
        self.prepare(context)
        object.__setattr__(self, "_prepared", True)
        return self

    def __call__(self, example, rng: random.Random):
        expected = MCExample if self.task == "mc" else SpanExample
        if not isinstance(example, expected):
            raise TypeError(f"attack {self.name!r} is for {self.task} examples, got {type(example).__name__}")
        if not self._prepared:  # called directly: only its own parameters to draw on
            self.setup(AttackContext(self.task))
        return self.apply(example, rng)

    def apply(self, example, rng: random.Random):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


def register(cls: type[Attack]) -> type[Attack]:
    """Class decorator: make the attack available by (name, task)."""
    if cls.task not in TASKS or not cls.name:
        raise ValueError(f"{cls.__name__}: bad name/task {cls.name!r}/{cls.task!r}")
    key = (cls.name, cls.task)
    if key in _REGISTRY and _REGISTRY[key] is not cls:
        raise ValueError(f"attack {key} registered twice")
    _REGISTRY[key] = cls
    return cls


def get_attack(name: str, task: str, **params: Any) -> Attack:
    """The attack ``name`` for ``task`` ("mc" or "span"), built with ``params``."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {list(TASKS)}")
    cls = _REGISTRY.get((name, task))
    if cls is None:
        available = sorted(n for n, t in _REGISTRY if t == task)
        raise ValueError(f"unknown attack {name!r} for task {task!r}; available: {', '.join(available)}")
    return cls(**params)


def is_probe(name: str | None, task: str) -> bool:
    """Whether the registered attack ``name`` of ``task`` is a cue probe (False for an unknown name)."""
    cls = _REGISTRY.get((name, task))
    return bool(cls is not None and cls.probe)


def list_attacks(task: str | None = None) -> list[dict[str, str]]:
    """Registered attacks (name, task, paper, method, description), sorted by task then name."""
    rows = [
        {"name": c.name, "task": c.task, "paper": c.paper, "method": c.method, "description": c.description}
        for (n, t), c in _REGISTRY.items()
        if task is None or t == task
    ]
    return sorted(rows, key=lambda r: (r["task"], r["name"]))


def example_rng(seed: int, epoch: int, example_id: str, attack: str) -> random.Random:
    """A generator for one (seed, epoch, example, attack), derived with BLAKE2b: no global state."""
    key = f"{int(seed)}\x1f{int(epoch)}\x1f{example_id}\x1f{attack}".encode()
    digest = hashlib.blake2b(key, digest_size=16).digest()
    return random.Random(int.from_bytes(digest, "big"))
