"""Span QA: examples -> (question, context) windows with doc stride and offset mapping.

The HF ``run_qa.py`` preprocessing, done per batch inside DataLoader workers: long contexts
become several overlapping windows (features); every window of an example is in the same batch,
so the model can pick each example's best answer within one step. Training windows that do not
contain the whole answer point at the [CLS] token (index 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from robust_mrc.data.examples import SpanExample


def approx_length(example: SpanExample) -> int:
    return len(example.question) + len(example.context)


@dataclass
class SpanCollator:
    tokenizer: object
    max_length: int = 384
    doc_stride: int = 128

    def __call__(self, examples: Sequence[SpanExample]) -> dict:
        pad_right = self.tokenizer.padding_side == "right"
        questions = [ex.question.lstrip() for ex in examples]
        contexts = [ex.context for ex in examples]
        enc = self.tokenizer(
            questions if pad_right else contexts,
            contexts if pad_right else questions,
            truncation="only_second" if pad_right else "only_first",
            max_length=self.max_length,
            stride=self.doc_stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )
        context_index = 1 if pad_right else 0
        feature_example = enc.pop("overflow_to_sample_mapping").tolist()
        offsets_all = enc.pop("offset_mapping").tolist()
        starts, ends, offsets = [], [], []
        for f, ex_i in enumerate(feature_example):
            seq_ids = enc.sequence_ids(f)
            # offsets of context tokens only; None elsewhere (never predicted)
            offs = [tuple(o) if s == context_index else None for o, s in zip(offsets_all[f], seq_ids)]
            offsets.append(offs)
            start_tok = end_tok = 0
            answers = examples[ex_i].answers
            if answers:
                a = answers[0]
                ctx_tokens = [i for i, o in enumerate(offs) if o is not None]
                if ctx_tokens and offs[ctx_tokens[0]][0] <= a.start and offs[ctx_tokens[-1]][1] >= a.end:
                    start_tok = next(i for i in ctx_tokens if offs[i][1] > a.start)
                    end_tok = next(i for i in reversed(ctx_tokens) if offs[i][0] < a.end)
            starts.append(start_tok)
            ends.append(end_tok)
        batch = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        batch["start_positions"] = torch.tensor(starts, dtype=torch.long)
        batch["end_positions"] = torch.tensor(ends, dtype=torch.long)
        batch["feature_example"] = feature_example
        batch["offsets"] = offsets
        batch["contexts"] = contexts
        batch["ids"] = [ex.id for ex in examples]
        batch["answers"] = [ex.answer_texts for ex in examples]
        return batch
