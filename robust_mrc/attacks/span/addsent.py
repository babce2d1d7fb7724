"""AddSent, AddOneSent and AddSentMod for span QA (seed 001, Jia & Liang), without CoreNLP.

What they change: the context only: one distracting sentence is added. It is built in three
rule-based steps (a POS tagger -- spaCy where installed, else a heuristic; ``tagger=`` -- and
regular expressions over the question's shape stand in for CoreNLP's NER and parses; no
crowdworker fixes grammar):

1. alter the question: special swaps (largest<->smallest, US<->UK, ...), WordNet antonyms (first
   synset, single words) of nouns and adjectives, nearest words for proper nouns and numbers, a
   fixed name per entity type as fall-back. A candidate whose stem is a prefix of the original's
   (or the reverse) or that already occurs in the question is rejected. Nothing changed: None.
2. a fake answer of the gold answer's type by ordered rules (first match wins): year - 25, dates,
   numbers (1000 < n < 2500: n - 75, else another first digit), number words, abbreviations,
   person, organisation, location (from the answer and the question's wh-word), proper-noun
   phrase, then by the POS of the answer's head (keeping its determiner), and a catch-all noun.
3. turn altered question + fake answer into a declarative sentence (rules over the question's
   shape: "what/which NP VP?" -> "The NP of A VP", "when did X V?" -> "X V-ed in A", ...).

* ``addsent``: the canonical sentence (the paper then picks the candidate that hurts the model
  most, which needs model queries: the project's evaluation can do that on top).
* ``addonesent``: one of the candidate sentences (variants of the alteration and fake answer) at
  random: the paper's model-free adversary.
* ``addsentmod``: other fake answers, and the sentence is *prepended* (answer offsets shift).
``position`` = end | start | random (a sentence boundary not inside an answer) overrides where the
sentence goes.

What they promise: every gold ``answer_start`` still points at its text; the added sentence never
contains a gold answer (case-insensitive); None when no sentence can be built.
"""

from __future__ import annotations

import re

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.span.common import contains_answer, insert_sentence, insertion_point
from robust_mrc.attacks.text import TOKEN_RE, as_statement, match_case, normalize
from robust_mrc.metrics import question_f1

# ------------------------------------------------------------------ step 1: alter the question

