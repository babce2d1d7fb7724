"""Span post-processing: (start, end) pairs of each window -> the n-best answers of each example.

The HF ``run_qa.py`` rule (``postprocess_qa_predictions``, from its documentation): in every window
the ``n_best`` highest start and end logits are paired; a pair is a candidate when both tokens are
context tokens, ``start <= end`` and the span is at most ``max_answer_length`` tokens; its score
is ``start logit + end logit``; its text is cut from the original context by the offset mapping.
An example's candidates come from all its windows; the best one is its answer.

SQuAD v2.0 ("no answer"), the same recipe with ``version_2_with_negative``: a window's null score
is the start + end logit of its [CLS] token (``batch["null_index"]``), an example's null score
the **minimum** over its windows (every window must agree that there is no answer); the example
is answered ``""`` when ``null score - best span score > threshold``
(:func:`no_answer_decision`), the threshold tuned on the validation split
(:func:`robust_mrc.metrics.no_answer.tune_threshold`).

:class:`SpanDecoder` takes the logits of a batch's windows a chunk at a time (the span module runs
the forward passes in chunks) and keeps only each example's ``n_best`` candidates, its null score
and each window's confidence, so memory does not grow with the logits of all windows. Records of
one example made in several batches are merged with :func:`merge_span_records`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

Candidate = tuple[str, float, int]  # (answer text, start + end logit, window index in the batch)


def offsets_array(offsets) -> np.ndarray:
    """A batch's offsets as ``(windows, length, 2)`` ``int32`` (``-1`` off the context); also
    accepts the list form ``[[(start, end) | None, ...], ...]`` (windows of equal length)."""
    if isinstance(offsets, np.ndarray):
        return offsets
    return np.array([[(-1, -1) if o is None else o for o in window] for window in offsets], dtype=np.int32).reshape(len(offsets), -1, 2)


class SpanDecoder:
    """The n-best candidates, null scores and window confidences of one batch, fed chunk by chunk
    (:meth:`add`) in window order; ties keep window order, then the start and end logits' rank."""

    def __init__(self, batch: dict, n_best: int = 20, max_answer_length: int = 30):
        self.batch = batch
        self.n_best, self.max_answer_length = n_best, max_answer_length
        self.offsets = offsets_array(batch["offsets"])
        n = len(batch["feature_example"])
        self.null_index = batch.get("null_index")
        self.confidence = np.zeros(n)
        self.window_null = np.full(n, np.inf)
        # example id -> [(score, window, start token, end token)], best first
        self.found: dict[str, list[tuple[float, int, int, int]]] = {batch["ids"][i]: [] for i in set(batch["feature_example"])}

    def add(self, first: int, start_logits: torch.Tensor, end_logits: torch.Tensor) -> None:
        """The logits of windows ``first, first + 1, ...`` (in batch order)."""
        from robust_mrc.metrics.confidence import span_confidence

        start_logits, end_logits = start_logits.detach().float().cpu(), end_logits.detach().float().cpu()
        k = min(self.n_best, start_logits.shape[-1])
        top_s = torch.topk(start_logits, k, dim=-1).indices.tolist()
        top_e = torch.topk(end_logits, k, dim=-1).indices.tolist()
        sl, el = start_logits.numpy(), end_logits.numpy()
        context = self.offsets[first : first + len(sl), :, 0] >= 0
        self.confidence[first : first + len(sl)] = np.atleast_1d(span_confidence(sl, el, context))
        touched = set()
        for j in range(len(sl)):
            f = first + j
            null = int(self.null_index[f]) if self.null_index is not None else 0
            self.window_null[f] = float(sl[j, null] + el[j, null])
            ex_id = self.batch["ids"][self.batch["feature_example"][f]]
            cands = self.found[ex_id]
            touched.add(ex_id)
            ctx = context[j]
            for s in top_s[j]:
                if s >= len(ctx) or not ctx[s]:
                    continue
                for e in top_e[j]:
                    if e >= len(ctx) or not ctx[e] or e < s or e - s + 1 > self.max_answer_length:
                        continue
                    cands.append((float(sl[j, s] + el[j, e]), f, int(s), int(e)))
        for ex_id in touched:
            cands = self.found[ex_id]
            cands.sort(key=lambda c: -c[0])  # stable: equal scores keep their order
            del cands[self.n_best :]

    def candidates(self) -> dict[str, list[Candidate]]:
        """Per example id: its ``n_best`` best candidates over all its windows, best first;
        ``[]`` when none is valid."""
        out = {}
        position = {ex_id: i for i, ex_id in enumerate(self.batch["ids"])}
        for ex_id, cands in self.found.items():
            context = self.batch["contexts"][position[ex_id]]
            out[ex_id] = [(context[self.offsets[f, s, 0] : self.offsets[f, e, 1]], score, f) for score, f, s, e in cands]
        return out

    def null_scores(self) -> dict[str, float]:
        """Per example id: the minimum null score over its windows (the HF rule)."""
        out: dict[str, float] = {}
        for f, ex_i in enumerate(self.batch["feature_example"]):
            ex_id = self.batch["ids"][ex_i]
            out[ex_id] = min(out.get(ex_id, math.inf), float(self.window_null[f]))
        return out


