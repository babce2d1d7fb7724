"""Span post-processing: (start, end) pairs of each window -> the n-best answers of each example.

The HF ``run_qa.py`` rule: in every window the ``n_best`` highest start and end logits are paired;
a pair is a candidate when both tokens are context tokens, ``start <= end`` and the span is at
most ``max_answer_length`` tokens; its score is ``start logit + end logit``; its text is cut from
the original context by the offset mapping. An example's candidates come from all its windows;
the best one is its answer. Records of one example made in several batches (windows chunked) are
merged with :func:`merge_span_records`.
"""

from __future__ import annotations

import torch

Candidate = tuple[str, float, int]  # (answer text, start + end logit, window index in the batch)


def span_candidates(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    batch: dict,
    n_best: int = 20,
    max_answer_length: int = 30,
) -> dict[str, list[Candidate]]:
    """Per example id: its ``n_best`` best candidates over all its windows in the batch, best
    first (ties: window order, then the start and end logits' rank); ``[]`` when none is valid."""
    start_logits = start_logits.detach().float().cpu()
    end_logits = end_logits.detach().float().cpu()
    k = min(n_best, start_logits.shape[-1])
    top_s = torch.topk(start_logits, k, dim=-1).indices.tolist()
    top_e = torch.topk(end_logits, k, dim=-1).indices.tolist()
    out: dict[str, list[Candidate]] = {batch["ids"][i]: [] for i in set(batch["feature_example"])}
    for f, ex_i in enumerate(batch["feature_example"]):
        offs = batch["offsets"][f]
        context = batch["contexts"][ex_i]
        cands = out[batch["ids"][ex_i]]
        sl, el = start_logits[f], end_logits[f]
        for s in top_s[f]:
            if s >= len(offs) or offs[s] is None:
                continue
            for e in top_e[f]:
                if e >= len(offs) or offs[e] is None or e < s or e - s + 1 > max_answer_length:
                    continue
                cands.append((context[offs[s][0] : offs[e][1]], float(sl[s] + el[e]), f))
    for ex_id, cands in out.items():
        cands.sort(key=lambda c: -c[1])  # stable: equal scores keep their order
        del cands[n_best:]
    return out


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
    answer (with its confidence) wins; ``nbest`` lists are joined and cut to ``n_best``."""
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
        into[ex_id] = merged
    return into


def window_confidence(start_logits: torch.Tensor, end_logits: torch.Tensor, offsets: list) -> float:
    """Seed 004's confidence of one window: ``1 - (H_n(start) + H_n(end)) / 2``, the entropies of
    the start and end distributions over the window's context tokens, normalized by ``log n``."""
    from robust_mrc.metrics.confidence import span_confidence

    mask = torch.tensor([o is not None for o in offsets] + [False] * (start_logits.shape[-1] - len(offsets)))
    return float(span_confidence(start_logits.detach().float().cpu().numpy(), end_logits.detach().float().cpu().numpy(), mask.numpy()))
