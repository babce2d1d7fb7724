"""What kind of phrase a text is, whether a passage span is a whole phrase, and the role a text takes
in a cloze question's blank: from spaCy's dependency parse (:func:`robust_mrc.attacks.resources.spacy_tagger.parse_doc`).

* :func:`phrase_profile`: a short text (an option) parsed on its own, as a reader reads it, summed up
  as a :class:`Profile`: the kind of phrase its root makes (``np``, ``num``, ``pp``, ``vp``,
  ``clause``, ``adj``, ``adv``), a verb phrase's form ("to" + VB, VBD, VBG...), a noun phrase's head
  (a name, a pronoun, a noun), a number's unit, the entity group of its root (of a prepositional
  phrase: of its object; person, place, time, number, organisation) and a subordinating opener
  ("because"). Two options of one profile read as answers of one kind.
* :func:`fragment`: why a span of a text (parsed whole) is no whole phrase (None when it is one): it cuts
  a token or a hyphenated or alphanumeric word ("7N" out of "17N", "size beds" out of "King-size
  beds"), crosses a line, holds a blank ("_"), is not one connected piece of the parse (one token
  whose head lies outside it), leaves out a dependent of a word inside (of its head word: an object,
  a complement, a particle, a possessor or determiner other than an article: "dads bring" without
  "food", "last job" without "my"), starts with a conjunction or an auxiliary whose subject it
  leaves out ("are the roles ...", "can depend on ..."), or ends with a function word that needs
  what follows (a determiner, preposition, conjunction, auxiliary, "to", a possessive).
* :func:`cloze_role`: for a question with a blank ("The bird is _ ."), the dependency labels, parts
  of speech and heads of the text's topmost tokens once it fills the blank: two texts of one role
  fill the blank the same way.

Every answer is deterministic for the installed pipeline (:func:`~robust_mrc.attacks.resources.spacy_tagger.describe`).
Without spaCy (``parser="heuristic"``, the choice :func:`robust_mrc.attacks.resources.resolve_tagger`
makes): the heuristic tagger's tags and word lists stand in: the profile from the tags of the first
words and the last content word, no connectivity test, no cloze role (None).
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import NamedTuple

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.resources import spacy_tagger
from robust_mrc.data.text import TOKEN_RE, WORD_RE

_SUBJECTS = frozenset(("nsubj", "nsubjpass", "csubj", "csubjpass", "expl"))
_ENTITY_GROUPS = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "DATE": "time",
    "TIME": "time",
    "CARDINAL": "number",
    "QUANTITY": "number",
    "MONEY": "number",
    "PERCENT": "number",
    "ORDINAL": "number",
    "ORG": "organisation",
}
# a span ends with none of these Penn tags (they need what follows): determiner, preposition,
# conjunction, "to", modal, possessive pronoun and ending, wh-words, existential "there"
_NO_END = frozenset(("DT", "IN", "CC", "TO", "MD", "PRP$", "POS", "WDT", "WP", "WP$", "WRB", "EX", "PDT", "HYPH"))
# dependents a phrase's head cannot leave out: objects, complements, particles, a possessor
_COMPLEMENTS = frozenset(("dobj", "pobj", "attr", "acomp", "xcomp", "ccomp", "prt", "oprd", "dative", "agent", "pcomp", "case"))
_ARTICLES = frozenset(("a", "an", "the"))
_BLANK_RE = re.compile(r"_+")
_WORD_JOINERS = "-'\u2019/&"  # a span boundary next to one of these cuts a word ("King-size", "rock'n'roll")


class Profile(NamedTuple):
    """What kind of phrase a text is (see the module)."""

    kind: str  # np | num | pp | vp | clause | adj | adv | other:<POS> | multi (several sentences) | empty
    form: str = ""  # vp and clause: the root verb's Penn tag, "to VB" for an infinitive; pp: "of" for an of-phrase
    head: str = ""  # np: name | pronoun | noun; num: "unit" for a counted noun ("137 meters")
    entity: str = ""  # person | place | time | number | organisation | ""
    opener: str = ""  # a subordinating first word ("because", "when", "if"), lower case


def phrase_profile(text: str, parser: str = "spacy") -> Profile:
    """The :class:`Profile` of ``text`` read on its own (``parser``: "spacy" or "heuristic")."""
    return _spacy_profile(text) if parser == "spacy" else _heuristic_profile(text)


@functools.lru_cache(maxsize=50_000)
def _spacy_profile(text: str) -> Profile:
    doc = spacy_tagger.parse_doc(text.strip())
    words = [t for t in doc if not t.is_punct and not t.is_space]
    if not words:
        return Profile("empty")
    roots = {t.sent.root.i for t in words}
    if len(roots) > 1:
        return Profile("multi")
    root = doc[roots.pop()]
    first = words[0]
    opener = first.lower_ if first.dep_ == "mark" or first.pos_ == "SCONJ" or first.tag_ in ("WRB", "WDT", "WP") else ""
    entity = _ENTITY_GROUPS.get(root.ent_type_, "")
    deps = {c.dep_ for c in root.children}
    if root.pos_ in ("VERB", "AUX"):
        form = f"to {root.tag_}" if any(c.dep_ == "aux" and c.tag_ == "TO" for c in root.children) else root.tag_
        return Profile("clause" if deps & _SUBJECTS else "vp", form, "", entity, opener)
    if root.pos_ == "ADP":  # the entity group of its object: "at 4:30" (time), "to Washington" (place)
        objects = [c for c in root.children if c.dep_ in ("pobj", "pcomp")]
        entity = _ENTITY_GROUPS.get(objects[0].ent_type_, "") if objects else ""
        return Profile("pp", root.lower_ if root.lower_ == "of" else "", "", entity, opener)
    if root.pos_ == "NUM" or "nummod" in deps or entity == "number":
        return Profile("num", "", "unit" if root.pos_ in ("NOUN", "PROPN") else "", entity, opener)
    if root.pos_ in ("NOUN", "PROPN", "PRON"):
        head = {"PROPN": "name", "PRON": "pronoun"}.get(root.pos_, "noun")
        return Profile("np", "", head, entity, opener)
    if root.pos_ in ("ADJ", "ADV"):
        return Profile(root.pos_.lower(), "", "", entity, opener)
    return Profile(f"other:{root.pos_}", "", "", entity, opener)


@functools.lru_cache(maxsize=256)
def _token_bounds(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The start and end offsets of ``text``'s tokens in its parse."""
    doc = spacy_tagger.parse_doc(text)
    return tuple(t.idx for t in doc), tuple(t.idx + len(t.text) for t in doc)


