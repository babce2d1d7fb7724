"""Pairs for consistency training (``attack.consistency``): each attacked copy in the batch of its
clean example, and the entries of the two answer distributions that correspond.

**Grouping.** An epoch's items (:meth:`~robust_mrc.policies.AttackPolicy.plan`) become groups, one
per training example: the clean example first, then its attacked copies of the epoch (``mode=add``:
the plan's clean item and its copies; ``mode=replace``: the copy and the clean example it
replaced). A group is one item of :class:`PairedPolicyDataset`, so the sampler, the DataLoader
workers, the DDP ranks and the micro-batches of gradient accumulation handle it whole: a pair is
never split. ``batch_size`` counts groups, i.e. clean examples, each with its attacked copies: under
``mode=add`` an epoch trains on exactly the rows it trains on without consistency, in fewer, larger
steps; under ``mode=replace`` each step adds the clean partners of its copies.

**Correspondence.** Multiple choice: an attacked copy with as many options as its clean example
keeps each option's position (the attacks replace options in place), so options correspond by
position; one with another number of options (an added option) shares the options of equal text,
matched by text. Span: the start and end distributions are compared over the *clean* context's
characters. Each attacked character is mapped to its clean character (:func:`char_map`: an
inserted block placed exactly, other edits by a difference of words), inserted text maps nowhere; a
token stands at its first character (start) and its last (end), and the tokens of the two windows
that stand at the same clean character correspond. Tokens of inserted text therefore drop out. Each
example contributes one window: the first that holds its answer (or its first window when none
does, e.g. an unanswerable question).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from robust_mrc.policies import AttackPolicy, Item, PolicyConfigError

# a word: one CJK character (texts without spaces between words), or a run of other non-space characters
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_WORD_RE = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


def pairing_problem(policy: str | None, consistency: str | None) -> str | None:
    """Why ``attack.consistency`` cannot work with ``attack.policy`` (it needs attacked copies), or None."""
    if consistency and policy in (None, "none"):
        return (
            f"attack.consistency={consistency} compares attacked copies with their clean examples, and attack=none makes "
            "none: choose a training attack (e.g. attack=mix) or set attack.consistency=null"
        )
    return None


def check_pairing(policy: str | None, consistency: str | None) -> None:
    """A :class:`~robust_mrc.policies.PolicyConfigError` with :func:`pairing_problem`'s message."""
    problem = pairing_problem(policy, consistency)
    if problem:
        raise PolicyConfigError(problem)


def group_items(items: Sequence[Item]) -> list[list[Item]]:
    """One group per example, in the order the examples first appear in ``items``: its clean item,
    then its attacked items in plan order."""
    attacked: dict[int, list[Item]] = {}
    for index, attack in items:
        copies = attacked.setdefault(index, [])
        if attack is not None:
            copies.append((index, attack))
    return [[(index, None), *copies] for index, copies in attacked.items()]


class PairedPolicyDataset(Dataset):
    """One epoch of training groups (:func:`group_items`); ``__getitem__`` returns the group's
    ``[(example, attack name, status), ...]``, clean first (attacked in the DataLoader worker)."""

    def __init__(self, examples: Sequence, policy: AttackPolicy, epoch: int):
        self.examples = list(examples)
        self.policy = policy
        self.epoch = int(epoch)
        self.items = policy.plan(len(self.examples), self.epoch)
        self.groups = group_items(self.items)

    def __len__(self) -> int:
        return len(self.groups)

    def __getitem__(self, i: int):
        return [self.policy.apply(self.examples[index], attack, self.epoch) for index, attack in self.groups[i]]


# --------------------------------------------------------------------------- correspondence
def option_pairs(clean: Sequence[str], attacked: Sequence[str]) -> list[tuple[int, int]]:
    """``(clean option, attacked option)`` indices that correspond: by position when both have
    as many options, else by equal text (each clean option used once)."""
    if len(clean) == len(attacked):
        return [(j, j) for j in range(len(clean))]
    free = {}
    for j, text in enumerate(clean):
        free.setdefault(text, []).append(j)
    out = []
    for k, text in enumerate(attacked):
        if free.get(text):
            out.append((free[text].pop(0), k))
    return out


def _common_prefix(a: str, b: str) -> int:
    n, limit = 0, min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def _common_suffix(a: str, b: str) -> int:
    n, limit = 0, min(len(a), len(b))
    while n < limit and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def insertion_start(text: str, lo: int, hi: int, size: int) -> int:
    """Where in ``text`` an inserted block of ``size`` characters starts, when any start in
    ``[lo, hi]`` gives the same text (the block's edges repeat their neighbours: "The" before
    "The"): the first that makes the block start a word and end in white space (an inserted
    sentence and its separating space), else ``hi``."""
    for i in range(lo, hi + 1):
        if (i == 0 or text[i - 1].isspace()) and not text[i].isspace() and text[i + size - 1].isspace():
            return i
    return hi


def char_map(clean: str, attacked: str) -> np.ndarray:
    """For each character of ``attacked``, the index of the same character in ``clean``, ``-1``
    where ``attacked`` has inserted or changed text. One inserted block (AddSent) is placed by
    :func:`insertion_start`; other edits by a difference of the two texts' words
    (:func:`map_words`)."""
    out = np.full(len(attacked), -1, dtype=np.int64)
    prefix, suffix, size = _common_prefix(clean, attacked), _common_suffix(clean, attacked), len(attacked) - len(clean)
    if size > 0 and prefix + suffix >= len(clean):
        i = insertion_start(attacked, len(clean) - suffix, prefix, size)
        out[:i] = np.arange(i)
        out[i + size :] = np.arange(i, len(clean))
        return out
    map_words(out, clean, attacked)
    return out


