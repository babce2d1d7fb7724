"""AddSent step 3 from the question's dependency parse: the question's word order undone and the
answer put in the wh-phrase's gap.

Jia & Liang 2017 turn the question into a statement by rules over CoreNLP's constituency parses;
:mod:`.statement` does it by rules over the question's shape and POS tags. This module reads the
spaCy parse of the **original** question (:func:`robust_mrc.attacks.resources.spacy_tagger.parse`,
Penn tags and dependencies) and writes the **altered** question's tokens (one per original token)
in statement order:

* the wh-phrase at the question's front is taken out: a wh-word ("who", "what else"), what /
  which / whose + its noun phrase ("which city", "what type of housing"), how many / much + its
  noun phrase, how + an adjective ("how old"), with a preposition before it ("in what year");
* a question whose wh-phrase is the subject keeps its order and the answer takes the phrase's
  place ("Who pays X?" -> "A pays X"; "What museum is X?" -> "The museum that is X is A", and
  "A is X");
* otherwise the auxiliaries after the wh-phrase go after the subject ("was the agency charged" ->
  "the agency was charged"), do-support is undone ("did Tesla patent" -> "Tesla patented"), and
  the answer goes to the gap: after a pied-piped preposition at the end ("in A"), as an adverbial
  at the end (when / where / what year: "in A", why: "because of A", how: "by A"), after a
  stranded preposition ("named after A"), after the first verb that lacks its object ("claimed to
  be able to transmit A"), after the copula ("X is A");
* a wh-phrase not at the front is replaced in place ("... into which lake?" -> "... into A").

:func:`statements` returns the raw sentences (the attack joins, repairs and checks them), [] when
the question has no wh-phrase at its front or in place, or no subject can be found: the rules of
:mod:`.statement` still apply then.
"""

from __future__ import annotations

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.inflection import gerund, past, third_person
from robust_mrc.attacks.resources.spacy_tagger import Parsed

