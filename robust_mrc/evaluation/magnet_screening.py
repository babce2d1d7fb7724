"""Magnet screening (Lin, Zou & Ding 2021, sections 3.1 and 4.2-4.3): the interference score T_k of
every pool option against a model over N questions, and the magnet sets built from the top options.

S(o) is the multiple-choice head's score of (passage, question + o), each option scored on its
own (the head scores every row independently, so pool options are packed five to a pseudo
question). ``T_k = (1/N) sum_i [max_j S(o_ij) < S(o_ak)]`` over the questions where option k is
admissible (not identical to one of the question's own options, not from its passage).

:func:`screen_models` is what an evaluation runs for a suite set with ``screen:`` (``suite=advrace``'s
``magnet``): per evaluated model the pool is screened, ranked and its top options become that
model's magnet set. The T_k of a (model, questions, pool) are cached (``scores/<key>.npy`` in the
evaluation cache), so a second evaluation scores nothing."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robust_mrc.attacks.pools import OptionPool, passage_key, resolve_pool
from robust_mrc.core.digests import fingerprint
from robust_mrc.data.examples import MAX_OPTIONS, MCExample, examples_digest
from robust_mrc.data.text import normalize
from robust_mrc.diagnostics.interference import interference_scores, plot_sorted_scores, pool_admissible_mask, rank_pool, write_ranked_pool

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


def interference(
    predictor, questions: Sequence[MCExample], clean_records: Mapping[str, dict], pool: OptionPool, cache
) -> tuple[np.ndarray, dict]:
    """``T_k`` of every pool option against one model over ``questions`` and a summary (sizes,
    seconds, pairs per second, ``cached``). The scores are cached in ``cache`` (``scores/<key>.npy``)
    under a fingerprint of the checkpoint and its preprocessing (``predictor.key``), the questions
    and the pool: a second screening of the same model and pool runs no forward pass."""
    options = [e.option for e in pool.entries]
    n, k = len(questions), len(options)
    key = fingerprint("interference", predictor.key, examples_digest(questions), [(e.option, e.passage) for e in pool.entries])
    started = time.perf_counter()
    T = cache.load_array("scores", key)
    cached = T is not None and T.shape == (k,)
    if not cached:
        records = predictor.predict(pseudo_questions(questions, options))
        pool_scores = np.full((n, k), np.nan)
        for i, q in enumerate(questions):
            for c in range(0, k, MAX_OPTIONS):
                width = min(MAX_OPTIONS, k - c)
                pool_scores[i, c : c + width] = records[f"{q.id}::pool{c}"]["scores"][:width]
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
        cache.save_array("scores", key, T)
    seconds = time.perf_counter() - started
    pairs = n * k
    info = {
        "questions": n,
        "pool": k,
        "pairs": pairs,
        "seconds": round(seconds, 3),
        "pairs_per_s": round(pairs / seconds, 1) if seconds > 0 and not cached else None,
        "cached": cached,
    }
    log.info("magnet screening: %d options x %d questions %s (%.1f s)", k, n, "from the cache" if cached else "scored", seconds)
    return np.asarray(T, dtype=np.float64), info


def write_screening(T, options: Sequence[str], out: Path, top: int) -> list[tuple[str, float]]:
    """Rank the pool by ``T`` and write ``magnet_scores.jsonl`` (all, best first),
    ``magnet_pool.txt`` (the first ``top``: a ranked pool the ``magnet`` / ``extra_option`` attacks
    read as ``pool=``) and ``magnet_scores.png`` (sorted T, the paper's Figure 2) under ``out``."""
    ranked = rank_pool(list(options), T)
    out.mkdir(parents=True, exist_ok=True)
    write_ranked_pool(out / "magnet_scores.jsonl", ranked)
    write_ranked_pool(out / "magnet_pool.txt", ranked, top=top)
    plot_sorted_scores(T, out / "magnet_scores.png")
    return ranked


def screening_pool(pool_spec: Any, pool_examples: Sequence[MCExample], size: int | None, seed: int) -> OptionPool:
    """The options screened: ``pool_spec`` (a file or list) or the options of ``pool_examples``
    (the other passages of the training split), one entry per distinct text (the same text scores
    the same), then at most ``size`` of them drawn with ``seed`` (a deterministic sample, pool order
    kept; None: all)."""
    import random

    seen, entries = set(), []
    for e in pool_of(pool_spec, pool_examples).entries:
        if normalize(e.option) not in seen:
            seen.add(normalize(e.option))
            entries.append(e)
    if size is not None and len(entries) > size:
        keep = sorted(random.Random(f"magnet screening {seed}").sample(range(len(entries)), size))
        entries = [entries[i] for i in keep]
    return OptionPool(entries)


def _pool_source(spec) -> str:
    pool = spec.params.get("pool")
    return str(pool) if isinstance(pool, (str, Path)) else "options of other passages of the training split"


def screen_models(
    specs,
    clean,
    pool_examples,
    predictors: Mapping[str, Any],
    clean_records: Mapping[str, Mapping[str, dict]],
    cache,
    out: Path,
    *,
    seed: int,
    task: str,
) -> tuple[dict[str, dict], dict[str, dict]]:
    """The magnet sets of ``specs`` (suite entries with ``screen:``), one per model of
    ``predictors`` (name -> predictor; ``clean_records``: name -> its clean predictions).

    Per set: the pool (:func:`screening_pool`, ``screen.pool_size`` options) is screened
    (:func:`interference`, cached) over the first ``screen.questions`` questions of ``clean``
    against each model, ranked by ``T_k`` (files under ``out/magnet_screening/<model>/<set>/``), and
    its first ``screen.top`` options are the magnets of that model's ``magnet`` set (one wrong option
    of each question replaced by one of them, built and cached like any set). With two or more
    models an ``"ensemble"`` entry is added: the magnets of ``T_k`` averaged over the members (as
    Lin, Zou & Ding averaged over three models); each member then predicts that set and the
    ensemble's predictions combine theirs.

    Returns ``({model: {set name: EvalSet}}, {model: {set name: screening summary}})``."""
    from dataclasses import replace

    from robust_mrc.evaluation.suites import build_sets

    if task != "mc":
        raise ValueError("a suite set with screen: (magnet options) needs a multiple-choice checkpoint (task=mc)")
    names = list(predictors)
    built: dict[str, dict] = {name: {} for name in names}
    infos: dict[str, dict] = {name: {} for name in names}
    if len(names) > 1:
        built["ensemble"], infos["ensemble"] = {}, {}
    for spec in specs:
        settings = dict(spec.screen)
        pool = screening_pool(spec.params.get("pool"), pool_examples, settings.get("pool_size"), seed)
        if not pool.entries:
            raise ValueError(f"set {spec.name}: the option pool to screen is empty")
        questions = list(clean[: settings["questions"]] if settings.get("questions") else clean)
        top = int(settings["top"])
        options = [e.option for e in pool.entries]
        scores = {}
        for name in names:
            scores[name], info = interference(predictors[name], questions, clean_records[name], pool, cache)
            infos[name][spec.name] = info
        targets = {name: (name, scores[name]) for name in names}
        if len(names) > 1:
            with warnings.catch_warnings():  # an option no question admits: NaN for every member
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(np.vstack([scores[name] for name in names]), axis=0)
            targets["ensemble"] = (f"the ensemble of {', '.join(names)} (T averaged over the members)", mean)
            infos["ensemble"][spec.name] = {**infos[names[0]][spec.name], "seconds": 0.0, "pairs_per_s": None, "members": names}
        for model, (against, T) in targets.items():
            where = out / "magnet_screening" / model.replace("/", "__") / spec.name
            ranked = write_screening(T, options, where, top)
            magnets = [o for o, _ in ranked[:top]]
            screening = f"top {top} of {len(options)} options ({_pool_source(spec)}) by interference score over {len(questions)} questions"
            params = {k: v for k, v in spec.params.items() if k != "pool"}
            params.update({"pool": magnets, "top": top, "screened_with": against, "screening": screening})
            one = replace(spec, attack="magnet", params=params, screen=None)
            got = build_sets([one], clean, task, seed=seed, cache=cache, pool_examples=pool_examples)
            built[model][spec.name] = got[spec.name]
            infos[model][spec.name].update(
                {
                    "model": against,
                    "settings": settings,
                    "top": [{"option": o, "T": None if np.isnan(t) else round(float(t), 4)} for o, t in ranked[:10]],
                    "mean_T": float(np.nanmean(T)) if np.isfinite(T).any() else None,
                    "magnets": magnets,
                    "dir": str(where),
                    "files": ["magnet_pool.txt", "magnet_scores.jsonl", "magnet_scores.png"],
                }
            )
            log.info(
                "set %s: %d magnets screened against %s (%d questions x %d options)",
                spec.name,
                len(magnets),
                against,
                len(questions),
                len(options),
            )
    return built, infos