def span_candidates(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    batch: dict,
    n_best: int = 20,
    max_answer_length: int = 30,
) -> dict[str, list[Candidate]]:
    """Per example id: its ``n_best`` best candidates over all its windows in the batch, best
    first (ties: window order, then the start and end logits' rank); ``[]`` when none is valid."""
    decoder = SpanDecoder(batch, n_best, max_answer_length)
    decoder.add(0, start_logits, end_logits)
    return decoder.candidates()


def best_answers(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    batch: dict,
    n_best: int = 20,
    max_answer_length: int = 30,
) -> dict[str, Candidate]:
    """Per example id: (answer text from the original context, start+end logit score, index of
    the window it came from), or ``("", -inf, -1)`` when no candidate is valid."""
    cands = span_candidates(start_logits, end_logits, batch, n_best, max_answer_length)
    return {ex_id: c[0] if c else ("", float("-inf"), -1) for ex_id, c in cands.items()}


def merge_span_records(into: dict[str, dict], new: dict[str, dict], n_best: int = 20) -> dict[str, dict]:
    """Merge the records of one example's windows seen in different batches: the higher-scoring
    answer (with its confidence) wins; ``nbest`` lists are joined and cut to ``n_best``; the null
    score is the minimum of both (the minimum over all the example's windows)."""
    for ex_id, rec in new.items():
        old = into.get(ex_id)
        if old is None:
            into[ex_id] = rec
            continue
        best = rec if rec["score"] > old["score"] else old
        merged = dict(best)
        if "nbest" in old or "nbest" in rec:
            joined = list(old.get("nbest", [])) + list(rec.get("nbest", []))
            joined.sort(key=lambda c: -c[1])
            merged["nbest"] = joined[:n_best]
        if "null_score" in old or "null_score" in rec:
            merged["null_score"] = min(old.get("null_score", math.inf), rec.get("null_score", math.inf))
        into[ex_id] = merged
    return into


def no_answer_decision(record: dict, threshold: float | None) -> str:
    """The answer of a record under the no-answer rule: ``""`` when ``null_score - score >
    threshold``, else its best span. A record without a null score, or already decided (it has
    ``span_pred``), keeps its ``pred``; ``threshold`` None means 0.0 (HF's default)."""
    if "span_pred" in record or "null_score" not in record:
        return record["pred"]
    return "" if record["null_score"] - record["score"] > (threshold or 0.0) else record["pred"]


def apply_no_answer(records: dict[str, dict], threshold: float | None) -> dict[str, dict]:
    """New records whose ``pred`` is :func:`no_answer_decision`'s answer; the best span is kept
    as ``span_pred``. Records without a null score are returned unchanged."""
    out = {}
    for ex_id, rec in records.items():
        if "null_score" not in rec or "span_pred" in rec:
            out[ex_id] = rec
            continue
        out[ex_id] = {**rec, "pred": no_answer_decision(rec, threshold), "span_pred": rec["pred"]}
    return out
