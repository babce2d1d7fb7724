"""An offline model zoo for tests: a tiny random model of each hub architecture the ``robust_mrc/conf/model``
options name, with a tokenizer of the architecture's own kind, saved as a Hugging Face directory.

* The model is saved (safetensors) from a class with the architecture's pre-training head (ELECTRA:
  the discriminator, as ``google/electra-*-discriminator``; BERT: its pre-training heads; RoBERTa,
  DeBERTa-v2, ALBERT: masked LM; XLNet: its LM head; T5, BART: the seq2seq LM), so that
  ``AutoModelForMultipleChoice`` / ``AutoModelForQuestionAnswering`` / ``AutoModelForSeq2SeqLM``
  load the base model from a checkpoint with other heads, key prefixes and all, as they load a hub
  checkpoint. 2 layers, hidden size 32, 2 heads, feed-forward 64, 512 positions where the
  architecture has absolute ones.
* The tokenizer is of the architecture's kind -- WordPiece (BERT, ELECTRA), byte-level BPE
  (RoBERTa, BART), Unigram with SentencePiece's ``▁`` (DeBERTa-v2, ALBERT, XLNet, T5) --, made from
  the synthetic data's sentences and a few fixed ones, and wrapped in the architecture's tokenizer
  class with its special tokens, their ids, its padding side (XLNet: left) and
  ``model_max_length``. The byte-level BPE is trained by the ``tokenizers`` library's
  ``BpeTrainer``; the WordPiece and Unigram vocabularies are chosen from word and substring counts
  under the tokenizer's own normalizer and pre-tokenizer (about 1000 entries: characters, the words
  seen twice or more, the most frequent fragments; Unigram scores: log relative frequencies),
  because the library's WordPiece and Unigram trainers break ties in hash order and give another
  vocabulary on every run.

Deterministic (the synthetic generators' seeds, a fixed torch seed); the whole zoo builds in well
under a second once ``transformers`` is imported. ``build_zoo(root)`` -> ``{option: directory}``;
``tests/conftest.py`` builds it once per session (the ``tiny_zoo`` fixture).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: the ``robust_mrc/conf/model`` options of hub checkpoints -> the tiny architecture standing in for them
ZOO_OPTIONS = {
    "bert": "bert",
    "roberta": "roberta",
    "roberta_base": "roberta",
    "deberta_v3": "deberta_v2",
    "electra": "electra",
    "albert": "albert",
    "xlnet": "xlnet",
    "t5_base": "t5",
    "bart_base": "bart",
}

#: the tasks each architecture serves: encoders read (mc, span), encoder-decoders generate (dg)
ENCODER_DECODERS = ("t5", "bart")

VOCAB_SIZE = 1000
MAX_POSITIONS = 512
SEED = 0
SIZES = {"hidden": 32, "layers": 2, "heads": 2, "intermediate": 64, "embedding": 16}

FIXED_SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "Where does Tom live? Tom lives in Oslo, not in Lisbon.",
    "In 1848 the U.S. signed a treaty; the co-operation lasted 12 years (until 1860).",
    "A naïve café owner said: \"don't go\", and we didn't.",
    "Which river flows through the capital city of Portugal?",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 100 1000, and symbols: % $ & # @ ! ? , ; : - _ ' \" ( ) [ ].",
)


def corpus() -> list[str]:
    """The sentences the tokenizers are trained on: passages, questions and options of the synthetic
    multiple-choice and span data (the seeds the synthetic data options use) and the fixed ones."""
    from robust_mrc.data.synthetic import synthetic_splits

    texts: list[str] = list(FIXED_SENTENCES)
    mc = synthetic_splits("mc", 60, 30, 30, seed=0)
    for ex in (ex for split in mc.values() for ex in split):
        texts += [ex.passage, ex.question, *ex.options]
    span = synthetic_splits("span", 60, 30, 30, seed=0)
    for ex in (ex for split in span.values() for ex in split):
        texts += [ex.context, ex.question]
    return texts


# -- tokenizers ------------------------------------------------------------------------------


def _word_counts(texts: list[str], normalizer, pre_tokenizer) -> Counter:
    """How often each pre-token of the corpus occurs, as the tokenizer's own normalizer and
    pre-tokenizer cut it (SentencePiece's: ``▁word``)."""
    counts: Counter = Counter()
    for text in texts:
        counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    return counts


def _fragments(words: Counter, max_len: int = 6) -> Counter:
    """``(starts the word, substring)`` -> occurrences, over the substrings of at most ``max_len``
    characters of every word."""
    out: Counter = Counter()
    for word, n in words.items():
        for i in range(len(word)):
            for j in range(i + 2, min(len(word), i + max_len) + 1):
                out[(i == 0, word[i:j])] += n
    return out


def _choose(words: Counter, singles: list[str], budget: int) -> list[tuple[bool, str]]:
    """The vocabulary beyond single characters: the words seen twice or more (whole), then the
    most frequent fragments, ``budget`` entries at most, in a fixed order."""
    whole = sorted(((True, w) for w, n in words.items() if n >= 2 and len(w) > 1), key=lambda e: (-words[e[1]], e[1]))
    chosen = dict.fromkeys(whole[:budget])
    for entry, _ in sorted(_fragments(words).items(), key=lambda kv: (-kv[1], kv[0][1], kv[0][0])):
        if len(chosen) >= budget:
            break
        if entry not in chosen and entry[1] not in singles:
            chosen[entry] = None
    return list(chosen)


def _wordpiece(texts: list[str], specials: list[str], lowercase: bool) -> dict[str, int]:
    """A WordPiece vocabulary: the characters, alone and as ``##`` continuations, the words seen
    twice or more and the most frequent word pieces (a word missing from it splits into pieces)."""
    from tokenizers import normalizers, pre_tokenizers

    words = _word_counts(texts, normalizers.BertNormalizer(lowercase=lowercase), pre_tokenizers.BertPreTokenizer())
    chars = sorted({c for w in words for c in w})
    budget = VOCAB_SIZE - len(specials) - 2 * len(chars)
    pieces = [w if start else f"##{w}" for start, w in _choose(words, chars, budget)]
    return {t: i for i, t in enumerate([*specials, *chars, *(f"##{c}" for c in chars), *pieces])}


def _byte_bpe(texts: list[str], specials: list[str]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level BPE trained by the ``tokenizers`` library (its trainer gives the same merges every run)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(texts, trainer)
    model = json.loads(tk.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return dict(sorted(model["vocab"].items(), key=lambda kv: kv[1])), merges


def _script_runs(word: str) -> list[str]:
    """``word`` cut where letters and digits meet other characters (SentencePiece's pieces do not
    cross scripts): ``▁Oslo.`` -> ``▁Oslo``, ``.``."""
    lead = "\u2581" if word.startswith("\u2581") else ""
    runs = re.findall(r"[^\W_]+|[\W_]", word[len(lead) :])
    return [lead + runs[0], *runs[1:]] if runs else [word]


def _unigram(texts: list[str], specials: list[str], lowercase: bool) -> list[tuple[str, float]]:
    """SentencePiece-style pieces (``▁`` marks a word start; none crosses scripts): ``specials``
    first (score 0), the characters, the words seen twice or more and the most frequent fragments,
    each scored by the log of its relative frequency in the corpus (a word missing from it splits
    into pieces)."""
    from tokenizers import normalizers, pre_tokenizers

    steps = [normalizers.NFKC()] + ([normalizers.Lowercase()] if lowercase else [])
    pre = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()])
    words: Counter = Counter()
    for word, n in _word_counts(texts, normalizers.Sequence(steps), pre).items():
        for run in _script_runs(word):
            words[run] += n
    chars = sorted({c for w in words for c in w})
    chosen = [w for _, w in _choose(words, chars, VOCAB_SIZE - len(specials) - len(chars))]
    frequency = Counter({c: 0 for c in chars})
    for (_, piece), n in _fragments(words).items():
        frequency[piece] += n
    for word, n in words.items():
        for c in word:
            frequency[c] += n
    pieces = [p for p in dict.fromkeys([*chars, *chosen]) if p not in specials]
    total = sum(frequency[p] for p in pieces)
    return [(p, 0.0) for p in specials] + [(p, math.log(max(frequency[p], 1) / total)) for p in pieces]


def bert_tokenizer(texts: list[str]):
    from transformers import BertTokenizer

    vocab = _wordpiece(texts, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], lowercase=True)
    return BertTokenizer(vocab=vocab, do_lower_case=True, model_max_length=MAX_POSITIONS)


