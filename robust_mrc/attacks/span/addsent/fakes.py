"""AddSent step 2: fake answers of the gold answer's type (Jia & Liang 2017, section 4.1).

Ordered rules, every match kept, best first: year - 25 (a year range: both ends), a decade - 30,
dates (month + 6, year - 25), numbers (1000 < n < 2500: n - 75, else another first digit; both
ends of a range move by as much: years - 75, other numbers up by a unit of the first's leading
digit; a decade and a century take "the"), number words, abbreviations, organisation, location (from the answer's cue words and the
question's wh-phrase), person, year / number asked for by the question, proper-noun phrase, then
by the POS of the answer's last word (keeping its article), and a catch-all noun; a first word
that is a preposition or an article is lower case. AddSentMod (``mod=True``) takes the second
entry of every table and shifts years and numbers by 10 more.
"""

from __future__ import annotations

import re

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.editing import match_case
from robust_mrc.attacks.inflection import article_for
from robust_mrc.attacks.span.addsent.alter import change_first_digit
from robust_mrc.data.text import TOKEN_RE, normalize

# entity cue words and wh-phrases of AddSent's fake-answer rules (attack-specific tables)
_ORG_CUES = frozenset(
    "university company corporation inc association party council institute society agency department committee bank "
    "church college school club league foundation ltd co organization organisation army navy court".split()
)
_LOC_CUES = frozenset(
    "city river mountain mountains lake county ocean island islands street province state country valley sea bay park "
    "kingdom republic".split()
)
_LOC_QWORDS = (
    "where",
    "what city",
    "which city",
    "what country",
    "which country",
    "what state",
    "which state",
    "what region",
    "what continent",
    "what town",
    "what place",
    "what location",
)
# lower-case words a capitalised name may hold ("Bank of England", "Pont de Normandie")
_NAME_LINKS = ("of", "the", "and", "de", "for")
# fake answers of the verb, adjective and adverb rules: no subject of a sentence
NOT_NOUNS = frozenset(
    ("jump", "swim", "jumping", "swimming", "jumped", "swam", "jumps", "swims", "purple", "enormous", "quickly", "silently")
)
# (AddSent, AddSentMod) fake answers
_FAKE = {
    "abbr": ("ABC", "XYZ"),
    "person": ("Jeff Dean", "Charles Babbage"),
    "org": ("Initech Corporation", "Globex Company"),
    "place": ("Chicago", "Melbourne"),
    "year": ("1962", "1841"),
    "number": ("42", "17"),
    "propn": ("Central Park", "Riverside Gardens"),
    "verb": ("jump", "swim"),
    "verb_ing": ("jumping", "swimming"),
    "verb_ed": ("jumped", "swam"),
    "verb_s": ("jumps", "swims"),
    "adj": ("purple", "enormous"),
    "adv": ("quickly", "silently"),
    "noun": ("stone", "mountain"),
    "nouns": ("stones", "mountains"),
    "any": ("the stone", "the mountain"),
}
# a first word a fake answer keeps in lower case ("In 1973" -> "in 1898")
_LOWER_FIRST = frozenset("in on at during by for from with about around after before since until the a an".split())
_MONTH_RE = re.compile(r"(?i)\b(" + "|".join(R.MONTHS) + r")\b")
_YEAR_RE = re.compile(r"\b(1\d{3}|20\d{2})\b")
_NUMBER_RE = re.compile(r"\d[\d,]*(?:\.\d+)?")
_YEAR_RANGE_RE = re.compile(r"(1\d{3}|20\d{2})\s*(?:-|\u2013|\u2014|to|and)\s*(1\d{3}|20\d{2})")
_RANGE_LINK_RE = re.compile(r"\s*(?:%|\s)?\s*(?:-|\u2013|\u2014|to|and)\s*[$\u00a3\u20ac]?")
_DECADE_RE = re.compile(r"\b(1\d{2}0|20\d0)s\b")


def _det(answer_words: list[str], phrase: str) -> str:
    """``phrase`` after the answer's article (lower case; a/an agreeing with ``phrase``), if it has one."""
    if answer_words and answer_words[0].lower() in ("a", "an", "the"):
        d = answer_words[0].lower()
        if d in ("a", "an"):
            d = article_for(phrase)
        return d + " " + phrase
    return phrase


def _head_tag(answer: str, head: str, tagger=None) -> str:
    """The POS of the answer's last word: alone with the heuristic tagger, in the answer with spaCy."""
    if R.resolve_tagger(tagger) == "heuristic":
        return R.pos_tag([head], "heuristic")[0]
    toks = TOKEN_RE.findall(answer)
    word_idx = [i for i, t in enumerate(toks) if any(c.isalnum() for c in t)]
    return R.pos_tag(toks, tagger)[word_idx[-1]] if word_idx else R.pos_tag([head], tagger)[0]


def _value(num: str) -> float:
    return float(num.replace(",", ""))


