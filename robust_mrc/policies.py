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

Cue balance (``attack.balance=p``, any policy): an attacked copy is, with probability ``p``, made
by its attack's cue construction instead (:data:`CUE_ATTACKS`: the same surface mark, on the gold
side), so that no surface mark predicts the label. The coin is drawn per copy from
``(seed, epoch, example id, attack)``, like the copy itself; the cue copy counts under
``"<cue> (balance)"``.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from robust_mrc.attacks import Attack, example_rng, get_attack, list_attacks
from robust_mrc.attacks.apply import AttackSpec, attack_example, build_attack, build_attacks
from robust_mrc.attacks.base import BankMaker
from robust_mrc.core import settings as S
from robust_mrc.core.errors import UserError

POLICIES = ("none", "targeted", "mix", "augmented_option", "amount")
MODES = ("add", "replace")
AMOUNTS = {"none": (0.0, "replace"), "half": (0.5, "replace"), "full": (1.0, "replace"), "both": (1.0, "add")}
AMOUNT_NAMES = tuple(AMOUNTS)

Item = tuple[int, "int | None"]

CUE_ATTACKS: dict[tuple[str, str], str] = {
    ("mc", "addsent"): "diagnosis",
    ("mc", "distractor_extraction"): "extraction_cue",
    ("mc", "de_lexical"): "extraction_cue",
    ("mc", "magnet"): "magnet_cue",
    ("mc", "extra_option"): "magnet_cue",
    ("mc", "random_option"): "magnet_cue",
    ("span", "addsent"): "addsent_cue",
    ("span", "addonesent"): "addsent_cue",
    ("span", "addsentmod"): "addsent_cue",
}
"""``(task, attack) -> cue attack``: for each attack that marks one side of the answer, the
construction that puts the same mark on the gold side (the attack family's cue probe).

AddSent's inserted sentence points away from the gold; the diagnosis sentence (Si et al. 2021
(AdvRACE), appendix D.2) and ``addsent_cue`` (an AddSent-like sentence built from the question and
the gold answer, Jia & Liang 2017's placement) point at it. Distractors copied from the passage are
wrong; ``extraction_cue`` copies the passage into the options with the gold among them. A magnet
option is wrong; ``magnet_cue`` gives the gold option the magnet's look. ``attack.balance`` trains
on both sides of each mark. Attacks absent here (character and word noise, word replacement,
generated distractors, paraphrases) mark neither side: balance leaves their copies as they are."""

CUE_TRAINING_PARAMS: dict[tuple[str, str], dict[str, Any]] = {("span", "addsent_cue"): {"answer": "added"}}
"""``(task, cue attack) -> parameters`` of a cue copy made for training: a span cue copy trains on
the answer its added sentence states (``addsent_cue``'s ``answer=added``); kept on the passage's
span, it would teach once more that the added sentence never holds the answer."""

BALANCE_TAG = "{cue} (balance)"  # the attack name a cue copy counts under (train/items/...)


