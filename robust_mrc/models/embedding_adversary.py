"""Adversarial training in the input-embedding space (train setting ``embedding_adversary``): FreeLB
(Zhu et al. 2020) and the smoothness regularisers of SMART (Jiang et al. 2020) and R3F
(Aghajanyan et al. 2021). No textual mark is added to the data, so there is none to learn.

A perturbation ``delta`` is added to the output of the backbone's input embedding module
(``backbone.get_input_embeddings()``) by a forward hook for one forward pass (:func:`perturbed`).
The model still receives ``input_ids``: what an architecture derives from them (RoBERTa's
padding-aware position ids, XLNet's tokens-first layout) stays as in the clean forward, and
``delta = 0`` gives the clean outputs exactly. ``delta`` has the embeddings' shape
``(rows, tokens, embedding size)`` and dtype and is zero on padding; norms are taken in float32 per
input row (a span window, an option row of a multiple-choice example).

The methods run around a forward closure ``run(delta) -> (task loss, [logits, ...])`` (the module's
:meth:`train_outputs` under the hook) and the training step's clean outputs:

* **freelb**: ``delta_0`` uniform in a small ball (``adv_init_mag``), then ``adv_steps`` = K
  perturbed forward passes with an ascent step between two (``adv_lr`` times the gradient
  normalised to unit Frobenius norm per row, then projected back onto ``||delta||_F <=
  adv_max_norm``). The step's loss is the mean of the K + 1 losses (the clean one, ``delta = 0``,
  and the K perturbed ones), so one backward accumulates the parameter gradients of all of them
  (the "free" part); the ascent gradients come from ``torch.autograd.grad`` on ``delta`` alone.
* **r3f**: noise N(0, s^2) or U(-s, s), no ascent; the step's loss is the task loss plus
  ``weight`` x the symmetric KL between the clean and the perturbed answer distributions.
* **smart**: the same term after ``smart_steps`` ascent steps of the noise on that KL (the
  gradient normalised to unit max-norm per row; then ``smart_project``: ``clip`` keeps each entry
  within ``+-smart_eps``, ``rescale`` scales each token's perturbation to max-norm ``smart_eps``, as
  the SMART authors' code does with eps 1 on the embeddings after their LayerNorm). SMART's
  Bregman proximal point optimisation (a momentum teacher) is left out.

The answer distributions are the option softmax (multiple choice) and the start and end softmaxes
over a window's real tokens (span); the KL is the one of :func:`robust_mrc.models.consistency.symmetric_kl`,
averaged over rows and over the distributions. Under DDP nothing here communicates: the ascent
gradients touch no parameter, and the one backward of the step's loss reaches every parameter.
Cost per step: FreeLB K more forward passes, K - 1 backward passes to the embeddings and K more
backward passes; R3F one more forward and backward; SMART that plus ``smart_steps`` forward and
embedding-backward passes (``benchmarks/train_throughput.py --embedding-adversary``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch

from robust_mrc.models.consistency import symmetric_kl

#: run(delta) -> (task loss, [logits, ...]): one forward pass with ``delta`` on the input embeddings
Run = Callable[[torch.Tensor], tuple[torch.Tensor, list[torch.Tensor]]]


@contextlib.contextmanager
def perturbed(embedding: torch.nn.Module, delta: torch.Tensor, ids: torch.Tensor) -> Iterator[None]:
    """Forward passes in this block add ``delta`` ``(rows, tokens, size)`` to the output of
    ``embedding`` for the token ids ``ids`` ``(rows, tokens)``; a model that looks up ``ids``
    transposed (XLNet: tokens first) gets ``delta`` transposed."""

    def add(_module, inputs, output):
        rows, tokens = ids.shape
        if output.shape[:2] == (rows, tokens) and (rows != tokens or torch.equal(inputs[0], ids)):
            return output + delta
        if output.shape[:2] == (tokens, rows):
            return output + delta.transpose(0, 1)
        raise RuntimeError(f"input embeddings of shape {tuple(output.shape)} for token ids of shape {tuple(ids.shape)}")

    handle = embedding.register_forward_hook(add)
    try:
        yield
    finally:
        handle.remove()


def _per_row(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return values.view(-1, *([1] * (like.dim() - 1)))


def row_norms(x: torch.Tensor, p: float = 2.0) -> torch.Tensor:
    """The ``p``-norm of each row of ``x`` (its first dimension), in float32."""
    return torch.linalg.vector_norm(x.float().flatten(1), ord=p, dim=1)


def initial_delta(shape: torch.Size, token_mask: torch.Tensor, magnitude: float, dtype: torch.dtype) -> torch.Tensor:
    """FreeLB's start: U(-m, m) / sqrt(N) per row, N = real tokens x embedding size; zero on padding."""
    real = token_mask.float().unsqueeze(-1)
    noise = (torch.rand(shape, device=token_mask.device) * 2 - 1) * magnitude * real
    dims = (real.sum((1, 2)) * shape[-1]).clamp_min(1.0)
    return (noise / _per_row(dims.sqrt(), noise)).to(dtype)