_SWAPS = {}
for a, b in [
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
    _SWAPS[a], _SWAPS[b] = b, a

_FALLBACK_NAMES = {"person": ("Jeff", "Charles"), "place": ("Chicago", "Melbourne"), "other": ("Acme", "Globex")}
_PLACE_PREPS = {"in", "at", "from", "to", "near", "into"}


def _rejected(cand: str, orig: str, qwords: set[str]) -> bool:
    sc, so = R.stem(cand), R.stem(orig)
    return not cand or sc.startswith(so) or so.startswith(sc) or cand.lower() in qwords


def _change_first_digit(num: str, variant: int = 0) -> str:
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
        if low in _SWAPS:
            out[i] = match_case(tok, _SWAPS[low].upper() if tok.isupper() and len(tok) <= 3 else _SWAPS[low])
            changed += 1
            continue
        if tag in (R.PUNCT, R.FUNC, R.AUX) or low in R.STOPWORDS:
            continue
        if tag == R.NUM and any(c.isdigit() for c in tok):
            out[i] = _change_first_digit(tok, variant)
            changed += 1
        elif tag == R.PROPN and tok.isalpha():
            if nb is None:
                nb = R.neighbours(vectors)
            cands = [c for c in nb.neighbours(low, 10) if c.isalpha() and not _rejected(c, low, qwords)]
            if len(cands) > variant:
                out[i] = match_case(tok, cands[variant])
            else:
                kind = "place" if i and toks[i - 1].lower() in _PLACE_PREPS else "person"
                name = _FALLBACK_NAMES[kind][variant % 2]
                if _rejected(name, low, qwords):
                    continue
                out[i] = name
            changed += 1
        elif tag in (R.NOUN, R.ADJ) and tok.isalpha() and R.has_wordnet():
            pos = R.wn_pos(tag)
            base = R.wordnet().morphy(low, pos) or low
            ants = [a for a in R.antonyms(base, pos, first_synset_only=True) if not _rejected(a, low, qwords)]
            if ants:
                out[i] = match_case(tok, ants[variant % len(ants)])
                changed += 1
    return out, changed


# ------------------------------------------------------------------ step 2: a fake answer

_ORG_CUES = {
    "university",
    "company",
    "corporation",
    "inc",
    "association",
    "party",
    "council",
    "institute",
    "society",
    "agency",
    "department",
    "committee",
    "bank",
    "church",
    "college",
    "school",
    "club",
    "league",
    "foundation",
    "ltd",
    "co",
    "organization",
    "organisation",
    "army",
    "navy",
    "court",
}
_LOC_CUES = {
    "city",
    "river",
    "mountain",
    "mountains",
    "lake",
    "county",
    "ocean",
    "island",
    "islands",
    "street",
    "province",
    "state",
    "country",
    "valley",
    "sea",
    "bay",
    "park",
    "kingdom",
    "republic",
}
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


def _det(answer_words: list[str], phrase: str) -> str:
    if answer_words and answer_words[0].lower() in ("a", "an", "the"):
        d = answer_words[0].lower()
        if d in ("a", "an"):
            d = "an" if phrase[:1].lower() in "aeiou" else "a"
        return match_case(answer_words[0], d) + " " + phrase
    return phrase


def _head_tag(answer: str, head: str, tagger=None) -> str:
    """The POS of the answer's last word: alone with the heuristic tagger, in the answer with spaCy."""
    if R.resolve_tagger(tagger) == "heuristic":
        return R.pos_tag([head], "heuristic")[0]
    toks = TOKEN_RE.findall(answer)
    word_idx = [i for i, t in enumerate(toks) if any(c.isalnum() for c in t)]
    return R.pos_tag(toks, tagger)[word_idx[-1]] if word_idx else R.pos_tag([head], tagger)[0]


def fake_answers(answer: str, question: str, mod: bool = False, tagger=None) -> list[str]:
    """Fake answers of the answer's type, best rule first (AddSentMod: the other table)."""
    k = 1 if mod else 0
    a = answer.strip()
    q = question.strip().lower()
    ws = a.split()
    out: list[str] = []

    def add(x):
        if x and normalize(x) != normalize(a) and x not in out:
            out.append(x)

    m = re.fullmatch(r"(\d{4})", a)
    if m and 1000 <= int(a) <= 2100:
        n = int(a)
        add(str(n - 25 - 10 * k) if n > 50 else _change_first_digit(a, k))
    low = a.lower()
    if any(mo in low.split() or mo + "," in low.split() for mo in R.MONTHS):

        def repl_month(mm):
            word = mm.group(0)
            idx = R.MONTHS.index(word.lower())
            return match_case(word, R.MONTHS[(idx + 6 + k) % 12])

        new = re.sub(r"(?i)\b(" + "|".join(R.MONTHS) + r")\b", repl_month, a, count=1)
        new = re.sub(r"\b(1\d{3}|20\d{2})\b", lambda y: str(int(y.group()) - 25 - 10 * k), new)
        add(new)
    m = re.search(r"\d[\d,]*(?:\.\d+)?", a)
    if m:
        num = m.group()
        try:
            val = float(num.replace(",", ""))
        except ValueError:
            val = -1
        new_num = str(int(val) - 75 - 10 * k) if 1000 < val < 2500 and "." not in num else _change_first_digit(num, k)
        add(a[: m.start()] + new_num + a[m.end() :])
    if low in R.CARDINALS:
        add(match_case(a, R.CARDINALS[(R.CARDINALS.index(low) + 3 + k) % len(R.CARDINALS)]))
    if re.fullmatch(r"[A-Z]{2,}", a):
        add(_FAKE["abbr"][k])
    words_low = {w.lower().strip(".,") for w in ws}
    caps = bool(ws) and all(w[:1].isupper() for w in ws if w.lower() not in ("of", "the", "and", "de", "for"))
    if words_low & _ORG_CUES and caps:
        add(_FAKE["org"][k])
    if (words_low & _LOC_CUES and caps) or q.startswith(_LOC_QWORDS):
        add(_FAKE["place"][k])
    if q.startswith(("who", "whom", "whose")) or (caps and 2 <= len(ws) <= 3 and not words_low & (_ORG_CUES | _LOC_CUES)):
        add(_FAKE["person"][k])
    if q.startswith("when") or "what year" in q:
        add(_FAKE["year"][k])
    if q.startswith(("how many", "how much")):
        add(_FAKE["number"][k])
    if caps:
        add(_FAKE["propn"][k])
    if ws:
        head = ws[-1].strip(".,;:").lower()
        tag = _head_tag(a, head, tagger)
        if tag == R.VERB:
            kind = "verb_ing" if head.endswith("ing") else "verb_ed" if head.endswith("ed") else "verb_s" if head.endswith("s") else "verb"
            add(_FAKE[kind][k])
        elif tag == R.ADJ:
            add(_det(ws, _FAKE["adj"][k]))
        elif tag == R.ADV:
            add(_FAKE["adv"][k])
        elif tag in (R.NOUN, R.PROPN):
            add(_det(ws, _FAKE["nouns" if head.endswith("s") and not head.endswith("ss") else "noun"][k]))
    add(_FAKE["any"][k])
    return out


# ------------------------------------------------------------------ step 3: a declarative sentence


def _past(verb: str) -> str:
    low = verb.lower()
    if low in R.IRREGULAR_PAST:
        return R.IRREGULAR_PAST[low]
    if low.endswith("e"):
        return low + "d"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return low[:-1] + "ied"
    return low + "ed"


def _third(verb: str) -> str:
    low = verb.lower()
    if low == "have":
        return "has"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return low + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return low[:-1] + "ies"
    return low + "s"


def _inflect(aux: str, verb: str) -> str:
    return _past(verb) if aux == "did" else _third(verb) if aux == "does" else verb


_NP_WORDS = ("the", "a", "an", "'s", "his", "her", "its", "their", "this", "that", "these", "those")


def _np_end(toks: list[str], tags: list[str], i: int) -> int:
    """End index of the noun phrase that starts at ``i`` (determiners, adjectives, nouns, 's, of NP)."""
    j = i
    while j < len(toks):
        t, g = toks[j].lower(), tags[j]
        if g in (R.NOUN, R.PROPN, R.ADJ, R.NUM) or t in _NP_WORDS:
            j += 1
        elif t == "of" and j + 1 < len(toks) and j > i:
            j += 1
        else:
            break
    return max(j, i + 1) if i < len(toks) else i


def _find_verb(toks, tags, start):
    for j in range(start, len(toks)):
        if tags[j] == R.VERB:
            return j
        if tags[j] == R.NOUN and j > start and any(p == "v" for p, _ in R.wn_pos_counts(toks[j].lower())):
            return j  # a noun that WordNet also knows as a verb
    return None


def declarative(tokens: list[str], answer: str, tagger=None) -> str:
    """A statement from question tokens (already altered) and the (fake) answer."""
    toks = [t for t in tokens if t != "?"]
    if not toks:
        return answer
    tags = R.pos_tag(toks, tagger)
    low = [t.lower() for t in toks]
    A = answer
    w0 = low[0]
    s = " ".join

    # in what NP did X V ...  -> In A, X V-ed ...
    if w0 in ("in", "on", "at", "during") and len(low) > 2 and low[1] in ("what", "which"):
        j = _np_end(toks, tags, 2)
        if j < len(toks) and low[j] in R.DO_FORMS:
            v = _find_verb(toks, tags, j + 1)
            if v is not None:
                return f"{toks[0]} {A}, {s(toks[j + 1 : v])} {_inflect(low[j], toks[v])} {s(toks[v + 1 :])}"
        if j < len(toks) and low[j] in R.BE_FORMS:
            return f"{s(toks[j + 1 :])} {toks[j]} {low[0]} {A}"
        return f"{toks[0]} {A}, {s(toks[j:])}"
    if w0 in ("how",) and len(low) > 1 and low[1] in ("many", "much"):
        j = _np_end(toks, tags, 2)
        np_ = s(toks[2:j])
        if j < len(toks) and low[j] in R.DO_FORMS:
            v = _find_verb(toks, tags, j + 1)
            if v is not None:
                return f"{s(toks[j + 1 : v])} {_inflect(low[j], toks[v])} {A} {np_} {s(toks[v + 1 :])}"
        return f"{A} {np_} {s(toks[j:])}"
    if w0 == "how" and len(low) > 2 and tags[1] in (R.ADJ, R.ADV) and low[2] in R.BE_FORMS:
        # how old was X when ... -> X was A when ...
        j = _np_end(toks, tags, 3)
        return f"{s(toks[3:j])} {toks[2]} {A} {s(toks[j:])}"
    if w0 in ("when", "where", "why", "how") and len(low) > 1:
        prep = {"when": "in", "where": "in", "why": "because of", "how": "by"}[w0]
        if low[1] in R.DO_FORMS:
            v = _find_verb(toks, tags, 2)
            if v is not None:
                rest = s(toks[v + 1 :])
                return f"{s(toks[2:v])} {_inflect(low[1], toks[v])} {rest} {prep} {A}"
        if low[1] in R.BE_FORMS:
            j = _np_end(toks, tags, 2)
            return f"{s(toks[2:j])} {toks[1]} {s(toks[j:])} {prep} {A}"
        if low[1] in R.AUXILIARIES:
            v = _find_verb(toks, tags, 2)
            if v is not None:
                return f"{s(toks[2:v])} {toks[1]} {s(toks[v:])} {prep} {A}"
    if w0 in ("who", "whom"):
        if len(low) > 1 and low[1] in R.DO_FORMS:
            v = _find_verb(toks, tags, 2)
            if v is not None:
                verb = _inflect(low[1], toks[v])
                if v + 1 < len(toks) and low[v + 1] in R.PREPOSITIONS:  # who did X work for ... -> X worked for A ...
                    return f"{s(toks[2:v])} {verb} {toks[v + 1]} {A} {s(toks[v + 2 :])}"
                return f"{s(toks[2:v])} {verb} {A} {s(toks[v + 1 :])}"
        return f"{A} {s(toks[1:])}"
    if w0 in ("what", "which"):
        if len(low) > 1 and low[1] in R.BE_FORMS:
            rest = toks[2:]
            if rest and (rest[-1].lower() in R.PREPOSITIONS or tags[-1] == R.VERB):
                j = _np_end(toks, tags, 2)
                return f"{s(toks[2:j])} {toks[1]} {s(toks[j:])} {A}"
            return f"{s(rest)} {toks[1]} {A}"
        if len(low) > 1 and low[1] in R.DO_FORMS:
            v = _find_verb(toks, tags, 2)
            if v is not None:
                return f"{s(toks[2:v])} {_inflect(low[1], toks[v])} {A} {s(toks[v + 1 :])}"
        if len(low) > 1 and tags[1] in (R.NOUN, R.PROPN, R.ADJ, R.NUM):
            j = _np_end(toks, tags, 1)
            np_ = s(toks[1:j])
            if j < len(toks) and low[j] in R.DO_FORMS:
                v = _find_verb(toks, tags, j + 1)
                if v is not None:
                    return f"{s(toks[j + 1 : v])} {_inflect(low[j], toks[v])} {A} {s(toks[v + 1 :])}"
            if j < len(toks) and low[j] in R.BE_FORMS and j + 1 < len(toks):
                if j + 1 == len(toks):
                    return f"The {np_} {toks[j]} {A}"
                if low[-1] in R.PREPOSITIONS:
                    return f"{s(toks[j + 1 :])} {toks[j]} the {np_} {A}"
                return f"The {np_} of {A} {s(toks[j:])}"
            return f"The {np_} of {A} {s(toks[j:])}"
        return f"{A} {s(toks[1:])}"
    # wh-word in situ: "Tesla moved to what city ?" -> "Tesla moved to A"
    for i, t in enumerate(low):
        if t in R.WH_WORDS:
            j = _np_end(toks, tags, i + 1) if t in ("what", "which") else i + 1
            if t in ("what", "which") and j == i + 1 and (i + 1 >= len(toks) or tags[i + 1] not in (R.NOUN, R.PROPN, R.ADJ)):
                j = i + 1
            return f"{s(toks[:i])} {A} {s(toks[j:])}"
    return f"{s(toks)} {A}"


def _clean(sentence: str) -> str:
    sentence = re.sub(r"\s+'s\b", "'s", sentence)
    return as_statement(sentence)


def candidate_sentences(ex, mod: bool = False, variants: int = 2, vectors=None, tagger=None, fakes: int = 2) -> list[str]:
    """Adversarial sentences for ``ex`` (``variants`` alterations of the question x the first
    ``fakes`` fake answers), canonical first; none contains a gold answer."""
    if not ex.answers:
        return []
    out = []
    fake_list = fake_answers(ex.answers[0].text, ex.question, mod=mod, tagger=tagger)
    for v in range(variants):
        toks, changed = alter_question(ex.question, variant=v, vectors=vectors, tagger=tagger)
        if not changed:
            continue
        for fake in fake_list[:fakes]:
            sent = _clean(declarative(toks, fake, tagger))
            if sent and sent not in out and not contains_answer(sent, ex):
                out.append(sent)
    return out


class _AddSentBase(Attack):
    task = "span"
    paper = "001 Jia & Liang"
    _mod = False
    _random = False
    _default_position = "end"

    def __init__(self, **params):
        super().__init__(**params)
        R.check_tagger(self.params["tagger"], self.name)

    @classmethod
    def defaults(cls):
        # tagger: auto | spacy | heuristic (None: $ROBUST_MRC_TAGGER, else auto)
        # variants x fakes: the candidates the model-in-the-loop search tries (alterations x fake answers)
        return {"position": cls._default_position, "vectors": None, "tagger": None, "variants": 3, "fakes": 3, "metric": "squad_v1"}

    def apply(self, ex, rng):
        cands = candidate_sentences(ex, mod=self._mod, vectors=self.vectors, tagger=self.tagger)
        if not cands:
            return None
        sentence = rng.choice(cands) if self._random else cands[0]
        pos = insertion_point(ex, self.position, rng)
        return insert_sentence(ex, sentence, pos, self.name, sentence)

    def search(self, ex, rng):
        """The paper's adversary: every candidate sentence (``variants`` alterations x ``fakes``
        fake answers) added to the paragraph, the model run on each, the one whose argmax answer
        has the lowest F1 kept (ties: the earlier candidate, the canonical one first)."""
        cands = candidate_sentences(
            ex, mod=self._mod, variants=int(self.variants), vectors=self.vectors, tagger=self.tagger, fakes=int(self.fakes)
        )
        if not cands:
            return None
        pos = insertion_point(ex, self.position, rng)
        examples = [insert_sentence(ex, c, pos, self.name, c) for c in cands]
        preds = yield examples
        golds = ex.answer_texts
        scores = [question_f1(self.metric, p.answer, golds) for p in preds]
        return examples[min(range(len(examples)), key=scores.__getitem__)]


@register
class AddSentSpan(_AddSentBase):
    name = "addsent"
    description = "append a rule-made sentence: altered question + fake answer of the same type"


@register
class AddOneSent(_AddSentBase):
    name = "addonesent"
    _random = True
    description = "append one random candidate AddSent sentence (model-free)"


@register
class AddSentMod(_AddSentBase):
    name = "addsentmod"
    _mod = True
    _default_position = "start"
    description = "prepend an AddSent sentence built with other fake answers"
