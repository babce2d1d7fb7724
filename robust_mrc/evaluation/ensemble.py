"""Ensembles of models over their prediction records (Wu et al. 2021 sections 3.2 and 4.1, "Ens").

:func:`combine_records` makes an ensemble's records from its members' records, in the members'
record layout, so the same metrics, report and diagnostics apply. Multiple choice: ``average`` or
``vote``; span QA: ``token_vote``. The rules:

Multiple choice (per example, over the members' records):

* :func:`mc_average` -- mean of the members' option probabilities, then argmax (ties: lowest
  option index).
* :func:`mc_majority` -- the option most members picked; a tie between options with the same
  number of votes goes to the one with the highest averaged probability (when probabilities are
  given), and a remaining tie to the lowest option index.

Span QA, Wu et al. 2021: "tokenize the answers ... and only include the word in the predicted answer if
any two models agree". :func:`span_token_vote` makes that precise:

1. Each answer is split into tokens (white space by default; ``tokenize="char"`` for Chinese).
2. Tokens are compared by a key: the SQuAD normalization of the token
   (:func:`robust_mrc.metrics.squad.normalize_answer`: lower case, punctuation and a/an/the
   removed), or the lower-cased token when that normalization leaves nothing (so "The" and "the"
   agree, "," and "," agree). For ``tokenize="char"`` the key is
   :func:`robust_mrc.metrics.dureader.normalize_dureader` of the character, likewise.
3. A key is *kept* when at least ``min_votes`` answers contain it; it is kept as many times as
   the ``min_votes``-th largest number of times an answer contains it (so a word that two answers
   both hold twice is kept twice; a word counts once per answer towards the votes).
4. Output order: the answers are walked in member order and each answer's tokens left to right;
   a token is written (in its own surface form) while its key has been written fewer times than
   it is kept. The kept tokens of the first answer thus come first, in its order; kept tokens that
   the first answer lacks follow in the order of the next answer that has them.
5. The tokens are joined with one space (no separator for ``"char"``). When nothing is kept the
   result is ``""`` (``fallback="first"``: the first member's answer instead).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from robust_mrc.core.errors import ConfigError

__all__ = ["METHODS", "combine_records", "ensemble_method", "mc_average", "mc_majority", "span_ensemble", "span_token_vote"]


def _prob_matrix(prob_lists: Sequence[Sequence[float]]) -> np.ndarray:
    if not len(prob_lists):
        raise ValueError("an ensemble needs at least one member")
    lengths = {len(p) for p in prob_lists}
    if len(lengths) != 1:
        raise ValueError(f"members disagree on the number of options: {sorted(lengths)}")
    return np.asarray(prob_lists, dtype=np.float64)


def mc_average(prob_lists: Sequence[Sequence[float]]) -> tuple[int, np.ndarray]:
    """``(argmax of the mean, mean probabilities)`` of the members' option probabilities for one
    example (``prob_lists[m][j]`` = member m's probability of option j). Ties: lowest index."""
    avg = _prob_matrix(prob_lists).mean(axis=0)
    return int(np.argmax(avg)), avg


def mc_majority(preds: Sequence[int], prob_lists: Sequence[Sequence[float]] | None = None) -> tuple[int, np.ndarray]:
    """``(voted option, mean probabilities)`` for one example.

    ``preds[m]`` is member m's chosen option. The option with the most votes wins; among options
    tied on votes, the highest mean probability (``prob_lists`` given), then the lowest index.
    Without ``prob_lists`` the second value is the vote share of each option ``0..max option``
    (the options' count is then unknown beyond the highest voted index).
    """
    if not len(preds):
        raise ValueError("an ensemble needs at least one member")
    preds = [int(p) for p in preds]
    if prob_lists is not None:
        avg = _prob_matrix(prob_lists).mean(axis=0)
        if len(prob_lists) != len(preds):
            raise ValueError(f"{len(preds)} predictions but {len(prob_lists)} probability lists")
        if max(preds) >= len(avg) or min(preds) < 0:
            raise ValueError(f"a prediction is outside the {len(avg)} options: {preds}")
    else:
        avg = np.bincount(preds, minlength=max(preds) + 1) / len(preds)
    votes = Counter(preds)
    top = max(votes.values())
    tied = sorted(j for j, v in votes.items() if v == top)
    best = max(tied, key=lambda j: (avg[j], -j)) if prob_lists is not None else tied[0]
    return int(best), avg


def _token_key_en(token: str) -> str:
    from robust_mrc.metrics.squad import normalize_answer

    return normalize_answer(token) or token.lower()


def _token_key_zh(token: str) -> str:
    from robust_mrc.metrics.dureader import normalize_dureader

    return normalize_dureader(token) or token.lower()


def span_token_vote(
    answers: Sequence[str],
    min_votes: int = 2,
    *,
    tokenize: str | Callable[[str], Sequence[str]] = "whitespace",
    key: Callable[[str], str] | None = None,
    fallback: str | None = None,
) -> str:
    """Token voting over the members' answers to one question (see the module docstring).

    Args:
        answers: one answer text per member, in member order.
        min_votes: how many answers must contain a token for it to be kept (Wu et al. 2021: 2).
        tokenize: ``"whitespace"`` (``str.split``), ``"char"`` (every non-space character, for
            Chinese) or a callable ``text -> tokens`` (joined with spaces).
        key: token -> comparison key (default: see the module docstring).
        fallback: ``None`` -> ``""`` when nothing is kept; ``"first"`` -> the first answer.

    >>> span_token_vote(["Orientalism", "behaviourism identities", "The discourse of Orientalism"])
    'Orientalism'
    """
    if min_votes < 1:
        raise ValueError("min_votes must be >= 1")
    if fallback not in (None, "first"):
        raise ValueError(f"fallback={fallback!r}: expected None or 'first'")
    if tokenize == "whitespace":
        split, joiner, key = str.split, " ", key or _token_key_en
    elif tokenize == "char":
        split, joiner, key = (lambda s: [c for c in s if not c.isspace()]), "", key or _token_key_zh
    elif callable(tokenize):
        split, joiner, key = tokenize, " ", key or _token_key_en
    else:
        raise ValueError(f"tokenize={tokenize!r}: expected 'whitespace', 'char' or a callable")
    toks = [list(split(str(a))) for a in answers]
    keyed = [[key(t) for t in ts] for ts in toks]
    per_answer = [Counter(ks) for ks in keyed]
    kept: dict[str, int] = {}
    for k in {k for c in per_answer for k in c}:
        counts = sorted((c[k] for c in per_answer if c[k]), reverse=True)
        if len(counts) >= min_votes:
            kept[k] = counts[min_votes - 1]
    written: Counter = Counter()
    out: list[str] = []
    for ts, ks in zip(toks, keyed):
        for t, k in zip(ts, ks):
            if written[k] < kept.get(k, 0):
                written[k] += 1
                out.append(t)
    if not out and fallback == "first" and answers:
        return str(answers[0])
    return joiner.join(out)


def span_ensemble(pred_dicts: Sequence[Mapping[str, str]], min_votes: int = 2, **kwargs) -> dict[str, str]:
    """``{id: voted answer}`` over the ids present in every member's ``{id: answer}`` dict (in the
    first dict's order); ``kwargs`` go to :func:`span_token_vote`."""
    if not pred_dicts:
        raise ValueError("an ensemble needs at least one member")
    first, rest = pred_dicts[0], pred_dicts[1:]
    return {i: span_token_vote([d[i] for d in pred_dicts], min_votes, **kwargs) for i in first if all(i in d for d in rest)}


#: each task's methods, its default first
METHODS = {"mc": ("average", "vote"), "span": ("token_vote",)}
METHOD_NAMES = tuple(m for methods in METHODS.values() for m in methods)


def ensemble_method(task: str, method: str | None) -> str:
    """``method`` (``None``: the task's default), a :class:`ConfigError` when it is not one of the task's."""
    methods = METHODS.get(task, ())
    if not methods:
        raise ConfigError(f"task={task}: an ensemble combines readers (task=mc or task=span)")
    method = str(method or methods[0])
    if method not in methods:
        raise ConfigError(f"ensemble_method={method} does not apply to task={task}: for task={task} use one of {', '.join(methods)}")
    return method


def combine_records(members: Sequence[Mapping[str, dict]], task: str, method: str) -> dict[str, dict]:
    """One record per example id present in every member."""
    method = ensemble_method(task, method)
    ids = [i for i in members[0] if all(i in m for m in members[1:])]
    out: dict[str, dict] = {}
    for i in ids:
        recs = [m[i] for m in members]
        if task == "mc":
            probs = [r["probs"] for r in recs]
            if method == "average":
                pred, avg = mc_average(probs)
            else:
                pred, avg = mc_majority([r["pred"] for r in recs], probs)
            out[i] = {"pred": int(pred), "label": recs[0]["label"], "probs": [round(float(p), 6) for p in avg]}
        else:
            confs = [r.get("confidence", 0.0) for r in recs]
            out[i] = {
                "pred": span_token_vote([r["pred"] for r in recs]),
                "golds": recs[0]["golds"],
                "confidence": sum(confs) / len(confs),
                "members": [r["pred"] for r in recs],
            }
    return out
