"""Model-free attacks on reading comprehension examples, registered by name and task.

>>> from robust_mrc.attacks import get_attack, example_rng
>>> attack = get_attack("charswap", "mc")
>>> attacked = attack(example, example_rng(seed=0, epoch=0, example_id=example.id, attack=attack.name))

Each attack is a picklable callable ``(example, rng) -> example | None``; see docs/attacks.md.
"""

from robust_mrc.attacks import mc, paraphrase, span  # noqa: F401  (registers the attacks)
from robust_mrc.attacks.base import (
    TASKS,
    Attack,
    AttackUnavailable,
    example_rng,
    get_attack,
    is_probe,
    list_attacks,
    register,
)
from robust_mrc.attacks.resources import ResourceMissing

__all__ = [
    "TASKS",
    "Attack",
    "AttackUnavailable",
    "ResourceMissing",
    "example_rng",
    "get_attack",
    "is_probe",
    "list_attacks",
    "register",
]
