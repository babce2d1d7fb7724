"""WordNet synsets read straight from the ``data.*`` files: the few fields the nearest-word lookup
needs (lemma names, semantic pointers, definition), parsed on demand with plain string splits.

Why: NLTK's reader builds a full ``Synset`` per line (regular expressions per lemma, sense keys,
and for every adjective satellite its head synset as well); the WordNet neighbours of a word touch
~15-60 synsets, and on RACE passages that parsing takes ~90 % of ``word_replace``'s and ~65 % of mc
``addsent``'s time (cProfile). Here a data file is read once as bytes and a synset is
the line at its byte offset, split on white space, kept in a per-process cache.

The results are NLTK's, in NLTK's order: :func:`synsets` walks the same index and morphology
(NLTK's own ``_morphy`` and ``_lemma_pos_offset_map``), :func:`synset_name` gives
``Synset.name()``, and ``tests/attacks/test_wordnet_records.py`` checks the neighbours built on them
against the same lookup through NLTK's objects.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from robust_mrc.attacks.resources.wordnet import prepare_nltk_wordnet, wordnet

_FILE = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
_POS_ORDER = ("n", "v", "a", "r")  # NLTK's POS_LIST: the order of ``wordnet().synsets(word)``
_QUOTED = re.compile(r"[\"].*?[\"]")
# a sense never offered as a replacement word: its definition says so, or its usage domain
OFFENSIVE_MARKS = ("offensive", "slur", "disparaging", "obscene", "vulgar", "derogatory")
OFFENSIVE_DOMAINS = ("ethnic_slur", "disparagement", "obscenity", "vulgarism")


class Synset(NamedTuple):
    pos: str  # n, v, a, s (adjective satellite) or r
    offset: int
    lemmas: tuple[str, ...]  # as written, syntactic markers such as "(a)" removed, in order
    pointers: tuple  # semantic pointers: ((symbol, ((pos, offset), ...)), ...); symbol "@", "~", ";u", ...
    definition: str  # the gloss without its quoted examples, as NLTK's ``definition()``
    lexical: tuple  # lexical pointers: ((symbol, source lemma index, pos, offset, target lemma index), ...)


@functools.lru_cache(maxsize=1)
def _reader():
    """NLTK's reader (its index and morphology); raises ResourceMissing (or honours
    ROBUST_MRC_NO_WORDNET) like every WordNet user. Cached: ``resources.clear_caches`` resets it."""
    return wordnet()


@functools.lru_cache(maxsize=4)
def _data(name: str) -> bytes:
    _reader()
    return (prepare_nltk_wordnet() / f"data.{name}").read_bytes()


def _strip_marker(name: str) -> str:
    """``"galore(ip)"`` -> ``"galore"``: NLTK's ``(.*?)(\\([^()]*\\))?$`` without the regex."""
    if name.endswith(")"):
        cut = name.rfind("(")
        if cut >= 0 and ")" not in name[cut + 1 : -1]:
            return name[:cut]
    return name


@functools.lru_cache(maxsize=200_000)
def synset(pos: str, offset: int) -> Synset:
    """The synset at byte ``offset`` of the data file of ``pos`` (as NLTK's ``synset_from_pos_and_offset``)."""
    data = _data(_FILE[pos])
    end = data.find(b"\n", offset)
    line = data[offset : end if end >= 0 else len(data)].decode("utf-8")
    columns, _, gloss = line.strip().partition("|")
    fields = columns.split()
    if int(fields[0]) != offset:
        raise ValueError(f"WordNet data.{_FILE[pos]}: no synset at offset {offset}")
    n_lemmas = int(fields[3], 16)
    lemmas = tuple(_strip_marker(fields[4 + 2 * i]) for i in range(n_lemmas))
    at = 4 + 2 * n_lemmas
    pointers: dict[str, list] = {}
    lexical = []
    for i in range(int(fields[at])):
        symbol, target, target_pos, ids = fields[at + 1 + 4 * i : at + 5 + 4 * i]
        if ids == "0000":  # semantic: synset to synset
            pointers.setdefault(symbol, []).append((target_pos, int(target)))
        else:  # lexical: lemma to lemma, "sstt" hexadecimal lemma numbers from 1
            lexical.append((symbol, int(ids[:2], 16) - 1, target_pos, int(target), int(ids[2:], 16) - 1))
    definition = _QUOTED.sub("", gloss).strip().strip("; ")
    return Synset(fields[2], offset, lemmas, tuple((k, tuple(v)) for k, v in pointers.items()), definition, tuple(lexical))


