"""Whether an AddSent sentence is grammatical English, and the repairs rules can make.

Jia & Liang 2017 had crowd workers fix the grammar of every raw sentence (their step 4); here
rules repair what they can and spaCy's dependency parse judges the rest, so that the attacks can
prefer the candidates that pass.

:func:`repair` (text rules, no model): a repeated word dropped ("the the", "Jeff Jeff"), a
capitalised article inside the sentence lowered, "1980 s" joined, a year range put in order, a
year after :data:`LATEST_YEAR` after a preposition of time ("in 2891": a changed first digit)
moved back a thousand years, and a/an made to agree with the next word
(:func:`robust_mrc.attacks.inflection.fix_articles`). :func:`repair_agreement` makes a finite verb
agree in number with its subject when the subject holds a word the attack put in (the fake
answer's or an altered one: "Jeff Dean were" -> "Jeff Dean was").

:func:`problems` reads a parse (:class:`robust_mrc.attacks.resources.spacy_tagger.Parsed`) and
names what a crowd worker would have to fix: more than one sentence or root, a root that is not
a verb, no subject, no finite verb, a copula with no complement, subject-verb disagreement, a
preposition without its object or a sentence that ends in one (or in a determiner or
conjunction), "do/does/did" left as an auxiliary, a word the parser could not attach, a finite
verb used as a noun, an auxiliary before its subject, a wh-word left in. :func:`score` weighs them
(0: none found). The parser is a statistical model: a sentence it passes can still read badly,
and a few good ones are refused.
"""

from __future__ import annotations

import re

from robust_mrc.attacks.inflection import fix_articles, third_person

# no year the attack writes comes after the one it replaces (alterations and fake answers move years
# back), so a later year is the question's own ("by 2050"); one after this fixed bound (not today's
# date: the same data on every day) is a changed digit, never a year the passage can mean
LATEST_YEAR = 2100

_SUBJECT_DEPS = frozenset(("nsubj", "nsubjpass", "csubj", "csubjpass", "expl"))
_FINITE_TAGS = frozenset(("VBD", "VBZ", "VBP", "MD"))
_NOMINAL_DEPS = frozenset(("pobj", "dobj", "nsubj", "nsubjpass", "compound", "appos", "attr", "npadvmod", "poss", "dep"))
_OBJECT_DEPS = frozenset(("pobj", "pcomp"))
_BE_COMPLEMENTS = frozenset(("attr", "acomp", "prep", "advcl", "ccomp", "xcomp", "oprd", "npadvmod", "agent", "dobj", "auxpass"))
_DANGLING_END_TAGS = frozenset(("IN", "TO", "DT", "CC", "PDT", "WDT", "WP", "WRB", "POS"))
_WH_LEFT = frozenset(("what", "how", "why"))
_KEEP_DOUBLED = frozenset(("that", "had"))
# (problem, weight): a broken structure weighs more than a slip
WEIGHTS = {
    "sentences": 3,
    "root": 3,
    "subject": 2,
    "finite": 2,
    "agreement": 1,
    "dangling": 2,
    "do_left": 2,
    "unattached": 2,
    "verb_as_noun": 2,
    "inverted": 2,
    "wh_left": 2,
}

_DOUBLED_RE = re.compile(r"\b([A-Za-z]+)(\s+)\1\b", re.IGNORECASE)
_INNER_ARTICLE_RE = re.compile(r"(?<=[a-z0-9,] )(The|A|An)(?= [a-z])")
_DECADE_RE = re.compile(r"\b(\d{3}0) s\b")
_YEAR_RANGE_RE = re.compile(r"\b(1\d{3}|20\d{2})(\s*[-\u2013\u2014]\s*|\s+to\s+)(1\d{3}|20\d{2})\b")
# a year where a sentence names one: after a preposition of time ("in 2891", "since 2891"), not a quantity
_YEAR_RE = re.compile(r"\b((?:in|since|until|during|before|after) )(\d{4})(?![\d,]|\.\d|\s*%)")


def _undouble(text: str) -> str:
    return _DOUBLED_RE.sub(lambda m: m.group(0) if m.group(1).lower() in _KEEP_DOUBLED else m.group(1), text)