def _number_fakes(a: str, k: int) -> list[str]:
    """Years, year ranges and decades, dates, numbers and number words, shifted (years only back)."""
    out = []
    shift = 25 + 10 * k
    if re.fullmatch(r"(\d{4})", a) and 1000 <= int(a) <= 2100:
        out.append(str(int(a) - shift))
    m = _YEAR_RANGE_RE.fullmatch(a)
    if m:  # both ends move by the same years: the range stays in order
        out.append(_YEAR_RE.sub(lambda y: str(int(y.group()) - shift), a))
    m = _DECADE_RE.search(a)
    if m:
        the = "" if m.start() else "the "  # "1980s" -> "the 1950s": the decade goes into a sentence
        out.append(a[: m.start()] + f"{the}{int(m.group(1)) - 30 - 10 * k}s" + a[m.end() :])
    low = a.lower()
    if any(mo in low.split() or mo + "," in low.split() for mo in R.MONTHS):

        def later_month(mm):
            word = mm.group(0)
            return match_case(word, R.MONTHS[(R.MONTHS.index(word.lower()) + 6 + k) % 12])

        new = _MONTH_RE.sub(later_month, a, count=1)
        out.append(_YEAR_RE.sub(lambda y: str(int(y.group()) - shift), new))
    m = _NUMBER_RE.search(a)
    if m and not _DECADE_RE.search(a):

        def shifted(num: str) -> str:
            val = float(num.replace(",", ""))
            return str(int(val) - 75 - 10 * k) if 1000 < val < 2500 and "." not in num else change_first_digit(num, k)

        new = a[: m.start()] + shifted(m.group()) + a[m.end() :]
        later = _NUMBER_RE.search(a, m.end())
        plain = "." not in m.group() + (later.group() if later else "")
        if later and plain and _RANGE_LINK_RE.fullmatch(a[m.end() : later.start()]):  # a range: both ends move by as much
            first = int(_value(m.group()))
            delta = int(shifted(m.group())) - first if 1000 < first < 2500 else (k + 1) * 10 ** (len(str(first)) - 1)
            ends = [f"{int(_value(x)) + delta:,}" if "," in x else str(int(_value(x)) + delta) for x in (m.group(), later.group())]
            if 1000 < first < 2500 and len(later.group()) == 2:  # "1524-25" -> "1449-50"
                ends[1] = f"{(int(later.group()) + delta) % 100:02d}"
            new = a[: m.start()] + ends[0] + a[m.end() : later.start()] + ends[1] + a[later.end() :]
        out.append(new)
    if low in R.CARDINALS:
        out.append(match_case(a, R.CARDINALS[(R.CARDINALS.index(low) + 3 + k) % len(R.CARDINALS)]))
    return out


def _entity_fakes(a: str, q: str, k: int) -> list[str]:
    """Abbreviation, organisation, place, person, year, number, proper noun: by the answer's shape
    and cue words and by the question's wh-phrase (``q`` is lower case)."""
    ws = a.split()
    out = []
    if re.fullmatch(r"[A-Z]{2,}", a):
        out.append(_FAKE["abbr"][k])
    words_low = {w.lower().strip(".,") for w in ws}
    caps = bool(ws) and all(w[:1].isupper() for w in ws if w.lower() not in _NAME_LINKS)
    if words_low & _ORG_CUES and caps:
        out.append(_FAKE["org"][k])
    if (words_low & _LOC_CUES and caps) or q.startswith(_LOC_QWORDS):
        out.append(_FAKE["place"][k])
    if q.startswith(("who", "whom", "whose")) or (caps and 2 <= len(ws) <= 3 and not words_low & (_ORG_CUES | _LOC_CUES)):
        out.append(_FAKE["person"][k])
    if q.startswith("when") or "what year" in q:
        out.append(_FAKE["year"][k])
    if q.startswith(("how many", "how much")):
        out.append(_FAKE["number"][k])
    if caps:
        out.append(_FAKE["propn"][k])
    return out


def _plural_noun(word: str) -> bool:
    """A plural noun: WordNet's morphology takes it to another lemma ("stones"; not "genius",
    "glass"); without WordNet, an -s that is not -ss or -us."""
    if R.has_wordnet():
        base = R.wordnet().morphy(word, "n")
        return bool(base) and base != word
    return word.endswith("s") and not word.endswith(("ss", "us"))


def _pos_fake(a: str, k: int, tagger) -> str | None:
    """A word of the POS of the answer's last word (verbs keep -ing/-ed/-s, nouns their number)."""
    ws = a.split()
    if not ws:
        return None
    head = ws[-1].strip(".,;:").lower()
    tag = _head_tag(a, head, tagger)
    if tag == R.VERB:
        kind = "verb_ing" if head.endswith("ing") else "verb_ed" if head.endswith("ed") else "verb_s" if head.endswith("s") else "verb"
        return _FAKE[kind][k]
    if tag == R.ADJ:
        return _det(ws, _FAKE["adj"][k])
    if tag == R.ADV and head.endswith("ly"):
        return _FAKE["adv"][k]
    if tag in (R.NOUN, R.PROPN, R.ADV):  # an adverb without -ly is a noun the tagger did not know ("dinophyte")
        return _det(ws, _FAKE["nouns" if _plural_noun(head) else "noun"][k])
    return None


def fake_answers(answer: str, question: str, mod: bool = False, tagger=None) -> list[str]:
    """Fake answers of the answer's type, best rule first (AddSentMod: the other table); none
    equals the answer (after SQuAD normalisation), no duplicates."""
    k = 1 if mod else 0
    a = answer.strip()
    q = question.strip().lower()
    out: list[str] = []
    for x in [*_number_fakes(a, k), *_entity_fakes(a, q, k), _pos_fake(a, k, tagger), _FAKE["any"][k]]:
        if x and x.split()[0].lower() in _LOWER_FIRST and len(x.split()) > 1:
            x = x[0].lower() + x[1:]  # "In 1898" -> "in 1898": the fake answer goes inside a sentence
        if x and re.match(r"\d+(?:st|nd|rd|th) (?:century|centuries|millennium)", x):
            x = "the " + x  # "10th century" -> "the 20th century"
        if x and normalize(x) != normalize(a) and x not in out:
            out.append(x)
    return out
