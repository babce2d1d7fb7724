"""A loaded checkpoint as a :class:`~robust_mrc.attacks.search.Scorer`: predictions of many
candidate examples, batched, for the model-in-the-loop attacks.

Span QA: each example's n-best answers (the ``task.n_best`` best spans over its windows) with
probabilities from a softmax over their scores (start + end logits), the distribution Jia & Liang's
AddAny minimises the expected F1 of; with no-answer on, ``""`` joins them with the score ``null score -
threshold``. Multiple choice: the option probabilities. The examples are
collated as for evaluation, ``batch_size`` examples per batch (a span module runs its windows through
the backbone in chunks of its ``window_batch``), in ``torch.inference_mode``.

``precision="bf16"`` runs the forward passes under ``torch.autocast`` in bfloat16: on a CPU with
AVX512-BF16 (this project's 2-core machine) ~1.8x the queries per second of float32
(``benchmarks/attack_throughput.py``), at the cost of scores rounded to bfloat16; the search then
chooses against that approximation, and the chosen set is evaluated in float32 as always. The
scorer's ``key`` (the cache key of searched sets) names the precision.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence

import torch

from robust_mrc.attacks.search import Prediction
from robust_mrc.datamodules.qa import make_collator


def softmax_nbest(nbest: Sequence[Sequence]) -> tuple[tuple[str, float], ...]:
    """``((text, probability), ...)`` from ``[[text, score], ...]`` (best first)."""
    if not nbest:
        return ()
    top = max(float(s) for _, s in nbest)
    weights = [math.exp(float(s) - top) for _, s in nbest]
    total = sum(weights)
    return tuple((str(t), w / total) for (t, _), w in zip(nbest, weights))


SEARCH_PRECISIONS = ("32", "bf16")  # the forward passes of the model-in-the-loop searches: float32 | bf16 autocast


class ModelScorer:
    """Predictions of ``module`` (a span or multiple-choice module in eval mode).

    ``key`` identifies the model for caches (e.g. the checkpoint's fingerprint); ``precision``
    "32" (default) or "bf16" (autocast, see the module doc)."""

    PRECISIONS = SEARCH_PRECISIONS

    def __init__(self, module, tokenizer, key: str, batch_size: int = 32, precision: str | int = "32"):
        precision = str(precision)
        if precision not in self.PRECISIONS:
            raise ValueError(f"precision={precision!r}: expected one of {', '.join(self.PRECISIONS)} (the search's forward passes)")
        self.module = module.eval()
        self.precision = precision
        self.key = key if precision == "32" else f"{key}|{precision}"
        self.batch_size = int(batch_size)
        self.collator = make_collator(module.task_cfg, tokenizer)
        if module.task == "span":
            module.keep_nbest = True

    def predict(self, examples: Sequence) -> list[Prediction]:
        out: list[Prediction] = []
        with torch.inference_mode(), self._autocast():
            for start in range(0, len(examples), self.batch_size):
                # candidates of one example share its id: score them under positional ids
                chunk = [ex.replace(id=f"#{j}") for j, ex in enumerate(examples[start : start + self.batch_size])]
                batch = {k: v.to(self.module.device) if isinstance(v, torch.Tensor) else v for k, v in self.collator(chunk).items()}
                records = self.module.predict_records(batch)
                out.extend(self._prediction(records[ex.id]) for ex in chunk)
        return out

    def _autocast(self):
        if self.precision == "bf16":
            return torch.autocast(self.module.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _prediction(self, record: dict) -> Prediction:
        if "probs" in record:
            return Prediction(probs=tuple(float(p) for p in record["probs"]))
        nbest = list(record.get("nbest") or [])
        if "null_score" in record and math.isfinite(record["null_score"]):
            # no-answer on: "" scores null - threshold, so it ranks first exactly when the
            # module's rule answers "" (null - best span > threshold)
            threshold = self.module.no_answer_threshold or 0.0
            nbest = sorted(nbest + [["", record["null_score"] - threshold]], key=lambda c: -c[1])[: self.module.n_best]
        return Prediction(nbest=softmax_nbest(nbest))