def synsets(word: str, pos: str | None = None, first: int | None = None) -> list[Synset]:
    """The synsets of ``word`` in the order of NLTK's ``wordnet().synsets(word, pos)``; only the
    ``first`` ones (parsing a synset costs more than finding it)."""
    wn = _reader()
    word = word.lower()
    index = wn._lemma_pos_offset_map
    found = [(p, offset) for p in (pos or _POS_ORDER) for form in wn._morphy(word, p) for offset in index[form].get(p, [])]
    return [synset(p, offset) for p, offset in found[:first]]


def related(syn: Synset, symbol: str, first: int | None = None) -> list[Synset]:
    """The synsets ``syn`` points to with ``symbol`` ("@" hypernyms, "~" hyponyms, ";u" usage
    domains), sorted by :func:`synset_name` (WordNet gives them no order); only the ``first`` ones
    are parsed (a name needs only the line's first lemma)."""
    return [synset(pos, offset) for pos, offset in related_keys(syn, symbol)[:first]]


def related_keys(syn: Synset, symbol: str) -> list[tuple[str, int]]:
    """The ``(pos, offset)`` of the synsets :func:`related` returns, in its order, none parsed."""
    for name, targets in syn.pointers:
        if name == symbol:
            return sorted(dict.fromkeys(targets), key=lambda t: _name(t[0], t[1], _first_lemma(*t)))
    return []


def lemma_related(syn: Synset, lemma: str, symbol: str) -> list[str]:
    """The lemma names that ``lemma`` (a name of ``syn``) points to with ``symbol`` ("!" antonyms), in
    WordNet's order; as NLTK, the pointers of every lemma of ``syn`` with that name."""
    return [
        synset(pos, offset).lemmas[target]
        for sym, source, pos, offset, target in syn.lexical
        if sym == symbol and syn.lemmas[source] == lemma
    ]


def synset_name(syn: Synset) -> str:
    """NLTK's ``Synset.name()``: first lemma, pos, sense number of the synset for that lemma."""
    return _name(syn.pos, syn.offset, syn.lemmas[0].lower())


@functools.lru_cache(maxsize=200_000)
def _first_lemma(pos: str, offset: int) -> str:
    """The first lemma (lower case) of the synset at ``offset``, read without parsing the line."""
    data = _data(_FILE[pos])
    return _strip_marker(data[offset : data.find(b"\n", offset)].split(maxsplit=5)[4].decode("utf-8")).lower()


@functools.lru_cache(maxsize=200_000)
def _name(pos: str, offset: int, lemma: str) -> str:
    sense = _reader()._lemma_pos_offset_map[lemma][pos].index(offset) + 1
    return f"{lemma}.{pos}.{sense:02d}"


def offensive(syn: Synset) -> bool:
    """A sense marked as a slur or an obscenity, by its definition (:data:`OFFENSIVE_MARKS`) or its
    usage domain (:data:`OFFENSIVE_DOMAINS`): never offered as a replacement word."""
    definition = syn.definition.lower()
    if any(mark in definition for mark in OFFENSIVE_MARKS):
        return True
    return any(domain.lemmas[0].lower() in OFFENSIVE_DOMAINS for domain in related(syn, ";u"))
