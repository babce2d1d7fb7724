"""Paired consistency training (``attack.consistency=kl``): the answer distribution of an attacked
copy is pulled towards its clean example's, and the clean one towards the attacked one's.

The data module puts each attacked copy in the same batch as its clean example
(:mod:`robust_mrc.datamodules.pairs`) and gives the batch ``consistency``: the ``weight`` and, per
logits tensor of the model (multiple choice: the option logits; span: the start and the end
logits), the entries the two members of each pair share: ``clean`` and ``attacked``, ``(pairs, K, 2)``
``(row, column)`` indices into the logits, and ``mask`` ``(pairs, K)``, which of the K are real.
A pair's two distributions are the softmax over its shared entries (renormalised), and the term is
their symmetric KL, ``KL(p || q) + KL(q || p) = sum (p - q)(log p - log q)`` (the divergence of
Jiang et al. 2020 (SMART) and Aghajanyan et al. 2021 (R3F), here between a clean example and its
textual attack instead of an embedding-space perturbation), averaged over the batch's pairs and
over the logits tensors. Pairs that share fewer than two entries add nothing.

Everything here is pure tensor arithmetic, in float32 whatever the training precision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

KINDS = ("kl",)  # attack.consistency: the divergences there are
_FILL = -1e9  # the logit of an entry a pair does not share: no probability, finite gradients


def masked_log_softmax(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-softmax of ``x`` over the last dimension's entries where ``mask`` is true (the others
    are left at a very low, finite value)."""
    return torch.log_softmax(x.masked_fill(~mask, _FILL), dim=-1)


def symmetric_kl(a: torch.Tensor, b: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row, the symmetric KL between the softmax of logits ``a`` and of ``b`` over the entries
    where ``mask`` is true; 0 for a row with fewer than two such entries."""
    la, lb = masked_log_softmax(a.float(), mask), masked_log_softmax(b.float(), mask)
    terms = ((la.exp() - lb.exp()) * (la - lb)).masked_fill(~mask, 0.0)
    return terms.sum(-1) * (mask.sum(-1) >= 2)


def paired_kl(logits: torch.Tensor, clean: torch.Tensor, attacked: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean symmetric KL of the pairs given by ``clean`` / ``attacked`` ``(pairs, K, 2)`` indices into
    ``logits`` ``(rows, columns)``; a zero that keeps the graph when there are no pairs."""
    if clean.numel() == 0:
        return logits.float().sum() * 0.0
    a = logits[clean[..., 0], clean[..., 1]]
    b = logits[attacked[..., 0], attacked[..., 1]]
    return symmetric_kl(a, b, mask.bool()).mean()


def consistency_term(pairs: Mapping[str, Any], logits: Sequence[torch.Tensor]) -> torch.Tensor:
    """The unweighted consistency term of a batch: :func:`paired_kl` averaged over ``logits`` (one
    tensor per entry set of ``pairs["entries"]``)."""
    entries = pairs["entries"]
    if len(entries) != len(logits):
        raise ValueError(f"{len(entries)} entry sets of pairs for {len(logits)} logits tensors")
    terms = [paired_kl(x, e["clean"], e["attacked"], e["mask"]) for x, e in zip(logits, entries)]
    return torch.stack(terms).mean()


def add_consistency(module, loss: torch.Tensor, batch: Mapping[str, Any], *logits: torch.Tensor) -> torch.Tensor:
    """``loss`` plus ``weight`` x the consistency term when ``batch`` carries pairs (logged as
    ``train/consistency``); ``loss`` itself otherwise."""
    pairs = batch.get("consistency")
    if not pairs:
        return loss
    term = consistency_term(pairs, logits)
    module.log("train/consistency", term.detach(), batch_size=int(pairs["rows"]))
    return loss + float(pairs["weight"]) * term
