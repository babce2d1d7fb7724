"""Attack policies: which training examples of an epoch are clean, attacked, or joined by attacked copies.

A policy turns the clean training list into the item list of one epoch. An item is
``(example index, attack index or None)``; the attack itself runs later, when the item is read
(:meth:`AttackPolicy.apply`, called by ``robust_mrc.datamodules.datasets.PolicyDataset`` inside
the DataLoader workers). This layer is pure Python: no torch. Every random choice is derived
from ``(seed, epoch, ...)`` alone (the sample of each attack from ``(seed, epoch, attack)``, the
attacked copy from ``(seed, epoch, example id, attack)`` via :func:`example_rng`), so an epoch is the
same under any ``num_workers`` and whichever DDP rank receives an item.

Policies (``attack.policy``):

* ``none`` -- the clean set.
* ``targeted`` (Si et al. 2021 (AdvRACE), appendix D.1) -- one attack on a ``rate`` sample;
  ``mode=add`` adds the attacked copies to the clean set, ``mode=replace`` swaps them in.
* ``mix`` (Si et al. 2021, appendix D.1) -- each attack on its own ``rate`` sample, all added (or, with
  ``mode=replace``, disjoint samples swapped in).
* ``augmented_option`` (Lin, Zou & Ding 2021 (magnet options), section 4.5) -- every question gets
  one extra irrelevant option (``extra_option`` at rate 1, replace).
* ``amount`` (Wu et al. 2021) -- ``amount`` none / half / full / both of one perturbation:
  rate 0 / 0.5 replace / 1.0 replace / 1.0 add.

An attack that returns ``None`` (nothing to attack) gives the clean example back: the item is
counted as ``fallback``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from robust_mrc.attacks import Attack
from robust_mrc.attacks.apply import attack_example, build_attacks
from robust_mrc.core import settings as S
from robust_mrc.core.errors import UserError

POLICIES = ("none", "targeted", "mix", "augmented_option", "amount")
MODES = ("add", "replace")
AMOUNTS = {"none": (0.0, "replace"), "half": (0.5, "replace"), "full": (1.0, "replace"), "both": (1.0, "add")}
AMOUNT_NAMES = tuple(AMOUNTS)

Item = tuple[int, "int | None"]


class PolicyConfigError(UserError, ValueError):
    """An ``attack`` config that does not describe a usable policy."""


def _sample_rng(seed: int, epoch: int, name: str) -> random.Random:
    digest = hashlib.blake2b(f"{int(seed)}\x1f{int(epoch)}\x1fsample\x1f{name}".encode(), digest_size=16).digest()
    return random.Random(int.from_bytes(digest, "big"))


@dataclass
class AttackPolicy:
    """What one epoch of training data is made of."""

    name: str = "none"
    policy: str = "none"
    attacks: list[Attack] = field(default_factory=list)
    rate: float = 0.25
    mode: str = "add"
    seed: int = 0
    fresh_each_epoch: bool = True

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise PolicyConfigError(f"attack.policy={self.policy!r} is not one of {', '.join(POLICIES)}")
        if self.mode not in MODES:
            raise PolicyConfigError(f"attack.mode={self.mode!r} is not one of {', '.join(MODES)}")
        if not 0.0 <= self.rate <= 1.0:
            raise PolicyConfigError(f"attack.rate={self.rate} must lie in [0, 1]")
        if self.policy != "none" and not self.attacks:
            raise PolicyConfigError(f"attack.policy={self.policy} needs at least one entry in attack.attacks")
        if self.policy in ("targeted", "amount", "augmented_option") and len(self.attacks) != 1:
            raise PolicyConfigError(f"attack.policy={self.policy} takes exactly one attack, got {len(self.attacks)}")
        if self.policy == "mix" and self.mode == "replace" and self.rate * len(self.attacks) > 1.0 + 1e-9:
            raise PolicyConfigError(
                f"attack.policy=mix with mode=replace needs rate x attacks <= 1 (got {self.rate} x {len(self.attacks)})"
            )

    @property
    def active(self) -> bool:
        return self.policy != "none" and self.rate > 0

    @property
    def attack_names(self) -> list[str]:
        return [a.name for a in self.attacks]

    def plan(self, n: int, epoch: int) -> list[Item]:
        """The items of ``epoch`` for a clean set of ``n`` examples: clean items first, in order,
        then attacked copies (the sampler shuffles)."""
        if not self.active or n == 0:
            return [(i, None) for i in range(n)]
        e = epoch if self.fresh_each_epoch else 0
        k = round(self.rate * n)
        if self.mode == "add":
            items: list[Item] = [(i, None) for i in range(n)]
            for a, attack in enumerate(self.attacks):
                chosen = _sample_rng(self.seed, e, attack.name).sample(range(n), k)
                items.extend((i, a) for i in sorted(chosen))
            return items
        # replace: disjoint samples (one permutation cut into slices), swapped in place
        perm = _sample_rng(self.seed, e, "+".join(self.attack_names)).sample(range(n), n)
        which: dict[int, int] = {}
        for a in range(len(self.attacks)):
            for i in perm[a * k : (a + 1) * k]:
                which[i] = a
        return [(i, which.get(i)) for i in range(n)]

    def apply(self, example, attack_index: int | None, epoch: int):
        """``(example, attack name or "clean", status)``; status is clean / attacked / fallback."""
        if attack_index is None:
            return example, "clean", "clean"
        attack = self.attacks[attack_index]
        out, ok = attack_example(attack, example, self.seed, epoch if self.fresh_each_epoch else 0)
        return out, attack.name, "attacked" if ok else "fallback"


def policy_from_config(
    attack_cfg: Mapping[str, Any] | None,
    task: str,
    seed: int,
    train_examples: Sequence | None = None,
    targets: Sequence | None = None,
) -> AttackPolicy:
    """The :class:`AttackPolicy` of an ``attack`` config group entry; its attacks are prepared with
    ``train_examples`` (pools, a bank's training data) for ``targets`` (the examples they will
    attack; default: ``train_examples``)."""
    # callers of QADataModule (tests, banks) may pass a plain dict of some settings, or none at all
    cfg = S.complete(S.AttackSettings, attack_cfg or {"name": "none", "policy": "none"})
    policy = cfg["policy"]
    specs = attacks_for_task(cfg, task)
    rate, mode = float(cfg["rate"]), cfg["mode"]
    if policy == "amount":
        amount = cfg["amount"]
        if amount not in AMOUNTS:
            raise PolicyConfigError(f"attack.amount={amount!r} is not one of {', '.join(AMOUNTS)}")
        rate, mode = AMOUNTS[amount]
    if task == "dg" and (policy != "none" or cfg["eval"]):
        raise PolicyConfigError("task=dg trains the distractor generator on clean data only: use attack=none")
    if policy == "augmented_option":
        if task != "mc":
            raise PolicyConfigError("attack=augmented_option adds an option: it needs task=mc")
        rate, mode = 1.0, "replace"
    if targets is None:
        targets = train_examples
    attacks = build_attacks(specs, task, train_examples, training=True, targets=targets) if policy != "none" else []
    return AttackPolicy(
        name=str(cfg["name"] or policy),
        policy=policy,
        attacks=attacks,
        rate=rate,
        mode=mode,
        seed=seed,
        fresh_each_epoch=bool(cfg["fresh_each_epoch"]),
    )


def attacks_for_task(cfg: Mapping[str, Any], task: str) -> list:
    """``attacks`` of the config, or its ``attacks_by_task[task]`` when ``attacks`` is null."""
    specs = cfg["attacks"]
    if specs is None:
        specs = (cfg["attacks_by_task"] or {}).get(task)
    return list(specs or [])


def eval_attack_specs(cfg: Mapping[str, Any] | None, task: str) -> list:
    """The attacks whose versions of the validation / test sets are built (``attack.eval``;
    by default the attacks the policy trains with)."""
    cfg = S.complete(S.AttackSettings, cfg or {"policy": "none"})
    specs = cfg["eval"]
    if specs is None:
        specs = (cfg["eval_by_task"] or {}).get(task)
    if specs is None:
        specs = attacks_for_task(cfg, task) if cfg["policy"] != "none" else []
    return list(specs)