def fragment(text: str, start: int, end: int, parser: str = "spacy") -> str | None:
    """Why ``text[start:end]`` is no whole phrase of ``text`` (parsed whole), or None (see the module)."""
    span = text[start:end]
    if not span.strip() or span != span.strip():
        return "edge space"
    if "_" in span:
        return "blank"
    if "\n" in span or "\r" in span:
        return "line break"
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if before.isalnum() or after.isalnum() or before in _WORD_JOINERS or (after in _WORD_JOINERS and text[end + 1 : end + 2].isalnum()):
        return "cut word"
    if parser != "spacy":
        return _heuristic_fragment(span)
    starts, ends = _token_bounds(text)
    lo, hi = bisect.bisect_left(starts, start), bisect.bisect_left(ends, end)
    if lo >= len(starts) or starts[lo] != start or hi >= len(ends) or ends[hi] != end:
        return "cut token"
    doc = spacy_tagger.parse_doc(text)
    inside = doc[lo : hi + 1]
    words = [t for t in inside if not t.is_punct]
    if not words:
        return "punctuation"
    if any(len(t.text) == 1 and t.is_alpha and t.lower_ not in ("a", "i") for t in words):
        return "single letter"  # "W" and "M" of a dialogue's speakers, "B" of an option list
    tops = [t for t in inside if not (lo <= t.head.i <= hi) or t.head.i == t.i]
    if len(tops) != 1:
        return "not one phrase"
    top = tops[0]
    for t in inside:
        outside = [c for c in t.children if not lo <= c.i <= hi and not c.is_punct and not c.is_space]
        if t.i != top.i and outside:
            return "cut phrase"  # "... and dads bring" (its object "food" left out)
        needed = [c for c in outside if c.dep_ in _COMPLEMENTS or (c.dep_ in ("det", "poss", "predet") and c.lower_ not in _ARTICLES)]
        if t.i == top.i and needed:
            return "cut phrase"  # "I felt I needed" (to ...), "last job" (my ...)
    if words[0].tag_ in ("CC", "POS", "MD") or words[0].pos_ in ("CCONJ", "AUX"):
        return "dangling start"
    if words[-1].tag_ in _NO_END or words[-1].pos_ in ("AUX", "CCONJ", "SCONJ"):
        return "dangling end"
    return None


