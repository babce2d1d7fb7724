"""AddSent step 1: alter the question (Jia & Liang 2017, section 4.1).

Special swaps (largest<->smallest, US<->UK, ...), WordNet antonyms (first synset, single words) of
nouns and adjectives, nearest words for proper nouns, another first digit for numbers, and a fixed
name per entity type as fall-back. A candidate whose stem is a prefix of the original's (or the
reverse) or that already occurs in the question is rejected.
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.editing import match_case
from robust_mrc.data.text import TOKEN_RE

# AddSent's special swaps, both ways (an attack-specific table, not an English word list)
SWAPS: dict[str, str] = {}
for _a, _b in [
    ("largest", "smallest"),
    ("highest", "lowest"),
    ("most", "least"),
    ("first", "last"),
    ("before", "after"),
    ("earliest", "latest"),
    ("longest", "shortest"),
    ("more", "less"),
    ("north", "south"),
    ("east", "west"),
    ("northern", "southern"),
    ("eastern", "western"),
    ("us", "uk"),
    ("american", "british"),
    ("oldest", "youngest"),
    ("best", "worst"),
    ("maximum", "minimum"),
    ("increase", "decrease"),
    ("top", "bottom"),
    ("early", "late"),
    ("upper", "lower"),
    ("inside", "outside"),
    ("above", "below"),
    ("winter", "summer"),
    ("men", "women"),
    ("man", "woman"),
    ("biggest", "tiniest"),
    ("greatest", "least"),
    ("major", "minor"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("older", "younger"),
]:
    SWAPS[_a], SWAPS[_b] = _b, _a

# a proper noun with no usable nearest word: a place after a place preposition, else a person
_FALLBACK_NAMES = {"person": ("Jeff", "Charles"), "place": ("Chicago", "Melbourne"), "other": ("Acme", "Globex")}


def _rejected(cand: str, orig: str, qwords: set[str]) -> bool:
    sc, so = R.stem(cand), R.stem(orig)
    return not cand or sc.startswith(so) or so.startswith(sc) or cand.lower() in qwords


def change_first_digit(num: str, variant: int = 0) -> str:
    """``num`` with its first digit replaced (never by itself, never a leading 0 of a longer number)."""
    for i, ch in enumerate(num):
        if ch.isdigit():
            d = int(ch)
            new = (d + 1 + variant) % 10
            if new == 0 and i == 0 and len(num) > 1:
                new = 1 if d != 1 else 2
            if new == d:
                new = (d + 2) % 10
            return num[:i] + str(new) + num[i + 1 :]
    return num


def _swap(tok: str) -> str:
    low = tok.lower()
    return match_case(tok, SWAPS[low].upper() if tok.isupper() and len(tok) <= 3 else SWAPS[low])


def _proper_noun(toks: list[str], i: int, variant: int, nb, qwords: set[str]) -> str | None:
    """A nearest word of the proper noun ``toks[i]``, else a fixed name; None: nothing usable."""
    tok, low = toks[i], toks[i].lower()
    cands = [c for c in nb.neighbours(low, 10) if c.isalpha() and not _rejected(c, low, qwords)]
    if len(cands) > variant:
        return match_case(tok, cands[variant])
    kind = "place" if i and toks[i - 1].lower() in R.PLACE_PREPOSITIONS else "person"
    name = _FALLBACK_NAMES[kind][variant % 2]
    return None if _rejected(name, low, qwords) else name


def _antonym(tok: str, tag: str, variant: int, qwords: set[str]) -> str | None:
    """A WordNet antonym (first synset) of the noun or adjective ``tok``; None: none usable."""
    low = tok.lower()
    pos = R.wn_pos(tag)
    base = R.wordnet().morphy(low, pos) or low
    ants = [a for a in R.antonyms(base, pos, first_synset_only=True) if not _rejected(a, low, qwords)]
    return match_case(tok, ants[variant % len(ants)]) if ants else None


def alter_question(question: str, variant: int = 0, vectors=None, tagger=None) -> tuple[list[str], int]:
    """Question tokens with alterations, and how many were made. ``variant`` picks other candidates."""
    toks = TOKEN_RE.findall(question)
    tags = R.pos_tag(toks, tagger)
    qwords = {t.lower() for t in toks}
    out = list(toks)
    changed = 0
    nb = None
    for i, (tok, tag) in enumerate(zip(toks, tags)):
        low = tok.lower()
        new = None
        if i and toks[i - 1].lower() == "how" and tag in (R.ADJ, R.ADV):
            continue  # part of the wh-phrase ("how many", "how old"): the rules need it as it is
        if low in SWAPS:
            new = _swap(tok)
        elif tag in (R.PUNCT, R.FUNC, R.AUX) or low in R.STOPWORDS:
            continue
        elif tag == R.NUM and any(c.isdigit() for c in tok):
            new = change_first_digit(tok, variant)
        elif tag == R.PROPN and tok.isalpha():
            if nb is None:
                nb = R.neighbours(vectors, "distributional")  # related but different words
            new = _proper_noun(toks, i, variant, nb, qwords)
        elif tag in (R.NOUN, R.ADJ) and tok.isalpha() and R.has_wordnet():
            new = _antonym(tok, tag, variant, qwords)
        if new is not None:
            out[i] = new
            changed += 1
    return out, changed
