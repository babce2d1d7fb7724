"""Which word may replace which: the rules of AdvRACE AddSent's meaning flip (Si et al. 2021, 3.3).

A question's nouns and numbers go to their nearest word in a distributional space (GloVe in the
paper; :func:`robust_mrc.attacks.resources.neighbours` with ``default="distributional"``) so that
the inserted sentence says something *else*: "China" -> "Taiwan", "Chicago" -> "Detroit". A word
that means the same keeps the question's meaning, and the inserted sentence then asserts a wrong
option as the answer; so a candidate is refused when it

* is no word (not alphabetic), a stopword or a pronoun, used already, or in the question;
* is the same word in another form: the same Porter stem, one stem a prefix of the other, the same
  WordNet lemma, or a shared prefix of four or more letters covering 60 % of the shorter word
  ("china" / "chinese", "hanson" / "hansen", "teacher" / "teaching");
* is a WordNet synonym (shares a synset with the word: "colour", "instructor"), a direct hypernym
  or hyponym of one of its first senses ("teacher" -> "educator"), a kind of the word or the word a
  kind of it within five IS-A steps between nouns ("computer" -> "laptop", "kids" -> "girls",
  "birthday" -> "day", "sports" -> "baseball": saying it of the one says it of the other), a part
  or member of it or the reverse ("China" -> "Beijing", "knife" -> "blade", "hand" -> "finger"), or
  offensive;
* has another part of speech where WordNet knows both (a noun for a noun).

A person's name (:func:`robust_mrc.attacks.resources.person_name_kind`) goes to another name of
the same kind (female / male / given / surname), the nearest in the space among those names when
the word has a vector, else one drawn from the list; never a common noun ("Jack" is never "plug"),
never a form of the same name ("Tom" -> "Thomas", "Bob" -> "Robert": :data:`~robust_mrc.attacks.resources.names.NICKNAMES`).
"""

from __future__ import annotations

import functools
import random

