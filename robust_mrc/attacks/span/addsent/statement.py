"""AddSent step 3: turn the (altered) question and a (fake) answer into a declarative sentence.

The paper (Jia & Liang 2017, section 4.1) applies hand-written rules over CoreNLP's
constituency parses; here one small rule per question shape works over the tokens and coarse POS
tags. :data:`RULES` maps the question's first word to the rules tried in order; a rule returns None
when the question does not have its shape, and the next one is tried; then a wh-word in situ is
replaced by the answer and, last, the answer is appended. ``A`` below stands for the answer.

The sentences are raw: :func:`declarative` may leave double or edge spaces (the attack's
``as_statement`` tidies them); no crowdworker fixes grammar.
"""

from __future__ import annotations

from typing import NamedTuple

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.span.addsent.grammar import find_verb, inflect, np_end


class Question(NamedTuple):
    """Question tokens (no "?"), their POS tags and their lower-case forms."""

    toks: list[str]
    tags: list[str]
    low: list[str]

    @classmethod
    def of(cls, tokens: list[str], tagger=None) -> Question:
        """The question's tokens without "?", tagged by ``tagger`` (see ``resources.pos_tag``)."""
        toks = [t for t in tokens if t != "?"]
        return cls(toks, R.pos_tag(toks, tagger), [t.lower() for t in toks])

    def words(self, start: int, end: int | None = None) -> str:
        """The tokens ``start:end`` joined by spaces."""
        return " ".join(self.toks[start:end])


# the preposition an adverbial wh-word turns into ("when did X V" -> "X V-ed in A")
_ADVERBIAL_PREP = {"when": "in", "where": "in", "why": "because of", "how": "by"}
_NP_TAGS = (R.NOUN, R.PROPN, R.ADJ, R.NUM)


# ------------------------------------------------------------------ "In what NP ...?"


def _in_what_np_end(q: Question) -> int | None:
    """End of the NP after "in/on/at/during what/which", None: not that shape."""
    return np_end(q.toks, q.tags, 2) if len(q.low) > 2 and q.low[1] in ("what", "which") else None


def in_what_did(q: Question, a: str) -> str | None:
    """Shape "In what year did X V ...?" -> "In A, X V-ed ..."."""
    j = _in_what_np_end(q)
    if j is None or j >= len(q.toks) or q.low[j] not in R.DO_FORMS:
        return None
    v = find_verb(q.toks, q.tags, j + 1)
    if v is None:
        return None
    return f"{q.toks[0]} {a}, {q.words(j + 1, v)} {inflect(q.low[j], q.toks[v])} {q.words(v + 1)}"


def in_what_is(q: Question, a: str) -> str | None:
    """Shape "In what country is X?" -> "X is in A"."""
    j = _in_what_np_end(q)
    if j is None or j >= len(q.toks) or q.low[j] not in R.BE_FORMS:
        return None
    return f"{q.words(j + 1)} {q.toks[j]} {q.low[0]} {a}"


def in_what(q: Question, a: str) -> str | None:
    """Shape "In what NP ...?" (any other) -> "In A, ..."."""
    j = _in_what_np_end(q)
    return None if j is None else f"{q.toks[0]} {a}, {q.words(j)}"


# ------------------------------------------------------------------ "How many NP ...?", "How old is X?"


def _how_many_np_end(q: Question) -> int | None:
    return np_end(q.toks, q.tags, 2) if len(q.low) > 1 and q.low[1] in ("many", "much") else None


def how_many_did(q: Question, a: str) -> str | None:
    """Shape "How many NP did X V ...?" -> "X V-ed A NP ..."."""
    j = _how_many_np_end(q)
    if j is None or j >= len(q.toks) or q.low[j] not in R.DO_FORMS:
        return None
    v = find_verb(q.toks, q.tags, j + 1)
    if v is None:
        return None
    return f"{q.words(j + 1, v)} {inflect(q.low[j], q.toks[v])} {a} {q.words(2, j)} {q.words(v + 1)}"


def how_many(q: Question, a: str) -> str | None:
    """Shape "How many NP V ...?" -> "A NP V ..."."""
    j = _how_many_np_end(q)
    return None if j is None else f"{a} {q.words(2, j)} {q.words(j)}"


