"""Doc-stride windows of a long context from the context tokenized in pieces, in bounded memory.

Asked for the overflowing windows of a ``(question, context)`` pair, a fast tokenizer tokenizes the
whole context at once and keeps per-token objects (token strings, offsets, word ids) of the whole
context and of every window: for a 5 MB context the peak RSS grows by ~800 MB. Contexts longer
than :data:`LONG_CONTEXT_CHARS` characters are therefore tokenized here in pieces of about
:data:`PIECE_CHARS` characters (:func:`tokenize_context`), their token ids and character offsets
kept as numpy ``int32`` arrays, and the windows are cut from that token sequence
(:func:`context_windows`) by the rule of the ``tokenizers`` library's truncation with a stride
(``Encoding.truncate``, what ``return_overflowing_tokens=True`` runs):

* a window holds ``budget = max_length - question tokens - special tokens`` context tokens (all
  of them, in one window, when the pair fits in ``max_length``);
* windows start every ``budget - doc_stride`` tokens, from the first context token; the last
  window is the first one that reaches the end of the context;
* each window gets the question and the special tokens of the tokenizer's pair template
  (:class:`PairTemplate`), in the tokenizer's order of the two sequences.

A piece is cut at the start of a run of white space (the character before it is not white space)
and tokenized with :data:`PIECE_MARGIN` characters of the text on either side, keeping the tokens
that start inside it: every token is then tokenized with the same neighbours as in the whole
context, for WordPiece (BERT), byte-level BPE (RoBERTa: the space belongs to the next word, and
``trim_offsets`` treats a text's first token apart) and SentencePiece alike, unless a single
pre-token (a run without white space or punctuation) is longer than the margin. A context with
no white space (e.g. Chinese) stays one piece. ``tests/datamodules/test_collation.py`` checks that the windows
equal the tokenizer's own overflowing windows (ids, token types, attention mask, offsets) on real
SQuAD dev paragraphs cut into small pieces and on a long context, for the MiniLM (WordPiece)
tokenizer and a byte-level BPE tokenizer with RoBERTa's template.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

#: contexts longer than this (characters) are tokenized in pieces (:func:`tokenize_context`)
LONG_CONTEXT_CHARS = 20_000
#: about this many characters per piece
PIECE_CHARS = 10_000
#: characters of text on either side of a piece tokenized with it (:func:`tokenize_context`)
PIECE_MARGIN = 500

_CUT = re.compile(r"(?<=\S)\s")


@dataclass
class Window:
    """One window, unpadded: token ids, token type ids (None when the tokenizer has none), the
    character offsets of its context tokens (``-1`` on every other token), the example's index."""

    input_ids: np.ndarray
    token_type_ids: np.ndarray | None
    offsets: np.ndarray  # (L, 2) int32
    example: int


def piece_starts(text: str, piece_chars: int = PIECE_CHARS) -> list[int]:
    """Where the pieces of ``text`` start: 0, then the first start of a white-space run at or
    after ``piece_chars`` characters past the previous start."""
    starts = [0]
    while True:
        found = _CUT.search(text, starts[-1] + max(1, piece_chars))
        if found is None:
            return starts
        starts.append(found.start())