_WH = frozenset(("what", "which", "who", "whom", "whose", "when", "where", "why", "how"))
_SUBJECT = frozenset(("nsubj", "nsubjpass", "csubj", "csubjpass", "expl"))
_COMPLEMENTS = frozenset(("dobj", "obj", "attr", "oprd", "ccomp", "xcomp", "acomp", "dative", "pcomp"))
_NP_TAGS = frozenset(("JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "CD", "HYPH", "POS", "VBN", "VBG", "NFP"))
_NOUN_TAGS = frozenset(("NN", "NNS", "NNP", "NNPS", "CD"))
_NOUNS = frozenset(("NN", "NNS", "NNP", "NNPS"))
_VERB_TAGS = frozenset(("VB", "VBD", "VBZ", "VBP", "VBN", "MD"))
_TIME_NOUNS = frozenset("year years time day date month century decade era period season age".split())
_PUNCT = frozenset(("?", ".", "!"))
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
# verbs whose object comes before their to-clause ("use _ to connect"): the to-clause is not their object
_OBJECT_CONTROL = frozenset(
    "use ask tell want allow force cause enable require persuade encourage order expect need hire appoint send invite choose "
    "select elect employ pay instruct teach urge advise warn remind get help".split()
)
# verbs whose passive takes the name as complement ("X is called A"), not a modifier ("the region discussed")
_NAMING = frozenset("call name know term consider dub title nickname label describe designate".split())
_CLITICS = {"'s": "is", "\u2019s": "is", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would", "'m": "am"}
_DIMENSIONS = frozenset("long tall high wide deep thick large big heavy".split())
_QUANTITY_NOUNS = frozenset("percentage percent proportion fraction share number amount portion majority minority".split())
_NUMBER_WORDS = frozenset("one two three four five six seven eight nine ten eleven twelve hundred thousand million billion".split())
# tags that open a subject after the auxiliary ("was *the* agency charged"): the wh-phrase is then not the subject
_SUBJECT_START = frozenset(("DT", "PRP", "PRP$", "NNP", "NNPS", "NN", "NNS", "CD", "JJ", "PDT", "EX"))
_LEADING_PREPOSITIONS = frozenset(
    "in on at during by before after around since until from to near inside outside circa about approximately roughly nearly".split()
)


def _time_preposition(answer: str) -> str:
    """ "on" before a date with a day ("July 4, 1776", "Monday"), "in" otherwise."""
    words = answer.lower().replace(",", " ").split()
    if any(w in _WEEKDAYS for w in words) or (len(words) >= 2 and any(w.isdigit() and len(w) <= 2 for w in words)):
        return "on"
    return "in"


def adverbial(wh: str, answer: str) -> str:
    """The answer as an adverbial for ``wh`` (when, where, why, how; "time" for a what-year
    phrase): "in 1962", "on July 4, 1776", "because of the stone", "by stone", "quickly"; an
    answer that opens with a preposition (or, for why, "because"/"to"; for how, an -ly adverb)
    stands as it is."""
    words = answer.split()
    first = words[0].lower() if words else ""
    if first in _LEADING_PREPOSITIONS or (wh == "why" and first in ("because", "to", "due", "for", "since", "as")):
        return answer
    if wh == "how" and (first in ("through", "with", "using", "via") or (len(words) == 1 and first.endswith("ly"))):
        return answer
    if wh == "how" and len(words) == 1 and (first.endswith(("ed", "en")) or first in ("swam", "ran", "flew", "went", "took")):
        base = _verb_base(first)
        if base:  # "chosen by jumped" -> "chosen by jumping"
            return f"by {gerund(base)}"
    prep = {"when": _time_preposition(answer), "time": _time_preposition(answer), "why": "because of", "how": "by"}.get(wh, "in")
    return f"{prep} {answer}"


def _verb_base(word: str) -> str | None:
    """The base form of the verb ``word`` (WordNet's morphology), None when WordNet has no verb for it."""
    if not R.has_wordnet():
        return None
    return R.wordnet().morphy(word.lower(), "v")


class _Question:
    """The parse of the original question and the altered tokens, one per parsed token."""

    def __init__(self, p: Parsed, alt: list[str]):
        self.p = p
        self.alt = alt
        n = len(p.words)
        while n and p.words[n - 1] in _PUNCT:
            n -= 1
        self.n = n

    def low(self, i: int) -> str:
        return self.p.words[i].lower()

    def kids(self, i: int, *deps: str) -> list[int]:
        return [c for c in self.p.children(i) if not deps or self.p.deps[c] in deps]

    def word(self, i: int, first: bool = False) -> str:
        """The altered token ``i``; the question's first word lowered when it is no longer first
        (unless a proper noun)."""
        w = self.alt[i]
        if i == 0 and not first and self.p.tags[0] not in ("NNP", "NNPS") and w[:1].isupper() and w[1:2].islower():
            return w[0].lower() + w[1:]
        return w

    def render(self, items: list) -> str:
        """Token indices (altered tokens) and strings, joined by spaces."""
        out = [self.word(it, first=k == 0) if isinstance(it, int) else it for k, it in enumerate(items)]
        return " ".join(x for x in out if x)

    def aux_like(self, i: int) -> bool:
        return self.p.tags[i] == "MD" or (self.p.lemmas[i] in ("be", "have") and self.p.pos[i] == "AUX")

    def main_verb(self, lo: int) -> int | None:
        """The main verb after do-support's subject from ``lo``: the first word tagged VB or VBP, else
        the first the heuristic tagger takes for a verb ("did Maududi *advocate*"), else the first
        lower-case word after a noun that WordNet knows as a verb; never a word in -s (a base form
        follows do-support: not "did Luther's *hymns* translations influence")."""

        def base(v: int) -> bool:
            low = self.low(v)
            return self.p.words[v].islower() and not (low.endswith("s") and not low.endswith(("ss", "us", "is")))

        for v in range(lo + 1, self.n):
            if self.p.tags[v] in ("VB", "VBP") and base(v):
                return v
        tags = R.heuristic_tag(list(self.p.words[: self.n]))
        v = next((v for v in range(lo + 1, self.n) if tags[v] == R.VERB and base(v)), None)
        if v is None:  # "did the Huguenots in South Carolina *purchase* land": a verb after a name or noun
            v = next((v for v in range(lo + 1, self.n) if base(v) and self.p.tags[v - 1] in _NOUN_TAGS and _verb_base(self.low(v))), None)
        return v


def _wh_index(q: _Question) -> int | None:
    """The wh-word that opens the question's main clause: right after a comma ("If X, what Y?",
    "When X, what Y?"), else at the front (after a preposition: "In what year"), else the first
    lower-case one, in place ("... into which lake?"); None: no wh-word."""
    for i in range(1, q.n):
        if q.low(i) in _WH and q.p.words[i - 1] == ",":
            return i
    for i in range(q.n):
        if q.low(i) in _WH and (i == 0 or (i == 1 and q.p.tags[0] in ("IN", "TO")) or q.p.words[i].islower()):
            return i
    return None


def _phrase(q: _Question, w: int) -> tuple[int, str]:
    """``(end, kind)`` of the wh-phrase that starts at ``w``: kind "word" (who, what, what else),
    "np" (what/which/whose + noun phrase, "of" + noun phrase included), "many" (how many/much +
    noun phrase), "degree" (how + adjective or adverb)."""
    p, low, n = q.p, q.low(w), q.n

    def np_end(i: int) -> int:
        j = i
        while j < n and (
            (p.tags[j] in _NP_TAGS and not (p.tags[j] in ("VBN", "VBG") and p.deps[j] not in ("amod", "compound")))
            or (p.tags[j] in (",", "CC") and j > i and j + 1 < n and p.tags[j - 1] in _NOUN_TAGS and p.tags[j + 1] in _NOUN_TAGS)
        ):  # "what month, day and year"
            j += 1
        while j > i and p.tags[j - 1] not in _NOUN_TAGS:  # end on the noun
            j -= 1
        if j == i and i + 1 < n and p.tags[i] == "JJ" and p.tags[i + 1] in ("VBZ", "VBD", "VBP", "MD"):
            return i + 1  # "What *characteristic* identifies ...": the tagger's adjective is the noun
        if j > i and j + 1 < n and q.low(j) == "of" and p.tags[j + 1] in _NP_TAGS | {"DT"}:
            if p.tags[j + 1] == "VBG":  # "type of *ending*", "kind of *learning* experience": a gerund after "of"
                k = j + 2
                while k < n and p.tags[k] in ("NN", "NNS"):
                    k += 1
                return k
            k = np_end(j + 1 + (p.tags[j + 1] == "DT"))
            j = k if k > j + 1 + (p.tags[j + 1] == "DT") else j
        return j

    if low in ("what", "which", "whose"):
        j = np_end(w + 1)
        while j < n and w < p.heads[j] < j and p.pos[j] not in ("VERB", "AUX"):
            j = p.subtree(j)[1]  # what the parse attaches inside: "what type of ending *to the year*"
        if j > w + 1:
            return j, "np"
    if low in ("what", "who", "whom") and w + 1 < n and q.low(w + 1) == "else":
        return w + 2, "word"
    if low == "how" and w + 1 < n:
        if q.low(w + 1) in ("many", "much"):
            j = np_end(w + 2)
            return max(j, w + 2), "many"
        if p.tags[w + 1] in ("JJ", "RB", "JJR", "RBR"):
            return w + 2, "degree"
    return w + 1, "word"


def _head_of(q: _Question, start: int, end: int) -> int:
    """The token of ``[start, end)`` whose head lies outside it (the phrase's head in the parse)."""
    for i in range(start, end):
        if not start <= q.p.heads[i] < end or q.p.heads[i] == i:
            return i
    return end - 1


def _subject_end(q: _Question, s0: int, adverbial: bool = False) -> int:
    """End of the subject that starts at ``s0``: the parse's subject subtree that starts there (cut
    before a participle that modifies it or ends the question, or an apposition: "is the building
    *used* as", "was his article *published*", "was Johann Eck *the assistant*"), else the tokens
    up to the first verb or the start of a second noun phrase (the end of the question when there
    is neither). ``adverbial``: the wh-phrase is no noun phrase of the clause ("when", "in what
    year"), so a participle that ends the question is its verb ("was the locomotive first *invented*")."""
    p = q.p
    for s in range(s0, q.n):
        if p.deps[s] in _SUBJECT:
            lo, hi = p.subtree(s)
            if lo != s0 or hi > q.n:
                break
            cut = next((k for k in range(s + 1, hi) if p.deps[k] in ("acl", "appos") and p.heads[k] == s), None)
            after = p.tags[s + 2] if s + 2 < q.n else ""  # a predicate adjective takes a preposition ("ninth *in*"), not a noun
            pred = s + 1 < hi and (p.tags[s + 1] in ("RB", "RBS") or (p.tags[s + 1] == "JJ" and after in ("IN", "TO")))
            predicate = s + 1 if pred and p.tags[s] in _NOUNS else None
            if predicate is not None:
                return predicate  # "was the Rhine | fully within ...", "was Newcastle | ninth in ..."
            superlative = any(p.tags[k] in ("JJS", "RBS") or q.low(k) in ("first", "last", "only") for k in range(lo, s))
            participle = (
                cut is not None
                and p.tags[cut] in ("VBN", "VBG")
                and (adverbial or ((cut < q.n - 1 or p.lemmas[cut] in _NAMING) and not superlative))
            )
            apposition = cut is not None and p.deps[cut] == "appos" and p.tags[p.subtree(cut)[0]] == "DT"  # not "Bank of America | Tower"
            if apposition or participle:
                return p.subtree(cut)[0]  # not "the smallest region *discussed*?": a participle ending the question modifies the noun
            if (
                hi == q.n
                and hi - 1 > s
                and ((p.tags[hi - 1] == "VBN" and (p.lemmas[hi - 1] in _NAMING or adverbial)) or p.tags[hi - 1] in ("IN", "TO"))
            ):
                return hi - 1  # "are private schools that charge no tuition *called*?", "was the suspension by FIFA *lifted*?", "*in*?"
            split = hi
            while hi < q.n and (
                p.tags[hi] in ("NNP", "NNPS", "WP", "POS", "HYPH") or (p.tags[hi] in ("NN", "NNS", "CD") and q.p.words[hi][:1].isupper())
            ):
                hi += 1  # a name the parser split ("the 1991 Doctor | Who exhibition")
            while split < hi < q.n and p.tags[hi] in ("NN", "NNS"):
                hi += 1
            return hi
    for k in range(s0 + 1, q.n):
        if p.tags[k] in _VERB_TAGS and not (p.tags[k] == "VBN" and p.tags[k - 1] in ("DT", "JJ")):
            return k
        if k == q.n - 1 and p.tags[k] in ("IN", "TO"):
            return k  # "is Karenia | in?"
        if p.tags[k] in ("DT", "PRP$", "JJ", "JJS", "RB", "RBS") and p.tags[k - 1] in _NOUNS:
            return k  # a second noun phrase or a predicate: "was Newcastle | ninth in ..."
    return q.n


def _open_preposition(q: _Question, lo: int) -> int | None:
    """The first preposition from ``lo`` on with no object in the parse, followed by another
    preposition, a comma or the end ("used as _ at present")."""
    p = q.p
    for k in range(lo, q.n):
        if p.tags[k] in ("IN", "TO") and not q.kids(k, "pobj", "pcomp"):
            if k + 1 == q.n or p.tags[k + 1] in ("IN", "TO", ","):
                return k
    return None


def _objectless_verb(q: _Question, lo: int, phrase: range, main: int | None = None) -> int | None:
    """The first verb from ``lo`` on that has no object or complement after it in the parse outside the
    wh-phrase (the gap of a fronted object: "claim to be able to transmit _", "patent _ in 1891");
    ``main``: the main verb of do-support, a verb whatever its tag."""
    p = q.p
    for v in range(lo, q.n):
        if (p.pos[v] != "VERB" and v != main) or p.lemmas[v] == "be":
            continue
        complements = _COMPLEMENTS - {"xcomp"} if p.lemmas[v] in _OBJECT_CONTROL else _COMPLEMENTS
        if not any(p.deps[c] in complements and c not in phrase and c > v for c in q.kids(v)) and not (
            v + 1 < q.n and p.tags[v + 1] in _NOUN_TAGS | {"DT", "PRP$"}
        ):
            return v
    return None


def _cleft_be(q: _Question, head: int, rest: range) -> str:
    """ "is" / "are" / "was" / "were": the tense of the clause's first finite verb, the number of the noun."""
    pasts = next((q.p.tags[i] == "VBD" for i in rest if q.p.tags[i] in ("VBD", "VBZ", "VBP", "MD")), False)
    plural = q.p.tags[head] in ("NNS", "NNPS")
    return ("were" if plural else "was") if pasts else ("are" if plural else "is")


def statements(p: Parsed, alt: list[str], answer: str) -> list[str]:
    """Statements of the altered question ``alt`` (its tokens, one per token of the parse ``p`` of
    the original question) answered by ``answer``, best first; [] when the rules do not know its shape."""
    answer = answer.strip()
    if len(alt) != len(p.words) or not answer:
        return []
    q = _Question(p, alt)
    w = _wh_index(q)
    if w is None:
        return []
    end, kind = _phrase(q, w)
    wh, n = q.low(w), q.n
    h = _head_of(q, w, end)
    np_words = [q.word(i) for i in range(w + (2 if kind == "many" else 1), end)] if kind in ("np", "many") else []
    if kind == "many":
        bare = all(ch.isdigit() or ch in ",." for ch in answer) or answer.lower() in _NUMBER_WORDS
        filler = " ".join([answer, *np_words]) if bare else answer
    elif wh == "whose":
        filler = " ".join([answer + "'s", *np_words])
    elif kind == "np" and any(p.tags[i] == "POS" for i in range(w, end)):  # "which town's massacre" -> "A's massacre"
        pos = next(i for i in range(w, end) if p.tags[i] == "POS")
        filler = " ".join([answer + q.word(pos), *(q.word(i) for i in range(pos + 1, end))])
    else:
        filler = answer
    pre = w - 1 if w > 0 and p.tags[w - 1] in ("IN", "TO") else None
    start = pre if pre is not None else w
    # "In August 1994, which affiliate did ABC buy?": the words before the comma stay in front
    prefix = list(range(start)) if start > 1 and p.words[start - 1] == "," else []
    if start > 0 and not prefix:  # in place: "The Rhine forms a delta into which lake?" -> "... into A"
        return [q.render([*range(w), filler, *range(end, n)])]
    if end < n and p.words[end] == ",":  # "In what year of the century, did X V?"
        end += 1
    aux = []
    j = end
    do = j < n and q.low(j) in ("do", "does", "did")
    while j < n and (q.aux_like(j) or (do and j == end) or (aux and q.low(j) in ("not", "n't"))):
        aux.append(j)
        j += 1
    quantity = kind == "np" and q.low(h) in _QUANTITY_NOUNS  # "What percentage of X are Y?": the phrase is the subject
    if pre is None and (not aux or (not do and j < n and (p.tags[j] not in _SUBJECT_START or quantity))):
        return _subject_question(q, prefix, w, end, kind, filler, answer, np_words)
    if not aux or j >= n:
        return []
    do = do and not (len(aux) > 1 and q.low(aux[1]) in ("not", "n't"))
    adverbial_gap = pre is not None or (kind == "word" and wh in ("when", "where", "why", "how"))
    v = None
    if do:
        e = _subject_end(q, j, adverbial_gap)
        v = e if e < n and p.tags[e] in ("VB", "VBP") else q.main_verb(j)
    s1 = v if v is not None else _subject_end(q, j, adverbial_gap)
    if s1 <= j or (do and v is None):
        return []
    superlative = any(p.tags[i] in ("JJS", "RBS") or q.low(i) in ("first", "last", "only") for i in range(j, s1))
    if not do and superlative and s1 == n - 1 and p.tags[s1] in ("VBN", "VBD") and wh in ("what", "which", "who"):
        s1 = n  # "What is the smallest region discussed?" (not "What was Tesla awarded?"): the participle modifies the subject
    if do and s1 - 1 > j and q.low(s1 - 1) in ("not", "n't"):  # "did so many not approve" -> "so many did not approve"
        do, s1 = False, s1 - 1
    rest = list(range(s1, n))
    forms: dict[int, str] = {}
    if do:
        form, base = q.low(aux[0]), q.alt[v]
        if base.lower().endswith("ed") and _verb_base(base) and _verb_base(base) != base.lower():
            base = _verb_base(base)  # "did the V&A opened" (sic) -> "opened", not "openeded"
        forms[v] = past(base) if form == "did" else third_person(base) if form == "does" else base.lower()
        moved: list[int] = []
    else:
        moved = aux
    for i in moved:
        if q.low(i) in _CLITICS:  # "What's X?" -> "X is A"
            forms[i] = _CLITICS[q.low(i)]
    clause: list = [*prefix, *range(j, s1), *moved, *rest]
    after_subject = len(prefix) + (s1 - j) + len(moved)

    def out(items: list) -> list[str]:
        return [q.render([forms.get(it, it) if isinstance(it, int) else it for it in items])]

    def after(anchor: int, piece: str) -> list[str]:
        k = clause.index(anchor)
        return out([*clause[: k + 1], piece, *clause[k + 1 :]])

    if pre is not None:  # "In what year did X V?" -> "X V-ed in A"
        return out([*clause, q.word(pre), filler])
    if kind == "degree":  # "How old was X when ...?" -> "X was A when ..."; "How long is X?" -> "X is 5 km long"
        dim = q.low(w + 1) in _DIMENSIONS and any(ch.isalpha() for ch in answer) and any(ch.isdigit() for ch in answer)
        piece = f"{filler} {q.word(w + 1)}" if dim else filler
        return out([*clause[:after_subject], piece, *clause[after_subject:]])
    if kind == "word" and wh in ("when", "where", "why", "how"):
        return out([*clause, adverbial(wh, answer)])
    if kind == "np" and (q.low(h) in _TIME_NOUNS or p.deps[h] in ("npadvmod", "tmod")):
        return out([*clause, adverbial("time" if q.low(h) in _TIME_NOUNS else "where", answer)])
    if p.tags[n - 1] in ("IN", "TO") and n - 1 >= s1:  # a stranded preposition at the end: "named after A"
        return out([*clause, filler])
    role, role_head = p.deps[h], p.heads[h]
    if role == "pobj" and role_head >= s1 and p.tags[role_head] in ("IN", "TO"):
        return after(role_head, filler)
    k = _open_preposition(q, s1)
    if k is not None:
        return after(k, filler)
    if role in ("dobj", "obj") and role_head >= s1 and p.pos[role_head] == "VERB":
        prt = [c for c in q.kids(role_head, "prt") if c == role_head + 1]
        second = [c for c in q.kids(role_head, "dobj", "dative") if c > role_head and c not in range(w, end)]
        if second:  # "tell the legate _ about": the answer after the verb's other object
            return after(p.subtree(second[0])[1] - 1, filler)
        return after(prt[0] if prt else role_head, filler)
    v = _objectless_verb(q, s1, range(w, end), s1 if do else None)
    if v is not None:
        prt = [c for c in q.kids(v, "prt") if c == v + 1]
        return after(prt[0] if prt else v, filler)
    if not do and any(p.lemmas[i] == "be" for i in moved):  # "What is X?" -> "X is A"
        return out([*clause[:after_subject], filler, *clause[after_subject:]])
    return out([*clause, filler])


def _subject_question(
    q: _Question, prefix: list[int], w: int, end: int, kind: str, filler: str, answer: str, np_words: list[str]
) -> list[str]:
    """The wh-phrase is the subject: the answer in its place; "what/which NP" also as a cleft ("The
    NP that VP is A"), or with a relative clause of its own as an apposition ("A, the NP that V1, V2")."""
    rest = range(end, q.n)
    if not rest:
        return []
    plain = q.render([*prefix, filler, *rest])
    if kind == "np":
        h = _head_of(q, w, end)
        lo, hi = q.p.subtree(h)
        if lo >= w and hi > end and not any(q.p.pos[i] in ("VERB", "AUX") for i in range(end, hi)):
            np_words = [*np_words, *(q.word(i) for i in range(end, hi))]  # its modifiers: "museum *in Newcastle*"
            rest = range(hi, q.n)
        the = "the" if prefix else "The"
        if rest and q.low(rest[0]) in ("that", "which", "who"):  # "What program that aired ... was cancelled?"
            rel = [c for c in q.kids(h, "relcl") if c > rest[0]]
            rel_end = q.p.subtree(rel[0])[1] if rel else None
            if rel_end is None or rel_end >= q.n:
                return [plain]
            # "A, the program that aired ..., was cancelled ..."
            return [
                q.render(
                    [
                        *prefix,
                        f"{answer},",
                        "the",
                        " ".join(np_words),
                        *range(rest[0], rel_end - 1),
                        q.word(rel_end - 1) + ",",
                        *range(rel_end, q.n),
                    ]
                )
            ]
        cleft = q.render([*prefix, the, " ".join(np_words), "that", *rest, _cleft_be(q, h, rest), answer])
        return [cleft, plain]
    return [plain]
