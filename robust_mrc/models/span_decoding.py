"""Span post-processing: n-best (start, end) pairs per window -> the best answer text per example."""

from __future__ import annotations

import torch


def best_answers(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    batch: dict,
    n_best: int = 20,
    max_answer_length: int = 30,
) -> dict[str, tuple[str, float, int]]:
    """Per example id: (answer text from the original context, start+end logit score, index of
    the window (feature) it came from, -1 when there is none).

    Scores across all windows of an example; only context tokens can start or end an answer.
    """
    start_logits = start_logits.detach().float().cpu()
    end_logits = end_logits.detach().float().cpu()
    k = min(n_best, start_logits.shape[-1])
    top_s = torch.topk(start_logits, k, dim=-1).indices.tolist()
    top_e = torch.topk(end_logits, k, dim=-1).indices.tolist()
    best: dict[str, tuple[str, float, int]] = {}
    for f, ex_i in enumerate(batch["feature_example"]):
        offs = batch["offsets"][f]
        context = batch["contexts"][ex_i]
        ex_id = batch["ids"][ex_i]
        sl, el = start_logits[f], end_logits[f]
        for s in top_s[f]:
            if s >= len(offs) or offs[s] is None:
                continue
            for e in top_e[f]:
                if e >= len(offs) or offs[e] is None or e < s or e - s + 1 > max_answer_length:
                    continue
                score = float(sl[s] + el[e])
                if ex_id not in best or score > best[ex_id][1]:
                    best[ex_id] = (context[offs[s][0] : offs[e][1]], score, f)
        best.setdefault(ex_id, ("", float("-inf"), -1))
    return best


def window_confidence(start_logits: torch.Tensor, end_logits: torch.Tensor, offsets: list) -> float:
    """Seed 004's confidence of one window: ``1 - (H_n(start) + H_n(end)) / 2``, the entropies of
    the start and end distributions over the window's context tokens, normalized by ``log n``."""
    from robust_mrc.metrics.confidence import span_confidence

    mask = torch.tensor([o is not None for o in offsets] + [False] * (start_logits.shape[-1] - len(offsets)))
    return float(span_confidence(start_logits.detach().float().cpu().numpy(), end_logits.detach().float().cpu().numpy(), mask.numpy()))