def _ordered_ranges(text: str) -> str:
    def order(m: re.Match) -> str:
        a, sep, b = m.groups()
        return f"{b}{sep}{a}" if int(a) > int(b) else m.group(0)

    return _YEAR_RANGE_RE.sub(order, text)


def _plausible_years(text: str) -> str:
    def back(m: re.Match) -> str:
        y = int(m.group(2))
        return m.group(1) + str(y - 1000) if LATEST_YEAR < y < 3000 else m.group(0)

    return _YEAR_RE.sub(back, text)


# (repair name, rule): applied in this order
REPAIRS = (
    ("doubled_word", _undouble),
    ("article_case", lambda t: _INNER_ARTICLE_RE.sub(lambda m: m.group(1).lower(), t)),
    ("decade", lambda t: _DECADE_RE.sub(r"\1s", t)),
    ("year_range", _ordered_ranges),
    ("future_year", _plausible_years),
    ("article", fix_articles),
)


def repair(sentence: str) -> tuple[str, tuple[str, ...]]:
    """``sentence`` after the text rules of :data:`REPAIRS`, and the names of those that changed it."""
    done = []
    for name, rule in REPAIRS:
        new = rule(sentence)
        if new != sentence:
            done.append(name)
            sentence = new
    return sentence, tuple(done)


# ------------------------------------------------------------------ the parse's judgement


def _number(p, i: int) -> str | None:
    """ "sg" / "pl" of the subject headed by token ``i``, None when the tags do not say."""
    lo, hi = p.subtree(i)
    if any(p.deps[c] == "conj" for c in p.children(i)) and "and" in (w.lower() for w in p.words[lo:hi]):
        return "pl"  # "X, Y and Z"
    tag, low = p.tags[i], p.words[i].lower()
    if tag == "NNS" or (low in ("they", "we", "these", "those") and tag in ("PRP", "DT")):
        return "pl"  # (not NNPS: "the United States is", "the Beatles was formed")
    if tag in ("NN", "NNP") or (low in ("he", "she", "it", "this", "that") and tag in ("PRP", "DT")):
        return "sg"  # (not the relative "that": it takes its noun's number)
    return None


def _finite_of(p, v: int) -> int | None:
    """The finite verb that agrees with the subject of ``v``: ``v`` or its first finite auxiliary."""
    for c in p.children(v):
        if p.deps[c] in ("aux", "auxpass") and p.tags[c] in ("VBZ", "VBP", "VBD") and c < v:
            return c
    return v if p.tags[v] in ("VBZ", "VBP", "VBD") else None


def _verb_number(p, v: int) -> str | None:
    tag, low = p.tags[v], p.words[v].lower()
    if low in ("was", "is", "has", "does") or tag == "VBZ":
        return "sg"
    if low in ("were", "are", "have", "do") or tag == "VBP":
        return "pl" if low not in ("am",) else None
    return None


def disagreements(p) -> list[tuple[int, int]]:
    """``(subject head, finite verb)`` pairs whose numbers differ (by the Penn tags)."""
    out = []
    for s, dep in enumerate(p.deps):
        if dep not in ("nsubj", "nsubjpass") or p.heads[s] == s:
            continue
        v = _finite_of(p, p.heads[s])
        if v is None:
            continue
        ns, nv = _number(p, s), _verb_number(p, v)
        if p.words[v].lower() == "were" and any(w.lower() in ("if", "wish") for w in p.words[:s]):
            continue  # the subjunctive: "if the worker were"
        if ns and nv and ns != nv:
            out.append((s, v))
    return out


