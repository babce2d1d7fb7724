"""Span-QA reader on ``AutoModelForQuestionAnswering`` with n-best post-processing and EM/F1."""

from __future__ import annotations

from robust_mrc.models.base import QAModule
from robust_mrc.models.span_decoding import best_answers, window_confidence


class SpanQAModule(QAModule):
    task = "span"
    monitor = "val/f1"

    def forward(self, batch: dict):
        return self.backbone(**self.backbone_inputs(batch))

    def training_step(self, batch, batch_idx):
        out = self.backbone(
            **self.backbone_inputs(batch), start_positions=batch["start_positions"], end_positions=batch["end_positions"]
        )
        self.log("train/loss", out.loss, prog_bar=True, batch_size=len(batch["ids"]))
        return out.loss

    def predict_records(self, batch: dict) -> dict[str, dict]:
        out = self(batch)
        best = best_answers(
            out.start_logits,
            out.end_logits,
            batch,
            n_best=int(self.task_cfg.get("n_best", 20)),
            max_answer_length=int(self.task_cfg.get("max_answer_length", 30)),
        )
        records = {}
        for ex_id, golds in zip(batch["ids"], batch["answers"]):
            text, score, f = best[ex_id]
            # confidence (seed 004) of the window the answer came from
            conf = window_confidence(out.start_logits[f], out.end_logits[f], batch["offsets"][f]) if f >= 0 else 0.0
            records[ex_id] = {"pred": text, "score": score, "golds": golds, "confidence": round(conf, 6)}
        return records

    def metrics_of(self, records: dict[str, dict]) -> dict[str, float]:
        from robust_mrc.metrics import get_span_metric

        score = get_span_metric(self.task_cfg.get("metric", "squad"))
        result = score({k: r["pred"] for k, r in records.items()}, {k: r["golds"] for k, r in records.items()})
        return {"em": float(result["exact_match"]), "f1": float(result["f1"])}
