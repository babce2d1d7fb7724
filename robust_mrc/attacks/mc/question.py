"""A question read once for the attacks that rewrite it: its tokens with their spacing, part of speech
(coarse and Penn), lemma, named-entity type and dependency arc.

Two readers, by the tagger in use (:func:`robust_mrc.attacks.resources.resolve_tagger`):

* ``spacy`` (the default where spaCy and an English pipeline are installed: ``pip install
  robust-mrc``): the whole pipeline (tagger, parser, named entities, lemmatizer), so that a verb is
  a verb ("stop", "use", "drink" in a question), a multi-word name is one entity ("United Nations
  World Tourism Organization"), and a negation goes where the parse puts the auxiliary;
* ``heuristic`` (the named fallback, logged as a warning once per process by the attacks that use it):
  the heuristic tagger, WordNet lemmas, person names from the names list, no parse.

:func:`read_question` caches its answer per (question, tagger); :func:`read_questions` reads many at
once (spaCy's batched ``pipe``, several times faster than one call each) and fills the same cache,
which is what an attack's ``prepare`` does for the questions it will attack.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import NamedTuple

from robust_mrc.attacks import resources as R

log = logging.getLogger(__name__)


class Token(NamedTuple):
    text: str
    space: str  # the white space after it
    pos: str  # coarse tag (R.NOUN, R.VERB, ...)
    tag: str  # Penn tag ("NNS", "VBD", ...); "" from the heuristic reader
    lemma: str  # lower case
    ent: str  # named-entity type ("PERSON", "GPE", ...) or ""
    ent_id: int  # index of its entity in Question.entities, -1 outside one
    dep: str  # dependency label ("ROOT", "nsubj", "aux", "neg", ...); "" without a parse
    head: int  # index of its head (itself for the root); -1 without a parse


class Question(NamedTuple):
    text: str
    tokens: tuple[Token, ...]
    entities: tuple[tuple[int, int, str], ...]  # (first token, end token, type)
    reader: str  # "spacy" or "heuristic"

    def words(self) -> frozenset[str]:
        """Its words and lemmas, lower case."""
        return frozenset(t.text.lower() for t in self.tokens) | frozenset(t.lemma for t in self.tokens)


_UPOS = {
    "NOUN": R.NOUN,
    "PROPN": R.PROPN,
    "VERB": R.VERB,
    "ADJ": R.ADJ,
    "ADV": R.ADV,
    "NUM": R.NUM,
    "AUX": R.AUX,
    "PUNCT": R.PUNCT,
    "SYM": R.PUNCT,
}


def _coarse(t) -> str:
    if not any(ch.isalnum() for ch in t.text):
        return R.PUNCT
    return _UPOS.get(t.pos_, R.FUNC if t.pos_ in ("ADP", "DET", "PRON", "CCONJ", "SCONJ", "PART", "INTJ") else R.OTHER)


def _from_doc(text: str, doc) -> Question:
    ents = tuple((e.start, e.end, e.label_) for e in doc.ents)
    ent_of = {}
    for k, (s, e, _) in enumerate(ents):
        for i in range(s, e):
            ent_of[i] = k
    toks = tuple(
        Token(t.text, t.whitespace_, _coarse(t), t.tag_, (t.lemma_ or t.text).lower(), t.ent_type_, ent_of.get(t.i, -1), t.dep_, t.head.i)
        for t in doc
    )
    return Question(text, toks, ents, "spacy")


_WORD_RE = re.compile(r"\w+(?:[-'\u2019.]\w+)*|n't|'s|\S")


def _heuristic(text: str) -> Question:
    spans = []
    for m in _WORD_RE.finditer(text):  # "girl's" -> "girl" "'s", "doesn't" -> "does" "n't", as spaCy splits them
        s, e, word = m.start(), m.end(), m.group()
        low = word.lower()
        cut = 2 if len(word) > 2 and low.endswith(("'s", "\u2019s")) else 3 if len(word) > 3 and low.endswith("n't") else 0
        if cut:
            spans += [(s, e - cut), (e - cut, e)]
        else:
            spans.append((s, e))
    words = [text[s:e] for s, e in spans]
    tags = R.heuristic_tag(words)
    toks, ents = [], []
    for i, ((_, e), word, pos) in enumerate(zip(spans, words, tags)):
        nxt = spans[i + 1][0] if i + 1 < len(spans) else len(text)
        lemma = _lemma(word.lower(), pos)
        kind = R.person_name_kind(words, i) if pos in (R.NOUN, R.PROPN) else None
        ent_id = -1
        if kind is not None:
            if ents and ents[-1][1] == i and ents[-1][2] == "PERSON":
                ents[-1] = (ents[-1][0], i + 1, "PERSON")
            else:
                ents.append((i, i + 1, "PERSON"))
            ent_id = len(ents) - 1
        toks.append(Token(word, text[e:nxt], pos, "", lemma, "PERSON" if kind else "", ent_id, "", -1))
    return Question(text, tuple(toks), tuple(ents), "heuristic")


def _lemma(low: str, pos: str) -> str:
    wn_pos = R.wn_pos(pos)
    if wn_pos is None or not low.isalpha():
        return low
    try:
        return R.wordnet().morphy(low, wn_pos) or low
    except R.ResourceMissing:
        return low


_warned: set[str] = set()


def warn_heuristic(attack: str) -> None:
    """Log once per process that ``attack`` reads questions with the heuristic fallback."""
    from robust_mrc.attacks.resources.spacy_tagger import SPACY_HINT

    if attack not in _warned:
        _warned.add(attack)
        log.warning(
            "%s reads questions with the heuristic tagger (no parse, no named entities: verbs taken for nouns, "
            "names split into words make weaker sentences); %s",
            attack,
            SPACY_HINT,
        )


class _Cache(dict):
    """(text, reader) -> Question; cleared with the resources' caches (:func:`robust_mrc.attacks.resources.clear_caches`)."""

    MAX = 200_000

    def cache_clear(self) -> None:
        self.clear()


_CACHE = _Cache()
R.depends_on_resources(_CACHE)


def _read(text: str, reader: str) -> Question:
    if reader == "spacy":
        from robust_mrc.attacks.resources.spacy_tagger import pipeline

        return _from_doc(text, pipeline()(text))
    return _heuristic(text)


def _keep(key: tuple[str, str], q: Question) -> Question:
    if len(_CACHE) >= _Cache.MAX:
        _CACHE.clear()
    _CACHE[key] = q
    return q


def read_question(text: str, reader: str) -> Question:
    """``text`` read by ``reader`` ("spacy" or "heuristic", as :func:`robust_mrc.attacks.resources.resolve_tagger`
    says); cached per (text, reader)."""
    q = _CACHE.get((text, reader))
    return q if q is not None else _keep((text, reader), _read(text, reader))


def read_questions(texts: Iterable[str], reader: str, batch_size: int = 256) -> int:
    """Read every text not yet cached (spaCy: in batches) into :func:`read_question`'s cache; how many were read."""
    todo = list(dict.fromkeys(t for t in texts if (t, reader) not in _CACHE))
    if reader != "spacy":
        for t in todo:
            read_question(t, reader)
        return len(todo)
    from robust_mrc.attacks.resources.spacy_tagger import pipeline

    for text, doc in zip(todo, pipeline().pipe(todo, batch_size=batch_size)):
        _keep((text, reader), _from_doc(text, doc))
    return len(todo)
