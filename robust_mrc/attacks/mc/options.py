"""Magnet options and the extra (fifth) option (seed 002, Lin, Zou & Ding).

* ``magnet``: replace one wrong option (chosen at random) by an option from a pool of irrelevant
  options (``pool=``: a text file one option a line, a JSONL of ``{"option": ...}``, a data file,
  a list of examples or strings). The paper's pool holds options of questions from *other*
  passages, screened by their interference score with a model (see metrics); without screening
  any pool option is drawn at random. Never an option identical to an option of this question,
  and one that occurs in the passage only when the pool has no other.
* ``extra_option``: add one irrelevant option from the pool (augmented-option training: 4 options
  become 5). ``position=end`` (default) appends it, so the label index is unchanged;
  ``position=random`` inserts it anywhere and moves the label index so that it still points at the
  correct option. An example that already has 5 options cannot take another (None).

What they promise: the correct option's text is untouched, still at ``options[label]``, and
distinct from every new option.
"""

from __future__ import annotations

import re

from robust_mrc.attacks.base import Attack, AttackContext, AttackUnavailable, register
from robust_mrc.attacks.pools import OptionPool, passage_key, pool_for
from robust_mrc.attacks.text import normalize
from robust_mrc.data.examples import MAX_OPTIONS
from robust_mrc.papers import cite


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
    """Draws options from ``pool=``, else from the options of the context's examples."""

    _drawn: OptionPool | None = None

    def prepare(self, context: AttackContext) -> None:
        self._drawn = pool_for(self.pool, context.pool_examples)

    def _pool(self) -> OptionPool:
        if self._drawn is None:
            raise AttackUnavailable(f"{self.name} needs pool= (a file of irrelevant options, or examples)")
        return self._drawn


@register
class Magnet(_PoolAttack):
    name = "magnet"
    task = "mc"
    paper = cite("magnet")
    description = "replace one wrong option by an irrelevant option from a pool (magnet option)"

    @classmethod
    def defaults(cls):
        return {"pool": None}

    def apply(self, ex, rng):
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
class ExtraOption(_PoolAttack):
    name = "extra_option"
    task = "mc"
    paper = cite("magnet")
    description = "add one irrelevant option from a pool (at most 5 options; label still points at the answer)"

    @classmethod
    def defaults(cls):
        return {"pool": None, "position": "end"}

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