log = logging.getLogger(__name__)


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
    # cue balance: the share of attacked copies made by their cue attack, and each attack's cue
    # (None: the attack marks neither side; empty: no cues)
    balance: float = 0.0
    cues: list[Attack | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise PolicyConfigError(f"attack.policy={self.policy!r} is not one of {', '.join(POLICIES)}")
        if self.mode not in MODES:
            raise PolicyConfigError(f"attack.mode={self.mode!r} is not one of {', '.join(MODES)}")
        if not 0.0 <= self.rate <= 1.0:
            raise PolicyConfigError(f"attack.rate={self.rate} must lie in [0, 1]")
        if not 0.0 <= self.balance <= 1.0:
            raise PolicyConfigError(f"attack.balance={self.balance} must lie in [0, 1]")
        if self.cues and len(self.cues) != len(self.attacks):
            raise ValueError(f"{len(self.cues)} cue attacks for {len(self.attacks)} attacks")
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

    @property
    def cue_attacks(self) -> list[Attack]:
        """The cue attacks that balance may use (none at ``balance=0``)."""
        return [cue for cue in self.cues if cue is not None] if self.balance > 0 else []

    def apply(self, example, attack_index: int | None, epoch: int):
        """``(example, attack name or "clean", status)``; status is clean / attacked / fallback."""
        if attack_index is None:
            return example, "clean", "clean"
        e = epoch if self.fresh_each_epoch else 0
        if self.cued(example, attack_index, e):
            return self.apply_cue(example, attack_index, e)
        attack = self.attacks[attack_index]
        out, ok = attack_example(attack, example, self.seed, e)
        return out, attack.name, "attacked" if ok else "fallback"

    def cued(self, example, attack_index: int, epoch: int) -> bool:
        """Whether this copy of ``example`` is made by its attack's cue: a coin of probability
        ``balance`` from ``(seed, epoch, example id, attack)``; never drawn without a cue."""
        if self.balance <= 0 or not self.cues or self.cues[attack_index] is None:
            return False
        name = self.attacks[attack_index].name
        return example_rng(self.seed, epoch, example.id, f"{name}\x1fbalance").random() < self.balance

    def apply_cue(self, example, attack_index: int, epoch: int):
        """The cue copy of ``example`` in place of the attack's, from its own generator
        ``(seed, epoch, example id, attack -> cue)``: two attacks with one cue give two copies."""
        attack, cue = self.attacks[attack_index], self.cues[attack_index]
        out = cue(example, example_rng(self.seed, epoch, example.id, f"{attack.name}\x1f{cue.name}"))
        tag = BALANCE_TAG.format(cue=cue.name)
        return (example, tag, "fallback") if out is None else (out, tag, "attacked")


def policy_from_config(
    attack_cfg: Mapping[str, Any] | None,
    task: str,
    seed: int,
    train_examples: Sequence | None = None,
    targets: Sequence | None = None,
    banks: BankMaker | None = None,
) -> AttackPolicy:
    """The :class:`AttackPolicy` of an ``attack`` config group entry; its attacks are prepared with
    ``train_examples`` (pools, a bank's training data) for ``targets`` (the examples they will
    attack; default: ``train_examples``), their ``bank: auto`` made by ``banks``."""
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
    attacks = build_attacks(specs, task, train_examples, training=True, targets=targets, banks=banks) if policy != "none" else []
    balance = float(cfg["balance"])
    cues = cue_attacks_for(attacks, task, balance, train_examples, targets, banks)
    return AttackPolicy(
        name=str(cfg["name"] or policy),
        policy=policy,
        attacks=attacks,
        rate=rate,
        mode=mode,
        seed=seed,
        fresh_each_epoch=bool(cfg["fresh_each_epoch"]),
        balance=balance,
        cues=cues,
    )


def cue_attacks_for(
    attacks: Sequence[Attack],
    task: str,
    balance: float,
    train_examples: Sequence | None,
    targets: Sequence | None,
    banks: BankMaker | None = None,
) -> list[Attack | None]:
    """Each training attack's cue attack (:data:`CUE_ATTACKS`, None where it has none), built like
    the attack (:func:`cue_spec`, the same pool and targets). Empty at ``balance=0``; a cue attack
    that is not registered is a :class:`PolicyConfigError` here, before any epoch."""
    if balance <= 0 or not attacks:
        return []
    registered = {row["name"] for row in list_attacks(task)}
    cues: list[Attack | None] = []
    for attack in attacks:
        name = CUE_ATTACKS.get((task, attack.name))
        if name is not None and name not in registered:
            raise PolicyConfigError(
                f"attack.balance={balance}: the cue attack of {attack.name} ({task}), {name}, is not registered; "
                f"set attack.balance=0 or leave {attack.name} out of the training attacks"
            )
        cues.append(None if name is None else build_attack(cue_spec(attack, name, task), task, train_examples, True, targets, banks))
    plain = sorted({a.name for a, cue in zip(attacks, cues) if cue is None})
    paired = ", ".join(f"{a.name} -> {cue.name}" for a, cue in zip(attacks, cues) if cue is not None)
    log.info("attack.balance=%s: cue copies %s", balance, paired or "none")
    if plain:
        log.info("attack.balance leaves %s as they are: they mark neither side of the answer", ", ".join(plain))
    return cues


def cue_spec(attack: Attack, cue: str, task: str) -> AttackSpec:
    """The spec of ``cue`` for the training ``attack``: the attack's parameters (its entry's
    ``params`` and ``train_params`` over its defaults) that the cue declares too, so that e.g. the
    cue of ``addsentmod`` is placed where ``addsentmod`` places its sentence."""
    declared = set(get_attack(cue, task).params)
    params = {k: v for k, v in attack.params.items() if k in declared}
    return AttackSpec(cue, {**params, **CUE_TRAINING_PARAMS.get((task, cue), {})})


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