def how_adjective(q: Question, a: str) -> str | None:
    """Shape "How old was X when ...?" -> "X was A when ..."."""
    if not (len(q.low) > 2 and q.tags[1] in (R.ADJ, R.ADV) and q.low[2] in R.BE_FORMS):
        return None
    j = np_end(q.toks, q.tags, 3)
    return f"{q.words(3, j)} {q.toks[2]} {a} {q.words(j)}"


# ------------------------------------------------------------------ "When/Where/Why/How did/is/can X ...?"


def adverbial_did(q: Question, a: str) -> str | None:
    """Shape "When did X V ...?" -> "X V-ed ... in A" (where: in A, why: because of A, how: by A)"""
    if not (len(q.low) > 1 and q.low[1] in R.DO_FORMS):
        return None
    v = find_verb(q.toks, q.tags, 2)
    if v is None:
        return None
    return f"{q.words(2, v)} {inflect(q.low[1], q.toks[v])} {q.words(v + 1)} {_ADVERBIAL_PREP[q.low[0]]} {a}"


def adverbial_is(q: Question, a: str) -> str | None:
    """Shape "When was X born?" -> "X was born in A"."""
    if not (len(q.low) > 1 and q.low[1] in R.BE_FORMS):
        return None
    j = np_end(q.toks, q.tags, 2)
    return f"{q.words(2, j)} {q.toks[1]} {q.words(j)} {_ADVERBIAL_PREP[q.low[0]]} {a}"


def adverbial_modal(q: Question, a: str) -> str | None:
    """Shape "How can X V ...?" -> "X can V ... by A" (any other auxiliary)"""
    if not (len(q.low) > 1 and q.low[1] in R.AUXILIARIES):
        return None
    v = find_verb(q.toks, q.tags, 2)
    return None if v is None else f"{q.words(2, v)} {q.toks[1]} {q.words(v)} {_ADVERBIAL_PREP[q.low[0]]} {a}"


# ------------------------------------------------------------------ "Who ...?"


def who_did(q: Question, a: str) -> str | None:
    """Shape "Who did X V ...?" -> "X V-ed A ...", "Who did X work for ...?" -> "X worked for A ..."."""
    if not (len(q.low) > 1 and q.low[1] in R.DO_FORMS):
        return None
    v = find_verb(q.toks, q.tags, 2)
    if v is None:
        return None
    return f"{q.words(2, v)} {_verb_then_answer(q, q.low[1], v, a)}"


def _verb_then_answer(q: Question, aux: str, v: int, a: str) -> str:
    """The inflected verb ``v`` with the answer as its object, or after a stranded preposition that
    follows it ("work for?" / "work for in 1890?" -> "worked for A ..."; not "invent in 1887?"),
    then the rest of the question."""
    verb = inflect(aux, q.toks[v])
    stranded = v + 1 < len(q.toks) and q.low[v + 1] in R.PREPOSITIONS
    if stranded and (v + 2 == len(q.toks) or q.low[v + 2] in R.PREPOSITIONS):
        return f"{verb} {q.toks[v + 1]} {a} {q.words(v + 2)}".rstrip()
    return f"{verb} {a} {q.words(v + 1)}".rstrip()


def wh_subject(q: Question, a: str) -> str | None:
    """Shape "Who/What V ...?" (the wh-word is the subject) -> "A V ..."."""
    return f"{a} {q.words(1)}"


# ------------------------------------------------------------------ "What/Which ...?"


def what_is(q: Question, a: str) -> str | None:
    """Shape "What is X?" -> "X is A"; "What is X known for?" -> "X is known for A"."""
    if not (len(q.low) > 1 and q.low[1] in R.BE_FORMS):
        return None
    rest = q.toks[2:]
    if rest and (rest[-1].lower() in R.PREPOSITIONS or q.tags[-1] == R.VERB):
        j = np_end(q.toks, q.tags, 2)
        return f"{q.words(2, j)} {q.toks[1]} {q.words(j)} {a}"
    return f"{' '.join(rest)} {q.toks[1]} {a}"


def what_did(q: Question, a: str) -> str | None:
    """Shape "What did X V ...?" -> "X V-ed A ..."; "What does X work as?" -> "X works as A"."""
    if not (len(q.low) > 1 and q.low[1] in R.DO_FORMS):
        return None
    v = find_verb(q.toks, q.tags, 2)
    return None if v is None else f"{q.words(2, v)} {_verb_then_answer(q, q.low[1], v, a)}"


