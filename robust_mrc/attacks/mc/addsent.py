"""AddSent for multiple choice (Si et al. 2021, AdvRACE, section 3.3).

What it changes: the passage only. Two distracting sentences are inserted at random sentence
boundaries. Each one is the question with its meaning flipped, filled with a random wrong option
(into the ``_`` blank, or after the question); the two use different wrong options and, where a
word has more than one, different replacement words. The paper's steps, each built so that the
sentence no longer asks what the question asks:

1. **nouns and numbers** go to a different member of their category, never to another name for the
   same thing. Integers shift by a random 10-100 (years back in time, so they stay years; a digit
   inside a code, a time or a phone number stays); a number word moves to a near number word. A
   common noun (or a colour / nationality adjective) goes to another member of its contrast set
   (:mod:`robust_mrc.attacks.resources.contrasts`: Saturday -> Sunday, football -> basketball,
   mother -> aunt, the USA -> Japan), the nearest in the distributional space first, as the
   paper's GloVe neighbour (``vectors=``; default the offline MiniLM's input embeddings). A person's
   name, as one unit however many words, goes to another name of the same kind (female / male /
   given / surname: the gender is kept); a place or person WordNet knows as an instance goes to
   another instance of the same class (Edison -> Bell), never a part or whole of it. Nouns without
   a known contrast keep their words (a synonym or near-synonym would make the sentence answer the
   question with a wrong option), and so do the names of organisations, works, events, laws and
   products, the exam-question frame words (passage, writer, author, title, following, ...), titles
   ("Mr", "Mrs") and codes mixing letters and digits ("H7N9").
   A replacement the passage or the options already speak of (a name, noun, place or number they
   use) is never brought in: the sentence is about something else, so the passage cannot
   contradict it, and no option's number turns up in it ("4,000 years" never "40,000 weeks" beside
   an option "40,000").
2. only the **first** adjective, adverb or verb with a WordNet antonym in its first sense goes to that
   antonym, in the original's form (stopped -> started, cleverest -> stupidest); not a word after
   "how" ("how old" and "how young" ask the same thing) nor between "as" and "as" ("as old as" and
   "as young as" both say "of equal age"), not a frame word, not an adjective the
   parse uses as a noun ("catching a cold or flu" never becomes "a hot or flu").
3. when nothing changed, the negation flips: an existing "not", "n't", "never" is taken out ("no",
   "nothing", "nobody" become "some", "something", "somebody"); else "not" goes where the parse puts
   it: after the auxiliary ("we can not learn"), before the verb of a question with inversion ("what
   can we not infer"), with "do" support ("we do not know", "the passage does not tell").

Then one sentence: a blank takes the wrong option; a question ending in "?" takes it after a colon,
as the paper appends it ("Why did Jim go there: to meet his aunt."), and so does a question whose
blank follows its question mark ("Why did Jim go there? Because _ ." -> "Why did Jim go there:
because he missed his aunt."); a stem that ends in "." or runs on ("From the passage we know
that.") is continued by it. Wrong options that only point at
other options ("all of the above", "both A and B") are used last. Articles agree with the words
put after them ("a evil" never stands).

Questions are read with spaCy's whole pipeline (tagger, parser, named entities) by default
(:mod:`robust_mrc.attacks.mc.question`; ``tagger=heuristic`` is the named fallback without spaCy,
which warns). :meth:`AddSentMC.prepare` reads the questions it will attack in one batch.

What it promises: question, options and label are unchanged (so the correct option stays distinct
from every option). Returns None when no sentence can be built. :meth:`AddSentMC.trace` also
returns each replacement with its step, for the fidelity statistics.
"""

from __future__ import annotations

import functools
import logging
import random
import re
from typing import NamedTuple

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.editing import insert_at, match_case, sentence_boundaries
from robust_mrc.attacks.inflection import article_for, degree, fix_articles, plural, verb_form
from robust_mrc.attacks.mc.question import Question, read_question, read_questions, warn_heuristic
from robust_mrc.attacks.replacements import kind_of, nearest_name, part_of, ranked_names, same_word, synonyms
from robust_mrc.attacks.resources import contrasts as C
from robust_mrc.data.cloze import BLANK_RE, has_blank
from robust_mrc.papers import cite

log = logging.getLogger(__name__)

