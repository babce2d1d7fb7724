"""English inflection for words an attack puts into a sentence: a replacement takes the form of the
word it replaces (plural noun, past verb, superlative adjective), and an article agrees with the
word after it.

Rules with the irregular forms of WordNet's exception lists (``noun.exc``: children -> child,
read backwards; ``adj.exc``: better -> good) and of :data:`~robust_mrc.attacks.resources.words.IRREGULAR_PAST`
and :data:`IRREGULAR_PARTICIPLE`. Forms are lower case; :func:`robust_mrc.attacks.editing.match_case`
gives them the original's case. Penn tags name the forms (``NNS``, ``VBD``, ``VBN``, ``VBZ``,
``VBG``, ``JJR``, ``JJS``, ``RBR``, ``RBS``), as spaCy's tagger gives them.
"""

from __future__ import annotations

import functools
import re

from robust_mrc.attacks.resources.store import ResourceMissing
from robust_mrc.attacks.resources.words import IRREGULAR_PAST

# past participles that differ from the simple past
IRREGULAR_PARTICIPLE = dict(
    pair.split(":")
    for pair in "go:gone take:taken give:given become:become begin:begun come:come do:done know:known see:seen speak:spoken "
    "write:written grow:grown rise:risen fall:fallen choose:chosen eat:eaten draw:drawn wear:worn break:broken drive:driven "
    "fly:flown forget:forgotten ride:ridden sing:sung steal:stolen swim:swum throw:thrown be:been bear:born bite:bitten "
    "blow:blown forgive:forgiven freeze:frozen hide:hidden shake:shaken sink:sunk spring:sprung swear:sworn tear:torn "
    "wake:woken withdraw:withdrawn run:run show:shown prove:proven get:got".split()
)
_VOWELS = "aeiou"
# a/an by sound where the spelling misleads: "an hour", "a university", "a one-way", "an MP"
_AN_EXCEPTIONS = ("hour", "honest", "honour", "honor", "heir", "unim", "unin", "unid")
_A_EXCEPTIONS = ("uni", "use", "usu", "uti", "eu", "one", "once", "ewe", "ufo", "uk", "us ", "u.s")
# "a" / "an", or "A" / "An" opening the text or a sentence (elsewhere a capital "A" is a letter: "option A is")
_ARTICLE_RE = re.compile(r"(?:\b(an?)|(?:^|(?<=[.!?]\s))(An?))(\s+)([\"'\u201c(]?)(\w[\w'-]*)")


@functools.lru_cache(maxsize=8)
def _exceptions(pos: str) -> dict[str, str]:
    """WordNet's ``<pos>.exc`` read backwards (base -> inflected form), first listed form kept; {} without WordNet."""
    from robust_mrc.attacks.resources.wordnet import prepare_nltk_wordnet

    try:
        root = prepare_nltk_wordnet()
    except ResourceMissing:
        return {}
    out: dict[str, str] = {}
    try:
        lines = (root / f"{pos}.exc").read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and "_" not in parts[0]:
            for base in parts[1:]:
                out.setdefault(base, parts[0])
    return out


def plural(noun: str) -> str:
    """The plural of a singular noun (lower case): child -> children, city -> cities, box -> boxes."""
    low = noun.lower()
    if " " in low:  # "ice hockey" -> "ice hockeys": the head is the last word
        head, _, last = low.rpartition(" ")
        return f"{head} {plural(last)}"
    irregular = _IRREGULAR_PLURAL.get(low) or _exceptions("noun").get(low)
    if irregular:
        return irregular
    if low.endswith(("s", "sh", "ch", "x", "z")):
        return low + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in _VOWELS:
        return low[:-1] + "ies"
    return low + "s"


# plurals the exception list lacks or gives in a rarer form first
_IRREGULAR_PLURAL = {
    "man": "men",
    "woman": "women",
    "child": "children",
    "person": "people",
    "foot": "feet",
    "tooth": "teeth",
    "mouse": "mice",
    "goose": "geese",
    "sheep": "sheep",
    "fish": "fish",
    "deer": "deer",
    "knife": "knives",
    "wife": "wives",
    "life": "lives",
    "leaf": "leaves",
    "wolf": "wolves",
    "half": "halves",
    "potato": "potatoes",
    "tomato": "tomatoes",
    "hero": "heroes",
    "photo": "photos",
    "piano": "pianos",
    "radio": "radios",
    "zoo": "zoos",
    "video": "videos",
    "policeman": "policemen",
    "businessman": "businessmen",
    "fireman": "firemen",
}


def past(verb: str) -> str:
    """The simple past (lower case): went, made, tried, stopped, liked."""
    low = verb.lower()
    if low in IRREGULAR_PAST:
        return IRREGULAR_PAST[low]
    return _regular_ed(low)


def past_participle(verb: str) -> str:
    """The past participle (lower case): gone, taken, made, tried."""
    low = verb.lower()
    return IRREGULAR_PARTICIPLE.get(low) or past(low)


