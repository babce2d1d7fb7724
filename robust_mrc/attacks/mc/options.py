"""Magnet options and the extra (fifth) option (Lin, Zou & Ding 2021, magnet options).

* ``magnet``: replace one wrong option (chosen at random) by one of the top magnets of a pool
  *screened* against a model: options of questions of other passages ranked by their interference
  score T_k (the share of questions where the model prefers the pool option to every original
  option), the first ``top`` (20, as the paper) kept. ``pool=`` is that ranked list (a file such as
  the ``magnet_pool.txt`` a screening writes, or a list); ``suite=advrace`` screens each evaluated
  model itself (``screen:`` of the suite entry, :mod:`robust_mrc.evaluation.magnet_screening`). With
  no pool it cannot run: ``random_option`` is the model-free stand-in.
* ``random_option``: the stand-in: one wrong option replaced by a random option of another passage
  (``pool=``, else the options of the examples beside the attack), unscreened.
* ``extra_option``: add one irrelevant option from a pool (augmented-option training: 4 options
  become 5). The paper draws it from the 400 highest-T options: ``pool=`` a ranked pool file and
  ``top=400``; with no pool it draws random options of other passages, says so in a warning, and
  its provenance is a stand-in. ``position=end`` (default) appends it, so the label index is
  unchanged; ``position=random`` inserts it anywhere and moves the label index so that it still
  points at the correct option. An example that already has 5 options cannot take another (None).

Never an option identical to an option of this question, and one that occurs in the passage only
when the pool has no other. What they promise: the correct option's text is untouched, still at
``options[label]``, and distinct from every new option.
"""

from __future__ import annotations

import logging
import re

from robust_mrc.attacks.base import Attack, AttackContext, AttackUnavailable, register
from robust_mrc.attacks.pools import OptionPool, describe_pool, passage_key, pool_for
from robust_mrc.core import settings as S
from robust_mrc.data.examples import MAX_OPTIONS
from robust_mrc.data.text import normalize
from robust_mrc.papers import cite

log = logging.getLogger(__name__)


def _in_passage(option: str, passage: str) -> bool:
    """Whether ``option`` occurs in ``passage`` as whole words (case-insensitive)."""
    return re.search(rf"(?<!\w){re.escape(option.strip().lower())}(?!\w)", passage) is not None


def _draw(ex, pool: OptionPool, rng, tries: int = 50) -> str | None:
    """A pool option from another passage, never one of this question's options; one that does
    not occur in this passage (irrelevant to it) when the pool has any."""
    own = {normalize(o) for o in ex.options}
    key = passage_key(ex.passage)
    text = ex.passage.lower()
    n = len(pool.entries)
    if n == 0:
        return None

    def usable(e, strict: bool) -> bool:
        if e.passage == key or e.source_id == ex.id or normalize(e.option) in own:
            return False
        return not (strict and _in_passage(e.option, text))

    for _ in range(tries):
        e = pool.entries[rng.randrange(n)]
        if usable(e, strict=True):
            return e.option
    # scans in a random rotation: deterministic given rng, find one if any exists
    start = rng.randrange(n)
    for strict in (True, False):
        for j in range(n):
            e = pool.entries[(start + j) % n]
            if usable(e, strict):
                return e.option
    return None