def map_words(out: np.ndarray, clean: str, attacked: str) -> None:
    """Fill ``out`` (:func:`char_map`) from a difference of the words (runs of non-space; each CJK
    character a word) of the two
    texts: the characters of equal words map one to one; a run of changed words that stands for as
    many clean words (a noised word in its place) maps each word's first and last character; other
    words map nowhere. A difference of words, not of characters: fast on long contexts."""
    cw = [m.span() for m in _WORD_RE.finditer(clean)]
    aw = [m.span() for m in _WORD_RE.finditer(attacked)]
    matcher = difflib.SequenceMatcher(None, [clean[s:e] for s, e in cw], [attacked[s:e] for s, e in aw], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for (cs, ce), (s, e) in zip(cw[i1:i2], aw[j1:j2]):
                out[s:e] = np.arange(cs, ce)
        elif tag == "replace" and i2 - i1 == j2 - j1:
            for (cs, ce), (s, e) in zip(cw[i1:i2], aw[j1:j2]):
                out[s], out[e - 1] = cs, ce - 1


def token_pairs(clean_offsets: np.ndarray, attacked_offsets: np.ndarray, chars: np.ndarray) -> tuple[list, list]:
    """``(start pairs, end pairs)``: ``(clean token, attacked token)`` positions of two windows
    (``(length, 2)`` character offsets, ``-1`` off the context) whose tokens start (end) at the same
    clean character, the attacked offsets mapped by ``chars`` (:func:`char_map`)."""
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    for t, (s, e) in enumerate(clean_offsets.tolist()):
        if 0 <= s < e:
            starts.setdefault(s, t)
            ends[e - 1] = t
    start_pairs, end_pairs = [], []
    for u, (s, e) in enumerate(attacked_offsets.tolist()):
        if not 0 <= s < e or e > len(chars):
            continue
        first, last = int(chars[s]), int(chars[e - 1])
        if first >= 0 and first in starts:
            start_pairs.append((starts[first], u))
        if last >= 0 and last in ends:
            end_pairs.append((ends[last], u))
    return start_pairs, end_pairs


def entries(pairs: Sequence[tuple[int, int, Sequence[tuple[int, int]]]]) -> dict[str, torch.Tensor]:
    """The tensors of :mod:`robust_mrc.models.consistency` from ``(clean row, attacked row,
    [(clean column, attacked column), ...])`` per pair: ``clean`` / ``attacked`` ``(pairs, K, 2)``
    and ``mask`` ``(pairs, K)``."""
    width = max((len(cols) for _, _, cols in pairs), default=0)
    clean = torch.zeros(len(pairs), width, 2, dtype=torch.long)
    attacked = torch.zeros(len(pairs), width, 2, dtype=torch.long)
    mask = torch.zeros(len(pairs), width, dtype=torch.bool)
    for p, (rc, ra, cols) in enumerate(pairs):
        if not cols:
            continue
        n = len(cols)
        cols_t = torch.tensor(cols, dtype=torch.long)
        clean[p, :n, 0], clean[p, :n, 1] = rc, cols_t[:, 0]
        attacked[p, :n, 0], attacked[p, :n, 1] = ra, cols_t[:, 1]
        mask[p, :n] = True
    return {"clean": clean, "attacked": attacked, "mask": mask}


def answer_window(batch: dict, example: int) -> int:
    """The window of ``example`` its pair is compared in: the first holding the answer, else its first."""
    rows = [f for f, ex in enumerate(batch["feature_example"]) if ex == example]
    holding = [f for f in rows if int(batch["start_positions"][f]) != int(batch["null_index"][f])]
    return (holding or rows)[0]


def mc_entries(examples: Sequence, pairs: Sequence[tuple[int, int]]) -> list[dict]:
    return [entries([(c, a, option_pairs(examples[c].options, examples[a].options)) for c, a in pairs])]


def span_entries(examples: Sequence, pairs: Sequence[tuple[int, int]], batch: dict) -> list[dict]:
    starts, ends = [], []
    for c, a in pairs:
        rc, ra = answer_window(batch, c), answer_window(batch, a)
        chars = char_map(examples[c].context, examples[a].context)
        s, e = token_pairs(batch["offsets"][rc], batch["offsets"][ra], chars)
        starts.append((rc, ra, s))
        ends.append((rc, ra, e))
    return [entries(starts), entries(ends)]


@dataclass
class PairedCollator:
    """Collates groups (:class:`PairedPolicyDataset` items): the rows of every group, clean first,
    through ``collator`` (a :class:`~robust_mrc.datamodules.datasets.TaggedCollator`), plus
    ``consistency``: ``weight``, ``rows`` and the ``entries`` of :mod:`robust_mrc.models.consistency`
    (multiple choice: one set over the options; span: start and end)."""

    collator: Any
    task: str
    weight: float = 1.0

    def __call__(self, groups):
        items, pairs = [], []
        for group in groups:
            clean = len(items)
            items.extend(group)
            pairs.extend((clean, clean + k) for k in range(1, len(group)))
        batch = self.collator(items)
        examples = [ex for ex, _, _ in items]
        sets = mc_entries(examples, pairs) if self.task == "mc" else span_entries(examples, pairs, batch)
        batch["consistency"] = {"weight": float(self.weight), "rows": len(items), "entries": sets}
        return batch
