"""The effective batch: ``batch_size`` examples per optimizer step, all processes together, as papers
state it. Each process runs micro-batches of ``micro_batch_size`` examples, and gradient
accumulation makes up the rest:

    batch_size = micro_batch_size x accumulation x processes

``micro_batch_size: null`` takes ``batch_size / processes`` (no accumulation); ``auto`` the largest
divisor of it whose worst-case micro-batch (every row at ``task.max_length``) runs forward and
backward on the GPU without running out of memory, probed once per model, task, length, precision
and device and cached (:func:`probe_micro_batch`; on the CPU ``auto`` is ``batch_size /
processes``). Lightning divides the loss of each micro-batch by the accumulation and counts the
learning-rate schedule in optimizer steps, so loss and schedule are those of the effective batch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robust_mrc.core.errors import ConfigError

log = logging.getLogger(__name__)

AUTO = "auto"


@dataclass(frozen=True)
class BatchPlan:
    """How ``batch_size`` examples per optimizer step are run."""

    batch_size: int
    micro_batch_size: int
    processes: int
    accumulation: int

    def describe(self) -> str:
        return (
            f"batch_size={self.batch_size} examples per optimizer step = micro_batch_size {self.micro_batch_size} "
            f"x {self.accumulation} accumulated x {self.processes} process(es)"
        )


def divisors_descending(n: int) -> list[int]:
    return [d for d in range(n, 0, -1) if n % d == 0]


def plan_batches(batch_size: int, micro: Any, processes: int, fits: Callable[[int], bool] | None = None) -> BatchPlan:
    """The :class:`BatchPlan` of ``batch_size`` over ``processes`` with micro-batches ``micro``
    (an int, ``None``: no accumulation, or ``"auto"``: the largest divisor for which ``fits(m)``;
    without ``fits``, as ``None``). A :class:`ConfigError` when the numbers do not divide."""
    batch_size, processes = int(batch_size), int(processes)
    if batch_size % processes:
        raise ConfigError(
            f"batch_size={batch_size} (examples per optimizer step, all processes together) is not a multiple of the "
            f"{processes} training processes: use a multiple of {processes}"
        )
    per_process = batch_size // processes
    if micro is None or (micro == AUTO and fits is None):
        size = per_process
    elif micro == AUTO:
        size = next((m for m in divisors_descending(per_process) if fits(m)), 0)
        if not size:
            raise ConfigError(
                "micro_batch_size=auto: not even one example at task.max_length fits on the device; "
                "shorten task.max_length or use a device with more memory"
            )
    else:
        size = int(micro)
        if size > per_process or per_process % size:
            raise ConfigError(
                f"micro_batch_size={size} must divide batch_size / processes = {batch_size} / {processes} = {per_process} "
                f"(one of {', '.join(map(str, divisors_descending(per_process)))})"
            )
    return BatchPlan(batch_size, size, processes, per_process // size)


# --------------------------------------------------------------------------- the GPU probe
def _cache_path(key: str) -> Path | None:
    from robust_mrc.core.files import cache_root

    return cache_root() / "micro_batch" / f"{key}.json"


def probe_micro_batch(module, task_cfg: Mapping[str, Any], per_process: int, precision: str, max_options: int = 4) -> Callable[[int], bool]:
    """``fits(m)``: whether a worst-case micro-batch of ``m`` examples runs forward and backward on
    the current GPU under ``precision`` without running out of memory (answers cached on disk by
    model, task, length, precision and device). Multiple choice: ``max_options`` rows of
    ``task.max_length`` tokens per example; span: two windows per example; times the forward
    graphs an embedding adversary keeps for the step's backward."""
    import torch

    from robust_mrc.core.digests import fingerprint
    from robust_mrc.models.embedding_adversary import graphs_per_step

    copies = graphs_per_step(getattr(module, "embedding_adversary", None))

    device = torch.device("cuda", torch.cuda.current_device())
    props = torch.cuda.get_device_properties(device)
    model_cfg = dict(module.model_cfg)
    key = fingerprint(
        "micro_batch",
        model_cfg.get("pretrained"),
        model_cfg.get("config"),
        task_cfg["name"],
        int(task_cfg["max_length"]),
        max_options,
        *((f"graphs={copies}",) if copies > 1 else ()),
        str(precision),
        props.name,
        props.total_memory,
    )
    path = _cache_path(key)
    known: dict[str, bool] = {}
    if path is not None and path.is_file():
        try:
            known = {k: bool(v) for k, v in json.loads(path.read_text()).items()}
        except (OSError, ValueError):
            known = {}
    autocast = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(str(precision))

    def run(m: int) -> bool:
        backbone = module.backbone.to(device)
        length = int(task_cfg["max_length"])
        vocab = int(getattr(backbone.config, "vocab_size", 1000))
        rows = m * (max_options if task_cfg["name"] == "mc" else 2) * copies
        ids = torch.randint(5, vocab, (rows, length), device=device)
        mask = torch.ones_like(ids)
        try:
            with torch.autocast("cuda", dtype=autocast, enabled=autocast is not None):
                if task_cfg["name"] == "mc":
                    out = backbone(input_ids=ids.view(-1, max_options, length), attention_mask=mask.view(-1, max_options, length))
                    loss = out.logits.float().logsumexp(-1).mean()
                else:
                    out = backbone(input_ids=ids, attention_mask=mask)
                    loss = out.start_logits.float().mean() + out.end_logits.float().mean()
            loss.backward()
            return True
        except torch.cuda.OutOfMemoryError:
            return False
        finally:
            backbone.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()

    def fits(m: int) -> bool:
        if str(m) not in known:
            known[str(m)] = run(m)
            log.info("micro_batch_size=auto: %d example(s) %s on %s", m, "fit" if known[str(m)] else "do not fit", props.name)
            if path is not None:
                from robust_mrc.data.writers import atomic_write_text

                try:
                    atomic_write_text(path, json.dumps(known))
                except OSError:
                    pass
        return known[str(m)]

    return fits
