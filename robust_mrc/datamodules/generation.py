"""Distractor generation (task ``dg``): multiple-choice examples -> (source, target) pairs -> tensors.

The task reads multiple-choice data (its examples are :class:`~robust_mrc.data.examples.MCExample`)
and learns what the generator of Si et al. 2021 (AdvRACE), section 3.2, learns: from a passage, a
question and its correct answer, one wrong option.

* Source (one row per example): ``question <sep> answer`` as the first sequence, the passage as the
  second; only the passage is truncated to ``max_length``.
* Targets (one row per pair): each wrong option of the example, never the correct one; a wrong
  option that is empty or equal to the answer after normalisation is skipped. ``pair_source`` maps
  each target row to its source row: the encoder reads each passage once per batch, however many
  wrong options it has.
* A target is the tokenizer's encoding of the option with its end token, without a leading start
  token ([CLS] / <s>): the decoder starts from ``decoder_start_token_id`` itself. At most
  ``max_target_length`` tokens (end token included).

With ``targets=False`` (generation) every example gets a source row and there are no targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import normalize

#: the data a ``dg`` task reads: multiple-choice sets
DATA_TASK = "mc"
IGNORE = -100  # label of padded target positions (no loss)


def separator(tokenizer) -> str:
    """The token written between question and answer: the tokenizer's separator, else its end token."""
    return tokenizer.sep_token or tokenizer.eos_token or "|"


def source_pair(example: MCExample, sep: str) -> tuple[str, str]:
    """``(question <sep> answer, passage)``: what the encoder reads."""
    return f"{example.question.strip()} {sep} {example.answer.strip()}", example.passage


def wrong_options(example: MCExample) -> list[str]:
    """The training targets of ``example``: its wrong options that differ from the answer (normalised)
    and are not empty, in option order."""
    answer = normalize(example.answer)
    return [o for i, o in enumerate(example.options) if i != example.label and normalize(o) and normalize(o) != answer]


def approx_length(example: MCExample) -> int:
    """Characters of the source: evaluation batches go longest first by it."""
    return len(example.question) + len(example.answer) + len(example.passage)


@dataclass
class DGCollator:
    """Tokenizes a list of :class:`MCExample` into one batch (runs inside DataLoader workers).

    Batch keys: ``input_ids``, ``attention_mask`` (source rows), ``ids``, ``answers`` and
    ``references`` (the wrong options) per source row; with targets also ``labels`` (target rows,
    :data:`IGNORE` where padded) and ``pair_source`` (the source row of each target row). With
    targets, an example without any usable wrong option gets no row at all."""

    tokenizer: object
    max_length: int = 512
    max_target_length: int = 24
    targets: bool = True
    pad_to_multiple_of: int | None = None  # source width rounded up to a multiple (task.pad_to_multiple_of)

    def __call__(self, examples: Sequence[MCExample]) -> dict:
        refs = [wrong_options(ex) for ex in examples]
        if self.targets:
            kept = [i for i, r in enumerate(refs) if r]
            examples, refs = [examples[i] for i in kept], [refs[i] for i in kept]
        batch: dict = {"ids": [ex.id for ex in examples], "answers": [ex.answer for ex in examples], "references": refs}
        if not examples:
            return batch
        sep = separator(self.tokenizer)
        firsts, passages = zip(*(source_pair(ex, sep) for ex in examples))
        enc = self._encode(list(firsts), list(passages))
        batch["input_ids"], batch["attention_mask"] = enc["input_ids"], enc["attention_mask"]
        if self.targets:
            batch["pair_source"] = torch.tensor([i for i, r in enumerate(refs) for _ in r], dtype=torch.long)
            batch["labels"] = self.encode_targets([t for r in refs for t in r])
        return batch

    def _encode(self, firsts: list[str], passages: list[str]):
        kwargs = dict(max_length=self.max_length, padding=True, return_tensors="pt", return_token_type_ids=False)
        kwargs["pad_to_multiple_of"] = self.pad_to_multiple_of
        try:  # cut the passage, never the question or the answer
            return self.tokenizer(firsts, passages, truncation="only_second", **kwargs)
        except Exception:  # question + answer alone longer than max_length: cut both
            return self.tokenizer(firsts, passages, truncation="longest_first", **kwargs)

    def encode_targets(self, texts: list[str]) -> torch.Tensor:
        """Target token ids (rows padded with :data:`IGNORE`): each text with the tokenizer's end
        token and without a leading start token, at most ``max_target_length`` tokens."""
        tok = self.tokenizer
        starts = {t for t in (tok.cls_token_id, tok.bos_token_id) if t is not None}
        ids = tok(texts, truncation=True, max_length=self.max_target_length + 1, return_attention_mask=False, return_token_type_ids=False)[
            "input_ids"
        ]
        limit = self.max_target_length
        ids = [row[1:] if row and row[0] in starts else row for row in ids]
        ids = [row if len(row) <= limit else row[: limit - 1] + row[-1:] for row in ids]  # keep the end token
        width = max(len(row) for row in ids)
        out = torch.full((len(ids), width), IGNORE, dtype=torch.long)
        for i, row in enumerate(ids):
            out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return out
