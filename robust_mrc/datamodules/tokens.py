"""What a tokenizer's encodings say about the model inputs and the character offsets of a batch.

* :func:`wants_token_types`: whether batches carry ``token_type_ids``. A tokenizer's
  ``model_input_names`` decide what it returns by default; under transformers 5 those of the
  tokenizers of seven models pre-trained with segment ids leave ``token_type_ids`` out
  (:data:`SEGMENT_TOKENIZERS`, huggingface/transformers issue 48128: ALBERT's token type
  embeddings, XLNet's relative segment encoding with ``<cls>`` in a segment of its own), so a
  pair would reach them as one segment. Those get them too. Tokenizers that leave them out for a
  model without token types (RoBERTa, BART, DistilBERT) keep them out.
* :func:`offsets_cover_spaces` / :func:`trim_leading_spaces`: a SentencePiece tokenizer whose
  pre-tokenizer turns each space into the ``▁`` of the next piece (DeBERTa-v2/v3) gives that
  piece's offsets from the space on, so text cut by offsets would start with the space; the start
  offsets are moved past white space.
"""

from __future__ import annotations

import numpy as np

#: code points of the characters ``str.isspace`` accepts (all lie below U+3001)
_SPACES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)


#: tokenizer classes (``Fast`` suffix dropped) whose models take segment ids though transformers 5's
#: ``model_input_names`` of them omit ``token_type_ids``
SEGMENT_TOKENIZERS = frozenset(
    {
        "AlbertTokenizer",
        "XLNetTokenizer",
        "FunnelTokenizer",
        "HerbertTokenizer",
        "RemBertTokenizer",
        "RoFormerTokenizer",
        "SplinterTokenizer",
    }
)


def wants_token_types(tokenizer) -> bool:
    """Whether the model inputs of ``tokenizer``'s batches include ``token_type_ids`` (module doc)."""
    return "token_type_ids" in tokenizer.model_input_names or type(tokenizer).__name__.removesuffix("Fast") in SEGMENT_TOKENIZERS


def offsets_cover_spaces(tokenizer) -> bool:
    """Whether ``tokenizer`` gives the token of a word offsets that start on the space before it."""
    text = "a b"
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    return any(s < e and text[s].isspace() for s, e in enc["offset_mapping"])


def space_mask(text: str) -> np.ndarray:
    """``(len(text),)`` booleans: which characters of ``text`` are white space."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return np.isin(codes, _SPACES)


def trim_leading_spaces(offsets: np.ndarray, space: np.ndarray) -> None:
    """Move the start offsets of ``offsets`` (``(L, 2)``, ``-1`` off the text; changed in place)
    past the white space (``space``: :func:`space_mask` of the text), never past their end."""
    if not len(space):
        return
    starts, ends = offsets[:, 0], offsets[:, 1]
    while True:
        move = (starts >= 0) & (starts < ends) & space[np.clip(starts, 0, len(space) - 1)]
        if not move.any():
            return
        starts[move] += 1