def problems(p) -> tuple[str, ...]:
    """What a crowd worker would fix in the parsed sentence ``p`` (names of :data:`WEIGHTS`, each once)."""
    found: list[str] = []
    add = lambda name: found.append(name) if name not in found else None  # noqa: E731
    n = len(p.words)
    words = [i for i in range(n) if p.pos[i] not in ("PUNCT", "SPACE")]
    if not words:
        return ("root",)
    roots = [i for i in range(n) if p.heads[i] == i]
    if p.sentences > 1 or len(roots) != 1:
        add("sentences")
    r = roots[0]
    if p.pos[r] not in ("VERB", "AUX"):
        add("root")
    kids = p.children(r)
    if not any(p.deps[c] in _SUBJECT_DEPS for c in kids):
        add("subject")
    if p.tags[r] not in _FINITE_TAGS and not any(p.deps[c] in ("aux", "auxpass") and p.tags[c] in _FINITE_TAGS for c in kids):
        add("finite")
    if disagreements(p):
        add("agreement")
    if p.lemmas[r] == "be" and not any(p.deps[c] in _BE_COMPLEMENTS and not p.tags[c].startswith("RB") for c in kids):
        add("dangling")  # "X was quickly": a copula with no complement but an adverb
    last = words[-1]
    if p.tags[last] in _DANGLING_END_TAGS:
        add("dangling")
    subjects = {p.heads[s]: s for s in range(n) if p.deps[s] in _SUBJECT_DEPS}
    for i in range(n):
        dep, tag, low = p.deps[i], p.tags[i], p.words[i].lower()
        if dep in ("prep", "agent", "dative") and tag in ("IN", "TO") and not any(p.deps[c] in _OBJECT_DEPS for c in p.children(i)):
            add("dangling")
        if dep == "det" and p.heads[i] < i:
            add("dangling")
        if p.lemmas[i] == "do" and dep == "aux" and not (i + 1 < n and p.words[i + 1].lower() in ("not", "n't")):
            add("do_left")
        if dep == "dep":
            add("unattached")
        if tag in ("VBD", "VBZ", "VBP") and dep in _NOMINAL_DEPS:
            add("verb_as_noun")
        if dep in ("aux", "auxpass") or (i == r and p.pos[i] == "AUX"):
            clause = p.heads[i] if dep in ("aux", "auxpass") else i
            s = subjects.get(clause)
            if s is not None and i < p.subtree(s)[0] and p.words[0].lower() not in ("there", "here", "only", "never", "nor"):
                add("inverted")
        if low in _WH_LEFT and not (dep in ("advmod", "nsubj", "dobj") and p.deps[p.heads[i]] in ("ccomp", "relcl", "advcl", "pcomp")):
            add("wh_left")
    return tuple(found)


def score(found: tuple[str, ...]) -> int:
    """Minus the weighted count of ``found`` problems: 0 is a sentence that passed."""
    return -sum(WEIGHTS.get(f, 1) for f in found)


def repair_agreement(sentence: str, p, marks) -> str | None:
    """``sentence`` with each finite verb made to agree with a subject that holds one of the words
    ``marks`` (the words the attack put in: the fake answer's, the altered question's; "Jeff Dean
    were" -> "Jeff Dean was"); None when nothing is to change."""
    marks = {m.lower() for m in marks}
    edits: dict[int, str] = {}
    for s, v in disagreements(p):
        lo, hi = p.subtree(s)
        if not marks & {w.lower() for w in p.words[lo:hi]}:
            continue
        edits[v] = _agreeing(p.words[v], p.lemmas[v], _number(p, s))
    if not edits:
        return None
    # rebuild from the token texts with their original spacing
    spans = _token_spans(sentence, p.words)
    if spans is None:
        return None
    out, prev = [], 0
    for i, (a, b) in enumerate(spans):
        if i in edits:
            out.append(sentence[prev:a])
            new = edits[i]
            out.append(new[:1].upper() + new[1:] if sentence[a : a + 1].isupper() else new)
            prev = b
    out.append(sentence[prev:])
    return "".join(out)


def _agreeing(word: str, lemma: str, number: str | None) -> str:
    low = word.lower()
    pairs = {"was": "were", "is": "are", "has": "have", "does": "do"}
    if number == "pl":
        return pairs.get(low, lemma.lower() if lemma else low)
    back = {v: k for k, v in pairs.items()}
    return back.get(low, third_person(lemma or low))


def _token_spans(text: str, words) -> list[tuple[int, int]] | None:
    spans, pos = [], 0
    for w in words:
        k = text.find(w, pos)
        if k < 0:
            return None
        spans.append((k, k + len(w)))
        pos = k + len(w)
    return spans