# the names of these entity types stay as they are (a unit; no contrast of the same kind is known)
_KEPT_ENTITIES = frozenset(("ORG", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"))
# entity types that are names (a word inside one is no common noun: "Green Island"); dates, times and amounts are not
_NAME_ENTITIES = frozenset(("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"))
# entity types whose tokens are places or peoples (a WordNet instance may stand for another)
_PLACE_ENTITIES = frozenset(("GPE", "LOC", "NORP"))
# contrast sets of peoples (a tagger may take "the Greeks" for a person)
_PEOPLE_SETS = frozenset(("people of a nation", "nationality"))
# contrast sets whose members may stand as adjectives ("a red dress", "my English friend")
_ADJECTIVE_SETS = frozenset(("colour", "nationality", "language", "direction"))
# overrides that hold for one part of speech only ("much harder": an adverb of degree, no quantity)
_OVERRIDE_POS = {"many": R.ADJ, "few": R.ADJ, "much": R.ADJ, "well": R.ADV}
# dependency roles of a noun: an adjective in one of them is used as a noun ("catching a cold")
_NOMINAL_ROLES = frozenset(("nsubj", "nsubjpass", "dobj", "pobj", "iobj"))
# the most questions AddSent.prepare reads at once (a set of evaluation questions, the benchmark's)
PREPARE_MAX = 20_000
_NUMBER_RE = re.compile(r"^\d{1,3}(?:,\d{3})+$|^\d+$")
_ORDINAL_RE = re.compile(r"^(\d+)(st|nd|rd|th)$", re.I)
# wrong options that only point at other options: their sentence says nothing
_POINTER_OPTION_RE = re.compile(
    r"^\W*(?:(?:all|none|both|neither|either) of (?:the )?(?:above|them|these)|(?:both |either |neither )?[A-E]\W*(?:,\s*[A-E]\W*)*"
    r"(?:and|or|nor|&)\s*[A-E]|[A-E])\W*$",
    re.I,
)


class Slot(NamedTuple):
    """A stretch of the question (tokens ``start:end``) that may change, and how."""

    start: int
    end: int
    step: str  # number | name | noun | entity | antonym
    original: str
    choices: tuple[str, ...]  # replacements, best first (numbers and unlisted names: drawn when applied)
    kind: str = ""  # number: "integer" / "year" / "ordinal" / "word"; name: its kind


class Plan(NamedTuple):
    """What AddSent may change in one question: its slots (the antonym among them: the first one only)
    and the question with its negation flipped (step 3), as tokens."""

    question: Question
    slots: tuple[Slot, ...]
    negated: tuple[str, ...] | None  # the question's token texts with spaces, negation flipped; None: no place for it
    texts: tuple[str, ...]  # the question's token texts with their spaces
    words: frozenset[str]  # its words and lemmas, lower case


# ---------------------------------------------------------------------------------------------- planning


def _protected(q: Question, i: int) -> bool:
    t = q.tokens[i]
    low = t.text.lower()
    return (
        t.pos in (R.PUNCT, R.FUNC, R.AUX, R.OTHER)
        or "_" in t.text
        or low in R.STOPWORDS
        or low in R.PRONOUNS
        or low in R.FRAME_WORDS
        or t.lemma in R.FRAME_WORDS
        or low.rstrip(".") in R.TITLES
        or (any(ch.isdigit() for ch in low) and any(ch.isalpha() for ch in low) and not _ORDINAL_RE.match(low))
    )


def _refused(original: str, candidate: str) -> bool:
    """A contrast the WordNet rules still refuse: a form, synonym, kind or part of the original."""
    a, b = original.lower(), candidate.lower()
    if " " in a or " " in b:
        return a == b
    return same_word(a, b) or synonyms(a, b) or kind_of(a, b) or part_of(a, b)


def _contrast_slots(q: Question, nb, taken: set[int], qwords: frozenset[str]) -> list[Slot]:
    """Members of contrast sets the question names, as noun slots (see the module doc)."""
    offsets, pos = [], 0
    for t in q.tokens:
        offsets.append(pos)
        pos += len(t.text) + len(t.space)
    slots = []
    sim = C.similarity(nb)
    for found in C.find(q.text):
        idx = [i for i, o in enumerate(offsets) if found.start <= o < found.end]
        if not idx or any(i in taken for i in idx):
            continue
        start, end = idx[0], idx[-1] + 1
        head = q.tokens[end - 1]
        if head.dep == "compound" and head.pos == R.NOUN:
            continue  # a modifier ("computer teacher", "fruit flies"): the head is what the question names
        if not any(ch.isupper() for ch in found.form) and start > 0 and q.tokens[start].text[:1].isupper():
            continue  # a common noun written as part of a name ("Green Island")
        common = not any(ch.isupper() for ch in found.form)  # "motor cars", not "the ancient Greeks"
        if (
            common
            and end - start == 1
            and (
                (start + 1 < len(q.tokens) and _compound(q.tokens[start].text, q.tokens[start + 1].text))
                or (start > 0 and _compound(q.tokens[start - 1].text, q.tokens[start].text))
            )
        ):
            continue  # a word of a compound WordNet lists whole ("ice cream", "fruit flies")
        sets = C.set_names(found.form)
        if head.ent == "PERSON" and not _PEOPLE_SETS.intersection(sets):
            continue  # a person's name that is also a word ("May", "Rose"): a name
        ok = head.pos in (R.NOUN, R.PROPN) or (head.pos == R.ADJ and _ADJECTIVE_SETS.intersection(sets)) or (head.pos == R.NUM)
        if not ok or any(t.lower() in R.FRAME_WORDS for t in (q.tokens[i].text for i in idx)):
            continue
        ents = {q.tokens[i].ent_id for i in idx if q.tokens[i].ent in _NAME_ENTITIES} | {
            -1 for i in idx if q.tokens[i].ent not in _NAME_ENTITIES
        }
        if ents != {-1}:  # inside a name: only the whole name ("New York"), never a word of it ("Green Island")
            k = next(iter(ents))
            if len(ents) > 1 or -1 in ents or q.entities[k][:2] not in ((start, end), (start - 1, end)):
                continue
        is_plural = found.plural or head.tag in ("NNS", "NNPS")
        choices = []
        for cand in C.contrasts(found.form, sim):
            if _refused(found.form, cand) or cand.lower() in qwords:
                continue
            form = plural(cand) if is_plural and not any(ch.isupper() for ch in cand) else cand
            if form != cand and _refused(q.text[found.start : found.end], form):
                continue  # the plurals share a sense the lemmas do not ("years" / "days": a lifetime)
            choices.append(form)
        if choices:
            slots.append(Slot(start, end, "noun", q.text[found.start : found.end], tuple(choices[:8])))
            taken.update(range(start, end))
    return slots


@R.depends_on_resources
@functools.lru_cache(maxsize=50_000)
def _compound(first: str, second: str) -> bool:
    """Whether WordNet lists "first second" (its second word in any form) as one noun."""
    try:
        wn = R.wordnet()
        base = wn.morphy(second.lower(), "n") or second.lower()
        return bool(wn.synsets(f"{first.lower()}_{base}", "n"))
    except R.ResourceMissing:
        return False


def _name_kind(q: Question, i: int, first: bool, last: bool, n_tokens: int) -> str:
    """The kind of name a token of a person's name is (names list; titles, position and pronouns decide the rest)."""
    tok = q.tokens[i].text
    kinds = R.name_kinds(tok)
    prev = q.tokens[i - 1].text.rstrip(".").lower() if i > 0 else ""
    if kinds:
        if "surname" in kinds and (prev in R.TITLES or (not first) or (n_tokens > 1 and last and not first)):
            return "surname"
        if n_tokens > 1 and first and "surname" in kinds and len(kinds) == 1:
            return "surname"  # "Wang Wei": a Chinese name opens with the surname
        firsts = [k for k in kinds if k != "surname"]
        return firsts[0] if firsts else "surname"
    if prev in R.TITLES or (n_tokens > 1 and last):
        return "surname"
    words = {t.text.lower() for t in q.tokens}
    if words & {"he", "him", "his", "himself"} and not words & {"she", "her", "hers", "herself"}:
        return "male"
    if words & {"she", "her", "hers", "herself"} and not words & {"he", "him", "his", "himself"}:
        return "female"
    return "given" if n_tokens > 1 else "surname"


def _person_slots(q: Question, taken: set[int], nb) -> list[Slot]:
    slots = []
    spans = [(s, e) for s, e, label in q.entities if label == "PERSON"]
    words = [t.text for t in q.tokens]
    i = 0
    while i < len(q.tokens):  # names of the names list the tagger left outside an entity ("Li Hong")
        if q.tokens[i].ent_id == -1 and q.tokens[i].pos == R.PROPN and R.person_name_kind(words, i):
            j = i + 1
            while j < len(q.tokens) and q.tokens[j].ent_id == -1 and q.tokens[j].pos == R.PROPN and q.tokens[j].text[:1].isupper():
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    for s, e in sorted(spans):
        idx = [i for i in range(s, e) if q.tokens[i].text[:1].isupper() and q.tokens[i].text.isalpha() and i not in taken]
        idx = [i for i in idx if q.tokens[i].text.rstrip(".").lower() not in R.TITLES and q.tokens[i].text.lower() not in R.FRAME_WORDS]
        for n, i in enumerate(idx):
            kind = _name_kind(q, i, n == 0, n == len(idx) - 1, len(idx))
            try:
                ranked = ranked_names(q.tokens[i].text.lower(), kind, nb) or ()
            except TypeError:  # an unhashable backend: drawn when applied
                ranked = ()
            slots.append(Slot(i, i + 1, "name", q.tokens[i].text, tuple(n.capitalize() for n in ranked[:12]), kind))
            taken.add(i)
    return slots


@R.depends_on_resources
@functools.lru_cache(maxsize=20_000)
def _co_instances(words: str, nb) -> tuple[str, ...]:
    """Other instances of the classes a WordNet instance (a place, a person: "Edison") belongs to, known to
    ``nb``'s vocabulary (common names), never a part or whole of it, nearest first."""
    try:
        wn = R.wordnet()
        synsets = [s for s in wn.synsets(words.replace(" ", "_"), "n") if s.instance_hypernyms()]
    except R.ResourceMissing:
        return ()
    if not synsets:
        return ()
    first = synsets[0]
    mine = {lemma.name().lower() for s in synsets for lemma in s.lemmas()}
    related = set(first.part_holonyms() + first.part_meronyms() + first.member_holonyms() + first.member_meronyms())
    related |= {h for s in first.part_holonyms() for h in s.part_holonyms()}
    index = getattr(nb, "index", None)
    out: dict[str, None] = {}
    for cls in first.instance_hypernyms():
        for other in cls.instance_hyponyms():
            if other == first or other in related or any(r in related for r in other.part_holonyms()):
                continue
            name = other.lemmas()[0].name().replace("_", " ")
            low = name.lower()
            if low in mine or (index is not None and not all(w in index for w in low.split())) or not name[:1].isupper():
                continue
            out.setdefault(name)
    sim = C.similarity(nb)
    names = list(out)
    if sim is not None:
        names.sort(key=lambda n: -(sim(words, n) or -1.0))
    return tuple(names[:8])


def _entity_slots(q: Question, nb, taken: set[int], qwords: frozenset[str]) -> list[Slot]:
    """Places, peoples and other proper nouns WordNet knows as instances; the kept entity types stay."""
    slots = []
    for s, e, label in q.entities:
        if label in _KEPT_ENTITIES or label == "PERSON" or any(i in taken for i in range(s, e)):
            continue
        if label not in _PLACE_ENTITIES:
            continue
        words = [q.tokens[i].text for i in range(s, e) if q.tokens[i].text.lower() != "the"]
        start = s + (q.tokens[s].text.lower() == "the")
        choices = tuple(c for c in _co_instances(" ".join(words), nb) if c.lower() not in qwords)
        if choices:
            slots.append(Slot(start, e, "entity", " ".join(words), choices))
            taken.update(range(start, e))
    return slots


def _number_slots(q: Question, taken: set[int]) -> list[Slot]:
    slots = []
    toks = q.tokens
    for i, t in enumerate(toks):
        if i in taken:
            continue
        low = t.text.lower()
        glued = (i > 0 and not toks[i - 1].space and toks[i - 1].text not in "($\u00a3\u20ac") or (
            t.space == "" and i + 1 < len(toks) and toks[i + 1].text not in ".,;:!?%)'\u2019" and toks[i + 1].text.lower() != "'s"
        )
        if _NUMBER_RE.match(t.text) and not glued:
            value = int(t.text.replace(",", ""))
            kind = (
                "year"
                if 1000 <= value <= 2100 and "," not in t.text and (t.ent == "DATE" or t.pos == R.NUM or q.reader != "spacy")
                else "integer"
            )
            slots.append(Slot(i, i + 1, "number", t.text, (), kind))
        elif _ORDINAL_RE.match(low) and not glued:
            slots.append(Slot(i, i + 1, "number", t.text, (), "ordinal"))
        elif low in R.NUMBER_WORDS_IN_ORDER and t.pos == R.NUM:
            v = R.NUMBER_WORDS_IN_ORDER.index(low) + 1
            low_end = 2 if v > 1 else 1  # "two holes" never becomes "one holes"
            near = [v + d for d in (1, -1, 2, -2, 3, 3) if low_end <= v + d <= len(R.NUMBER_WORDS_IN_ORDER)]
            choices = tuple(dict.fromkeys(match_case(t.text, R.NUMBER_WORDS_IN_ORDER[n - 1]) for n in near))
            slots.append(Slot(i, i + 1, "number", t.text, choices, "word"))
        else:
            continue
        taken.add(i)
    return slots


def _antonym_slots(q: Question, taken: set[int], qwords: frozenset[str], nb) -> list[Slot]:
    """The adjectives, adverbs and verbs with an antonym, in order (the attack uses the first)."""
    slots = []
    index = getattr(nb, "index", None)
    for i, t in enumerate(q.tokens):
        if i in taken or t.pos not in (R.ADJ, R.ADV, R.VERB) or _protected(q, i) or t.ent_id != -1:
            continue
        if i > 0 and q.tokens[i - 1].text.lower() == "how":
            continue
        if 0 < i < len(q.tokens) - 1 and q.tokens[i - 1].text.lower() == "as" and q.tokens[i + 1].text.lower() == "as":
            continue  # "as old as X" and "as young as X" say the same: equal age
        if t.pos == R.ADJ and t.dep in _NOMINAL_ROLES:
            continue  # an adjective standing as a noun ("catching a cold or flu"): no antonym ("a hot or flu")
        low = t.text.lower()
        if i > 0 and q.tokens[i - 1].text.lower() in R.FIXED_AFTER.get(low, ()):
            continue
        if t.lemma in R.WEAK_ANTONYMS:
            continue
        if low in R.ANTONYM_OVERRIDES and _OVERRIDE_POS.get(low, t.pos) == t.pos:
            ants = (R.ANTONYM_OVERRIDES[low],)
            base_form = True
        else:
            try:
                ants = R.antonyms(t.lemma, R.wn_pos(t.pos), True)
            except R.ResourceMissing:
                return []
            base_form = False
            ants = tuple(a for a in ants if a.isalpha() and (index is None or a.lower() in index) and not a.lower().startswith("non"))
        choices = []
        for ant in ants:
            if ant.lower() in qwords:
                continue
            if base_form:
                form = ant
            elif t.pos == R.VERB:
                form = verb_form(ant, t.tag or _guess_verb_tag(low, t.lemma))
            else:
                form = degree(ant, t.tag)
            choices.append(match_case(t.text, form))
        if choices:
            slots.append(Slot(i, i + 1, "antonym", t.text, tuple(choices)))
    return slots


def _guess_verb_tag(low: str, lemma: str) -> str:
    """A Penn verb tag from the form alone (the heuristic reader has none)."""
    if low == lemma:
        return "VB"
    if low.endswith("ing"):
        return "VBG"
    if low.endswith("ed") or low in R.IRREGULAR_PAST.values():
        return "VBD"
    if low.endswith("s"):
        return "VBZ"
    return "VB"


def _texts(q: Question) -> list[str]:
    return [t.text + t.space for t in q.tokens]


def _negate(q: Question) -> tuple[str, ...] | None:
    """The question's tokens (with their spaces) with its negation flipped (step 3), None without a place."""
    toks = q.tokens
    out = _texts(q)
    for i, t in enumerate(toks):  # an existing negation is taken out
        low = t.text.lower()
        if low in R.NEGATION_FLIPS and (low != "no" or t.dep in ("det", "neg", "") or q.reader != "spacy"):
            if low == "n't" and i > 0:
                host = toks[i - 1].text
                out[i - 1] = match_case(host, R.NT_HOSTS.get(host.lower(), host)) + t.space
                out[i] = ""
            elif R.NEGATION_FLIPS[low]:
                out[i] = match_case(t.text, R.NEGATION_FLIPS[low]) + t.space
            else:
                out[i] = ""
                if i > 0 and not t.space:
                    out[i - 1] = out[i - 1].rstrip()
            return tuple(out)
    if q.reader == "spacy":
        root = next((i for i, t in enumerate(toks) if t.dep == "ROOT"), None)
        if root is not None:
            done = _not_at(q, out, root)
            if done:
                return tuple(out)
        for i, t in enumerate(toks):  # a clause elsewhere ("..., we know that")
            if t.pos in (R.AUX, R.VERB) and t.dep != "aux" and _not_at(q, out, i):
                return tuple(out)
        return None
    for i, t in enumerate(toks):  # heuristic reader: after the first auxiliary, else before the first verb
        if t.text.lower() in R.NEGATABLE_AUXILIARIES:
            out[i] = t.text + " not" + (t.space or " ")
            return tuple(out)
    for i, t in enumerate(toks):
        if t.pos == R.VERB:
            out[i] = _do_support(t.text.lower(), t.lemma, _guess_verb_tag(t.text.lower(), t.lemma), t.text) + t.space
            return tuple(out)
    return None


def _do_support(low: str, lemma: str, tag: str, text: str) -> str:
    aux = {"VBD": "did", "VBZ": "does"}.get(tag, "do")
    words = f"{aux} not {lemma}"
    return words.capitalize() if text[:1].isupper() else words


def _not_at(q: Question, out: list[str], head: int) -> bool:
    """Put "not" into ``out`` for the clause headed by token ``head``; whether it found a place."""
    toks = q.tokens
    t = toks[head]
    children = [i for i, c in enumerate(toks) if c.head == head and i != head]
    aux = [i for i in children if toks[i].dep in ("aux", "auxpass")]
    subj = [i for i in children if toks[i].dep in ("nsubj", "nsubjpass", "expl")]
    if t.pos == R.AUX and t.dep != "aux" and not aux:  # a copula: "is not"
        out[head] = t.text + " not" + (t.space or " ")
        return True
    if aux:
        a = aux[0]
        if subj and a < subj[0] < head:  # "what can we infer" -> "what can we not infer"
            out[head] = "not " + out[head]
        else:
            out[a] = toks[a].text + " not" + (toks[a].space or " ")
        return True
    if t.pos == R.VERB and t.tag in ("VBZ", "VBD", "VBP"):
        out[head] = _do_support(t.text.lower(), t.lemma, t.tag, t.text) + t.space
        return True
    return False


@R.depends_on_resources
@functools.lru_cache(maxsize=50_000)
def plan(text: str, reader: str, nb) -> Plan:
    """What AddSent may change in ``text`` (see the module doc), once per question, reader and backend."""
    q = read_question(text, reader)
    qwords = q.words()
    taken = {i for i in range(len(q.tokens)) if _protected(q, i)}
    # a name of a kept type stays whole; the others are matched as units first
    for s, e, label in q.entities:
        if label in _KEPT_ENTITIES:
            taken.update(range(s, e))
    slots = _contrast_slots(q, nb, taken, qwords)
    slots += _person_slots(q, taken, nb)
    for found in (_entity_slots(q, nb, taken, qwords), _number_slots(q, taken)):
        slots += found
    slots += _antonym_slots(q, taken, qwords, nb)
    return Plan(q, tuple(sorted(slots)), _negate(q), tuple(_texts(q)), qwords)


# ---------------------------------------------------------------------------------------------- building


def _shift(slot: Slot, rng: random.Random) -> str:
    """A number slot's new text: the paper's integer + 10..100 (a year: - 10..100), an ordinal likewise."""
    if slot.kind == "word":
        return slot.choices[rng.randrange(len(slot.choices))]
    if slot.kind == "ordinal":
        m = _ORDINAL_RE.match(slot.original)
        n = int(m.group(1)) + rng.randint(10, 100)
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return f"{n}{suffix.upper() if m.group(2).isupper() else suffix}"
    value = int(slot.original.replace(",", ""))
    offset = rng.randint(10, 100)
    new = value - offset if slot.kind == "year" else value + offset
    return f"{new:,}" if "," in slot.original else str(new)


def _pick(choices: tuple[str, ...], used: set[str]) -> str | None:
    for c in choices:
        if c.lower() not in used:
            return c
    return choices[0] if choices else None


def perturb(
    p: Plan, rng: random.Random, nb, used: set[str], use_antonyms: bool = True, avoid: frozenset[str] = frozenset()
) -> tuple[str, list[tuple[str, str, str]]]:
    """The question with its meaning flipped and the changes ``(step, original, replacement)`` (none: not flipped).

    ``used`` holds the replacement words of the sentences already built: each slot takes its first
    choice not among them (the paper's "different replacement words"), else its first. ``avoid``: the
    passage's words (:func:`passage_words`); a noun, place or name the passage already speaks of is never
    brought in (the sentence would then state something about it that the passage may contradict), and a
    number the passage holds is drawn again: a slot whose every choice is there keeps its word."""
    q = p.question
    out = list(p.texts)
    changes: list[tuple[str, str, str]] = []
    qwords = p.words
    antonym_done = not use_antonyms
    for slot in p.slots:
        if slot.step == "antonym":
            if antonym_done:
                continue
            antonym_done = True
        if slot.step == "number":
            new = _shift(slot, rng)
            for _ in range(4):
                if new.lower() not in avoid:
                    break
                new = _shift(slot, rng)
        elif slot.step == "name":
            new = next((c for c in slot.choices if c.lower() not in used and c.lower() not in qwords and c.lower() not in avoid), None)
            if new is None:
                new = nearest_name(slot.original.lower(), slot.kind, nb, used | avoid, qwords, rng).capitalize()
        elif slot.step == "antonym":
            new = _pick(slot.choices, used)
        else:
            fresh = tuple(c for c in slot.choices if not _mentioned(c, avoid))
            new = _pick(fresh, used)
            if new is None:
                continue
        if slot.step in ("noun", "entity", "antonym") and slot.original[:1].isupper() and not new[:1].isupper():
            new = new[:1].upper() + new[1:]
        used.add(new.lower())
        last = q.tokens[slot.end - 1]
        out[slot.start] = new + last.space
        for i in range(slot.start + 1, slot.end):
            out[i] = ""
        _agree_article(q, out, slot.start, new)
        changes.append((slot.step, slot.original, new))
    if not changes:
        if p.negated is None:
            return "", []
        out = list(p.negated)
        changes.append(("not", "", "not"))
    return " ".join("".join(out).split()), changes


_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


@functools.lru_cache(maxsize=1024)
def passage_words(passage: str) -> frozenset[str]:
    """The passage's words, lower case, each also without a final "s" / "es" ("girls": "girl" too) and its numbers."""
    words = {w.lower() for w in _WORD.findall(passage)}
    words |= {w[:-1] for w in words if w.endswith("s") and len(w) > 3} | {w[:-2] for w in words if w.endswith("es") and len(w) > 4}
    return frozenset(words | set(re.findall(r"\d[\d,]*", passage)))


def _mentioned(candidate: str, avoid: frozenset[str]) -> bool:
    """Whether every word of ``candidate`` (its head, for a phrase) is one the passage uses."""
    words = candidate.lower().split()
    return bool(words) and words[-1] in avoid


def _agree_article(q: Question, out: list[str], i: int, new: str) -> None:
    """The "a" / "an" before token ``i`` (adjectives between allowed) agreeing with its new first word."""
    j = i - 1
    while j >= 0 and q.tokens[j].pos == R.ADJ and out[j]:
        j -= 1
    if j >= 0 and q.tokens[j].text.lower() in ("a", "an"):
        first_word = (out[j + 1] if j + 1 < i else new).split()
        if first_word:
            out[j] = match_case(q.tokens[j].text, article_for(first_word[0])) + q.tokens[j].space


def _lower_first(option: str) -> str:
    """``option`` to continue a sentence: its first letter lower case unless a name, an acronym or "I"."""
    words = option.split()
    if not words:
        return option
    first = words[0]
    core = re.sub(r"\W", "", first)
    proper = any(f[:1].isupper() for member in C.members_of(core) for f in member if f.lower() == core.lower())
    if not core or core == "I" or (len(core) > 1 and core.isupper()) or R.name_kinds(core) or core.lower() in R.TITLES or proper:
        return option
    return option[:1].lower() + option[1:]


def sentence(altered: str, distractor: str) -> str:
    """The inserted sentence: the flipped question with the wrong option (see the module doc); "a" / "an"
    agree with the words after them."""
    option = " ".join(distractor.split())
    body = re.sub(r"(?<=\w)(?=_)|(?<=_)(?=\w)", " ", altered.strip())  # a blank glued to a word ("Woof_")
    if has_blank(body):
        inner = re.search(r"\?\s+(?=\S)", body)
        if inner and BLANK_RE.search(body, inner.end()):  # "Why did he go there? Because _ .": one sentence, a colon
            body = f"{body[: inner.start()].rstrip()}: {body[inner.end() :]}"
        blanks = len(BLANK_RE.findall(body))
        parts = [p.strip() for p in option.split(";")]
        fills = parts if blanks > 1 and len(parts) == blanks else [option]  # "Tom loves _ and Jill loves _": "sports; animals"
        for fill in fills:
            before, after = BLANK_RE.split(body, maxsplit=1)
            if after.strip(" .!?"):  # a blank inside the sentence: the option's own full stop goes
                fill = fill.rstrip(" .")
            body = f"{before}{fill}{after}"
        text = " ".join(body.split())
        text = re.sub(r"\s+([,.;:!?])", r"\1", text).rstrip(" ?")
        text = re.sub(r"(?<!\.)\.\.(?!\.)", ".", text)  # the option's full stop and the question's
        text = re.sub(r"(?<=: )\S.*", lambda m: _lower_first(m.group()), text, count=1)  # "...: because ..."
        if text and text[-1] not in ".!\"'":
            text += "."
        text = text[:1].upper() + text[1:]
    elif "?" in body[-3:]:  # one sentence: the question and, after a colon, the option
        body = body[: body.rindex("?")].rstrip()
        option = _lower_first(option).rstrip()
        text = f"{body}: {option}" + ("" if option[-1:] in ".!?\"'" else ".")
    else:
        body = body.rstrip(" .:;,")
        option = _lower_first(option).rstrip()
        text = f"{body} {option}" + ("" if option[-1:] in ".!?\"'" else ".")
    return fix_articles(text[:1].upper() + text[1:])


def _distractors(ex, n: int, rng: random.Random) -> list[str]:
    """``n`` wrong options drawn at random, those that only point at other options last."""
    wrong = [o for i, o in enumerate(ex.options) if i != ex.label and o.strip()]
    if not wrong:
        return []
    real = [o for o in wrong if not _POINTER_OPTION_RE.match(o.strip())]
    pointers = [o for o in wrong if _POINTER_OPTION_RE.match(o.strip())]
    picks = rng.sample(real, min(n, len(real)))
    if len(picks) < n and pointers:
        picks += rng.sample(pointers, min(n - len(picks), len(pointers)))
    while len(picks) < n:
        picks.append(rng.choice(wrong))
    return picks


@register
class AddSentMC(Attack):
    name = "addsent"
    task = "mc"
    paper = cite("advrace")
    description = "insert two sentences: the meaning-flipped question filled with a random wrong option"
    neighbour_default = "distributional"

    @classmethod
    def defaults(cls):
        # sentences: how many to insert; vectors: the nearest-word order of the replacements (a GloVe/word2vec
        # path, embeddings; None: $ROBUST_MRC_VECTORS, else the MiniLM input embeddings); antonyms: step 2 on / off;
        # tagger: auto | spacy | heuristic (None: $ROBUST_MRC_TAGGER, else auto: spaCy where installed)
        return {"sentences": 2, "vectors": None, "antonyms": True, "tagger": None}

    def resources(self) -> dict[str, str]:
        return {
            "neighbours": R.describe(R.neighbours(self.vectors, self.neighbour_default)),
            "contrasts": f"contrast_sets.txt {C.digest()}",
            "names": "person_names.tsv",
            "antonyms": "wordnet" if self.antonyms and R.has_wordnet() else "none",
            "tagger": R.tagger_name(self.tagger),
        }

    def _reader(self) -> str:
        reader = self.__dict__.get("_resolved_reader")
        if reader is None:
            reader = R.resolve_tagger(self.tagger)
            if reader != "spacy":
                warn_heuristic("AddSent")
            self._resolved_reader = reader
        return reader

    def _neighbours(self):
        nb = self.__dict__.get("_nb")
        if nb is None:
            nb = self._nb = R.neighbours(self.vectors, self.neighbour_default)
        return nb

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_nb", None)  # a backend holds its matrix: each process loads its own, once
        return state

    def prepare(self, context) -> None:
        """Read the questions of ``context.targets`` in one batch (spaCy's ``pipe``) and plan their changes, when known
        and at most :data:`PREPARE_MAX` (a larger set, a training set, is read as its questions are attacked: in the
        DataLoader workers, side by side)."""
        if context.targets:
            questions = list(dict.fromkeys(ex.question.strip() for ex in context.targets if hasattr(ex, "question")))
            if len(questions) > PREPARE_MAX:
                log.info("AddSent: %d questions; each is read with spaCy when it is first attacked", len(questions))
                return
            reader = self._reader()
            read_questions(questions, reader)
            nb = R.neighbours(self.vectors, self.neighbour_default)
            for q in questions:
                plan(q, reader, nb)

    def apply(self, ex, rng):
        return self.trace(ex, rng)[0]

    def trace(self, ex, rng):
        """``(attacked example or None, sentences)``: :meth:`apply` with the replacements it made, one
        list of ``(step, original, replacement)`` per sentence it built (the same output for the same ``rng``)."""
        record: list[list[tuple[str, str, str]]] = []
        nb = self._neighbours()
        picks = _distractors(ex, int(self.sentences), rng)
        if not picks:
            return None, record
        p = plan(ex.question.strip(), self._reader(), nb)
        use_antonyms = bool(self.antonyms) and R.has_wordnet()
        used: set[str] = set()
        bounds = sentence_boundaries(ex.passage)
        added, places = [], []
        avoid = passage_words(ex.passage) | passage_words(" ".join(ex.options))  # nor an option's numbers and words
        for distractor in picks:
            altered, changes = perturb(p, rng, nb, used, use_antonyms, avoid)
            record.append(changes)
            if not changes:
                continue
            added.append(sentence(altered, distractor))
            places.append(rng.choice(bounds))
        if not added:
            return None, record
        passage = ex.passage
        # at boundaries of the original passage, the later places first so that the earlier stay where they
        # were; sentences drawn to one place go in together, in the order they were made
        at_place: dict[int, list[str]] = {}
        for place, text in zip(places, added):
            at_place.setdefault(place, []).append(text)
        for place in sorted(at_place, reverse=True):
            passage, _, _ = insert_at(passage, place, " ".join(at_place[place]))
        return ex.replace(attack=self.name, detail=" | ".join(added), passage=passage), record


def flip_question(question: str, rng: random.Random, vectors=None, tagger=None, used: set[str] | None = None, antonyms: bool = True):
    """``(altered question, changes)``: one sentence's steps 1-3 on ``question`` (changes: ``(step, original,
    replacement)``; none when it could not be flipped). ``used``: replacement words of earlier sentences."""
    nb = R.neighbours(vectors, AddSentMC.neighbour_default)
    p = plan(question.strip(), R.resolve_tagger(tagger), nb)
    return perturb(p, rng, nb, set() if used is None else used, antonyms and R.has_wordnet())
