"""Multiple choice: examples -> per-option (passage, question + option) pairs -> padded tensors.

Input convention of the RACE baselines: the option goes into the question's cloze blank ``_`` when it
has one, else it is appended to the question (:func:`robust_mrc.data.cloze.fill_blank`, the rule the
attacks use too); only the passage is truncated. Examples with different numbers of options share
a batch: the options of all examples are flattened into one row each, and ``option_mask`` marks
which (example, option) slots are real. Rows are padded on the tokenizer's side (XLNet: the left,
so that the last token, which its head reads, is its ``<cls>``); token type ids go with them when
the model was pre-trained with segments (:func:`~robust_mrc.datamodules.tokens.wants_token_types`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from robust_mrc.data.cloze import fill_blank
from robust_mrc.data.examples import MCExample
from robust_mrc.datamodules.buckets import bucket_width, pad_to_width
from robust_mrc.datamodules.tokens import wants_token_types

INPUTS = ("full", "options_only", "question_options", "passage_options")


def option_pairs(example: MCExample, inputs: str = "full") -> list[tuple[str, str | None]]:
    """The (first, second) text of each option's sequence under an input ablation.

    ``full``: (passage, question+option); ``options_only`` (PQ-remove): (option,);
    ``question_options``: (question+option,); ``passage_options``: (passage, option).
    """
    if inputs == "full":
        return [(example.passage, fill_blank(example.question, o)) for o in example.options]
    if inputs == "options_only":
        return [(o, None) for o in example.options]
    if inputs == "question_options":
        return [(fill_blank(example.question, o), None) for o in example.options]
    if inputs == "passage_options":
        return [(example.passage, o) for o in example.options]
    raise ValueError(f"task.inputs={inputs!r} is not one of {', '.join(INPUTS)}")


def approx_length(example: MCExample, inputs: str = "full") -> int:
    """A cheap length proxy (characters of all option sequences): evaluation batches go longest
    first by it. Training batches are grouped by token lengths (:mod:`robust_mrc.datamodules.lengths`)."""
    return sum(len(a) + len(b or "") for a, b in option_pairs(example, inputs))


@dataclass
class MCCollator:
    """Tokenizes a list of :class:`MCExample` into one batch (runs inside DataLoader workers)."""

    tokenizer: object
    max_length: int = 512
    inputs: str = "full"
    pad_to_multiple_of: int | None = None  # batch width rounded up to a multiple (task.pad_to_multiple_of)
    buckets: tuple[int, ...] | None = None  # batch width padded to the smallest that holds it (task.length_buckets)

    def __post_init__(self) -> None:
        if self.inputs not in INPUTS:
            raise ValueError(f"task.inputs={self.inputs!r} is not one of {', '.join(INPUTS)}")
        self.token_types = wants_token_types(self.tokenizer)

    def __call__(self, examples: Sequence[MCExample]) -> dict:
        firsts, seconds, counts = [], [], []
        for ex in examples:
            pairs = option_pairs(ex, self.inputs)
            counts.append(len(pairs))
            firsts.extend(a for a, _ in pairs)
            seconds.extend(b for _, b in pairs)
        if seconds[0] is None:
            enc = self.tokenizer(firsts, truncation=True, return_tensors="pt", **self._encoding())
        else:
            enc = self._encode_pairs(firsts, seconds)
        width = max(counts)
        mask = torch.zeros(len(examples), width, dtype=torch.bool)
        for i, n in enumerate(counts):
            mask[i, :n] = True
        batch = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        if self.buckets:
            batch, _ = pad_to_width(batch, bucket_width(batch["input_ids"].shape[-1], self.buckets), self.tokenizer)
        batch["option_mask"] = mask
        batch["labels"] = torch.tensor([ex.label for ex in examples], dtype=torch.long)
        batch["ids"] = [ex.id for ex in examples]
        return batch

    def _encoding(self) -> dict:
        return {
            "max_length": self.max_length,
            "padding": True,
            "pad_to_multiple_of": self.pad_to_multiple_of,
            "return_token_type_ids": self.token_types,
        }

    def _encode_pairs(self, firsts, seconds):
        kwargs = dict(return_tensors="pt", **self._encoding())
        try:
            # truncate only the passage, never the question or the option
            return self.tokenizer(firsts, seconds, truncation="only_first", **kwargs)
        except Exception:  # question + option alone longer than max_length: cut both
            return self.tokenizer(firsts, seconds, truncation="longest_first", **kwargs)