def _what_np_end(q: Question) -> int | None:
    """End of the NP after "what/which", None: no NP there."""
    return np_end(q.toks, q.tags, 1) if len(q.low) > 1 and q.tags[1] in _NP_TAGS else None


def what_np_did(q: Question, a: str) -> str | None:
    """Shape "What NP did X V ...?" -> "X V-ed A ..."; "... V for?" -> "X V-ed for A"."""
    j = _what_np_end(q)
    if j is None or j >= len(q.toks) or q.low[j] not in R.DO_FORMS:
        return None
    v = find_verb(q.toks, q.tags, j + 1)
    return None if v is None else f"{q.words(j + 1, v)} {_verb_then_answer(q, q.low[j], v, a)}"


def what_np_is_prep(q: Question, a: str) -> str | None:
    """Shape "What NP is X located in?" -> "X located in is the NP A" (sic: the words after the verb
    are not split into subject and participle)."""
    j = _what_np_end(q)
    if j is None or not (j + 1 < len(q.toks) and q.low[j] in R.BE_FORMS and q.low[-1] in R.PREPOSITIONS):
        return None
    return f"{q.words(j + 1)} {q.toks[j]} the {q.words(1, j)} {a}"


def what_np(q: Question, a: str) -> str | None:
    """Shape "What NP V ...?" (any other) -> "The NP of A V ..."."""
    j = _what_np_end(q)
    return None if j is None else f"The {q.words(1, j)} of {a} {q.words(j)}"


# ------------------------------------------------------------------ any question


def wh_in_situ(q: Question, a: str) -> str | None:
    """Shape "Tesla moved to what city?" -> "Tesla moved to A" (the first wh-word and, after what/which, its NP)"""
    for i, t in enumerate(q.low):
        if t in R.WH_WORDS:
            np = t in ("what", "which") and i + 1 < len(q.toks) and (q.tags[i + 1] in _NP_TAGS or q.low[i + 1] in R.NOUN_PHRASE_WORDS)
            j = np_end(q.toks, q.tags, i + 1) if np else i + 1
            j += t == "how" and j < len(q.low) and q.low[j] in ("many", "much")  # "how many" as a whole
            return f"{q.words(0, i)} {a} {q.words(j)}"
    return None


_IMPERATIVES = ("name", "list", "give", "identify", "state", "mention")


def imperative(q: Question, a: str) -> str | None:
    """Shape "Name a type of X?" -> "A is a type of X"."""
    return f"{a} is {q.words(1)}" if len(q.low) > 1 and q.low[0] in _IMPERATIVES else None


def answer_appended(q: Question, a: str) -> str:
    """No wh-word (yes/no questions): the question's words, then A."""
    return f"{q.words(0)} {a}"


_IN_WHAT = (in_what_did, in_what_is, in_what)
_ADVERBIAL = (adverbial_did, adverbial_is, adverbial_modal)
# first word of the question -> its shape rules, tried in order
RULES = {
    **dict.fromkeys(("in", "on", "at", "during"), _IN_WHAT),
    "how": (how_many_did, how_many, how_adjective, *_ADVERBIAL),
    **dict.fromkeys(("when", "where", "why"), _ADVERBIAL),
    **dict.fromkeys(("who", "whom"), (who_did, wh_subject)),
    **dict.fromkeys(("what", "which"), (what_is, what_did, what_np_did, what_np_is_prep, what_np, wh_subject)),
    **dict.fromkeys(_IMPERATIVES, (imperative,)),
}


def declarative(tokens: list[str], answer: str, tagger=None) -> str:
    """A statement from question tokens (already altered) and the (fake) answer: the first of the
    question's :data:`RULES` (by its first word) that fits, else :func:`wh_in_situ`, else
    :func:`answer_appended`."""
    toks = [t for t in tokens if t != "?"]
    if not toks:
        return answer
    q = Question.of(toks, tagger)
    for rule in (*RULES.get(q.low[0], ()), wh_in_situ):
        sentence = rule(q, answer)
        if sentence is not None:
            return sentence
    return answer_appended(q, answer)
