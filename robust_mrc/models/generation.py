"""Distractor generator (task ``dg``) on an encoder-decoder: passage + question + answer -> one wrong option.

The generator of the DG attack of Si et al. 2021 (AdvRACE), section 3.2 (UniLM in the paper, here any
``AutoModelForSeq2SeqLM`` or BERT2BERT from an encoder: :mod:`robust_mrc.models.seq2seq`).

* Training: teacher-forced cross-entropy over the target tokens of every (example, wrong option)
  pair of the batch (:class:`~robust_mrc.datamodules.generation.DGCollator`), averaged over target
  tokens; the encoder runs once per example and its states are repeated for the example's pairs.
* Validation / test records, per example: the summed target loss and its token count
  (``val/loss``: the token mean over the set; the monitor, minimised), and with
  ``task.val_generate`` a greedy generation: ``val/f1``, the token F1 (SQuAD-style, over
  normalised words, x100) of the generation against the closest of the example's wrong options, and
  ``val/answer_rate``, the % of generations equal to the correct answer (normalised), and
  ``val/distinct``, the % of distinct generations (normalised) among the set's: a generator that
  ignores its input says the same few things to every question (a collapse; ~100 when it conditions).
* A bank: :meth:`GenerationModule.generate_beams` (beam search, every beam returned, best first).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from transformers.modeling_outputs import BaseModelOutput

from robust_mrc.data.text import normalize
from robust_mrc.datamodules.generation import IGNORE
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.base import QAModule


def token_f1(prediction: str, reference: str) -> float:
    """F1 of the normalised words of ``prediction`` against ``reference`` (0 when either is empty)."""
    pred, ref = normalize(prediction).split(), normalize(reference).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    if not common:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


class GenerationModule(QAModule):
    task = "dg"
    monitor = "val/loss"

    def __init__(
        self,
        model_cfg: Mapping[str, Any],
        task_cfg: Mapping[str, Any],
        pretrained_weights: bool = True,
        window_batch: int = 32,
        require_head: bool = False,
    ):
        super().__init__(model_cfg, task_cfg, pretrained_weights, window_batch, require_head)
        self.tokenizer = load_tokenizer(self.model_cfg)

    # -- training -------------------------------------------------------------------------
    def target_losses(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """Per target row: the summed token cross-entropy and the number of target tokens."""
        model = self.backbone
        encoded = model.get_encoder()(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], return_dict=True)
        src, labels = batch["pair_source"], batch["labels"]
        out = model(
            encoder_outputs=BaseModelOutput(last_hidden_state=encoded.last_hidden_state[src]),
            attention_mask=batch["attention_mask"][src],
            decoder_input_ids=model.prepare_decoder_input_ids_from_labels(labels=labels),
        )
        losses = F.cross_entropy(out.logits.float().transpose(1, 2), labels, ignore_index=IGNORE, reduction="none")
        return losses.sum(-1), (labels != IGNORE).sum(-1)

    def training_step(self, batch, batch_idx):
        if "labels" not in batch:  # no example of the batch has a usable wrong option: skip the step
            return None
        sums, counts = self.target_losses(batch)
        loss = sums.sum() / counts.sum().clamp(min=1)
        self.log("train/loss", loss, prog_bar=True, batch_size=int(counts.numel()))
        return loss

    # -- generation -----------------------------------------------------------------------
    def generate_beams(
        self,
        batch: dict,
        num_beams: int,
        *,
        max_new_tokens: int | None = None,
        no_repeat_ngram_size: int | None = None,
        num_return: int | None = None,
    ) -> list[list[str]]:
        """Beam search from each source row of ``batch``: per example its ``num_return`` (default:
        all ``num_beams``) decoded beams, best first. ``max_new_tokens`` and
        ``no_repeat_ngram_size`` default to the task's (20 and 1: the paper's setting)."""
        if not batch["ids"]:
            return []
        k = int(num_beams)
        ret = k if num_return is None else int(num_return)
        with torch.no_grad():
            out = self.backbone.generate(
                input_ids=batch["input_ids"].to(self.device),
                attention_mask=batch["attention_mask"].to(self.device),
                num_beams=k,
                num_return_sequences=ret,
                do_sample=False,
                max_new_tokens=int(max_new_tokens or self.task_cfg["max_new_tokens"]),
                no_repeat_ngram_size=int(self.task_cfg["no_repeat_ngram_size"] if no_repeat_ngram_size is None else no_repeat_ngram_size),
            )
        texts = [t.strip() for t in self.tokenizer.batch_decode(out, skip_special_tokens=True, clean_up_tokenization_spaces=True)]
        return [texts[i * ret : (i + 1) * ret] for i in range(len(batch["ids"]))]

    # -- evaluation -----------------------------------------------------------------------
    def predict_records(self, batch: dict) -> dict[str, dict]:
        records = {ex_id: {"answer": a, "references": list(r)} for ex_id, a, r in zip(batch["ids"], batch["answers"], batch["references"])}
        if not records:
            return records
        if "labels" in batch:
            sums, counts = self.target_losses(batch)
            n = len(batch["ids"])
            loss = torch.zeros(n, device=sums.device).index_add_(0, batch["pair_source"].to(sums.device), sums.detach())
            tokens = torch.zeros(n, dtype=torch.long, device=sums.device).index_add_(0, batch["pair_source"].to(sums.device), counts)
            for ex_id, l_, t_ in zip(batch["ids"], loss.tolist(), tokens.tolist()):
                records[ex_id].update(loss_sum=round(l_, 6), tokens=int(t_))
        if self.task_cfg["val_generate"]:
            for ex_id, (pred,) in zip(batch["ids"], self.generate_beams(batch, 1)):
                records[ex_id]["pred"] = pred
        return records

    def metrics_of(self, records: dict[str, dict]) -> dict[str, float]:
        scored = [r for r in records.values() if r.get("tokens")]
        metrics = {}
        if scored:
            metrics["loss"] = sum(r["loss_sum"] for r in scored) / sum(r["tokens"] for r in scored)
        generated = [r for r in records.values() if "pred" in r]
        if generated:
            f1 = [max((token_f1(r["pred"], ref) for ref in r["references"]), default=0.0) for r in generated]
            metrics["f1"] = 100.0 * sum(f1) / len(f1)
            same = [normalize(r["pred"]) == normalize(r["answer"]) for r in generated]
            metrics["answer_rate"] = 100.0 * sum(same) / len(same)
            metrics["distinct"] = 100.0 * len({normalize(r["pred"]) for r in generated}) / len(generated)
        return metrics
