"""The encoder-decoder of the distractor generator (task ``dg``).

* A model whose config is an encoder-decoder (``t5-base``, ``facebook/bart-base``, a saved
  ``EncoderDecoderModel``): ``AutoModelForSeq2SeqLM``.
* An encoder-only model (BERT, the offline MiniLM): BERT2BERT, an ``EncoderDecoderModel`` whose
  encoder and decoder are both warm-started from it (``from_encoder_decoder_pretrained``); the
  decoder gets a causal mask and cross-attention layers (new: by default copies of the same layer's
  self-attention, a start already shaped to attend over the encoder's hidden states, which live in
  the same space; ``model.cross_attention_init=random`` for fresh weights: on DREAM that generator
  said the same words to every question after 188 steps, docs/dg-bank.md), and its LM head
  (for MiniLM, whose checkpoint has none: a new transform layer, output weights tied to its word
  embeddings). The decoder starts from the tokenizer's [CLS] (``decoder_start_token_id``), pads with
  [PAD] and ends with [SEP] (``eos_token_id``).

``model.config`` overrides apply to the (encoder's and decoder's) config. No start token is forced
at generation (``forced_bos_token_id`` off): the targets of
:class:`~robust_mrc.datamodules.generation.DGCollator` have none.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import torch

from robust_mrc.core import settings as S


def build_seq2seq(name: str, config, model_cfg: Mapping[str, Any], *, random_init: bool, access: Mapping[str, Any]):
    """The encoder-decoder for ``name`` (resolved) with ``config`` (its overrides applied): random
    weights (seeded by ``model.init_seed``) with ``random_init``, else the pretrained ones."""
    import transformers

    from robust_mrc.models.backbone import load_tokenizer

    model_cfg = S.complete(S.ModelSettings, model_cfg)
    remote = bool(model_cfg["trust_remote_code"])
    if random_init:
        torch.manual_seed(int(model_cfg["init_seed"]))
    if getattr(config, "is_encoder_decoder", False):
        head = transformers.AutoModelForSeq2SeqLM
        if random_init:
            model = head.from_config(config, trust_remote_code=remote)
        else:
            model = head.from_pretrained(name, config=config, trust_remote_code=remote, **access)
        bert2bert = False
    else:
        model = _bert2bert(name, config, random_init=random_init, access=access)
        init = str(model_cfg.get("cross_attention_init") or "self_attention")
        if init not in CROSS_ATTENTION_INITS:
            raise ValueError(f"model.cross_attention_init={init!r}: one of {', '.join(CROSS_ATTENTION_INITS)}")
        if init == "self_attention":
            copy_self_attention_to_cross_attention(model.decoder)
        bert2bert = True
    set_special_tokens(model, load_tokenizer(model_cfg), bert2bert=bert2bert)
    return model


CROSS_ATTENTION_INITS = ("random", "self_attention")


def copy_self_attention_to_cross_attention(decoder) -> int:
    """Each decoder layer's cross-attention (query/key/value and output projection, layer norm)
    set to a copy of its self-attention's weights; returns the number of layers changed."""
    changed = 0
    for module in decoder.modules():
        cross, own = getattr(module, "crossattention", None), getattr(module, "attention", None)
        if cross is None or own is None:
            continue
        cross.load_state_dict(own.state_dict())
        changed += 1
    if not changed:
        raise ValueError(f"{type(decoder).__name__} has no layer with both self- and cross-attention")
    return changed


def _bert2bert(name: str, config, *, random_init: bool, access: Mapping[str, Any]):
    from transformers import AutoModel, AutoModelForCausalLM, EncoderDecoderModel

    encoder_cfg, decoder_cfg = copy.deepcopy(config), copy.deepcopy(config)
    encoder_cfg.is_decoder, encoder_cfg.add_cross_attention = False, False
    decoder_cfg.is_decoder, decoder_cfg.add_cross_attention = True, True
    if random_init:
        return EncoderDecoderModel(encoder=AutoModel.from_config(encoder_cfg), decoder=AutoModelForCausalLM.from_config(decoder_cfg))
    prefixed = {f"{side}_{k}": v for k, v in access.items() for side in ("encoder", "decoder")}
    return EncoderDecoderModel.from_encoder_decoder_pretrained(
        name, name, encoder_config=encoder_cfg, decoder_config=decoder_cfg, **prefixed
    )


def set_special_tokens(model, tokenizer, *, bert2bert: bool) -> None:
    """Start, pad and end tokens on the model's config and generation config. BERT2BERT: from the
    tokenizer ([CLS] / [PAD] / [SEP], or <s> / <pad> / </s>); a seq2seq model keeps its own."""
    gen = model.generation_config
    if bert2bert:
        start = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
        end = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
        for cfg in (model.config, gen):
            cfg.decoder_start_token_id, cfg.pad_token_id, cfg.eos_token_id = start, tokenizer.pad_token_id, end
    else:
        fallback = {"decoder_start_token_id": None, "pad_token_id": tokenizer.pad_token_id, "eos_token_id": tokenizer.eos_token_id}
        for key, default in fallback.items():
            if getattr(gen, key, None) is None:
                own = getattr(model.config, key, None)
                setattr(gen, key, own if own is not None else default)
    gen.forced_bos_token_id = None
