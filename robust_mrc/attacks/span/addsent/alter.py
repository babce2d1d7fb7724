"""AddSent step 1: alter the question (Jia & Liang 2017, section 4.1).

Per token, in this order:

* special swaps (largest<->smallest, US<->UK, ...; not a preposition that ends the question,
  "named after?", nor man/woman as a verb); a degree word before a noun swaps as a
  quantity ("most types" -> "few types"), and an adjective or adverb right after a swapped
  degree word stays ("less likely" -> "more likely", not "more unlikely");
* a year (1000-2100, also a decade "1980s" or a span "2007-2008") moves back ten years per
  variant; another first digit for other numbers;
* an acronym (not a Roman numeral) goes to a nearest word of its length that WordNet does not know ("CBS" -> "NBC"); a
  capitalised adjective (or a proper noun WordNet knows mostly as one: "Christian") to a nearest
  adjective ("European" -> "Scandinavian");
* proper nouns, one token per run of them ("Jean De Rely", "Rhine Gorge"): a first name to
  another first name of the same kind, else the run's last token that is not a common word (in a
  run of several) to a nearest word that is a noun or a
  name and neither a WordNet synonym nor within three hypernym or holonym links of it ("Warsaw"
  -> "Poland" is refused), nor a people's or language's word ("Holland" -> "Dutch"), nor another
  spelling of it ("Shu" -> "Sho"); a member of a contrast set (a country, city, nationality,
  language, religion: :mod:`robust_mrc.attacks.resources.contrasts`) only to another member of its
  sets ("Holland" -> "Belgium", "German" -> "French"), else (a single name after a place preposition, a listed person name,
  or a name after do/be or before a verb or 's) a fixed name;
* WordNet antonyms (first synset, single words, used at least once in WordNet's sense-tagged
  corpus: "member" -> "nonmember" is refused) of nouns and adjectives, in the number or degree of
  the word they replace.

A candidate whose stem is a prefix of the original's (or the reverse) or that already occurs in
the question is rejected; a run of capitalised words (a name) keeps one alteration. When none of
this changed a content word outside the question's opening wh-phrase, the last proper noun there
goes to a fixed name. ``variant`` picks the next candidate of each rule.
"""

from __future__ import annotations

import functools
import re
import zlib

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.editing import match_case
from robust_mrc.attacks.inflection import degree, plural
from robust_mrc.attacks.replacements import spelling_variant
from robust_mrc.attacks.resources import contrasts as C
from robust_mrc.attacks.resources.store import depends_on_resources

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
_DEGREE_WORDS = frozenset(("more", "less", "most", "least"))
# a degree word before a noun is a quantity: its swap is a quantity too
_QUANTITY_SWAPS = {"most": "few", "more": "fewer", "least": "most", "less": "more"}
_MASS_SWAPS = {"most": "little", "more": "less"}  # before a singular (mass) noun
# a preposition that ends the question belongs to its verb ("named after?"): it is not swapped
_PREPOSITION_SWAPS = frozenset(("before", "after", "above", "below", "inside", "outside"))
_NOUN_SWAPS = frozenset(("man", "men", "woman", "women", "top", "bottom"))
_CASE_SENSITIVE_SWAPS = frozenset(("us", "uk"))  # only the countries (US, UK), never the pronoun "us"

# a proper noun with no usable nearest word: a place after a place preposition, else a person
_FALLBACK_NAMES = {"person": ("Jeff", "Charles"), "place": ("Chicago", "Melbourne"), "other": ("Acme", "Globex")}
_YEAR_RE = re.compile(r"^(\d{4})(s?)$")
_YEAR_SPAN_RE = re.compile(r"^(\d{4})([-\u2013])(\d{2}|\d{4})$")
_NAME_LINKS = frozenset(("of", "the", "and", "de", "for"))
_FIRST_NAME_KINDS = ("female", "male", "given")


def _rejected(cand: str, orig: str, qwords: set[str]) -> bool:
    sc, so = R.stem(cand), R.stem(orig)
    return not cand or sc.startswith(so) or so.startswith(sc) or cand.lower() in qwords


@depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _synonyms(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` share a WordNet synset (False without WordNet)."""
    if not R.has_wordnet():
        return False
    wn = R.wordnet()
    return bool({s.name() for s in wn.synsets(a)} & {s.name() for s in wn.synsets(b)})


def _around(synset, steps: int = 3) -> set:
    """``synset`` and what lies within ``steps`` hypernym (and instance-hypernym) or holonym links above it."""
    seen, frontier = {synset}, [synset]
    for _ in range(steps):
        nxt = []
        for s in frontier:
            for r in (*s.hypernyms(), *s.instance_hypernyms(), *s.part_holonyms(), *s.member_holonyms()):
                if r not in seen:
                    seen.add(r)
                    nxt.append(r)
        frontier = nxt
    return seen


@depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _related(a: str, b: str) -> bool:
    """Whether the nouns ``a`` and ``b`` are the same thing for WordNet, or one is within two
    hypernym or holonym links of the other ("reporter" / "journalist", "Warsaw" / "Poland"); False
    without WordNet or when either is unknown to it."""
    if not R.has_wordnet():
        return False
    wn = R.wordnet()
    sa, sb = wn.synsets(a, "n"), wn.synsets(b, "n")
    if not sa or not sb:
        return False
    up_a = set().union(*(_around(s) for s in sa))
    up_b = set().union(*(_around(s) for s in sb))
    return bool(up_a & set(sb)) or bool(up_b & set(sa))


@depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _pertains(a: str, b: str) -> bool:
    """Whether an adjective sense of ``a`` pertains to ``b`` or the reverse ("French" / "France")."""
    if not R.has_wordnet():
        return False
    wn = R.wordnet()

    def to(x: str, y: str) -> bool:
        return any(pt.name().lower() == y for s in wn.synsets(x, "a") for lemma in s.lemmas() for pt in lemma.pertainyms())

    return to(a, b.lower()) or to(b, a.lower())


@depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _used(word: str) -> bool:
    """Whether a WordNet lemma of ``word`` is counted in WordNet's sense-tagged corpus."""
    return any(lemma.count() > 0 for lemma in R.wordnet().lemmas(word))


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


def earlier_year(tok: str, variant: int = 0) -> str | None:
    """A year, decade or span of years ("1891", "1980s", "2007-2008") moved back ``10 * (variant + 1)``
    years; None: not one."""
    shift = 10 * (variant + 1)
    m = _YEAR_SPAN_RE.match(tok)
    if m and 1000 <= int(m.group(1)) <= 2100:  # "2007-2008" -> "1997-1998", "1939-45" -> "1929-35"
        end = int(m.group(3)) - shift if len(m.group(3)) == 4 else (int(m.group(3)) - shift) % 100
        return f"{int(m.group(1)) - shift}{m.group(2)}{end:0{len(m.group(3))}d}"
    m = _YEAR_RE.match(tok)
    if not m or not 1000 <= int(m.group(1)) <= 2100:
        return None
    return f"{int(m.group(1)) - shift}{m.group(2)}"


def _swap(tok: str) -> str:
    low = tok.lower()
    return match_case(tok, SWAPS[low].upper() if tok.isupper() and len(tok) <= 3 else SWAPS[low])


def _first_name(tok: str, kind: str, variant: int, qwords: set[str], nb) -> str | None:
    """Another first name of ``kind``: the nearest words that are names of that kind, else one of
    the list picked by the name's hash and ``variant``."""
    low = tok.lower()
    near = [c for c in nb.neighbours(low, 25) if kind in R.name_kinds(c) and not R.same_name(c, low) and not _rejected(c, low, qwords)]
    if len(near) > variant:
        return match_case(tok, near[variant])
    names = R.names_of_kind(kind)
    for k in range(len(names)):
        cand = names[(zlib.crc32(low.encode()) + variant + k) % len(names)]
        if not R.same_name(cand, low) and not _rejected(cand, low, qwords):
            return match_case(tok, cand)
    return None


def _usable(cand: str, low: str, qwords: set[str]) -> bool:
    """A nearest word that may replace the noun ``low``: alphabetic with a vowel (not "nyc"), a
    noun first for WordNet (or unknown to it: a name), not a WordNet synonym, hypernym or holonym
    of it, nor the reverse (:func:`_related`), not its adjective ("France" -> "French":
    :func:`_pertains`), not sharing its first three letters ("Spain" -> "Spanish"), not rejected."""
    if not cand.isalpha() or len(cand) < 3 or cand[:3] == low[:3] or not any(v in cand for v in "aeiou") or _rejected(cand, low, qwords):
        return False
    pos = dict(R.wn_pos_counts(cand))
    return (
        (not pos or pos.get("n", 0) >= max(pos.values()))
        and not _synonyms(cand, low)
        and not _related(cand, low)
        and not _pertains(cand, low)
    )


# contrast sets of peoples and languages: a word of theirs never stands for a place or another name ("Holland" -> "Dutch")
_PEOPLE_SETS = frozenset(("nationality", "language", "people of a nation", "people of a continent", "continental", "people of a religion"))


def _set_mates(tok: str, variant: int, nb, qwords: set[str]) -> str | None | bool:
    """For a member of a contrast set (:mod:`robust_mrc.attacks.resources.contrasts`: a country, city,
    nationality, language, ...): another member of its sets, nearest first (the only replacements a
    member takes: "Holland" -> "Belgium", never "Dutch"); None: none usable; False: ``tok`` is in no set."""
    if not C.members_of(tok):
        return False
    low = tok.lower()
    cands = [c for c in C.contrasts(tok, C.similarity(nb)) if c.lower() not in qwords and not spelling_variant(c, low)]
    if len(cands) <= variant:
        return None
    new = cands[variant]
    return new if any(ch.isupper() for ch in new) else match_case(tok, new)


def _foreign_kind(cand: str, low: str) -> bool:
    """Whether ``cand`` is a people's or language's word (a nationality, a demonym) or another spelling of
    ``low`` ("Nong Shu" -> "Nong Sho"): never a nearest word for a name outside those sets."""
    return bool(_PEOPLE_SETS.intersection(C.set_names(cand))) or spelling_variant(cand, low)


def _nearest(tok: str, variant: int, nb, qwords: set[str]) -> str | None:
    """A nearest word of the proper noun ``tok`` (:func:`_usable`), singular where ``tok`` is; a member of a
    contrast set takes another member (:func:`_set_mates`)."""
    mate = _set_mates(tok, variant, nb, qwords)
    if mate is not False:
        return mate
    low = tok.lower()
    cands = [c for c in nb.neighbours(low, 10) if _usable(c, low, qwords) and not _foreign_kind(c, low)]
    if len(cands) <= variant:
        return None
    new = cands[variant]
    if R.has_wordnet() and any(lemma.name() == new.upper() for s in R.wordnet().synsets(new) for lemma in s.lemmas()):
        return new.upper()  # "Soviets" -> "USSR", not "Ussr"
    if R.has_wordnet() and (R.wordnet().morphy(low, "n") or low) == low:  # a singular noun: a singular one ("Bowl" -> "Cup")
        new = R.wordnet().morphy(new, "n") or new
    return match_case(tok, new)


def _acronym_neighbour(tok: str, variant: int, nb, qwords: set[str]) -> str | None:
    """Another acronym for the acronym ``tok``: a nearest word of its length that WordNet does not
    know ("CBS" -> "NBC", "NFL" -> "NBA"), in capitals."""
    low = tok.lower()
    cands = [
        c for c in nb.neighbours(low, 10) if len(c) == len(low) and c.isalpha() and not R.wn_pos_counts(c) and not _rejected(c, low, qwords)
    ]
    return cands[variant].upper() if len(cands) > variant else None


def _nearest_adjective(tok: str, variant: int, nb, qwords: set[str], after: str = "") -> str | None:
    """A nearest word of the capitalised adjective ``tok`` ("European" -> "Scandinavian") that
    WordNet knows mostly as an adjective, no synonym of it, not sharing its first three letters;
    lower case when it is a common word, unless a name goes on with the word ``after`` it."""
    mate = _set_mates(tok, variant, nb, qwords)  # "German" -> "French", never "Bavarian"
    if mate is not False:
        return mate
    low = tok.lower()
    cands = [c for c in nb.neighbours(low, 10) if c.isalpha() and c[:3] != low[:3] and _adjective(c) and not _rejected(c, low, qwords)]
    cands = [c for c in cands if not _synonyms(c, low) and not _pertains(c, low) and not spelling_variant(c, low)]
    if len(cands) <= variant:
        return None
    lower = _common_word(cands[variant]) and not after[:1].isupper()  # "religious", but "Scandinavian", "Modern Art"
    return cands[variant] if lower else match_case(tok, cands[variant])


def _adjective(word: str) -> bool:
    """Whether WordNet knows ``word`` as an adjective at least as often as as a noun."""
    pos = dict(R.wn_pos_counts(word))
    return pos.get("a", 0) > 0 and pos.get("a", 0) >= pos.get("n", 0)


@depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _common_word(word: str) -> bool:
    """Whether WordNet has ``word`` (or its base form) as a common (lower-case) lemma."""
    if not R.has_wordnet():
        return False
    wn = R.wordnet()
    low = word.lower()
    forms = {low} | {wn.morphy(low, pos) for pos in ("n", "v", "a")} - {None}
    return any(lemma.name() in forms for s in wn.synsets(low) for lemma in s.lemmas())


def _plural(word: str) -> bool:
    """Whether WordNet's noun morphology takes ``word`` to another lemma ("Victorians")."""
    low = word.lower()
    return R.has_wordnet() and (R.wordnet().morphy(low, "n") or low) != low


def _person_slot(toks: list[str], tags: list[str], i: int) -> bool:
    """Whether the name ``toks[i]`` stands where a person would: after do/be ("did Tesla"), before
    a verb or a possessive ("Tesla moved", "Tesla's")."""
    before = toks[i - 1].lower() if i else ""
    after_tag = tags[i + 1] if i + 1 < len(toks) else ""
    after = toks[i + 1] if i + 1 < len(toks) else ""
    return before in R.DO_FORMS or before in R.BE_FORMS or after_tag in (R.VERB, R.AUX) or after in ("'s", "\u2019s")


def _proper_run(toks: list[str], tags: list[str], run: list[int], variant: int, nb, qwords: set[str]) -> tuple[int, str] | None:
    """``(index, replacement)`` for one token of the run of proper nouns ``run``; None: none usable.
    A first name changes only before a surname or after a title.
    In a name of several words, a common English word is not replaced by a nearest word ("United
    States", "Rhine Gorge", "Coronation Street": "Rhine" may change, "Gorge" does not), unless a
    word of it is a listed person name ("Cam Newton")."""
    for i in run:
        kind = R.person_name_kind(toks, i)
        with_surname = i + 1 < len(toks) and toks[i + 1][:1].isupper() and toks[i + 1].isalpha()
        titled = i and toks[i - 1].rstrip(".").lower() in R.TITLES
        if kind in _FIRST_NAME_KINDS and (with_surname or titled):  # "Jean De Rely", not "Victoria" or "Christian" alone
            new = _first_name(toks[i], kind, variant, qwords, nb)
            if new:
                return i, new
    first, last = run[0], run[-1]
    several = len(run) > 1 or (first > 1 and toks[first - 1][:1].isupper()) or (last + 1 < len(toks) and toks[last + 1][:1].isupper())
    person = any(R.name_kinds(toks[i]) for i in run)  # "Cam Newton": a person's name, not a name of common words
    for i in reversed(run):
        if toks[i].isalpha() and not (several and _common_word(toks[i]) and not person):
            new = _nearest(toks[i], variant, nb, qwords)
            if new:
                return i, new
    if len(run) == 1:
        i = run[0]
        place = i and toks[i - 1].lower() in R.PLACE_PREPOSITIONS
        if place or R.person_name_kind(toks, i) or (_person_slot(toks, tags, i) and not _plural(toks[i]) and not several):
            name = _FALLBACK_NAMES["place" if place else "person"][variant % 2]
            if not _rejected(name, toks[i].lower(), qwords):
                return i, name
    return None


def _antonym(tok: str, tag: str, variant: int, qwords: set[str]) -> str | None:
    """A WordNet antonym (first synset) of the noun or adjective ``tok`` in its number or degree; None: none usable."""
    low = tok.lower()
    pos = R.wn_pos(tag)
    base = R.wordnet().morphy(low, pos) or low
    ants = [a for a in R.antonyms(base, pos, first_synset_only=True) if not _rejected(a, low, qwords) and _used(a)]
    if not ants:
        return None
    ant = ants[variant % len(ants)]
    if base != low and pos == "n" and low.endswith("s"):
        ant = plural(ant)
    elif base != low and pos == "a" and low.endswith(("er", "est")):
        ant = degree(ant, "JJR" if low.endswith("er") else "JJS")
    return match_case(tok, ant)


def alter_question(question, variant: int = 0, vectors=None, tagger=None) -> tuple[list[str], int]:
    """The question's tokens (``question``: a string, split by
    :func:`~.grammar.question_tokens`, or its tokens) with alterations, and how many were made.
    ``variant`` picks other candidates."""
    from robust_mrc.attacks.span.addsent.grammar import question_tokens

    toks = question_tokens(question) if isinstance(question, str) else list(question)
    tags = R.pos_tag(toks, tagger)
    qwords = {t.lower() for t in toks}
    out = list(toks)
    changed = 0
    nb = None
    i = 0
    while i < len(toks):
        tok, tag, low = toks[i], tags[i], toks[i].lower()
        new = None
        if i and toks[i - 1].lower() == "how" and tag in (R.ADJ, R.ADV):
            i += 1
            continue  # part of the wh-phrase ("how many", "how old"): the rules need it as it is
        if i and toks[i - 1].lower() in _DEGREE_WORDS and out[i - 1] != toks[i - 1] and tag in (R.ADJ, R.ADV):
            i += 1
            continue  # "less likely" -> "more likely", not "more unlikely"
        stranded = low in _PREPOSITION_SWAPS and (i + 1 == len(toks) or tags[i + 1] == R.PUNCT)
        noun_only = low in _NOUN_SWAPS and tag not in (R.NOUN, R.PROPN)  # "to man the team" stays
        if low in SWAPS and (low not in _CASE_SENSITIVE_SWAPS or tok.isupper()) and not stranded and not noun_only:
            new = _swap(tok)
            if low in _QUANTITY_SWAPS and i + 1 < len(toks) and tags[i + 1] == R.NOUN and not (i and toks[i - 1].lower() == "the"):
                quantity = _QUANTITY_SWAPS[low] if _plural(toks[i + 1]) or low not in ("most", "more") else _MASS_SWAPS[low]
                new = match_case(tok, quantity)  # "most types" -> "few types", "most imperialism" -> "little imperialism"
        elif tag in (R.PUNCT, R.FUNC, R.AUX) or low in R.STOPWORDS:
            pass
        elif tag == R.NUM and any(c.isdigit() for c in tok):
            new = earlier_year(tok, variant) or change_first_digit(tok, variant)
        elif tag in (R.PROPN, R.NOUN) and _acronym(tok) and tok.isalpha() and not _ROMAN_RE.match(tok):
            if nb is None:
                nb = R.neighbours(vectors, "distributional")
            new = _acronym_neighbour(tok, variant, nb, qwords)
        elif (
            tag in (R.ADJ, R.PROPN)
            and i
            and tok[:1].isupper()
            and tok.isalpha()
            and not _acronym(tok)
            and (tag == R.ADJ or _adjective(tok.lower()))
            and not (_common_word(tok) and toks[i + 1 : i + 2] and toks[i + 1][:1].isupper())  # not "Super Bowl" -> "Ultra Bowl"
        ):
            if nb is None:
                nb = R.neighbours(vectors, "distributional")
            new = _nearest_adjective(tok, variant, nb, qwords, toks[i + 1] if i + 1 < len(toks) else "")
        elif tag == R.PROPN and not _acronym(tok):
            run = [i]
            while run[-1] + 1 < len(toks) and tags[run[-1] + 1] == R.PROPN and not _acronym(toks[run[-1] + 1]):
                run.append(run[-1] + 1)
            if nb is None:
                nb = R.neighbours(vectors, "distributional")  # related but different words
            got = _proper_run(toks, tags, run, variant, nb, qwords)
            if got:
                out[got[0]] = got[1]
                changed += 1
            i = run[-1] + 1
            continue
        elif tag in (R.NOUN, R.ADJ) and tok.isalpha() and R.has_wordnet():
            new = _antonym(tok, tag, variant, qwords)
        if new is not None and new != tok:
            out[i] = new
            changed += 1
        i += 1
    changed -= _one_per_name(toks, out)
    if not content_changed(toks, out, tagger):
        changed += _last_resort(toks, tags, out, variant, qwords)
    for k in range(len(toks) - 1):  # "Children's" -> "Daughters'", not "Daughters's"
        if toks[k + 1] in ("'s", "\u2019s") and out[k] != toks[k] and out[k].endswith("s") and not toks[k].endswith("s"):
            out[k + 1] = toks[k + 1][0]
    return out, changed


def _one_per_name(toks: list[str], out: list[str]) -> int:
    """Within each run of capitalised words after the first word ("French North American
    Colonies", "Ministry of Justice"), keep one alteration: a swap if there is one, else the last;
    how many were undone."""
    undone = 0
    i = 1
    while i < len(toks):
        j = i
        while j < len(toks) and toks[j][:1].isupper():
            j += 1
            k = j
            while k < len(toks) and toks[k] in _NAME_LINKS:
                k += 1
            if k > j and k < len(toks) and toks[k][:1].isupper():
                j = k  # "Ministry of Justice", "King of the Scots"
        changed = [k for k in range(i, j) if out[k] != toks[k]]
        if len(changed) > 1:
            keep = next((k for k in changed if toks[k].lower() in SWAPS), changed[-1])
            for k in changed:
                if k != keep:
                    out[k] = toks[k]
                    undone += 1
        i = j + 1
    return undone


_ROMAN_RE = re.compile(r"^[IVXLCDM]+$")


def _acronym(tok: str) -> bool:
    """An all-capitals token ("ABC", "NFL", "XLIX"): its nearest words are lower-case words, no acronyms."""
    return len(tok) > 1 and tok.isupper()


def _last_resort(toks: list[str], tags: list[str], out: list[str], variant: int, qwords: set[str]) -> int:
    """When no content word outside the wh-phrase changed: the last proper noun there (not a common
    word inside a name of several words, not a plural: "Victorians") to a fixed name (a place after a place preposition, else a
    person), else a name of several words after a place preposition (and "the") to a fixed place
    ("in the United States" -> "in Chicago": the words it replaces become empty tokens); how many
    changed (0 or 1)."""
    skip = _wh_phrase(toks, tags)
    for i in reversed(range(len(toks))):
        in_name = (i > 1 and toks[i - 1][:1].isupper()) or (i + 1 < len(toks) and toks[i + 1][:1].isupper())
        if in_name and _common_word(toks[i]):
            continue  # not "United Jeff", "Super Jeff"
        if i not in skip and tags[i] == R.PROPN and toks[i].isalpha() and not _acronym(toks[i]) and not _plural(toks[i]):
            place = i and toks[i - 1].lower() in R.PLACE_PREPOSITIONS
            name = _FALLBACK_NAMES["place" if place else "person"][variant % 2]
            if not _rejected(name, toks[i].lower(), qwords):
                out[i] = name
                return 1
    for i in reversed(range(len(toks) - 1)):  # "in the United States" -> "in Chicago"
        j = i
        while j < len(toks) and toks[j][:1].isupper() and toks[j].isalpha():
            j += 1
        if j - i > 1 and i > 0 and i not in skip and (toks[i - 1].lower() in R.PLACE_PREPOSITIONS or toks[i - 1].lower() == "the"):
            start = i - 1 if toks[i - 1].lower() == "the" else i
            if start and toks[start - 1].lower() in R.PLACE_PREPOSITIONS:
                out[start : j - 1] = [""] * (j - 1 - start)
                out[j - 1] = _FALLBACK_NAMES["place"][variant % 2]
                return 1
    return 0


def _wh_phrase(toks: list[str], tags: list[str]) -> range:
    """The question's opening wh-phrase (after a preposition: "In what year"): the wh-word and,
    after what / which / whose / how many, the noun phrase."""
    from robust_mrc.attacks.span.addsent.grammar import np_end

    low = [t.lower() for t in toks]
    w = next((i for i in range(min(len(toks), 2)) if low[i] in R.WH_WORDS), None)
    if w is None:
        return range(0)
    end = w + 1
    if low[w] == "how" and end < len(toks) and low[end] in ("many", "much"):
        end += 1
    if low[w] in ("what", "which", "whose") or end > w + 1:
        end = np_end(toks, tags, end) if end < len(toks) and tags[end] in (R.NOUN, R.PROPN, R.ADJ, R.NUM) else end
    return range(w, end)


def content_changed(original: list[str], altered: list[str], tagger=None) -> bool:
    """Whether ``altered`` changes a content word of the question ``original`` (a swapped word, or
    one that is not a stopword or punctuation; not only its case) outside the question's opening wh-phrase: a sentence built
    from a question changed only there ("What type of ..." -> "What antitype of ...") would state
    an answer to the original question."""
    tags = R.pos_tag(original, tagger)
    skip = _wh_phrase(original, tags)
    return any(
        a.lower() != o.lower() and i not in skip and any(ch.isalnum() for ch in o) and (o.lower() not in R.STOPWORDS or o.lower() in SWAPS)
        for i, (o, a) in enumerate(zip(original, altered))
    )
