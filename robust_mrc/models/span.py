"""Span-QA reader on ``AutoModelForQuestionAnswering`` with n-best post-processing and EM/F1."""

from __future__ import annotations

from robust_mrc.models.base import QAModule
from robust_mrc.models.span_decoding import merge_span_records, span_candidates, window_confidence


class SpanQAModule(QAModule):
    task = "span"
    monitor = "val/f1"
    #: records carry ``nbest``: ``[[text, score], ...]`` best first (model-in-the-loop attacks)
    keep_nbest: bool = False

    def forward(self, batch: dict):
        return self.backbone(**self.backbone_inputs(batch))

    def training_step(self, batch, batch_idx):
        out = self.backbone(
            **self.backbone_inputs(batch), start_positions=batch["start_positions"], end_positions=batch["end_positions"]
        )
        self.log("train/loss", out.loss, prog_bar=True, batch_size=len(batch["ids"]))
        return out.loss

    @property
    def n_best(self) -> int:
        return int(self.task_cfg.get("n_best", 20))

    def predict_records(self, batch: dict) -> dict[str, dict]:
        out = self(batch)
        cands = span_candidates(
            out.start_logits, out.end_logits, batch, n_best=self.n_best,
            max_answer_length=int(self.task_cfg.get("max_answer_length", 30)),
        )
        records = {}
        for ex_id, golds in zip(batch["ids"], batch["answers"]):
            text, score, f = cands[ex_id][0] if cands.get(ex_id) else ("", float("-inf"), -1)
            # confidence (seed 004) of the window the answer came from
            conf = window_confidence(out.start_logits[f], out.end_logits[f], batch["offsets"][f]) if f >= 0 else 0.0
            records[ex_id] = {"pred": text, "score": score, "golds": golds, "confidence": round(conf, 6)}
            if self.keep_nbest:
                records[ex_id]["nbest"] = [[t, s] for t, s, _ in cands.get(ex_id, [])]
        return records

    def merge_records(self, into: dict[str, dict], new: dict[str, dict]) -> dict[str, dict]:
        return merge_span_records(into, new, self.n_best)

    def metrics_of(self, records: dict[str, dict]) -> dict[str, float]:
        from robust_mrc.metrics import get_span_metric

        score = get_span_metric(self.task_cfg.get("metric", "squad"))
        result = score({k: r["pred"] for k, r in records.items()}, {k: r["golds"] for k, r in records.items()})
        return {"em": float(result["exact_match"]), "f1": float(result["f1"])}