def noise_delta(shape: torch.Size, token_mask: torch.Tensor, kind: str, scale: float, dtype: torch.dtype) -> torch.Tensor:
    """SMART / R3F noise: N(0, s^2) (``normal``) or U(-s, s) (``uniform``); zero on padding."""
    device = token_mask.device
    noise = torch.randn(shape, device=device) if kind == "normal" else torch.rand(shape, device=device) * 2 - 1
    return (noise * scale * token_mask.float().unsqueeze(-1)).to(dtype)


def project_frobenius(delta: torch.Tensor, max_norm: float | None) -> torch.Tensor:
    """Rows of ``delta`` whose Frobenius norm exceeds ``max_norm`` scaled back onto the bound (a
    hair inside it, so that rounding to ``delta``'s dtype stays within); ``None``: no bound."""
    if max_norm is None:
        return delta
    target = float(max_norm) * (1.0 - torch.finfo(delta.dtype).eps)
    scale = (target / row_norms(delta).clamp_min(1e-30)).clamp(max=1.0)
    return (delta.float() * _per_row(scale, delta)).to(delta.dtype)


def ascend(delta: torch.Tensor, grad: torch.Tensor, lr: float, token_mask: torch.Tensor, p: float) -> torch.Tensor:
    """``delta + lr * grad / ||grad||_p`` per row, zero on padding (float32 arithmetic)."""
    grad = grad.float() * token_mask.float().unsqueeze(-1)
    step = grad / _per_row(row_norms(grad, p).clamp_min(1e-30), grad)
    return (delta.float() + lr * step).to(delta.dtype)


def smoothness(outputs: Sequence[torch.Tensor], clean: Sequence[torch.Tensor], masks: Sequence[torch.Tensor]) -> torch.Tensor:
    """Symmetric KL between perturbed and clean answer distributions: mean over rows, then over
    the distributions (option logits; start and end logits)."""
    terms = [symmetric_kl(a, b, m.bool()).mean() for a, b, m in zip(outputs, clean, masks)]
    return torch.stack(terms).mean()


def freelb_losses(run: Run, shape: torch.Size, token_mask: torch.Tensor, dtype: torch.dtype, s: Mapping[str, Any]) -> list[torch.Tensor]:
    """The K = ``adv_steps`` perturbed losses of FreeLB, their graphs kept for the step's backward."""
    delta = project_frobenius(initial_delta(shape, token_mask, float(s["adv_init_mag"]), dtype), s["adv_max_norm"])
    losses = []
    for step in range(int(s["adv_steps"])):
        delta.requires_grad_(True)
        loss, _ = run(delta)
        losses.append(loss)
        if step + 1 < int(s["adv_steps"]):
            (grad,) = torch.autograd.grad(loss, delta, retain_graph=True)
            delta = project_frobenius(ascend(delta.detach(), grad, float(s["adv_lr"]), token_mask, 2.0), s["adv_max_norm"])
    return losses