def blank(question: str) -> re.Match | None:
    """The first blank ("_", "___") of a cloze question, None in a question without one."""
    return _BLANK_RE.search(question)


def cloze_role(question: str, text: str, parser: str = "spacy") -> tuple | None:
    """How ``text`` fills the blank of ``question``: the sorted (dependency label, POS, head word) of
    its topmost tokens in the filled question's parse; None when ``question`` has no blank (or without spaCy)."""
    return _spacy_cloze_role(question, text) if parser == "spacy" else None


@functools.lru_cache(maxsize=50_000)
def _spacy_cloze_role(question: str, text: str) -> tuple | None:
    m = blank(question)
    if m is None:
        return None
    fill = text.strip().rstrip(".!?").strip()
    filled = question[: m.start()] + fill + question[m.end() :]
    doc = spacy_tagger.parse_doc(filled)
    start, end = m.start(), m.start() + len(fill)
    inside = [t for t in doc if t.idx < end and t.idx + len(t.text) > start]
    if not inside:
        return ()
    lo, hi = inside[0].i, inside[-1].i
    tops = [t for t in inside if not (lo <= t.head.i <= hi) or t.head.i == t.i]
    return tuple(sorted((t.dep_, t.pos_, "" if lo <= t.head.i <= hi else t.head.lower_) for t in tops))


SUBORDINATORS = frozenset("because when if although though since while after before until unless as where".split())
_CONJUNCTIONS = frozenset(("and", "or", "but", "nor", "so", "yet"))
_NO_END_WORDS = R.DETERMINERS | R.PREPOSITIONS | frozenset(R.AUXILIARIES) | _CONJUNCTIONS | frozenset(("to", "'s", "of", "than"))


@functools.lru_cache(maxsize=50_000)
def _heuristic_profile(text: str) -> Profile:
    words = WORD_RE.findall(text)
    if not words:
        return Profile("empty")
    tags = R.heuristic_tag(words)
    lows = [w.lower() for w in words]
    opener = lows[0] if lows[0] in SUBORDINATORS and len(words) > 2 else ""
    body = list(zip(lows, tags))[1:] if opener else list(zip(lows, tags))
    first_low, first_tag = body[0] if body else (lows[0], tags[0])
    verbs = [i for i, (_, t) in enumerate(body) if t in (R.VERB, R.AUX)]
    if first_low == "to" and len(body) > 1 and body[1][1] == R.VERB:
        return Profile("vp", "to VB", "", "", opener)
    if first_tag == R.FUNC and first_low in R.PREPOSITIONS:
        return Profile("pp", "of" if first_low == "of" else "", "", "", opener)
    if verbs:
        subject = any(t in (R.NOUN, R.PROPN) or (low in R.PRONOUNS) for low, t in body[: verbs[0]])
        return Profile("clause" if subject else "vp", "", "", "", opener)
    if any(t == R.NUM for _, t in body):
        return Profile("num", "", "unit" if body[-1][1] == R.NOUN else "", "", opener)
    content = [(low, t) for low, t in body if t not in (R.FUNC, R.PUNCT)] or body
    low, last = content[-1]
    if last in (R.ADJ, R.ADV):
        return Profile(last.lower(), "", "", "", opener)
    head = "name" if last == R.PROPN else "pronoun" if low in R.PRONOUNS else "noun"
    return Profile("np", "", head, "", opener)


def _heuristic_fragment(span: str) -> str | None:
    words = TOKEN_RE.findall(span)
    words = [w for w in words if any(ch.isalnum() for ch in w)]
    if not words:
        return "punctuation"
    if any(len(w) == 1 and w.isalpha() and w.lower() not in ("a", "i") for w in words):
        return "single letter"
    first, last = words[0].lower(), words[-1].lower()
    if first in _CONJUNCTIONS or first in R.AUXILIARIES:
        return "dangling start"
    if last in _NO_END_WORDS:
        return "dangling end"
    return None
