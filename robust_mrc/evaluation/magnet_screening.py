"""Magnet screening (seed 002): the interference score T_k of every pool option over N questions.

S(o) is the multiple-choice head's score of (passage, question + o), each option scored on its
own (the head scores every row independently, so pool options are packed five to a pseudo
question). ``T_k = (1/N) sum_i [max_j S(o_ij) < S(o_ak)]`` over the questions where option k is
admissible (not identical to one of the question's own options, not from its passage). The
scores are prediction records, cached like any set's, so a second screening costs nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robust_mrc.attacks.pools import OptionPool, passage_key, resolve_pool
from robust_mrc.data.examples import MAX_OPTIONS, MCExample
from robust_mrc.diagnostics.interference import interference_scores, plot_sorted_scores, pool_admissible_mask, rank_pool, write_ranked_pool
from robust_mrc.evaluation.cache import examples_digest, fingerprint

log = logging.getLogger(__name__)


def pool_of(pool_spec: Any, examples: Sequence[MCExample]) -> OptionPool:
    """A pool file/list, or the options of ``examples`` (the pool of the paper: other passages)."""
    pool = resolve_pool(pool_spec) if pool_spec else None
    return pool if pool is not None else OptionPool.from_examples(examples)


def pseudo_questions(questions: Sequence[MCExample], options: Sequence[str]) -> list[MCExample]:
    """Each question with the pool options packed ``MAX_OPTIONS`` at a time (label 0, unused)."""
    out = []
    for q in questions:
        for c in range(0, len(options), MAX_OPTIONS):
            chunk = list(options[c : c + MAX_OPTIONS])
            if len(chunk) == 1:  # a question needs two options; the copy's score is ignored
                chunk.append(chunk[0])
            out.append(MCExample(f"{q.id}::pool{c}", q.passage, q.question, tuple(chunk), 0))
    return out


def screen(predictor, questions: Sequence[MCExample], clean_records: Mapping[str, dict], pool: OptionPool, out: Path, top: int) -> dict:
    """Score, rank and write ``magnet_pool.txt`` (top options), ``magnet_scores.jsonl`` (all) and
    ``magnet_scores.png``; returns the screening summary (sizes, throughput, top options)."""
    options = [e.option for e in pool.entries]
    pseudo = pseudo_questions(questions, options)
    set_key = fingerprint("magnet_screen", examples_digest(questions), [(e.option, e.passage, e.source_id) for e in pool.entries])
    started = time.perf_counter()
    records = predictor.records("magnet_screen", pseudo, set_key)
    seconds = time.perf_counter() - started
    n, k = len(questions), len(options)
    pool_scores = np.full((n, k), np.nan)
    for i, q in enumerate(questions):
        for c in range(0, k, MAX_OPTIONS):
            scores = records[f"{q.id}::pool{c}"]["scores"]
            width = min(MAX_OPTIONS, k - c)
            pool_scores[i, c : c + width] = scores[:width]
    width = max(len(q.options) for q in questions)
    own_scores = np.full((n, width), np.nan)
    for i, q in enumerate(questions):
        s = clean_records[q.id]["scores"]
        own_scores[i, : len(s)] = s
    # admissible pairs: not one of the question's own options, not from its passage
    mask = pool_admissible_mask(
        [q.options for q in questions],
        options,
        own_sources=[passage_key(q.passage) for q in questions],
        pool_sources=[e.passage for e in pool.entries],
    )
    T = interference_scores(own_scores, pool_scores, mask)
    ranked = rank_pool(options, T)
    write_ranked_pool(out / "magnet_scores.jsonl", ranked)
    write_ranked_pool(out / "magnet_pool.txt", ranked, top=top)  # what magnet / extra_option read
    plot_sorted_scores(T, out / "magnet_scores.png")
    pairs = n * k
    return {
        "questions": n,
        "pool": k,
        "pairs": pairs,
        "seconds": round(seconds, 3),
        "pairs_per_s": round(pairs / seconds, 1) if seconds > 0 else None,
        "top": [{"option": o, "T": round(float(t), 4)} for o, t in ranked[:10]],
        "mean_T": float(np.nanmean(T)) if k else 0.0,
        "files": ["magnet_pool.txt", "magnet_scores.jsonl", "magnet_scores.png"],
    }
