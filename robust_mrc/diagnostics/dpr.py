"""Different prediction ratio (Tang et al. 2021 (DuReader_robust), over-sensitivity).

``DPR = sum over pairs (q, q') of 1[f(q) != f(q')] / |pairs|``: the share of (original question,
paraphrased question) pairs on which a model's answers differ. Answers are compared after the
task's normalization, so that answers the metric would score the same do not count as different:

* a span metric name -- the normalization that metric's exact match compares
  (:func:`robust_mrc.metrics.answer_key`), so two answers are "the same" exactly when the task's
  scorer cannot tell them apart: ``"squad"`` / ``"squad_v1"`` / ``"squad_v2"`` (alias ``"en"``):
  :func:`robust_mrc.metrics.squad.normalize_answer` (lower case, no ASCII punctuation, no
  a/an/the, white space collapsed); ``"dureader"`` (alias ``"zh"``):
  :func:`robust_mrc.metrics.dureader.normalize_dureader` (the official DuReader_robust rule: lower
  case, only the script's own punctuation list removed; spaces and ASCII ``.!?`` stay);
* ``"mc"`` (alias ``"int"``) -- ``int(answer)`` (option indices);
* ``"auto"`` (default) -- ints (and numpy integers) as ints; strings with a CJK character on either
  side of a pair with ``"dureader"``, other strings with ``"squad"``;
* ``None`` -- no normalization, plain ``==``;
* a callable ``answer -> comparable``.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

__all__ = ["different_prediction_ratio", "get_normalizer"]

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _metric_key(metric: str) -> Callable[[Any], str]:
    def key(x: Any) -> str:
        from robust_mrc.metrics import answer_key

        return answer_key(metric)(str(x))

    key.__name__ = f"{metric}_key"
    return key


_squad = _metric_key("squad_v1")
_zh = _metric_key("dureader")


def _as_int(x: Any) -> int:
    return int(x)


def get_normalizer(normalize: str | Callable[[Any], Hashable] | None) -> Callable[[Any], Any] | None:
    """The function a ``normalize`` name stands for (``None`` for ``None`` and for ``"auto"``,
    which is decided per pair)."""
    if normalize is None or normalize == "auto":
        return None
    if callable(normalize):
        return normalize
    table = {
        "squad": _squad,
        "squad_v1": _squad,
        "squad_v2": _squad,
        "en": _squad,
        "dureader": _zh,
        "zh": _zh,
        "mc": _as_int,
        "int": _as_int,
    }
    if normalize not in table:
        raise ValueError(f"normalize={normalize!r}: expected one of {sorted(table)}, 'auto', None or a callable")
    return table[normalize]


def _auto_equal(a: Any, b: Any) -> bool:
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
        return int(a) == int(b)
    if isinstance(a, str) or isinstance(b, str):
        sa, sb = str(a), str(b)
        norm = _zh if (_CJK.search(sa) or _CJK.search(sb)) else _squad
        return norm(sa) == norm(sb)
    return a == b


def different_prediction_ratio(
    preds_a: Mapping[str, Any],
    preds_b: Mapping[str, Any],
    pairs: Iterable[tuple[str, str]] | None = None,
    normalize: str | Callable[[Any], Hashable] | None = "auto",
) -> dict[str, Any]:
    """DPR of the predictions ``preds_a`` (original questions) and ``preds_b`` (paraphrases).

    Args:
        preds_a, preds_b: ``{example id: answer}`` (an option index or an answer text).
        pairs: ``(id in preds_a, id in preds_b)`` pairs; ``None`` pairs every id present in both
            dicts with itself (in the order of ``preds_a``). A pair with an id missing from its
            dict is skipped and counted in ``n_missing``.
        normalize: how answers are made comparable (see the module docstring).

    Returns:
        ``{"dpr": float in [0, 1] (0.0 when no pair is compared), "n": compared pairs,
        "n_changed": pairs whose answers differ, "changed_ids": the ``preds_b`` id of every
        changed pair in pair order (with ``pairs=None`` the shared id), "n_missing": skipped
        pairs}``.
    """
    norm = get_normalizer(normalize)
    auto = normalize == "auto"
    if pairs is None:
        pair_list = [(i, i) for i in preds_a if i in preds_b]
    else:
        pair_list = [(a, b) for a, b in pairs]
    n = missing = 0
    changed: list[str] = []
    for a, b in pair_list:
        if a not in preds_a or b not in preds_b:
            missing += 1
            continue
        x, y = preds_a[a], preds_b[b]
        if auto:
            same = _auto_equal(x, y)
        elif norm is None:
            same = x == y
        else:
            same = norm(x) == norm(y)
        n += 1
        if not same:
            changed.append(b)
    return {
        "dpr": len(changed) / n if n else 0.0,
        "n": n,
        "n_changed": len(changed),
        "changed_ids": changed,
        "n_missing": missing,
    }