class _PoolAttack(Attack):
    """Draws options from ``pool=`` (its first ``top`` options when ``top`` is set: a ranked pool),
    else from the options of the context's examples."""

    _drawn: OptionPool | None = None
    _source: str = ""

    def prepare(self, context: AttackContext) -> None:
        self._drawn = pool_for(self.pool, context.pool_examples)
        top = self.params.get("top")
        if self.pool is not None and self._drawn is not None and top:
            self._drawn = OptionPool(self._drawn.entries[: int(top)])
        drawn = "random options of other passages ({n} examples beside the attack)"
        self._source = describe_pool(self.pool, context.pool_examples, drawn) + (
            f", the first {int(top)}" if self.pool is not None and top else ""
        )

    def _pool(self) -> OptionPool:
        if self._drawn is None:
            raise AttackUnavailable(f"{self.name} needs pool= (a file of irrelevant options, or examples)")
        return self._drawn

    def resources(self) -> dict[str, str]:
        return {"pool": self._source or "none"}

    def _swap_one(self, ex, rng):
        pool = self._pool()
        wrong = [i for i in range(len(ex.options)) if i != ex.label]
        if not wrong:
            return None
        i = rng.choice(wrong)
        option = _draw(ex, pool, rng)
        if option is None:
            return None
        options = list(ex.options)
        options[i] = option
        return ex.replace(attack=self.name, detail=f"option {i} -> {option!r}", options=tuple(options))


@register
class Magnet(_PoolAttack):
    name = "magnet"
    task = "mc"
    paper = cite("magnet")
    description = "replace one wrong option by one of the top magnets of a pool screened against a model (interference score)"

    @classmethod
    def defaults(cls):
        # pool: the ranked (screened) options, a file or a list; top: how many of the first are magnets;
        # screened_with: the model the pool was screened against, screening: how (both for reports)
        return {"pool": None, "top": S.TOP, "screened_with": None, "screening": None}

    def prepare(self, context: AttackContext) -> None:
        if self.pool is None:
            raise AttackUnavailable(
                "magnet needs a pool screened against a model and none is given: pass pool=FILE, a ranked pool such as "
                "the magnet_pool.txt an evaluation writes (RUN/magnet_screening/<model>/magnet/), or evaluate with "
                "suite=advrace, which screens each evaluated model itself; attack=random_option is the model-free "
                "stand-in (random options of other passages, unscreened)"
            )
        super().prepare(context)

    def resources(self) -> dict[str, str]:
        out = super().resources()
        if self.screening:  # e.g. "top 20 of 500 options (...) by interference score over 50 questions"
            out["pool"] = f"screened {self.screening}"
        if self.screened_with:
            out["screened against"] = str(self.screened_with)
        return out

    def apply(self, ex, rng):
        return self._swap_one(ex, rng)


@register
class RandomOption(_PoolAttack):
    name = "random_option"
    task = "mc"
    paper = cite("magnet")
    method = "stand-in"
    description = "stand-in for magnet options without a model: one wrong option replaced by a random option of another passage"

    @classmethod
    def defaults(cls):
        return {"pool": None}

    def apply(self, ex, rng):
        return self._swap_one(ex, rng)


@register
class ExtraOption(_PoolAttack):
    name = "extra_option"
    task = "mc"
    paper = cite("magnet")
    description = "add one irrelevant option from a pool (at most 5 options; label still points at the answer)"

    @classmethod
    def defaults(cls):
        # pool: a ranked pool file (magnet_pool.txt) and top: its first 400, as the paper; null: random
        # options of other passages (a stand-in, with a warning)
        return {"pool": None, "position": "end", "top": None}

    def prepare(self, context: AttackContext) -> None:
        super().prepare(context)
        if self.pool is None:
            log.warning(
                "extra_option: no screened pool (pool=magnet_pool.txt top=400, as %s): adding random options of "
                "other passages instead, a stand-in",
                self.paper,
            )
            object.__setattr__(self, "method", "stand-in")

    def apply(self, ex, rng):
        if len(ex.options) >= MAX_OPTIONS:
            return None
        pool = self._pool()
        option = _draw(ex, pool, rng)
        if option is None:
            return None
        if self.position == "end":
            i = len(ex.options)
        elif self.position == "random":
            i = rng.randint(0, len(ex.options))
        else:
            raise ValueError(f"extra_option: position must be 'end' or 'random', got {self.position!r}")
        options = list(ex.options)
        options.insert(i, option)
        label = ex.label + 1 if i <= ex.label else ex.label
        return ex.replace(attack=self.name, detail=f"added option {i}: {option!r}", options=tuple(options), label=label)
