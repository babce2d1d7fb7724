"""Span QA: examples -> (question, context) windows with doc stride and offset mapping.

The HF ``run_qa.py`` preprocessing, done per batch inside DataLoader workers: long contexts
become several overlapping windows (features); every window of an example is in the same batch,
so the model can pick each example's best answer within one step (the span module runs the
forward passes over a batch's windows in chunks). Training windows that do not contain the whole
answer, and every window of an unanswerable (SQuAD v2.0) question, point at the [CLS] token
(``null_index``: index 0 for BERT-style tokenizers).

A batch: the model inputs, ``start_positions`` / ``end_positions`` / ``null_index`` per window,
``feature_example`` (the example of each window), ``offsets`` -- an ``int32`` array ``(windows,
length, 2)`` of character offsets into the example's context, ``-1`` on every token that is not a
context token --, ``contexts``, ``ids``, ``answers``.

Token type ids go with every window when the model was pre-trained with segments
(:func:`~robust_mrc.datamodules.tokens.wants_token_types`: not for RoBERTa); the offsets of a
tokenizer that puts the space before a word into its token (DeBERTa-v2/v3) start after that space
(:func:`~robust_mrc.datamodules.tokens.trim_leading_spaces`), so that offsets cut the answer's
exact characters.

Contexts of at most :data:`~robust_mrc.datamodules.span_windows.LONG_CONTEXT_CHARS` characters
(every SQuAD paragraph) are tokenized by the tokenizer's own overflow (byte-identical inputs to
the HF recipe); longer ones in pieces (:mod:`robust_mrc.datamodules.span_windows`), in memory
that does not grow with the whole tokenization. ``max_windows`` (training) keeps at most that many
windows per example: those holding the answer first, then the others in order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from robust_mrc.core import settings as S
from robust_mrc.data.examples import SpanExample
from robust_mrc.datamodules.buckets import bucket_width, pad_to_width
from robust_mrc.datamodules.span_windows import (
    LONG_CONTEXT_CHARS,
    PIECE_CHARS,
    PairTemplate,
    Window,
    context_windows,
    pad_windows,
    tokenize_context,
)
from robust_mrc.datamodules.tokens import offsets_cover_spaces, space_mask, trim_leading_spaces, wants_token_types

log = logging.getLogger(__name__)

_INPUTS = ("input_ids", "token_type_ids", "attention_mask")


def approx_length(example: SpanExample) -> int:
    return len(example.question) + len(example.context)


def resolve_span_task(task_cfg: Mapping[str, Any], splits: Mapping[str, Sequence]) -> dict[str, Any]:
    """``task_cfg`` with its data-dependent settings decided from the examples of ``splits``:
    ``no_answer: auto`` -> True when a question of any split is unanswerable (SQuAD v2.0), else
    False; ``metric: auto`` (or unset) -> ``squad_v2`` in that case, else ``squad_v1``."""
    if task_cfg.get("name") != "span":
        return dict(task_cfg)
    out = S.complete_task(task_cfg)
    counts = {name: sum(ex.is_impossible for ex in examples or []) for name, examples in splits.items()}
    impossible = any(counts.values())
    decided = str(out["no_answer"]).lower() == "auto" or out.get("metric") in (None, "auto")
    if impossible and decided:  # a SQuAD v1.1 set with a few rows without answers would switch silently
        where = ", ".join(f"{n} of {len(splits[name] or [])} in {name}" for name, n in counts.items() if n)
        log.warning(
            "unanswerable questions in the data (%s): task.no_answer=auto and task.metric=auto read it as SQuAD v2.0 "
            "(a no-answer head, squad_v2 scoring); give task.no_answer=false task.metric=squad_v1 if they are mistakes",
            where,
        )
    if str(out["no_answer"]).lower() == "auto":
        out["no_answer"] = impossible
    else:
        out["no_answer"] = out["no_answer"] in (True, "true", "True")
    if out.get("metric") in (None, "auto"):
        out["metric"] = "squad_v2" if impossible else "squad_v1"
    return out


def answer_tokens(offsets: np.ndarray, start: int, end: int) -> tuple[int, int] | None:
    """First and last context token of the answer ``[start, end)`` in a window with ``offsets``
    (``-1`` off the context), or None when the window does not hold the whole answer."""
    ctx = np.flatnonzero(offsets[:, 0] >= 0)
    if not len(ctx) or not (offsets[ctx[0], 0] <= start and offsets[ctx[-1], 1] >= end):
        return None
    after = ctx[offsets[ctx, 1] > start]
    before = ctx[offsets[ctx, 0] < end]
    if not len(after) or not len(before):
        return None
    return int(after[0]), int(before[-1])


def capped_windows(feature_example: Sequence[int], has_answer: Sequence[bool], max_windows: int) -> list[int]:
    """Indices of the windows kept when each example keeps at most ``max_windows``: its windows
    holding the answer first, then the others in order; returned in window order."""
    groups: dict[int, list[int]] = {}
    for f, ex in enumerate(feature_example):
        groups.setdefault(ex, []).append(f)
    keep: list[int] = []
    for windows in groups.values():
        if len(windows) > max_windows:
            windows = sorted(([f for f in windows if has_answer[f]] + [f for f in windows if not has_answer[f]])[:max_windows])
        keep.extend(windows)
    return keep


@dataclass
class SpanCollator:
    tokenizer: object
    max_length: int = 384
    doc_stride: int = 128
    max_windows: int | None = None  # per example (training); None: every window (evaluation)
    long_context: int = LONG_CONTEXT_CHARS  # longer contexts (characters) are tokenized in pieces
    piece_chars: int = PIECE_CHARS
    pad_to_multiple_of: int | None = None  # window width rounded up to a multiple (task.pad_to_multiple_of)
    buckets: tuple[int, ...] | None = None  # window width padded to the smallest that holds it (task.length_buckets)

    def __post_init__(self) -> None:
        self.token_types = wants_token_types(self.tokenizer)
        self.trim_spaces = offsets_cover_spaces(self.tokenizer)

    @property
    def pad_right(self) -> bool:
        return self.tokenizer.padding_side == "right"

    def _overflow(self, examples: Sequence[SpanExample], **kwargs):
        """The tokenizer's own doc-stride windows (the HF recipe); question first unless the
        tokenizer pads on the left (XLNet: context first)."""
        questions = [ex.question.lstrip() for ex in examples]
        contexts = [ex.context for ex in examples]
        return self.tokenizer(
            questions if self.pad_right else contexts,
            contexts if self.pad_right else questions,
            truncation="only_second" if self.pad_right else "only_first",
            max_length=self.max_length,
            stride=self.doc_stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            return_token_type_ids=self.token_types,
            **kwargs,
        )

    def _whole(self, examples: Sequence[SpanExample]) -> tuple[dict, np.ndarray, list[int]]:
        enc = self._overflow(examples, padding=True, pad_to_multiple_of=self.pad_to_multiple_of, return_tensors="pt")
        context_index = 1 if self.pad_right else 0
        feature_example = enc.pop("overflow_to_sample_mapping").tolist()
        offsets = enc.pop("offset_mapping").numpy().astype(np.int32)
        for f in range(len(feature_example)):
            off_context = np.array([s != context_index for s in enc.sequence_ids(f)])
            offsets[f, off_context] = -1
        return {k: enc[k] for k in _INPUTS if k in enc}, offsets, feature_example

    def _short_windows(self, examples: Sequence[SpanExample], indices: Sequence[int]) -> list[Window]:
        enc = self._overflow(examples)
        context_index = 1 if self.pad_right else 0
        out = []
        for f, ex_i in enumerate(enc["overflow_to_sample_mapping"]):
            offsets = np.asarray(enc["offset_mapping"][f], dtype=np.int32).reshape(-1, 2)
            offsets[np.array([s != context_index for s in enc.sequence_ids(f)])] = -1
            types = np.asarray(enc["token_type_ids"][f]) if "token_type_ids" in enc else None
            out.append(Window(np.asarray(enc["input_ids"][f], dtype=np.int64), types, offsets, indices[ex_i]))
        return out

    def _piecewise(self, examples: Sequence[SpanExample]) -> tuple[dict, np.ndarray, list[int]]:
        """Short contexts by the tokenizer's overflow, long ones from their pieces; padded together."""
        short = [i for i, ex in enumerate(examples) if len(ex.context) <= self.long_context]
        windows = self._short_windows([examples[i] for i in short], short) if short else []
        template = PairTemplate.of(self.tokenizer)
        for i, ex in enumerate(examples):
            if len(ex.context) <= self.long_context:
                continue
            q_ids = self.tokenizer(ex.question.lstrip(), add_special_tokens=False)["input_ids"]
            c_ids, c_offsets = tokenize_context(self.tokenizer, ex.context, self.piece_chars)
            windows += context_windows(
                template,
                q_ids,
                c_ids,
                c_offsets,
                max_length=self.max_length,
                stride=self.doc_stride,
                context_first=not self.pad_right,
                example=i,
                label=ex.id,
            )
        windows.sort(key=lambda w: w.example)  # stable: each example's windows in order
        inputs, offsets = pad_windows(windows, self.tokenizer, self.pad_to_multiple_of, token_types=self.token_types)
        return inputs, offsets, [w.example for w in windows]

    def __call__(self, examples: Sequence[SpanExample]) -> dict:
        piecewise = self.tokenizer.truncation_side == "right" and any(len(ex.context) > self.long_context for ex in examples)
        inputs, offsets, feature_example = (self._piecewise if piecewise else self._whole)(examples)
        if self.buckets:
            inputs, offsets = pad_to_width(inputs, bucket_width(inputs["input_ids"].shape[-1], self.buckets), self.tokenizer, offsets)
        if self.trim_spaces:
            spaces = {i: space_mask(examples[i].context) for i in set(feature_example)}
            for f, ex_i in enumerate(feature_example):
                trim_leading_spaces(offsets[f], spaces[ex_i])
        cls = getattr(self.tokenizer, "cls_token_id", None)
        ids = inputs["input_ids"]
        null = (ids == cls).int().argmax(dim=1) if cls is not None else torch.zeros(len(ids), dtype=torch.long)
        starts, ends, has_answer = [], [], []
        for f, ex_i in enumerate(feature_example):
            answers = examples[ex_i].answers
            found = answer_tokens(offsets[f], answers[0].start, answers[0].end) if answers else None
            start_tok, end_tok = found if found else (int(null[f]), int(null[f]))
            starts.append(start_tok)
            ends.append(end_tok)
            has_answer.append(found is not None)
        if self.max_windows is not None and len(feature_example) > self.max_windows:
            keep = capped_windows(feature_example, has_answer, self.max_windows)
            if len(keep) < len(feature_example):
                rows = torch.tensor(keep, dtype=torch.long)
                inputs = {k: v[rows] for k, v in inputs.items()}
                offsets, null = offsets[keep], null[rows]
                feature_example = [feature_example[f] for f in keep]
                starts, ends = [starts[f] for f in keep], [ends[f] for f in keep]
        batch = dict(inputs)
        batch["start_positions"] = torch.tensor(starts, dtype=torch.long)
        batch["end_positions"] = torch.tensor(ends, dtype=torch.long)
        batch["null_index"] = null.long()
        batch["feature_example"] = feature_example
        batch["offsets"] = offsets
        batch["contexts"] = [ex.context for ex in examples]
        batch["ids"] = [ex.id for ex in examples]
        batch["answers"] = [ex.answer_texts for ex in examples]
        return batch
