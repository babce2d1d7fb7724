"""Length buckets: every batch padded to one of a few fixed widths (``task.length_buckets``).

On a GPU each distinct input shape costs: its kernels are chosen (autotuned) and a compiled graph
is made for it on first sight. Padding every batch to the smallest of ``N`` fixed widths
(:func:`bucket_widths`) bounds the shapes a run sees to ``N`` per batch size, so the work of the
first steps is done ``N`` times, before training (:class:`robust_mrc.trainer.callbacks.WarmShapes`),
and never again. The pads carry attention mask 0 (and offsets -1), so the model's outputs on the
real tokens are those of the unpadded batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

ALIGN = 8  # widths are multiples of it (tensor-core friendly)


def bucket_widths(max_length: int, count: int, align: int = ALIGN) -> tuple[int, ...]:
    """``count`` widths evenly spaced up to ``max_length`` (each a multiple of ``align``, the last
    ``max_length`` itself): every length from 1 to ``max_length`` has a bucket."""
    if count < 1 or max_length < 1:
        raise ValueError(f"length_buckets={count} with max_length={max_length}: both must be at least 1")
    step = -(-max_length // count)
    step = -(-step // align) * align
    widths = sorted({min(step * i, max_length) for i in range(1, count + 1)} | {max_length})
    return tuple(widths)


def bucket_width(length: int, widths: Sequence[int]) -> int:
    """The smallest width that holds ``length`` tokens."""
    for w in widths:
        if length <= w:
            return w
    raise ValueError(f"a batch of {length} tokens is longer than the largest bucket ({widths[-1]})")


TOKEN_KEYS = ("input_ids", "attention_mask", "token_type_ids")


def pad_to_width(
    inputs: Mapping[str, torch.Tensor], width: int, tokenizer=None, offsets: np.ndarray | None = None
) -> tuple[dict[str, torch.Tensor], np.ndarray | None]:
    """``inputs`` (``input_ids``, ``attention_mask``, ``token_type_ids``: ``(rows, length)``) padded
    to ``width`` on the tokenizer's padding side, as the tokenizer pads (its pad token and pad
    token type, attention mask 0; without a tokenizer: id 0 on the right); ``offsets``
    ``(rows, length, 2)`` padded with -1."""
    length = next(iter(inputs.values())).shape[-1]
    extra = width - length
    if extra <= 0:
        return dict(inputs), offsets
    left = getattr(tokenizer, "padding_side", "right") == "left"
    fill = {
        "input_ids": getattr(tokenizer, "pad_token_id", None) or 0,
        "token_type_ids": getattr(tokenizer, "pad_token_type_id", 0),
        "attention_mask": 0,
    }
    out = {}
    for key, value in inputs.items():
        pad = torch.full((*value.shape[:-1], extra), fill.get(key, 0), dtype=value.dtype, device=value.device)
        out[key] = torch.cat([pad, value] if left else [value, pad], dim=-1)
    if offsets is not None:
        pad = np.full((offsets.shape[0], extra, 2), -1, dtype=offsets.dtype)
        offsets = np.concatenate([pad, offsets] if left else [offsets, pad], axis=1)
    return out, offsets


def batch_at_width(batch: Mapping, width: int) -> dict:
    """``batch`` with its token tensors cut or padded (:func:`pad_to_width`) to ``width`` tokens and
    its answer positions kept inside them: a stand-in batch of that shape (the warm-up's)."""
    out = dict(batch)
    tokens = {k: batch[k] for k in TOKEN_KEYS if k in batch}
    if tokens["input_ids"].shape[-1] >= width:
        out.update({k: v[..., :width] for k, v in tokens.items()})
    else:
        out.update(pad_to_width(tokens, width)[0])
    for key in ("start_positions", "end_positions"):
        if key in batch:
            out[key] = batch[key].clamp(max=width - 1)
    return out
