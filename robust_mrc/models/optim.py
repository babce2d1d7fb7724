"""AdamW without weight decay on biases and norm weights (fused into one kernel per step when the
weights are on a GPU and no loss scaling comes between the gradients and the step), linear warmup by
ratio then linear decay, and the gradient clipping that a fused AdamW needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from robust_mrc.core import settings as S


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    """Biases and LayerNorm weights (every 1-d parameter) get no weight decay."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def linear_warmup_decay(optimizer, warmup_steps: int, total_steps: int):
    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / max(1, warmup_steps)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def build_optimizer(model: torch.nn.Module, optim_cfg: Mapping[str, Any], total_steps: int, fused: bool | None = None):
    """``fused``: one kernel per step; None: where the weights are on a GPU."""
    optim_cfg = S.complete(S.OptimSettings, optim_cfg)  # also built from plain dicts (tests, older checkpoints)
    groups = param_groups(model, float(optim_cfg["weight_decay"]))
    if fused is None:
        fused = all(p.is_cuda for g in groups for p in g["params"])
    optimizer = torch.optim.AdamW(
        groups,
        lr=float(optim_cfg["lr"]),
        eps=float(optim_cfg["adam_epsilon"]),
        betas=tuple(optim_cfg["betas"]),
        fused=True if fused else None,
    )
    warmup = int(float(optim_cfg["warmup_ratio"]) * total_steps)
    scheduler = linear_warmup_decay(optimizer, warmup, total_steps)
    return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


def unscales_in_step(optimizer: torch.optim.Optimizer) -> bool:
    """Whether the optimizer takes a loss scaler's gradients still scaled and unscales them in its
    step (a fused AdamW): clipping before that step would clip scaled gradients."""
    return bool(getattr(optimizer, "_step_supports_amp_scaling", False))


def clip_gradients(optimizer: torch.optim.Optimizer, value: float, algorithm: str = "norm") -> None:
    """Clip the gradients of ``optimizer``'s parameters in place: their whole norm to ``value``
    (``algorithm="norm"``) or each element to [-value, value] (``"value"``)."""
    grads = [p for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
    if algorithm == "value":
        torch.nn.utils.clip_grad_value_(grads, value)
    else:
        torch.nn.utils.clip_grad_norm_(grads, value)
