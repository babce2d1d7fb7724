"""The grammar AddSent's declarative rules need: the question's tokens and their joining back into
text, verb inflection (:mod:`robust_mrc.attacks.inflection`), noun-phrase ends, the main verb.

Rule-based stand-ins for CoreNLP's parses (the paper's step 3 uses constituency parses).
"""

from __future__ import annotations

import re

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


_OPENING = "\"'\u201c\u2018([{$\u00a3\u20ac"
_CLOSING = "\"'\u201d\u2019)]},;:?!%"
_CLITIC_RE = re.compile(r"(?i)^(.+?)(['\u2019]s|n['\u2019]t)$")


def question_tokens(text: str) -> list[str]:
    """``text`` split at white space, with opening and closing punctuation, a possessive 's and
    n't split off, and a final full stop; a word keeps its hyphens, digits, inner full stops and
    accents ("French-language", "1980s", "U.S.", "Beyonc\u00e9" are one token each)."""
    out: list[str] = []
    pieces = text.split()
    for k, piece in enumerate(pieces):
        lead: list[str] = []
        while len(piece) > 1 and piece[0] in _OPENING:
            lead.append(piece[0])
            piece = piece[1:]
        trail: list[str] = []
        while len(piece) > 1 and piece[-1] in _CLOSING:
            trail.insert(0, piece[-1])
            piece = piece[:-1]
        if k == len(pieces) - 1 and len(piece) > 1 and piece.endswith(".") and piece.count(".") == 1:
            trail.insert(0, ".")
            piece = piece[:-1]
        m = _CLITIC_RE.match(piece)
        body = [m.group(1), m.group(2)] if m and any(ch.isalnum() for ch in m.group(1)) else [piece]
        out += lead + body + trail
    return out


_GLUE_LEFT_RE = re.compile(r"\s+(['\u2019]s\b|n['\u2019]t\b|['\u2019](?=\s|$)|[%)\]},;:.!?])")
_GLUE_RIGHT_RE = re.compile(r"([(\[{$\u00a3\u20ac\u201c])\s+")


def join_tokens(text: str) -> str:
    """Space-joined tokens back into text: no space before closing punctuation, 's, n't or a
    plural's apostrophe, none after opening punctuation or a currency sign, straight double quotes
    paired around what they quote."""
    words = text.split()
    if words.count('"') % 2 == 0:
        out: list[str] = []
        opening, glue = True, False
        for w in words:
            if w == '"':
                if opening:
                    out.append(w)
                    glue = True
                elif out:
                    out[-1] += w
                else:
                    out.append(w)
                opening = not opening
                continue
            if glue and out:
                out[-1] += w
            else:
                out.append(w)
            glue = False
        words = out
    text = " ".join(words)
    text = _GLUE_LEFT_RE.sub(r"\1", text)
    return _GLUE_RIGHT_RE.sub(r"\1", text)