def tokenize_context(tokenizer, text: str, piece_chars: int = PIECE_CHARS, margin: int = PIECE_MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """``(token ids (N,), character offsets (N, 2))`` of ``text`` without special tokens, as
    ``int32`` arrays, tokenized piece by piece (:func:`piece_starts`); offsets index ``text``.

    Piece ``[a, b)`` is tokenized with ``margin`` characters of text on either side and keeps the
    tokens whose (first) offset lies in ``[a, b)``: the tokens near a cut are then tokenized with
    the same surroundings as in the whole text (with RoBERTa's ``trim_offsets`` the first token of
    a text gets other offsets than the same token in the middle of one)."""
    ids, offsets = [], []
    starts = piece_starts(text, piece_chars)
    ends = starts[1:] + [len(text)]
    for a, b in zip(starts, ends):
        lo, hi = max(0, a - margin), min(len(text), b + margin)
        enc = tokenizer(
            text[lo:hi],
            add_special_tokens=False,
            truncation=False,
            return_offsets_mapping=True,
            return_attention_mask=False,
            return_token_type_ids=False,
            verbose=False,
        )
        offs = np.asarray(enc["offset_mapping"], dtype=np.int32).reshape(-1, 2) + lo
        keep = (offs[:, 0] >= a) & ((offs[:, 0] < b) if b < len(text) else (offs[:, 0] <= b))
        ids.append(np.asarray(enc["input_ids"], dtype=np.int32)[keep])
        offsets.append(offs[keep])
    return np.concatenate(ids), np.concatenate(offsets)


@dataclass(frozen=True)
class PairTemplate:
    """The special tokens a tokenizer puts around a pair ``(first, second)``: ids and token types
    of the parts before, between and after the two sequences, and each sequence's token type."""

    parts: tuple[np.ndarray, np.ndarray, np.ndarray]
    part_types: tuple[np.ndarray, np.ndarray, np.ndarray]
    first_type: int
    second_type: int

    @classmethod
    def of(cls, tokenizer) -> PairTemplate:
        """Read from the tokenizer's encoding of the pair ``("a", "a")`` (its sequence ids)."""
        enc = tokenizer("a", "a", return_token_type_ids=True)
        seq = enc.sequence_ids(0)
        ids, types = np.asarray(enc["input_ids"]), np.asarray(enc["token_type_ids"])
        first = [i for i, s in enumerate(seq) if s == 0]
        second = [i for i, s in enumerate(seq) if s == 1]
        cuts = [(0, first[0]), (first[-1] + 1, second[0]), (second[-1] + 1, len(seq))]
        return cls(tuple(ids[a:b] for a, b in cuts), tuple(types[a:b] for a, b in cuts), int(types[first[0]]), int(types[second[0]]))

    @property
    def n_special(self) -> int:
        return sum(len(p) for p in self.parts)


def window_starts(n_tokens: int, budget: int, stride: int) -> list[int]:
    """First context token of each window (``Encoding.truncate``'s rule, see the module doc)."""
    if n_tokens <= budget:
        return [0]
    step = budget - stride
    starts = [0]
    while starts[-1] + budget < n_tokens:
        starts.append(starts[-1] + step)
    return starts


def context_windows(
    template: PairTemplate,
    question_ids: Sequence[int],
    context_ids: np.ndarray,
    context_offsets: np.ndarray,
    *,
    max_length: int,
    stride: int,
    context_first: bool,
    example: int,
    label: str = "",
) -> list[Window]:
    """The windows of one example: ``[before] question [between] window [after]`` (or the context
    window first when ``context_first``), as the tokenizer's overflowing windows give them."""
    budget = max_length - len(question_ids) - template.n_special
    if budget <= stride and len(context_ids) > budget:
        raise ValueError(
            f"example {label!r}: task.max_length={max_length} leaves {budget} context tokens per window "
            f"after its question, not more than task.doc_stride={stride}: raise task.max_length or lower task.doc_stride"
        )
    q_ids = np.asarray(question_ids, dtype=np.int64)
    before, between, after = template.parts
    t_before, t_between, t_after = template.part_types
    q_type, c_type = (template.second_type, template.first_type) if context_first else (template.first_type, template.second_type)
    windows = []
    for start in window_starts(len(context_ids), budget, stride):
        c_ids = context_ids[start : start + budget].astype(np.int64)
        c_offs = context_offsets[start : start + budget]
        first, second = (c_ids, q_ids) if context_first else (q_ids, c_ids)
        ids = np.concatenate([before, first, between, second, after])
        q_types, c_types = np.full(len(q_ids), q_type), np.full(len(c_ids), c_type)
        types = np.concatenate([t_before, c_types if context_first else q_types, t_between, q_types if context_first else c_types, t_after])
        offsets = np.full((len(ids), 2), -1, dtype=np.int32)
        at = len(before) + (0 if context_first else len(q_ids) + len(between))
        offsets[at : at + len(c_ids)] = c_offs
        windows.append(Window(ids, types, offsets, example))
    return windows


def pad_windows(
    windows: Sequence[Window], tokenizer, multiple: int | None = None, *, token_types: bool
) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """The model inputs of ``windows`` padded to the longest (rounded up to ``multiple``), as the
    tokenizer pads (``padding=True``: its padding side, pad token and pad token type; attention mask
    0 on pads), ``token_type_ids`` among them with ``token_types``; and their offsets ``(F, L, 2)``
    (``-1`` on pads)."""
    length = max(len(w.input_ids) for w in windows)
    if multiple:
        length = -(-length // multiple) * multiple
    n = len(windows)
    ids = np.full((n, length), tokenizer.pad_token_id, dtype=np.int64)
    types = np.full((n, length), tokenizer.pad_token_type_id, dtype=np.int64)
    mask = np.zeros((n, length), dtype=np.int64)
    offsets = np.full((n, length, 2), -1, dtype=np.int32)
    left = tokenizer.padding_side == "left"
    for f, w in enumerate(windows):
        span = slice(length - len(w.input_ids), length) if left else slice(0, len(w.input_ids))
        ids[f, span] = w.input_ids
        mask[f, span] = 1
        offsets[f, span] = w.offsets
        if w.token_type_ids is not None:
            types[f, span] = w.token_type_ids
    arrays = {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}
    inputs = {k: torch.from_numpy(v) for k, v in arrays.items() if token_types or k != "token_type_ids"}
    return inputs, offsets
