"""Model-in-the-loop adversaries: attacks that ask a model about candidates and keep the worst.

An attack that can use a model defines :meth:`search`, a generator: it yields a list of candidate
examples, receives the model's :class:`Prediction` of each, may yield again (AddAny's coordinate
steps), and finally returns the chosen example (or ``None``: nothing to attack). It never calls the
model itself: :func:`run_search` drives many examples' searches in lockstep and scores the
candidates of all of them together, in batches, with a :class:`Scorer` (built from a checkpoint by
``robust_mrc.models.scoring``), so the chosen examples are the same whatever the batch size.

    >>> result = run_search(attack, examples, scorer, seed=0)   # AttackedSet + query statistics

Randomness only from the example's ``rng`` (:func:`~robust_mrc.attacks.base.example_rng`), as for
every attack.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from robust_mrc.attacks.apply import AttackedSet
from robust_mrc.attacks.base import Attack, example_rng
from robust_mrc.core.clock import clock


@dataclass(frozen=True)
class Prediction:
    """What the model says about one example.

    Span QA: ``nbest`` = ``((answer text, probability), ...)``, best first, the probabilities a
    softmax over the n-best span scores (start + end logits) of the example's windows. Multiple
    choice: ``probs`` over the options."""

    nbest: tuple[tuple[str, float], ...] = ()
    probs: tuple[float, ...] = ()

    @property
    def answer(self) -> str:
        return self.nbest[0][0] if self.nbest else ""

    @property
    def choice(self) -> int:
        return max(range(len(self.probs)), key=self.probs.__getitem__) if self.probs else -1


class Scorer(Protocol):
    """Predictions of one model for a list of examples (in order); ``key`` names the model for
    caches (the checkpoint's identity)."""

    key: str

    def predict(self, examples: Sequence) -> list[Prediction]: ...


Search = Generator[list, list[Prediction], Any]


def searches(attack: Attack) -> bool:
    """Whether ``attack`` can use a model (defines :meth:`search`)."""
    return callable(getattr(attack, "search", None))


@dataclass
class SearchStats:
    """Model queries (candidates scored) and the time spent; ``rounds``: scorer calls."""

    queries: int = 0
    rounds: int = 0
    seconds: float = 0.0
    per_example: list[int] = field(default_factory=list)

    @property
    def queries_per_second(self) -> float:
        return self.queries / self.seconds if self.seconds > 0 else 0.0


@dataclass
class SearchGroup:
    """The result of one lockstep group of searches: examples ``start`` to ``start + len(chosen)``,
    each one's chosen example (``None``: the search gave up, the clean example stays), the queries
    each asked, and the group's scorer time and scorer calls."""

    start: int
    chosen: list
    queries: list[int]
    seconds: float
    rounds: int


def run_search(
    attack: Attack,
    examples: Sequence,
    scorer: Scorer,
    seed: int,
    epoch: int = 0,
    lockstep: int = 64,
    progress: bool = True,
    finished: dict[int, SearchGroup] | None = None,
    on_group: Callable[[SearchGroup], None] | None = None,
) -> tuple[AttackedSet, SearchStats]:
    """``attack``'s model-chosen version of ``examples``; where its search gives up, the clean
    example stays (a fallback).

    ``lockstep`` searches run together: the candidates all of them ask for in one step are scored
    in one :meth:`Scorer.predict` call (which batches them for the model). Resuming: ``finished``
    holds groups (by start index) that an interrupted run completed, taken as they are;
    ``on_group`` gets each group searched here as it completes (to journal it). Each example's
    search depends only on its own rng and the model, so a resumed run chooses what an
    uninterrupted one does."""
    if not searches(attack):
        raise TypeError(f"attack {attack.name!r} has no model-in-the-loop search")
    stats = SearchStats(per_example=[0] * len(examples))
    out: list = list(examples)
    fallbacks = 0
    finished = finished or {}
    bar = _bar(len(examples), f"search {attack.name}") if progress else None
    lines = progress and not sys.stdout.isatty()  # logs (SLURM, CI, > log): a plain line per group
    began = time.perf_counter()
    step = max(1, lockstep)
    for start in range(0, len(examples), step):
        group = range(start, min(start + step, len(examples)))
        done = finished.get(start)
        if done is None or len(done.chosen) != len(group):
            done = _search_group(attack, examples, group, scorer, seed, epoch)
            if on_group is not None:
                on_group(done)
        stats.seconds += done.seconds
        stats.rounds += done.rounds
        for i, chosen, queries in zip(group, done.chosen, done.queries):
            stats.queries += queries
            stats.per_example[i] = queries
            if chosen is None:
                fallbacks += 1
            out[i] = examples[i] if chosen is None else chosen
        if bar is not None:
            bar.update(len(group))
        if lines:
            print(_progress_line(attack.name, group.stop, len(examples), stats, time.perf_counter() - began), flush=True)
    if bar is not None:
        bar.close()
    return AttackedSet(out, fallbacks), stats


def _search_group(attack: Attack, examples: Sequence, group: range, scorer: Scorer, seed: int, epoch: int) -> SearchGroup:
    """Run the searches of ``group`` together (see :func:`run_search`)."""
    gens: dict[int, Search] = {i: attack.search(examples[i], example_rng(seed, epoch, examples[i].id, attack.name)) for i in group}
    out: dict[int, Any] = {}
    queries = dict.fromkeys(group, 0)
    seconds, rounds = 0.0, 0
    pending: dict[int, list] = {}
    for i in list(gens):
        _advance(gens, pending, out, i, None)
    while pending:
        order = sorted(pending)
        flat = [cand for i in order for cand in pending[i]]
        t = time.perf_counter()
        preds = scorer.predict(flat)
        seconds += time.perf_counter() - t
        rounds += 1
        pos = 0
        asked, pending = {i: pending[i] for i in order}, {}
        for i in order:
            n = len(asked[i])
            queries[i] += n
            _advance(gens, pending, out, i, preds[pos : pos + n])
            pos += n
    return SearchGroup(group.start, [out.get(i) for i in group], [queries[i] for i in group], seconds, rounds)


def _advance(gens: dict, pending: dict, out: dict, i: int, answer) -> None:
    """Step search ``i``: the candidates it asks for next go to ``pending``; its result to ``out``."""
    try:
        request = gens[i].send(answer) if answer is not None else next(gens[i])
    except StopIteration as stop:
        out[i] = stop.value
        del gens[i]
        return
    if not request:
        raise ValueError("a search yielded no candidates; it must return instead")
    pending[i] = list(request)


def _progress_line(name: str, done: int, total: int, stats: SearchStats, elapsed: float) -> str:
    """``[search addany] examples 64/200 queries 5210 queries/s 14.2 ETA 0:12:40`` (queries/s over
    the scorer's time; the ETA at the wall-clock pace so far)."""
    eta = clock(elapsed / done * (total - done)) if done else "?"
    return f"[search {name}] examples {done}/{total} queries {stats.queries} queries/s {stats.queries_per_second:.1f} ETA {eta}"


def _bar(total: int, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False, mininterval=1.0, disable=None)
