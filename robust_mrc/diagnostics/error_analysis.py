"""Error analysis (seed 004 section 5): which examples a model gets wrong, and can we predict it.

* :func:`question_type` -- the question's wh-word: who, what, which, when, where, why, how or
  "other" (seed 004's eight types; whom/whose count as "who").
* :func:`accuracy_by` -- ``{group: (n, accuracy)}``; :func:`length_bucket` / :func:`bucket_labels`
  -- integer lengths into labelled ranges.
* :func:`example_features` -- simple properties of an example (question type one-hot, question /
  context / answer length in words, question-context word overlap).
* :func:`error_predictor` -- gradient boosting (scikit-learn's ``GradientBoostingClassifier``, the
  paper used XGBoost with default settings) predicting "the model is wrong" from those features,
  evaluated with shuffled stratified k-fold cross-validation against the majority-class baseline.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "QUESTION_TYPES",
    "accuracy_by",
    "bucket_labels",
    "error_predictor",
    "example_features",
    "length_bucket",
    "question_type",
]

log = logging.getLogger(__name__)

QUESTION_TYPES = ("what", "which", "who", "when", "where", "why", "how", "other")
_WH = {
    "what": "what",
    "which": "which",
    "who": "who",
    "whom": "who",
    "whose": "who",
    "when": "when",
    "where": "where",
    "why": "why",
    "how": "how",
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_TOKEN = re.compile(r"\w+", re.UNICODE)


def question_type(question: str, *, first_word_only: bool = False) -> str:
    """The type of a question: its first wh-word, lower-cased.

    Words are the runs of letters of the lower-cased question (so "What's" -> "what"). The first
    word among what / which / who / whom / whose / when / where / why / how decides; whom and
    whose map to "who". No wh-word -> "other" (e.g. RACE cloze statements, yes/no questions).
    With ``first_word_only`` only the question's first word is looked at (seed 004 footnote 9:
    "computed as the first word of the question"), so "In which year ...?" is "other" there.
    """
    words = _WORD.findall(question.lower())
    if first_word_only:
        words = words[:1]
    for w in words:
        if w in _WH:
            return _WH[w]
    return "other"


def accuracy_by(
    groups: Sequence[Hashable], correct: Sequence[bool], order: Sequence[Hashable] | None = None
) -> dict[Hashable, tuple[int, float]]:
    """``{group: (n, accuracy)}`` with accuracy in [0, 1].

    Groups are listed in ``order`` (those of its groups that occur), then the others in order of
    first appearance. ``groups`` and ``correct`` are parallel sequences.
    """
    if len(groups) != len(correct):
        raise ValueError(f"{len(groups)} groups but {len(correct)} correctness flags")
    counts: dict[Hashable, list[int]] = {}
    for g, ok in zip(groups, correct):
        c = counts.setdefault(g, [0, 0])
        c[0] += 1
        c[1] += bool(ok)
    first = [g for g in dict.fromkeys(order or ()) if g in counts]
    keys = first + [g for g in counts if g not in set(first)]
    return {g: (counts[g][0], counts[g][1] / counts[g][0]) for g in keys}


def bucket_labels(edges: Sequence[int]) -> list[str]:
    """The labels :func:`length_bucket` can return for ``edges``, in increasing order."""
    edges = list(edges)
    if not edges:
        return ["all"]
    if any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"edges must increase strictly: {edges}")
    labels = [f"<={edges[0]}"]
    for lo, hi in zip(edges, edges[1:]):
        labels.append(str(hi) if lo + 1 == hi else f"{lo + 1}-{hi}")
    labels.append(f">{edges[-1]}")
    return labels


def length_bucket(n: int, edges: Sequence[int]) -> str:
    """The bucket of an integer length ``n``: edges are inclusive upper bounds.

    ``edges=(1, 2, 3, 5, 10)``: ``n <= 1`` -> "<=1", 2 -> "2", 3 -> "3", 4..5 -> "4-5",
    6..10 -> "6-10", ``n > 10`` -> ">10". No edges -> "all".
    """
    labels = bucket_labels(edges)
    for edge, label in zip(edges, labels):
        if n <= edge:
            return label
    return labels[-1]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def example_features(example: Any, task: str | None = None, prediction: str | int | None = None) -> dict[str, float]:
    """Numeric features of an example for :func:`error_predictor` (all values are floats).

    * ``q_<type>`` -- one-hot of :func:`question_type` over :data:`QUESTION_TYPES`;
    * ``question_len``, ``context_len`` (passage for multiple choice), ``answer_len`` -- length in
      words (runs of word characters); the answer is the gold option (multiple choice) or the
      first gold answer (span; 0 when unanswerable);
    * ``overlap`` -- share of the question's distinct words that occur in the context (0 for an
      empty question);
    * multiple choice only: ``n_options`` and ``option_len`` (mean option length in words);
    * with ``prediction`` (the model's answer text, or option index for multiple choice):
      ``pred_len`` in words (seed 004 found longer model answers more error-prone).

    ``task`` is "mc" or "span"; ``None`` infers it from the example (``options`` -> mc).
    """
    task = task or ("mc" if hasattr(example, "options") else "span")
    question = example.question
    if task == "mc":
        context, answer = example.passage, example.options[example.label]
    elif task == "span":
        context = example.context
        texts = [a.text for a in example.answers]
        answer = texts[0] if texts else ""
    else:
        raise ValueError(f"task={task!r}: expected 'mc' or 'span'")
    qt = question_type(question)
    feats: dict[str, float] = {f"q_{t}": float(qt == t) for t in QUESTION_TYPES}
    q_tok, c_tok = _tokens(question), _tokens(context)
    q_set = set(q_tok)
    feats["question_len"] = float(len(q_tok))
    feats["context_len"] = float(len(c_tok))
    feats["answer_len"] = float(len(_tokens(answer)))
    feats["overlap"] = len(q_set & set(c_tok)) / len(q_set) if q_set else 0.0
    if task == "mc":
        feats["n_options"] = float(len(example.options))
        feats["option_len"] = float(np.mean([len(_tokens(o)) for o in example.options]))
        if prediction is not None:
            feats["pred_len"] = float(len(_tokens(example.options[int(prediction)])))
    elif prediction is not None:
        feats["pred_len"] = float(len(_tokens(str(prediction))))
    return feats


def _vectorize(features: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, list[str]]:
    """Rows of the union of keys (sorted); a missing key is 0; a string value ``v`` of key ``k``
    becomes the one-hot column ``k=v``; bools become 0/1."""
    names: set[str] = set()
    rows: list[dict[str, float]] = []
    for f in features:
        row = {}
        for k, v in f.items():
            if isinstance(v, str):
                row[f"{k}={v}"] = 1.0
            elif v is None:
                continue
            else:
                row[k] = float(v)
        names.update(row)
        rows.append(row)
    cols = sorted(names)
    X = np.array([[r.get(c, 0.0) for c in cols] for r in rows], dtype=np.float64).reshape(len(rows), len(cols))
    return X, cols


def _f1_pos(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    tp = int((y_true & y_pred).sum())
    fp = int((~y_true & y_pred).sum())
    fn = int((y_true & ~y_pred).sum())
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _majority_error(y: np.ndarray) -> bool:
    """True when the majority class is 'error' (a tie counts as 'correct')."""
    return int(y.sum()) * 2 > len(y)


def error_predictor(
    features: Sequence[Mapping[str, Any]],
    wrong: Sequence[bool],
    folds: int = 10,
    seed: int = 0,
    *,
    n_estimators: int = 100,
    top_features: int = 10,
) -> dict[str, Any]:
    """Predict the model's errors from example features; k-fold CV against the majority baseline.

    Model: ``GradientBoostingClassifier(n_estimators, random_state=seed)`` on the vectorized
    features (string values one-hot encoded, missing keys 0). Evaluation: ``StratifiedKFold(folds,
    shuffle=True, random_state=seed)``; per test fold the F1 of the positive class "error" and the
    accuracy (= micro F1 for two classes, the number seed 004 Table 6 reports); the result is the
    mean (and standard deviation) over the folds.

    Baseline: the majority class of each training fold, predicted for every test example, scored
    the same way. When the majority is "correct" (a tie counts as "correct") the baseline predicts
    no error at all, so its error-class F1 is 0; when the majority is "error" its F1 is
    ``2p / (1 + p)`` with ``p`` the fold's error rate. Compare ``accuracy`` with
    ``baseline_accuracy`` (seed 004's comparison) and ``f1`` with ``baseline_f1``.

    Too few examples: stratified k-fold needs every class in every fold, so when the minority
    class has fewer members than ``folds``, ``folds`` is reduced to that count (a warning is
    logged and returned under ``"warning"``). With fewer than 2 members in the minority class no
    cross-validation is possible: ``status`` is ``"too_few"``, the model scores are ``None``, and
    the baseline is scored on the whole set.

    Returns (JSON-ready)::

        {"status": "ok" | "too_few", "n": int, "n_errors": int, "folds": int,
         "f1": float | None, "f1_std": float | None, "accuracy": float | None,
         "baseline_f1": float, "baseline_accuracy": float, "majority": "error" | "correct",
         "top_features": [[name, importance], ...], "warning": str (only when folds were reduced
         or CV was impossible)}

    ``top_features``: the ``top_features`` largest impurity importances of a model fitted on all
    examples (seed 004 Figure 6); empty when status is "too_few".
    """
    y = np.asarray(wrong, dtype=bool).reshape(-1)
    if len(features) != len(y):
        raise ValueError(f"{len(features)} feature rows but {len(y)} labels")
    n, n_err = len(y), int(y.sum())
    minority = min(n_err, n - n_err)
    majority = "error" if _majority_error(y) else "correct"
    out: dict[str, Any] = {"status": "ok", "n": n, "n_errors": n_err, "folds": 0, "f1": None, "f1_std": None, "accuracy": None}
    if folds < 2:
        raise ValueError("folds must be >= 2")
    if minority < 2:
        msg = (
            f"error predictor: {n} examples with {n_err} errors; the minority class has {minority} member(s), too few for cross-validation"
        )
        log.warning(msg)
        base_pred = np.full(n, majority == "error")
        out.update(
            status="too_few",
            baseline_f1=_f1_pos(y, base_pred),
            baseline_accuracy=float((base_pred == y).mean()) if n else 0.0,
            majority=majority,
            top_features=[],
            warning=msg,
        )
        return out
    if minority < folds:
        msg = f"error predictor: the minority class has {minority} members, fewer than folds={folds}; using {minority} folds"
        log.warning(msg)
        out["warning"] = msg
        folds = minority

    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold

    X, cols = _vectorize(features)
    f1s, accs, base_f1s, base_accs = [], [], [], []
    for train, test in StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(X, y):
        model = GradientBoostingClassifier(n_estimators=n_estimators, random_state=seed).fit(X[train], y[train])
        pred = model.predict(X[test]).astype(bool)
        f1s.append(_f1_pos(y[test], pred))
        accs.append(float((pred == y[test]).mean()))
        base = np.full(len(test), _majority_error(y[train]))
        base_f1s.append(_f1_pos(y[test], base))
        base_accs.append(float((base == y[test]).mean()))
    full = GradientBoostingClassifier(n_estimators=n_estimators, random_state=seed).fit(X, y)
    ranked = sorted(zip(cols, full.feature_importances_.tolist()), key=lambda t: (-t[1], t[0]))
    out.update(
        folds=folds,
        f1=float(np.mean(f1s)),
        f1_std=float(np.std(f1s)),
        accuracy=float(np.mean(accs)),
        baseline_f1=float(np.mean(base_f1s)),
        baseline_accuracy=float(np.mean(base_accs)),
        majority=majority,
        top_features=[[c, float(v)] for c, v in ranked[:top_features]],
    )
    return out
