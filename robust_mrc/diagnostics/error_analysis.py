"""Predicting model errors as Wu et al. 2021 (section 6) does, and the analyses of its section 5.

Rows are every (model, evaluated set, question) of an evaluation: the clean set and each attacked
set contribute their questions (:func:`error_rows`). Each row gets the paper's features,
:data:`FEATURES` (section 6: "We one-hot-encode categorical features (training amount,
perturbation type, question type) and use other features (question length, context length,
answer length, readability) as is"), built by :func:`example_features`:

* ``training_amount`` -- how the evaluated checkpoint was trained (:func:`training_amount`): the
  amount none / half / full / both of an ``attack=amount`` run, else the attack policy's name
  (``none`` = clean training, ``mix``, ``targeted``, ...), ``ensemble`` for an ensemble,
  ``unknown`` when the training config cannot be found;
* ``perturbation_type`` -- the evaluated set's name (``clean``, ``char_noise``, ``addsent``, ...);
* ``question_type`` -- the question's first word, lower-cased, as one of who / what / which /
  when / where / why / how / other (footnote 9, :func:`question_type` with ``first_word_only``);
* ``question_len``, ``context_len``, ``answer_len`` -- lengths in words; the answer is the
  *model's* answer (section 5.2 and section 6: "given the model's answer"), the predicted span or
  the chosen option, not the gold one;
* ``readability`` -- the Flesch-Kincaid grade level of the context (section 5.3 "Flesch-Kincaid
  reading level (Kincaid et al., 1975)", Table 5), :func:`flesch_kincaid_grade`, computed here
  with a syllable heuristic (:func:`count_syllables`).

The target is "the model's answer is wrong": the option is not the gold one (multiple choice), the
predicted span is not an exact match of a gold answer under the task's scorer (span QA; the paper
counts errors without stating a threshold, Figure 1).

:func:`error_predictor` is the paper's classifier and protocol: XGBoost with default settings,
10-fold shuffled cross-validation, the mean micro F1 against the majority class (Table 6) and
XGBoost's feature importances (Figure 6). XGBoost is not installed here, so the booster is
scikit-learn's ``GradientBoostingClassifier`` with XGBoost's default tree settings (100 trees,
depth 6, learning rate 0.3), and importances are XGBoost's default type, "gain": the average loss
reduction of the splits on a column, normalized to sum to 1. :func:`error_analysis` fits it on
all rows and on each set's rows (Table 6 has one model per perturbation type), and adds the
median readability of right and wrong answers (Table 5) and accuracy by question type, answer
length and context length per set (Figures 3 and 4). :data:`PAPER` holds the paper's numbers.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CATEGORICAL",
    "FEATURES",
    "LENGTH_EDGES",
    "PAPER",
    "QUESTION_TYPES",
    "UNKNOWN",
    "ErrorRow",
    "accuracy_by",
    "accuracy_tables",
    "bucket_labels",
    "checkpoint_training_amount",
    "count_syllables",
    "error_analysis",
    "error_predictor",
    "error_rows",
    "example_features",
    "flesch_kincaid_grade",
    "flesch_reading_ease",
    "group_importances",
    "length_bucket",
    "question_type",
    "text_statistics",
    "training_amount",
]

log = logging.getLogger(__name__)

FEATURES = ("training_amount", "perturbation_type", "question_type", "question_len", "context_len", "answer_len", "readability")
CATEGORICAL = FEATURES[:3]  # one-hot encoded: column "<feature>=<value>"
UNKNOWN = "unknown"
CLEAN = "clean"
LENGTH_EDGES = {"answer": (1, 2, 3, 5, 10), "context": (50, 100, 200, 400, 800)}

# Wu et al. 2021, SQuAD. Table 6: (majority baseline, mean micro F1, its std) of the XGBoost error
# predictor per embedding and perturbation type. Table 5: median Flesch-Kincaid grade of the
# contexts of right and wrong answers. Figure 6 draws the importances as bars without numbers;
# its ten features are train_none, q_when, q_why, q_who, q_what, q_where, q_how, q_which, q_other
# and train_char.
PAPER: dict[str, Any] = {
    "table6": {
        "BERT": {"char": (0.76, 0.77, 0.008), "word": (0.72, 0.73, 0.006), "para": (0.82, 0.82, 0.006)},
        "ELMo": {"char": (0.58, 0.70, 0.003), "word": (0.54, 0.56, 0.004), "para": (0.65, 0.65, 0.008)},
    },
    "table5": {"SQuAD": {"correct": 12.9, "error": 13.0}, "TriviaQA": {"correct": 17.1, "error": 17.5}},
    "figure6": {
        "training_amount": "train_none is the strongest predictor for char perturbations (train_char also shown)",
        "question_type": "q_when, q_why, q_who, q_what, q_where, q_how, q_which, q_other: the top predictors for word and paraphrase",
        "answer_len": "not among Figure 6's ten features; section 5.2 and the abstract call the model's answer length a strong predictor",
    },
    # the attacks of this project that are the paper's perturbation types
    "perturbation": {"char_noise": "char", "word_noise": "word", "paraphrase": "para"},
}

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
    With ``first_word_only`` only the question's first word is looked at (Wu et al. 2021
    footnote 9: "computed as the first word of the question"), so "In which year ...?" is
    "other" there; :func:`example_features` uses this form.
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


# --------------------------------------------------------------------------- readability

_VOWELS = "aeiouy"
_VOWEL_RUN = re.compile(r"[aeiouy]+")
_READ_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*", re.UNICODE)  # letters, inner apostrophes
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")


def count_syllables(word: str) -> int:
    """Syllables of an English word, by a heuristic: the runs of vowels (a, e, i, o, u, y) of the
    lower-cased word, less one for a silent final "e" ("make" 1, but "table" 2, "agree" 2) or a
    silent "-ed" ("jumped" 1, but "wanted" 2); at least 1 for a word with a letter, 0 without."""
    w = "".join(_WORD.findall(word.lower()))
    if not w:
        return 0
    n = len(_VOWEL_RUN.findall(w))
    if n > 1 and w.endswith("e") and w[-2] not in _VOWELS and not (w.endswith("le") and w[-3] not in _VOWELS):
        n -= 1
    elif n > 1 and w.endswith("ed") and w[-3] not in _VOWELS + "td":
        n -= 1
    return max(1, n)


def text_statistics(text: str) -> tuple[int, int, int]:
    """``(words, sentences, syllables)`` of a text for the Flesch formulas.

    Words are runs of letters (inner apostrophes kept: "don't" is one word; numbers are not words);
    sentences are the pieces between runs of ``.``, ``!`` or ``?`` followed by white space or the
    end (so "3.5" does not end one) that hold a word, at least 1 when there is a word; syllables
    are :func:`count_syllables` summed. ``(0, 0, 0)`` for a text without words."""
    words = _READ_WORD.findall(text)
    if not words:
        return 0, 0, 0
    sentences = sum(1 for part in _SENTENCE_END.split(text) if _READ_WORD.search(part))
    return len(words), max(1, sentences), sum(count_syllables(w) for w in words)


@functools.lru_cache(maxsize=8192)  # a context is shared by its questions, sets and models
def flesch_kincaid_grade(text: str) -> float:
    """The Flesch-Kincaid grade level (Kincaid et al. 1975), Wu et al. 2021's readability:
    ``0.39 * words / sentences + 11.8 * syllables / words - 15.59`` with the counts of
    :func:`text_statistics`; 0.0 for a text without words."""
    words, sentences, syllables = text_statistics(text)
    if not words:
        return 0.0
    return 0.39 * words / sentences + 11.8 * syllables / words - 15.59


def flesch_reading_ease(text: str) -> float:
    """The Flesch reading ease (Flesch 1948): ``206.835 - 1.015 * words / sentences - 84.6 *
    syllables / words`` with the counts of :func:`text_statistics` (higher = easier); 0.0 for a
    text without words. Not one of the features (the paper uses the grade level)."""
    words, sentences, syllables = text_statistics(text)
    if not words:
        return 0.0
    return 206.835 - 1.015 * words / sentences - 84.6 * syllables / words


# --------------------------------------------------------------------------- features and rows


def training_amount(train_cfg: Mapping[str, Any] | None) -> str:
    """The training-amount category of a training run's config (its ``attack`` entry).

    ``attack.policy`` "amount" (``attack=amount``): the amount, none / half / full / both (default
    full, as the policy reads it); another policy: its name (``none`` = clean training, the
    paper's "none"; ``mix``, ``targeted``, ``augmented_option``); ``attack: null``: ``none``;
    no config, or one without an ``attack`` entry: :data:`UNKNOWN`."""
    if not isinstance(train_cfg, Mapping) or "attack" not in train_cfg:
        return UNKNOWN
    attack = train_cfg["attack"]
    if attack is None:
        return "none"
    if not isinstance(attack, Mapping):
        return UNKNOWN
    policy = str(attack.get("policy") or "none")
    return str(attack.get("amount") or "full") if policy == "amount" else policy


def checkpoint_training_amount(ckpt: str | Path | Sequence[str] | None) -> str:
    """:func:`training_amount` of the run that trained a checkpoint.

    A checkpoint's own hyper-parameters hold its model and task settings only; ``train`` writes
    the run's whole config to ``<run dir>/config.yaml`` and its checkpoints to ``<run
    dir>/checkpoints/``, so that file is read (then a ``config.yaml`` beside the checkpoint).
    A list of checkpoints (an ensemble) -> ``"ensemble"``; no readable config, or a model that is no
    checkpoint file -> :data:`UNKNOWN`."""
    if isinstance(ckpt, (list, tuple)):
        return "ensemble"
    if not ckpt:
        return UNKNOWN
    import yaml

    path = Path(ckpt)
    if path.is_dir() or (not path.is_file() and path.suffix != ".ckpt"):  # a Hugging Face model: no training run known
        return UNKNOWN
    for candidate in (path.parent.parent / "config.yaml", path.parent / "config.yaml"):
        if candidate.is_file():
            try:
                cfg = yaml.safe_load(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
                log.warning("training config %s unreadable (%s): training amount unknown", candidate, err)
                return UNKNOWN
            amount = training_amount(cfg)
            if amount != UNKNOWN:
                return amount
    return UNKNOWN


def example_features(
    example: Any,
    task: str | None = None,
    *,
    prediction: str | int,
    training_amount: str = UNKNOWN,
    perturbation_type: str = CLEAN,
) -> dict[str, str | float]:
    """The :data:`FEATURES` of one (model, set, question) row.

    ``prediction`` is the model's answer: the predicted text (span) or option index (multiple
    choice); ``answer_len`` is its length. Lengths count words (runs of word characters) of the
    question, the context (the passage for multiple choice) and the answer; ``readability`` is
    :func:`flesch_kincaid_grade` of the context; ``question_type`` is :func:`question_type` with
    ``first_word_only``. ``training_amount`` and ``perturbation_type`` (the set's name) are
    passed through. ``task`` is "mc" or "span"; ``None`` infers it (``options`` -> mc)."""
    task = task or ("mc" if hasattr(example, "options") else "span")
    if task == "mc":
        context = example.passage
        index = int(prediction)
        answer = example.options[index] if 0 <= index < len(example.options) else ""
    elif task == "span":
        context, answer = example.context, str(prediction or "")
    else:
        raise ValueError(f"task={task!r}: expected 'mc' or 'span'")
    return {
        "training_amount": str(training_amount),
        "perturbation_type": str(perturbation_type),
        "question_type": question_type(example.question, first_word_only=True),
        "question_len": float(len(_tokens(example.question))),
        "context_len": float(len(_tokens(context))),
        "answer_len": float(len(_tokens(answer))),
        "readability": float(flesch_kincaid_grade(context)),
    }


@dataclass(frozen=True)
class ErrorRow:
    """One (model, set, question) of an evaluation: its features and whether the model was wrong."""

    model: str
    set: str
    id: str
    features: dict
    wrong: bool


def error_rows(
    model: str,
    training: str,
    examples_by_set: Mapping[str, Sequence],
    records_by_set: Mapping[str, Mapping[str, Mapping[str, Any]]],
    task: str,
    metric: str = "squad_v1",
) -> list[ErrorRow]:
    """The rows of one model: every question of every set that has the model's records.

    ``examples_by_set``: set name -> the set's examples (as the model read them: attacked contexts,
    added options); ``records_by_set``: set name -> question id -> the model's prediction record.
    Sets follow ``records_by_set``'s order, questions the examples' order. ``wrong`` is ``not
    record_correct(record, metric)``: a wrong option (multiple choice), no exact match of a gold
    answer under ``metric`` (span). A record that cannot be scored (no gold) is left out."""
    from robust_mrc.diagnostics.drops import record_correct

    rows = []
    for set_name, records in records_by_set.items():
        for ex in examples_by_set.get(set_name) or ():
            record = records.get(ex.id)
            correct = record_correct(record, metric) if record is not None else None
            if correct is None:
                continue
            feats = example_features(ex, task, prediction=record["pred"], training_amount=training, perturbation_type=set_name)
            rows.append(ErrorRow(model, set_name, ex.id, feats, not correct))
    return rows


# --------------------------------------------------------------------------- the error predictor


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


def _booster(seed: int, n_estimators: int, max_depth: int, learning_rate: float):
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(n_estimators=n_estimators, max_depth=max_depth, learning_rate=learning_rate, random_state=seed)


def _gain_importances(model, n_columns: int) -> np.ndarray:
    """XGBoost's "gain" importance of a fitted gradient-boosting model: per column the average
    loss reduction of the splits on it (weighted impurity of a node less its children's), over
    all trees; normalized to sum to 1 (all 0 when no tree split)."""
    total, count = np.zeros(n_columns), np.zeros(n_columns)
    for est in np.asarray(model.estimators_).reshape(-1):
        t = est.tree_
        split = np.flatnonzero(t.children_left != -1)
        if not len(split):
            continue
        left, right = t.children_left[split], t.children_right[split]
        w, imp = t.weighted_n_node_samples, t.impurity
        gain = w[split] * imp[split] - w[left] * imp[left] - w[right] * imp[right]
        np.add.at(total, t.feature[split], gain)
        np.add.at(count, t.feature[split], 1)
    avg = np.divide(total, count, out=np.zeros(n_columns), where=count > 0)
    s = avg.sum()
    return avg / s if s > 0 else avg


def group_importances(importances: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Column importances summed per feature (``question_type=what`` -> ``question_type``),
    sorted by decreasing importance (then name)."""
    grouped: dict[str, float] = {}
    for name, value in importances:
        key = str(name).split("=", 1)[0]
        grouped[key] = grouped.get(key, 0.0) + float(value)
    return [[k, v] for k, v in sorted(grouped.items(), key=lambda t: (-t[1], t[0]))]


def error_predictor(
    features: Sequence[Mapping[str, Any]],
    wrong: Sequence[bool],
    folds: int = 10,
    seed: int = 0,
    *,
    n_estimators: int = 100,
    max_depth: int = 6,
    learning_rate: float = 0.3,
) -> dict[str, Any]:
    """Predict "the model is wrong" from the rows' features: Wu et al. 2021's protocol.

    Features are vectorized with string values one-hot encoded (column ``feature=value``) and
    numbers as is. The booster is scikit-learn's ``GradientBoostingClassifier`` with XGBoost's
    default settings (``n_estimators=100, max_depth=6, learning_rate=0.3``, ``random_state=seed``).
    Evaluation: ``KFold(folds, shuffle=True, random_state=seed)`` (the paper's shuffled 10-fold);
    per test fold the micro F1 (for one label per row, the accuracy), the paper's score, with its
    mean and standard deviation over the folds; the baseline predicts the majority class of each
    training fold (Table 6's "Majority"), scored the same way. From the out-of-fold predictions of
    all rows: the F1 of the error class and the ROC AUC. A training fold of one class predicts that
    class. Importances: :func:`_gain_importances` of a booster fitted on all rows, per column
    (``importances``, like Figure 6) and summed per feature (``feature_importance``), both sorted
    by decreasing importance. ``constant``: features with a single value in every row (no
    information, importance 0). Deterministic for a given ``seed``.

    Fewer rows than ``folds``: ``folds`` becomes the number of rows (warning). Fewer than 2 rows,
    or a single class (no error, or only errors): ``status`` "too_few", scores ``None``, only the
    majority baseline (on all rows).

    Returns (JSON-ready)::

        {"status": "ok" | "too_few", "n": int, "n_errors": int, "majority": "error" | "correct",
         "folds": int, "micro_f1": float | None, "micro_f1_std": float | None,
         "baseline_micro_f1": float | None, "error_f1": float | None, "auc": float | None,
         "importances": [[column, gain], ...], "feature_importance": [[feature, gain], ...],
         "constant": [feature, ...], "warning": str (only when folds were reduced or CV was
         impossible)}
    """
    y = np.asarray(wrong, dtype=bool).reshape(-1)
    if len(features) != len(y):
        raise ValueError(f"{len(features)} feature rows but {len(y)} labels")
    if folds < 2:
        raise ValueError("folds must be >= 2")
    n, n_err = len(y), int(y.sum())
    majority = "error" if _majority_error(y) else "correct"
    values: dict[str, set] = {}
    for f in features:
        for k, v in f.items():
            values.setdefault(k, set()).add(v)
    out: dict[str, Any] = {
        "status": "ok",
        "n": n,
        "n_errors": n_err,
        "majority": majority,
        "folds": 0,
        "micro_f1": None,
        "micro_f1_std": None,
        "baseline_micro_f1": max(n_err, n - n_err) / n if n else None,
        "error_f1": None,
        "auc": None,
        "importances": [],
        "feature_importance": [],
        "constant": sorted(k for k, v in values.items() if len(v) == 1) if n > 1 else [],
    }
    if n < 2 or n_err in (0, n):
        msg = f"error predictor: {n} rows with {n_err} errors: nothing to cross-validate (one class)"
        log.warning(msg)
        out.update(status="too_few", warning=msg)
        return out
    if n < folds:
        msg = f"error predictor: {n} rows, fewer than folds={folds}; using {n} folds"
        log.warning(msg)
        out["warning"] = msg
        folds = n

    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import KFold

    X, cols = _vectorize(features)
    oof = np.zeros(n)
    micro, base_micro = [], []
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(X):
        if y[train].all() or not y[train].any():
            prob = np.full(len(test), float(y[train][0]))
        else:
            prob = _booster(seed, n_estimators, max_depth, learning_rate).fit(X[train], y[train]).predict_proba(X[test])[:, 1]
        oof[test] = prob
        micro.append(float(((prob > 0.5) == y[test]).mean()))
        base_micro.append(float((y[test] == _majority_error(y[train])).mean()))
    full = _booster(seed, n_estimators, max_depth, learning_rate).fit(X, y)
    ranked = sorted(zip(cols, _gain_importances(full, len(cols)).tolist()), key=lambda t: (-t[1], t[0]))
    importances = [[c, float(v)] for c, v in ranked]
    out.update(
        folds=folds,
        micro_f1=float(np.mean(micro)),
        micro_f1_std=float(np.std(micro)),
        baseline_micro_f1=float(np.mean(base_micro)),
        error_f1=_f1_pos(y, oof > 0.5),
        auc=float(roc_auc_score(y, oof)),
        importances=importances,
        feature_importance=group_importances(importances),
    )
    return out


# --------------------------------------------------------------------------- the whole analysis


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def _breakdown(rows: Sequence[ErrorRow], key) -> dict[str, dict[str, dict[str, float]]]:
    """``{set: {group: {"n", "acc"}}}`` of one model's rows."""
    by_set: dict[str, list[ErrorRow]] = {}
    for r in rows:
        by_set.setdefault(r.set, []).append(r)
    out = {}
    for set_name, rs in by_set.items():
        groups, order = zip(*(key(r) for r in rs))
        acc = accuracy_by(list(groups), [not r.wrong for r in rs], order[0])
        out[set_name] = {str(g): {"n": n, "acc": a} for g, (n, a) in acc.items()}
    return out


def accuracy_tables(rows: Sequence[ErrorRow]) -> dict[str, dict[str, Any]]:
    """Per model, accuracy by question type, model answer length and context length on each set
    (Wu et al. 2021 Figures 3 and 4): ``{model: {"question_type" | "answer_length" |
    "context_length": {set: {group: {"n", "acc"}}}}}``; lengths in the :data:`LENGTH_EDGES`
    buckets."""
    by_model: dict[str, list[ErrorRow]] = {}
    for r in rows:
        by_model.setdefault(r.model, []).append(r)
    a_labels, c_labels = bucket_labels(LENGTH_EDGES["answer"]), bucket_labels(LENGTH_EDGES["context"])
    return {
        model: {
            "question_type": _breakdown(rs, lambda r: (r.features["question_type"], QUESTION_TYPES)),
            "answer_length": _breakdown(rs, lambda r: (length_bucket(int(r.features["answer_len"]), LENGTH_EDGES["answer"]), a_labels)),
            "context_length": _breakdown(rs, lambda r: (length_bucket(int(r.features["context_len"]), LENGTH_EDGES["context"]), c_labels)),
        }
        for model, rs in by_model.items()
    }


def error_analysis(
    rows: Sequence[ErrorRow],
    folds: int = 10,
    seed: int = 0,
    *,
    training: Mapping[str, str] | None = None,
    attacks: Mapping[str, str] | None = None,
    error: str = "",
    **booster: Any,
) -> dict[str, Any]:
    """Wu et al. 2021 section 6 (and the tables of section 5) over an evaluation's rows.

    ``predictor``: :func:`error_predictor` on all rows (every feature). ``by_set``: one predictor
    per set on that set's rows (the paper fits one per perturbation type, Table 6; the perturbation
    type is constant there, so it is left out). ``readability``: the median Flesch-Kincaid grade of
    the contexts of right and wrong rows (Table 5). ``accuracy``: :func:`accuracy_tables`.
    ``paper``: what Figure 6 says of each feature.

    ``training``: model -> training amount (recorded under ``models``); ``attacks``: set -> the
    attack that made it, which maps a set to the paper's char / word / para rows of Table 6
    (``by_set[set]["paper"]``, from :data:`PAPER`); ``error`` says what counts as wrong.
    ``booster``: keyword arguments of :func:`error_predictor` (``n_estimators``, ...)."""
    sets = list(dict.fromkeys(r.set for r in rows))
    wrong = [r.wrong for r in rows]
    out: dict[str, Any] = {
        "features": list(FEATURES),
        "error": error,
        "n": len(rows),
        "n_errors": sum(wrong),
        "models": {m: (training or {}).get(m, UNKNOWN) for m in dict.fromkeys(r.model for r in rows)},
        "sets": sets,
        "predictor": error_predictor([r.features for r in rows], wrong, folds, seed, **booster),
        "by_set": {},
        "readability": {
            "correct": _median([r.features["readability"] for r in rows if not r.wrong]),
            "error": _median([r.features["readability"] for r in rows if r.wrong]),
            "paper": PAPER["table5"],
        },
        "accuracy": accuracy_tables(rows),
        "paper": {"figure6": PAPER["figure6"]},
    }
    for s in sets:
        rs = [r for r in rows if r.set == s]
        entry = error_predictor(
            [{k: v for k, v in r.features.items() if k != "perturbation_type"} for r in rs], [r.wrong for r in rs], folds, seed, **booster
        )
        paper = PAPER["perturbation"].get((attacks or {}).get(s, s))
        if paper:
            entry["paper"] = {"perturbation": paper, **{emb: list(t[paper]) for emb, t in PAPER["table6"].items()}}
        out["by_set"][s] = entry
    return out
