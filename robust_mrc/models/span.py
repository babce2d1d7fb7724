"""Span-QA reader on ``AutoModelForQuestionAnswering`` with n-best post-processing and EM/F1.

Prediction runs the backbone over a batch's windows in chunks of at most :attr:`SpanQAModule.window_batch`
windows (a long context's thousands of windows never go through one forward pass) and keeps, per
chunk, only the candidates, null scores and confidences (:class:`~robust_mrc.models.span_decoding.SpanDecoder`).

SQuAD v2.0 (``task.no_answer`` true: ``train()`` / ``evaluate()`` decide ``auto`` from the data,
see :func:`robust_mrc.datamodules.span.resolve_span_task`): records carry ``null_score``; at the end
of each validation the threshold is tuned on the clean validation set
(:func:`robust_mrc.metrics.no_answer.tune_threshold`), logged as ``val/no_answer_threshold``,
kept in :attr:`SpanQAModule.no_answer_threshold` (and in the checkpoint) and applied to every set
(``val/f1`` is the F1 at that threshold; ``HasAns_*`` / ``NoAns_*`` figures are logged too).
"""

from __future__ import annotations

import math

import torch

from robust_mrc.models.base import QAModule
from robust_mrc.models.consistency import add_consistency
from robust_mrc.models.embedding_adversary import add_embedding_adversary
from robust_mrc.models.span_decoding import SpanDecoder, apply_no_answer, merge_span_records, no_answer_decision


def span_loss(out, batch: dict) -> torch.Tensor:
    """The mean of the start and end cross-entropies over each window's real tokens: padding is
    left out of the softmax (Hugging Face's head loss counts it), so a window's loss does not depend
    on how far its batch is padded (length buckets, the longest window beside it)."""
    pad = ~batch["attention_mask"].bool()
    losses = []
    for logits, key in ((out.start_logits, "start_positions"), (out.end_logits, "end_positions")):
        logits = logits.float().masked_fill(pad, torch.finfo(torch.float32).min)
        ignored = logits.shape[-1]  # a position beyond the window counts nothing (as Hugging Face's loss)
        losses.append(torch.nn.functional.cross_entropy(logits, batch[key].clamp(0, ignored), ignore_index=ignored))
    return (losses[0] + losses[1]) / 2


class SpanQAModule(QAModule):
    task = "span"
    monitor = "val/f1"
    #: records carry ``nbest``: ``[[text, score], ...]`` best first (model-in-the-loop attacks)
    keep_nbest: bool = False
    #: null score - span score above which the answer is "" (no-answer on; tuned on validation)
    no_answer_threshold: float | None = None

    def forward(self, batch: dict):
        return self.backbone(**self.backbone_inputs(batch))

    def training_step(self, batch, batch_idx):
        out = self.backbone(**self.backbone_inputs(batch))
        loss = add_embedding_adversary(self, span_loss(out, batch), batch, out.start_logits, out.end_logits)  # FreeLB, SMART, R3F
        loss = add_consistency(self, loss, batch, out.start_logits, out.end_logits)  # attack.consistency
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["ids"]))
        return loss

    def train_outputs(self, batch: dict) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The task loss and the start and end logits: one forward pass of the embedding adversary."""
        out = self.backbone(**self.backbone_inputs(batch))
        return span_loss(out, batch), [out.start_logits, out.end_logits]

    def distribution_masks(self, batch: dict) -> list[torch.Tensor]:
        """Where :meth:`train_outputs`' start and end logits hold a distribution: a window's real tokens."""
        mask = batch["attention_mask"].bool()
        return [mask, mask]

    @property
    def n_best(self) -> int:
        return int(self.task_cfg["n_best"])

    @property
    def no_answer(self) -> bool:
        """Whether the reader may answer "no answer" (``task.no_answer`` resolved to true)."""
        return self.task_cfg.get("no_answer") is True

    @property
    def metric(self) -> str:
        metric = self.task_cfg.get("metric") or "squad"
        return "squad_v2" if metric == "auto" and self.no_answer else ("squad" if metric == "auto" else metric)

    def predict_records(self, batch: dict) -> dict[str, dict]:
        decoder = SpanDecoder(batch, self.n_best, int(self.task_cfg["max_answer_length"]))
        inputs = self.backbone_inputs(batch)
        n = int(inputs["input_ids"].shape[0])
        step = max(1, int(self.window_batch))
        for first in range(0, n, step):
            out = self.backbone(**{k: v[first : first + step] for k, v in inputs.items()})
            decoder.add(first, out.start_logits, out.end_logits)
            del out
        cands = decoder.candidates()
        nulls = decoder.null_scores() if self.no_answer else {}
        records = {}
        for ex_id, golds in zip(batch["ids"], batch["answers"]):
            text, score, f = cands[ex_id][0] if cands.get(ex_id) else ("", float("-inf"), -1)
            # confidence (Wu et al. 2021) of the window the answer came from
            conf = float(decoder.confidence[f]) if f >= 0 else 0.0
            records[ex_id] = {"pred": text, "score": score, "golds": golds, "confidence": round(conf, 6)}
            if self.no_answer:
                records[ex_id]["null_score"] = nulls.get(ex_id, math.inf)
            if self.keep_nbest:
                records[ex_id]["nbest"] = [[t, s] for t, s, _ in cands.get(ex_id, [])]
        return records

    def merge_records(self, into: dict[str, dict], new: dict[str, dict]) -> dict[str, dict]:
        return merge_span_records(into, new, self.n_best)

    def tune_no_answer(self, records: dict[str, dict]) -> float:
        """Set :attr:`no_answer_threshold` to the one maximising F1 on ``records`` (raw records of
        a validation set) and return it."""
        from robust_mrc.metrics.no_answer import tune_threshold

        raw = {k: r for k, r in records.items() if "null_score" in r}
        spans = {k: r.get("span_pred", r["pred"]) for k, r in raw.items()}
        diffs = {k: r["null_score"] - r["score"] for k, r in raw.items()}
        self.no_answer_threshold, _ = tune_threshold(spans, diffs, {k: r["golds"] for k, r in raw.items()}, self.metric)
        return self.no_answer_threshold

    def final_records(self, stage: str, name: str, records: dict[str, dict]) -> dict[str, dict]:
        """No-answer on: the clean validation set tunes the threshold; every set gets its answers
        decided by it (``pred`` "" or the span, the span kept as ``span_pred``)."""
        if not self.no_answer:
            return records
        if stage == "val" and name == "clean":
            self.tune_no_answer(records)
            self.log("val/no_answer_threshold", float(self.no_answer_threshold), sync_dist=False, add_dataloader_idx=False)
        return apply_no_answer(records, self.no_answer_threshold)

    def metrics_of(self, records: dict[str, dict]) -> dict[str, float]:
        from robust_mrc.metrics import get_span_metric
        from robust_mrc.metrics.no_answer import has_ans_no_ans

        threshold = self.no_answer_threshold if self.no_answer else None
        preds = {k: no_answer_decision(r, threshold) if self.no_answer else r["pred"] for k, r in records.items()}
        golds = {k: r["golds"] for k, r in records.items()}
        result = get_span_metric(self.metric)(preds, golds)
        metrics = {"em": float(result["exact_match"]), "f1": float(result["f1"])}
        if self.no_answer:
            metrics.update(has_ans_no_ans(preds, golds, self.metric))
        return metrics

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        if self.no_answer_threshold is not None:
            checkpoint["no_answer_threshold"] = float(self.no_answer_threshold)

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        if checkpoint.get("no_answer_threshold") is not None:
            self.no_answer_threshold = float(checkpoint["no_answer_threshold"])