def smoothness_delta(
    run: Run, clean: Sequence[torch.Tensor], masks: Sequence[torch.Tensor], shape: torch.Size, token_mask: torch.Tensor, dtype, s
) -> torch.Tensor:
    """The perturbation of R3F (the noise) or SMART (the noise after its ascent steps on the KL)."""
    delta = noise_delta(shape, token_mask, s["noise"], float(s["noise_std"]), dtype)
    if s["method"] != "smart":
        return delta
    eps = float(s["smart_eps"])
    targets = [c.detach() for c in clean]
    for _ in range(int(s["smart_steps"])):
        delta.requires_grad_(True)
        _, outputs = run(delta)
        (grad,) = torch.autograd.grad(smoothness(outputs, targets, masks), delta)
        delta = ascend(delta.detach(), grad, float(s["smart_lr"]), token_mask, float("inf"))
        delta = rescale_tokens(delta, eps) if s.get("smart_project") == "rescale" else delta.clamp(-eps, eps)
    return delta


def rescale_tokens(delta: torch.Tensor, eps: float) -> torch.Tensor:
    """Each token's perturbation ``delta[row, token]`` scaled to max-norm ``eps`` (zero stays zero)."""
    peak = delta.float().abs().amax(-1, keepdim=True)
    scale = torch.where(peak > 0, eps / peak.clamp_min(1e-30), torch.zeros_like(peak))
    return (delta.float() * scale).to(delta.dtype)


def adversarial_loss(
    s: Mapping[str, Any],
    run: Run,
    loss: torch.Tensor,
    clean: Sequence[torch.Tensor],
    masks: Sequence[torch.Tensor],
    shape: torch.Size,
    token_mask: torch.Tensor,
    dtype: torch.dtype,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The step's loss from the task loss ``loss`` and clean ``clean`` logits (module doc), and
    what to log: ``train/adv_loss`` (FreeLB: the mean perturbed loss) or ``train/smooth`` (the KL)."""
    if s["method"] == "freelb":
        losses = freelb_losses(run, shape, token_mask, dtype, s)
        adv = torch.stack(losses).mean()
        return torch.stack([loss, *losses]).mean(), {"train/adv_loss": adv.detach()}
    delta = smoothness_delta(run, clean, masks, shape, token_mask, dtype, s)
    _, outputs = run(delta.detach())
    term = smoothness(outputs, clean, masks)
    return loss + float(s["weight"]) * term, {"train/smooth": term.detach()}


def graphs_per_step(s: Mapping[str, Any] | None) -> int:
    """The forward graphs a training step holds until its backward: 1 without an adversary, K + 1
    with FreeLB, 2 with SMART or R3F (what ``micro_batch_size=auto`` sizes micro-batches for)."""
    method = (s or {}).get("method")
    if method == "freelb":
        return int(s["adv_steps"]) + 1
    return 2 if method else 1


def add_embedding_adversary(module, loss: torch.Tensor, batch: Mapping[str, Any], *clean: torch.Tensor) -> torch.Tensor:
    """The training step's loss with ``module.embedding_adversary`` (the train settings' group) on;
    ``loss`` itself when it is off. ``loss``: the task loss of the clean forward whose logits are
    ``clean``; call it before adding other terms (FreeLB averages the task losses)."""
    s = getattr(module, "embedding_adversary", None)
    if not s or not s.get("method"):
        return loss
    embedding = module.backbone.get_input_embeddings()
    ids, token_mask = batch["input_ids"], batch["attention_mask"].bool()
    shape = torch.Size((*ids.shape, embedding.weight.shape[-1]))

    def run(delta: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        with perturbed(embedding, delta, ids):
            return module.train_outputs(batch)

    masks = module.distribution_masks(batch)
    total, logged = adversarial_loss(s, run, loss, clean, masks, shape, token_mask, embedding.weight.dtype)
    for name, value in logged.items():
        module.log(name, value, batch_size=len(batch["ids"]))
    return total