def roberta_tokenizer(texts: list[str]):
    from transformers import RobertaTokenizer

    vocab, merges = _byte_bpe(texts, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    return RobertaTokenizer(vocab=vocab, merges=merges, model_max_length=MAX_POSITIONS)


def deberta_v2_tokenizer(texts: list[str]):
    from transformers import DebertaV2Tokenizer

    vocab = _unigram(texts, ["[PAD]", "[CLS]", "[SEP]", "[UNK]"], lowercase=False)
    return DebertaV2Tokenizer(vocab=vocab, do_lower_case=False, split_by_punct=False, model_max_length=MAX_POSITIONS)


def albert_tokenizer(texts: list[str]):
    from transformers import AlbertTokenizer

    vocab = _unigram(texts, ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"], lowercase=True)
    return AlbertTokenizer(vocab=vocab, do_lower_case=True, model_max_length=MAX_POSITIONS)


def xlnet_tokenizer(texts: list[str]):
    from transformers import XLNetTokenizer

    specials = ["<unk>", "<s>", "</s>", "<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"]
    vocab = _unigram(texts, specials, lowercase=False)
    # relative positions only: no length limit (model_max_length unset)
    return XLNetTokenizer(vocab=vocab, unk_id=0, do_lower_case=False)


T5_EXTRA_IDS = 8


def t5_tokenizer(texts: list[str]):
    from transformers import T5Tokenizer

    vocab = _unigram(texts, ["<pad>", "</s>", "<unk>"], lowercase=False)
    vocab += [(f"<extra_id_{i}>", 0.0) for i in reversed(range(T5_EXTRA_IDS))]
    return T5Tokenizer(vocab=vocab, extra_ids=T5_EXTRA_IDS, model_max_length=MAX_POSITIONS)


# -- models ----------------------------------------------------------------------------------


def _ids(tokenizer) -> dict[str, int]:
    return {"pad_token_id": tokenizer.pad_token_id}


def bert_model(tokenizer):
    from transformers import BertConfig, BertForPreTraining

    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=SIZES["hidden"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        intermediate_size=SIZES["intermediate"],
        max_position_embeddings=MAX_POSITIONS,
        type_vocab_size=2,
        **_ids(tokenizer),
    )
    return BertForPreTraining(config)


def roberta_model(tokenizer):
    from transformers import RobertaConfig, RobertaForMaskedLM

    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=SIZES["hidden"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        intermediate_size=SIZES["intermediate"],
        max_position_embeddings=MAX_POSITIONS + 2,  # positions start after the padding index
        type_vocab_size=1,
        layer_norm_eps=1e-5,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **_ids(tokenizer),
    )
    return RobertaForMaskedLM(config)


def deberta_v2_model(tokenizer):
    """DeBERTa-v3's layout: relative attention (c2p, p2c) with log buckets, no absolute positions
    in the input, no token type embeddings."""
    from transformers import DebertaV2Config, DebertaV2ForMaskedLM

    config = DebertaV2Config(
        vocab_size=len(tokenizer),
        hidden_size=SIZES["hidden"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        intermediate_size=SIZES["intermediate"],
        max_position_embeddings=MAX_POSITIONS,
        type_vocab_size=0,
        relative_attention=True,
        position_buckets=256,
        norm_rel_ebd="layer_norm",
        share_att_key=True,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        max_relative_positions=-1,
        layer_norm_eps=1e-7,
        **_ids(tokenizer),
    )
    return DebertaV2ForMaskedLM(config)


def electra_model(tokenizer):
    """The discriminator (``ElectraForPreTraining``), as ``google/electra-*-discriminator`` is saved."""
    from transformers import ElectraConfig, ElectraForPreTraining

    config = ElectraConfig(
        vocab_size=len(tokenizer),
        embedding_size=SIZES["embedding"],
        hidden_size=SIZES["hidden"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        intermediate_size=SIZES["intermediate"],
        max_position_embeddings=MAX_POSITIONS,
        type_vocab_size=2,
        **_ids(tokenizer),
    )
    return ElectraForPreTraining(config)


def albert_model(tokenizer):
    from transformers import AlbertConfig, AlbertForMaskedLM

    config = AlbertConfig(
        vocab_size=len(tokenizer),
        embedding_size=SIZES["embedding"],
        hidden_size=SIZES["hidden"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        intermediate_size=SIZES["intermediate"],
        max_position_embeddings=MAX_POSITIONS,
        type_vocab_size=2,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        **_ids(tokenizer),
    )
    return AlbertForMaskedLM(config)


def xlnet_model(tokenizer):
    from transformers import XLNetConfig, XLNetLMHeadModel

    config = XLNetConfig(
        vocab_size=len(tokenizer),
        d_model=SIZES["hidden"],
        n_layer=SIZES["layers"],
        n_head=SIZES["heads"],
        d_inner=SIZES["intermediate"],
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **_ids(tokenizer),
    )
    return XLNetLMHeadModel(config)


def t5_model(tokenizer):
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=SIZES["hidden"],
        d_kv=SIZES["hidden"] // SIZES["heads"],
        d_ff=SIZES["intermediate"],
        num_layers=SIZES["layers"],
        num_decoder_layers=SIZES["layers"],
        num_heads=SIZES["heads"],
        relative_attention_num_buckets=8,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        **_ids(tokenizer),
    )
    return T5ForConditionalGeneration(config)


def bart_model(tokenizer):
    from transformers import BartConfig, BartForConditionalGeneration

    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=SIZES["hidden"],
        encoder_layers=SIZES["layers"],
        decoder_layers=SIZES["layers"],
        encoder_attention_heads=SIZES["heads"],
        decoder_attention_heads=SIZES["heads"],
        encoder_ffn_dim=SIZES["intermediate"],
        decoder_ffn_dim=SIZES["intermediate"],
        max_position_embeddings=MAX_POSITIONS,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_bos_token_id=tokenizer.bos_token_id,
        **_ids(tokenizer),
    )
    return BartForConditionalGeneration(config)


@dataclass(frozen=True)
class Architecture:
    """How one tiny architecture is made: its tokenizer (and kind: the ``tokenizers`` model) and model."""

    tokenizer: Callable
    kind: str
    model: Callable


ARCHITECTURES = {
    "bert": Architecture(bert_tokenizer, "WordPiece", bert_model),
    "roberta": Architecture(roberta_tokenizer, "BPE", roberta_model),
    "deberta_v2": Architecture(deberta_v2_tokenizer, "Unigram", deberta_v2_model),
    "electra": Architecture(bert_tokenizer, "WordPiece", electra_model),
    "albert": Architecture(albert_tokenizer, "Unigram", albert_model),
    "xlnet": Architecture(xlnet_tokenizer, "Unigram", xlnet_model),
    "t5": Architecture(t5_tokenizer, "Unigram", t5_model),
    "bart": Architecture(roberta_tokenizer, "BPE", bart_model),
}


def build_tiny(architecture: str, directory: str | Path, texts: list[str] | None = None) -> Path:
    """Save the tiny ``architecture`` (a key of :data:`ARCHITECTURES`) with its tokenizer in ``directory``."""
    import torch

    spec = ARCHITECTURES[architecture]
    directory = Path(directory)
    tokenizer = spec.tokenizer(corpus() if texts is None else texts)
    torch.manual_seed(SEED)
    model = spec.model(tokenizer)
    model.save_pretrained(directory)  # safetensors
    tokenizer.save_pretrained(directory)
    return directory


def build_zoo(root: str | Path) -> dict[str, Path]:
    """One directory per architecture under ``root``; ``{robust_mrc/conf/model option: directory}``."""
    root = Path(root)
    texts = corpus()
    built = {arch: build_tiny(arch, root / arch, texts) for arch in sorted(set(ZOO_OPTIONS.values()))}
    return {option: built[arch] for option, arch in ZOO_OPTIONS.items()}