def third_person(verb: str) -> str:
    """The third person singular present (lower case): has, goes, tries, works."""
    low = verb.lower()
    if low == "have":
        return "has"
    if low == "be":
        return "is"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return low + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in _VOWELS:
        return low[:-1] + "ies"
    return low + "s"


def gerund(verb: str) -> str:
    """The -ing form (lower case): going, making, stopping, lying."""
    low = verb.lower()
    if low.endswith("ie"):
        return low[:-2] + "ying"
    if low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and len(low) > 2:
        return low[:-1] + "ing"
    if _doubles_final(low):
        return low + low[-1] + "ing"
    return low + "ing"


def _regular_ed(low: str) -> str:
    if low.endswith("e"):
        return low + "d"
    if low.endswith("y") and len(low) > 2 and low[-2] not in _VOWELS:
        return low[:-1] + "ied"
    if _doubles_final(low):
        return low + low[-1] + "ed"
    return low + "ed"


# verbs stressed on a final consonant-vowel-consonant syllable: the consonant doubles (transmitted, occurred)
_STRESSED_FINAL = (
    "admit commit emit omit permit submit transmit remit occur recur incur concur prefer refer transfer confer infer defer deter "
    "compel expel propel repel dispel control patrol regret forget begin upset equip acquit rebel excel abhor allot embed forbid"
).split()


def _doubles_final(low: str) -> bool:
    """One syllable ending consonant-vowel-consonant (stop -> stopped; not "open", "visit", "fix"),
    or a verb stressed on such a final syllable (transmit -> transmitted)."""
    if len(low) < 3 or low[-1] in _VOWELS + "wxy" or low[-2] not in _VOWELS or low[-3] in _VOWELS:
        return False
    if low.endswith(tuple(_STRESSED_FINAL)):
        return True
    return sum(1 for i, ch in enumerate(low) if ch in _VOWELS and (i == 0 or low[i - 1] not in _VOWELS)) == 1


def verb_form(base: str, tag: str) -> str:
    """``base`` (a verb's lemma) in the form the Penn ``tag`` names (VB, VBP: as it is)."""
    if tag == "VBD":
        return past(base)
    if tag == "VBN":
        return past_participle(base)
    if tag == "VBZ":
        return third_person(base)
    if tag == "VBG":
        return gerund(base)
    return base.lower()


_IRREGULAR_DEGREE = {
    "good": ("better", "best"),
    "well": ("better", "best"),
    "bad": ("worse", "worst"),
    "badly": ("worse", "worst"),
    "ill": ("worse", "worst"),
    "many": ("more", "most"),
    "much": ("more", "most"),
    "few": ("fewer", "fewest"),
    "little": ("less", "least"),
    "far": ("farther", "farthest"),
    "old": ("older", "oldest"),
}


def degree(adjective: str, tag: str) -> str:
    """``adjective`` (its base form) as a comparative (``JJR`` / ``RBR``) or superlative (``JJS`` / ``RBS``):
    happier, biggest, more careful, most slowly; other tags: as it is."""
    low = adjective.lower()
    which = 0 if tag in ("JJR", "RBR") else 1 if tag in ("JJS", "RBS") else None
    if which is None:
        return low
    if low in _IRREGULAR_DEGREE:
        return _IRREGULAR_DEGREE[low][which]
    if " " in low or low.endswith("ly") or _syllables(low) > 2 or (_syllables(low) == 2 and not low.endswith(("y", "er", "le", "ow"))):
        return ("more " if which == 0 else "most ") + low
    suffix = "er" if which == 0 else "est"
    if low.endswith("e"):
        return low + suffix[1:]
    if low.endswith("y") and low[-2:-1] not in _VOWELS:
        return low[:-1] + "i" + suffix
    if _doubles_final(low):
        return low + low[-1] + suffix
    return low + suffix


def _syllables(word: str) -> int:
    groups = re.findall(r"[aeiouy]+", word)
    n = len(groups) - (1 if word.endswith("e") and len(groups) > 1 and not word.endswith(("le", "ee")) else 0)
    return max(n, 1)


def article_for(word: str) -> str:
    """ "a" or "an" before ``word`` (by its sound, as far as spelling tells: an hour, a university, an MP)."""
    low = word.lower()
    if not low:
        return "a"
    if low.startswith(_AN_EXCEPTIONS):
        return "an"
    if low.startswith(_A_EXCEPTIONS):
        return "a"
    if word.isupper() and len(word) > 1:  # an acronym read letter by letter: "an MP", "a UFO" (above), "an FBI agent"
        return "an" if low[0] in "aefhilmnorsx" else "a"
    return "an" if low[0] in _VOWELS else "a"


def fix_articles(text: str) -> str:
    """``text`` with every "a" / "an" agreeing with the word after it ("a evil" -> "an evil"); case kept."""

    def fix(m: re.Match) -> str:
        low, cap, space, quote, word = m.groups()
        art = low or cap
        want = article_for(word)
        if art.lower() == want:
            return m.group(0)
        new = want.capitalize() if art[0].isupper() else want
        return f"{new}{space}{quote}{word}"

    return _ARTICLE_RE.sub(fix, text)
