"""The grammar AddSent's declarative rules need: verb inflection (:mod:`robust_mrc.attacks.inflection`), noun-phrase ends, the main verb.

Rule-based stand-ins for CoreNLP's parses (the paper's step 3 uses constituency parses).
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.inflection import past as past_tense
from robust_mrc.attacks.inflection import third_person

# tags that a noun phrase is made of (besides R.NOUN_PHRASE_WORDS and "of NP")
_NP_TAGS = (R.NOUN, R.PROPN, R.ADJ, R.NUM)
_MAIN_VERB_AUX = frozenset(("have", "do"))  # auxiliaries that are the main verb after do-support


def inflect(aux: str, verb: str) -> str:
    """The verb that replaces "``aux`` ... ``verb``": did -> past, does -> third person, else as is."""
    return past_tense(verb) if aux == "did" else third_person(verb) if aux == "does" else verb


def np_end(toks: list[str], tags: list[str], i: int) -> int:
    """End index of the noun phrase that starts at ``i`` (determiners, adjectives, nouns, 's, of NP);
    at least ``i + 1`` when ``i`` is inside ``toks``."""
    j = i
    while j < len(toks):
        t, g = toks[j].lower(), tags[j]
        if g in _NP_TAGS or t in R.NOUN_PHRASE_WORDS:
            j += 1
        elif t == "of" and j + 1 < len(toks) and j > i:
            j += 1
        else:
            break
    return max(j, i + 1) if i < len(toks) else i


def find_verb(toks: list[str], tags: list[str], start: int) -> int | None:
    """Index of the main verb from ``start`` on: the first word tagged VERB (or "have"/"do" used as
    a main verb: "does X have"), else the first later noun that WordNet also knows as a verb."""
    for j in range(start, len(toks)):
        if tags[j] == R.VERB or (j > start and toks[j].lower() in _MAIN_VERB_AUX):
            return j
    for j in range(start + 1, len(toks)):
        if tags[j] == R.NOUN and any(p == "v" for p, _ in R.wn_pos_counts(toks[j].lower())):
            return j  # a noun that WordNet also knows as a verb
    return None