from robust_mrc.attacks import resources as R


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def same_word(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are forms of one word (stem, lemma or a long shared prefix)."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    sa, sb = R.stem(a), R.stem(b)
    if sa == sb or sa.startswith(sb) or sb.startswith(sa):
        return True
    p = _shared_prefix(a, b)
    if p >= 4 and p >= 0.6 * min(len(a), len(b)):
        return True
    return bool(_lemmas(a) & _lemmas(b))


@functools.lru_cache(maxsize=100_000)
def _lemmas(word: str) -> frozenset[str]:
    if not R.has_wordnet():
        return frozenset()
    wn = R.wordnet()
    return frozenset(m for pos in ("n", "v", "a", "r") for m in wn._morphy(word, pos))


@functools.lru_cache(maxsize=100_000)
def _senses(word: str) -> frozenset[tuple[str, int]]:
    from robust_mrc.attacks.resources import wordnet_records as records

    if not R.has_wordnet():
        return frozenset()
    return frozenset((s.pos, s.offset) for s in records.synsets(word))


@functools.lru_cache(maxsize=100_000)
def _near_senses(word: str) -> frozenset[tuple[str, int]]:
    """The direct hypernyms and hyponyms of the word's first three senses."""
    from robust_mrc.attacks.resources import wordnet_records as records

    if not R.has_wordnet():
        return frozenset()
    out = set()
    for syn in records.synsets(word, first=3):
        for symbol in ("@", "@i", "~", "~i"):
            out.update((s.pos, s.offset) for s in records.related(syn, symbol))
    return frozenset(out)


IS_A_DEPTH = 5


@functools.lru_cache(maxsize=100_000)
def _noun_ancestors(word: str) -> frozenset[tuple[str, int]]:
    """The noun hypernyms (and instance hypernyms) of every noun sense of ``word``, up to :data:`IS_A_DEPTH` steps."""
    from robust_mrc.attacks.resources import wordnet_records as records

    if not R.has_wordnet():
        return frozenset()
    out: set[tuple[str, int]] = set()
    frontier = records.synsets(word, "n")
    for _ in range(IS_A_DEPTH):
        frontier = [h for syn in frontier for symbol in ("@", "@i") for h in records.related(syn, symbol)]
        new = [h for h in frontier if (h.pos, h.offset) not in out]
        out.update((h.pos, h.offset) for h in new)
        frontier = new
    return frozenset(out)


def _noun_senses(word: str) -> frozenset[tuple[str, int]]:
    return frozenset(sense for sense in _senses(word) if sense[0] == "n")


_PART_POINTERS = ("#p", "%p", "#m", "%m", "#s", "%s")  # part / member / substance holonyms and meronyms


@functools.lru_cache(maxsize=100_000)
def _parts_and_wholes(word: str) -> frozenset[tuple[str, int]]:
    """The noun senses that a noun sense of ``word`` (or what it is an instance of) is a part or
    member of, or has as a part or member: Beijing -> China, blade -> knife, finger -> hand."""
    from robust_mrc.attacks.resources import wordnet_records as records

    if not R.has_wordnet():
        return frozenset()
    out: set[tuple[str, int]] = set()
    for syn in records.synsets(word, "n"):
        for symbol in _PART_POINTERS:
            out.update((s.pos, s.offset) for s in records.related(syn, symbol))
    return frozenset(out)


def part_of(a: str, b: str) -> bool:
    """Whether one word names a part or member of what the other names (WordNet holonyms and meronyms)."""
    a, b = a.lower(), b.lower()
    return bool(_parts_and_wholes(a) & _noun_senses(b)) or bool(_parts_and_wholes(b) & _noun_senses(a))


def kind_of(a: str, b: str) -> bool:
    """Whether a noun sense of one word is a kind of a noun sense of the other (IS-A, within :data:`IS_A_DEPTH` steps)."""
    a, b = a.lower(), b.lower()
    return bool(_noun_ancestors(a) & _noun_senses(b)) or bool(_noun_ancestors(b) & _noun_senses(a))


def synonyms(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` share a WordNet synset (any part of speech)."""
    return bool(_senses(a.lower()) & _senses(b.lower()))


def hypernym_or_hyponym(a: str, b: str) -> bool:
    """Whether one of ``b``'s senses is a direct hypernym or hyponym of one of ``a``'s first senses, or the reverse."""
    a, b = a.lower(), b.lower()
    return bool(_near_senses(a) & _senses(b)) or bool(_near_senses(b) & _senses(a))


def refusal(candidate: str, word: str, pos: str | None, used: set[str], question_words: set[str]) -> str | None:
    """Why ``candidate`` may not replace ``word`` (a short reason), or None when it may."""
    c = candidate.lower()
    if not c.isalpha() or c in R.STOPWORDS or c in R.PRONOUNS:
        return "function word"
    if c in used or c in question_words:
        return "used"
    if same_word(c, word) or R.same_name(c, word):
        return "same word"
    if R.offensive_word(c):
        return "offensive"
    counts = dict(R.wn_pos_counts(c))
    if R.has_wordnet() and not counts:
        return "unknown to WordNet"
    if pos is not None and counts and pos not in counts:
        return "other part of speech"
    if synonyms(c, word):
        return "synonym"
    if hypernym_or_hyponym(word, c):
        return "hypernym or hyponym"
    if kind_of(word, c):
        return "a kind of the other"
    if part_of(word, c):
        return "a part of the other"
    return None


def nearest_different(word: str, nb, pos: str | None, used: set[str], question_words: set[str], k: int = 25) -> str | None:
    """The nearest word to ``word`` in ``nb`` that :func:`refusal` lets replace it, or None."""
    for cand in nb.neighbours(word.lower(), k):
        if refusal(cand, word, pos, used, question_words) is None:
            return cand
    return None


def nearest_name(word: str, kind: str, nb, used: set[str], question_words: set[str], rng: random.Random) -> str:
    """Another person's name of ``kind``: the nearest of that kind in ``nb`` when ``word`` has a
    vector there, else one drawn with ``rng``; never ``word`` itself, a used word or a question word."""
    low = word.lower()
    pool = [
        n for n in R.names_of_kind(kind) if n not in used and n not in question_words and not same_word(n, low) and not R.same_name(n, low)
    ]
    if not pool:
        pool = [n for n in R.names_of_kind(kind) if n != low]
    ranked = _by_similarity(low, pool, nb)
    return ranked[0] if ranked else rng.choice(pool)


def _by_similarity(word: str, pool: list[str], nb) -> list[str]:
    matrix = getattr(nb, "matrix", None)
    index = getattr(nb, "index", None)
    if matrix is None or index is None or word not in index:
        return []
    known = [n for n in pool if n in index]
    if not known:
        return []
    sims = matrix[[index[n] for n in known]] @ matrix[index[word]]
    order = sorted(range(len(known)), key=lambda i: (-float(sims[i]), known[i]))
    return [known[i] for i in order]
