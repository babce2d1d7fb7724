"""Coarse POS tags for word tokens: a spaCy pipeline where one is installed, a heuristic otherwise.

Tags: NOUN PROPN VERB ADJ ADV NUM AUX FUNC (closed-class words) PUNCT X.

Which tagger (``tagger=`` of the attacks that tag, or ``$ROBUST_MRC_TAGGER``):

* ``auto`` (default): spaCy when it and an English pipeline are installed (``pip install
  robust-mrc[nlp]``), else the heuristic;
* ``spacy``: spaCy, :class:`ResourceMissing` when it is not installed;
* ``heuristic``: closed-class word lists, numbers, capitalisation, suffixes and the WordNet POS
  with the most senses (no model).

Both are deterministic: the same tokens get the same tags in every process with the same packages.
So ``auto`` gives the same data on every machine where the same packages are installed, but
installing spaCy changes the output of the attacks that tag (AddSent): :func:`tagger_name` says
which tagger (and pipeline version) is in use.
"""

from __future__ import annotations

import functools
import os
import re

from robust_mrc.attacks.resources.cache import ResourceMissing
from robust_mrc.attacks.resources.wordnet import wn_pos_counts
from robust_mrc.attacks.resources.words import AUXILIARIES, DETERMINERS, NUMBER_WORDS, STOPWORDS

NOUN, PROPN, VERB, ADJ, ADV, NUM, AUX, FUNC, PUNCT, OTHER = (
    "NOUN",
    "PROPN",
    "VERB",
    "ADJ",
    "ADV",
    "NUM",
    "AUX",
    "FUNC",
    "PUNCT",
    "X",
)
TAGGERS = ("auto", "spacy", "heuristic")
_WN_TO_TAG = {"n": NOUN, "v": VERB, "a": ADJ, "r": ADV}
_TAG_TO_WN = {NOUN: "n", PROPN: "n", VERB: "v", ADJ: "a", ADV: "r"}
_NUMBER_RE = re.compile(r"^\d+(?:[.,]\d+)*$")


def wn_pos(tag: str) -> str | None:
    """The WordNet POS letter (n/v/a/r) of a tag, None for the others."""
    return _TAG_TO_WN.get(tag)


def check_tagger(spec: str | None, attack: str) -> None:
    """ValueError naming the attack when ``spec`` is not None and not one of :data:`TAGGERS`."""
    if spec is not None and str(spec).strip().lower() not in TAGGERS:
        raise ValueError(f"attack {attack!r}: tagger must be one of {', '.join(TAGGERS)}, got {spec!r}")


def resolve_tagger(spec: str | None = None) -> str:
    """ "spacy" or "heuristic" for ``spec`` (None reads ``$ROBUST_MRC_TAGGER``, default "auto")."""
    from robust_mrc.attacks.resources import spacy_tagger

    choice = (spec or os.environ.get("ROBUST_MRC_TAGGER") or "auto").strip().lower()
    if choice not in TAGGERS:
        raise ValueError(f"tagger must be one of {', '.join(TAGGERS)} (attack parameter tagger= or $ROBUST_MRC_TAGGER), got {choice!r}")
    if choice == "auto":
        return "spacy" if spacy_tagger.available() else "heuristic"
    if choice == "spacy" and not spacy_tagger.available():
        raise ResourceMissing(spacy_tagger.SPACY_HINT)
    return choice


def tagger_name(spec: str | None = None) -> str:
    """The tagger :func:`pos_tag` uses for ``spec``, with the spaCy and pipeline versions."""
    from robust_mrc.attacks.resources import spacy_tagger

    return spacy_tagger.describe() if resolve_tagger(spec) == "spacy" else "heuristic"


def pos_tag(tokens: list[str], tagger: str | None = None) -> list[str]:
    """Coarse POS tags for word tokens (see the module for ``tagger``)."""
    if resolve_tagger(tagger) == "spacy":
        from robust_mrc.attacks.resources import spacy_tagger

        return list(spacy_tagger.tag(tuple(tokens)))
    return heuristic_tag(tokens)


@functools.lru_cache(maxsize=200_000)
def _lexical_tag(lower: str) -> str:
    if lower in AUXILIARIES:
        return AUX
    if lower in STOPWORDS:
        return FUNC
    if _NUMBER_RE.match(lower) or lower in NUMBER_WORDS:
        return NUM
    counts = wn_pos_counts(lower)
    if counts:
        # the POS with the most senses; ties in WordNet's n, v, a, r order
        return _WN_TO_TAG[max(counts, key=lambda pc: pc[1])[0]]
    if lower.endswith("ly"):
        return ADV
    if lower.endswith(("ing", "ed", "ize", "ise", "ify")):
        return VERB
    if lower.endswith(("ous", "ful", "ive", "able", "ible", "al", "ic", "less", "ish")):
        return ADJ
    return NOUN


def heuristic_tag(tokens: list[str]) -> list[str]:
    """The heuristic tagger: word lists, numbers, capitalisation, suffixes, WordNet's commonest POS."""
    tags = []
    for i, tok in enumerate(tokens):
        if not any(ch.isalnum() for ch in tok):
            tags.append(PUNCT)
            continue
        lower = tok.lower()
        tag = _lexical_tag(lower)
        prev = tokens[i - 1].lower() if i else ""
        if tag not in (AUX, FUNC, NUM) and tok[:1].isupper():
            sentence_initial = i == 0 or tokens[i - 1] in (".", "!", "?", '"', "``")
            if not sentence_initial or not wn_pos_counts(lower):
                tag = PROPN
        elif tag == NOUN and prev == "to" and any(p == "v" for p, _ in wn_pos_counts(lower)):
            tag = VERB
        elif tag == VERB and prev in DETERMINERS and any(p == "n" for p, _ in wn_pos_counts(lower)):
            tag = NOUN
        tags.append(tag)
    return tags
