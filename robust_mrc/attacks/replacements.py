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
from robust_mrc.attacks.resources.wordnet import morphy_forms
from robust_mrc.attacks.resources.wordnet_table import IS_A_DEPTH, synset_rows  # noqa: F401 - IS_A_DEPTH: the rule's depth
from robust_mrc.attacks.resources.wordnet_table import table as wordnet_table


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
    p = _shared_prefix(a, b)
    if p >= 4 and p >= 0.6 * min(len(a), len(b)):
        return True
    if _lemmas(a) & _lemmas(b):
        return True
    sa, sb = R.stem(a), R.stem(b)  # last: a word's first stem costs the most
    return sa == sb or sa.startswith(sb) or sb.startswith(sa)


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _lemmas(word: str) -> frozenset[str]:
    try:
        return frozenset(m for pos in ("n", "v", "a", "r") for m in morphy_forms(word, pos))
    except R.ResourceMissing:  # no WordNet (each of these WordNet facts is then empty)
        return frozenset()


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _senses(word: str) -> frozenset[int]:
    """The word's synsets (rows of the WordNet table)."""
    try:
        return frozenset(synset_rows(word))
    except R.ResourceMissing:
        return frozenset()


_NEAR_POINTERS = ("@", "@i", "~", "~i")  # direct hypernyms and hyponyms (instances too)


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _near_senses(word: str) -> frozenset[int]:
    """The direct hypernyms and hyponyms of the word's first three senses."""
    try:
        rows, related = synset_rows(word)[:3], wordnet_table().related
    except R.ResourceMissing:
        return frozenset()
    return frozenset(s for row in rows for symbol in _NEAR_POINTERS for s in related(row, symbol))


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _noun_ancestors(word: str) -> frozenset[int]:
    """The noun hypernyms (and instance hypernyms) of every noun sense of ``word``, up to :data:`IS_A_DEPTH` steps
    (:func:`~robust_mrc.attacks.resources.wordnet_table.ancestor_walk` from them: the union of each sense's)."""
    try:
        rows, ancestors = synset_rows(word, "n"), wordnet_table().ancestors
    except R.ResourceMissing:
        return frozenset()
    return frozenset(a for row in rows for a in ancestors(row))


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _noun_senses(word: str) -> frozenset[int]:
    senses = _senses(word)
    if not senses:
        return senses
    pos = wordnet_table().pos
    return frozenset(row for row in senses if pos[row] == "n")


_PART_POINTERS = ("#p", "%p", "#m", "%m", "#s", "%s")  # part / member / substance holonyms and meronyms


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def _parts_and_wholes(word: str) -> frozenset[int]:
    """The noun senses that a noun sense of ``word`` (or what it is an instance of) is a part or
    member of, or has as a part or member: Beijing -> China, blade -> knife, finger -> hand."""
    try:
        rows, related = synset_rows(word, "n"), wordnet_table().related
    except R.ResourceMissing:
        return frozenset()
    return frozenset(s for row in rows for symbol in _PART_POINTERS for s in related(row, symbol))


def part_of(a: str, b: str) -> bool:
    """Whether one word names a part or member of what the other names (WordNet holonyms and meronyms)."""
    a, b = a.lower(), b.lower()
    return bool(_parts_and_wholes(a) & _noun_senses(b)) or _points_into(_rows(b, "n"), _PART_POINTERS, _noun_senses(a))


def kind_of(a: str, b: str) -> bool:
    """Whether a noun sense of one word is a kind of a noun sense of the other (IS-A, within :data:`IS_A_DEPTH` steps)."""
    a, b = a.lower(), b.lower()
    if _noun_ancestors(a) & _noun_senses(b):
        return True
    senses = _noun_senses(a)  # _noun_ancestors(b) & senses, without making the set
    return bool(senses) and any(not senses.isdisjoint(wordnet_table().ancestors(row)) for row in _rows(b, "n"))


def synonyms(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` share a WordNet synset (any part of speech)."""
    return bool(_senses(a.lower()) & _senses(b.lower()))


def hypernym_or_hyponym(a: str, b: str) -> bool:
    """Whether one of ``b``'s senses is a direct hypernym or hyponym of one of ``a``'s first senses, or the reverse."""
    a, b = a.lower(), b.lower()
    return bool(_near_senses(a) & _senses(b)) or _points_into(_rows(b)[:3], _NEAR_POINTERS, _senses(a))


def _rows(word: str, pos: str | None = None) -> tuple[int, ...]:
    """:func:`~robust_mrc.attacks.resources.wordnet_table.synset_rows`, () without WordNet."""
    try:
        return synset_rows(word, pos)
    except R.ResourceMissing:
        return ()


def _points_into(rows, symbols, senses: frozenset[int]) -> bool:
    """Whether a pointer ``symbols`` of one of ``rows`` reaches ``senses``: what the sets of
    :func:`_near_senses` / :func:`_parts_and_wholes` of the second word of a rule, meeting the first
    word's senses, say, without making those sets (a candidate's hyponyms can be hundreds)."""
    if not senses or not rows:
        return False
    related = wordnet_table().related
    return any(not senses.isdisjoint(related(row, symbol)) for row in rows for symbol in symbols)


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
    if not counts and R.has_wordnet():
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
    """The nearest word to ``word`` in ``nb`` that :func:`refusal` lets replace it, or None.

    :func:`refusal` is None exactly when its rules that do not look at ``used`` and
    ``question_words`` let the candidate through and it is in neither: those rules are asked once
    per word and candidate (:func:`_walk`), as far down the neighbours as a call has gone."""
    try:
        cands, passed = _walk(word, nb, pos, k)
    except TypeError:  # an unhashable backend: no memory of earlier calls
        cands, passed = tuple(nb.neighbours(word.lower(), k)), {}
    for i, cand in enumerate(cands):
        ok = passed.get(i)
        if ok is None:
            ok = passed.setdefault(i, refusal(cand, word, pos, _NOTHING, _NOTHING) is None)
        if ok and cand.lower() not in used and cand.lower() not in question_words:  # refusal's "used" rule
            return cand
    return None


_NOTHING: frozenset[str] = frozenset()


@R.depends_on_resources
@functools.lru_cache(maxsize=50_000)
def _walk(word: str, nb, pos: str | None, k: int) -> tuple[tuple[str, ...], dict[int, bool]]:
    """``word``'s neighbours and, by position, whether :func:`refusal` passes each with nothing used."""
    return tuple(nb.neighbours(word.lower(), k)), {}


def nearest_name(word: str, kind: str, nb, used: set[str], question_words: set[str], rng: random.Random) -> str:
    """Another person's name of ``kind``: the nearest of that kind in ``nb`` when ``word`` has a
    vector there, else one drawn with ``rng``; never ``word`` itself, a used word or a question word."""
    low = word.lower()
    pool = [n for n in _other_names(kind, low) if n not in used and n not in question_words]
    if not pool:
        pool = [n for n in R.names_of_kind(kind) if n != low]
    nearest = _most_similar(low, pool, kind, nb)
    return nearest if nearest is not None else rng.choice(pool)


@R.depends_on_resources
@functools.lru_cache(maxsize=20_000)
def _other_names(kind: str, low: str) -> tuple[str, ...]:
    """The names of ``kind`` that are not ``low`` (lower case) in another form, in list order: those for
    which neither :func:`same_word` nor :func:`R.same_name` holds, the two written out over the names'
    stems and forms worked out once (``tests/attacks/test_wordnet_table.py`` checks them against the two)."""
    sb, lb, gb = R.stem(low), _lemmas(low), R.nickname_groups(low)
    out = []
    for n, sa, la in _name_forms(kind):
        if n == low or sa == sb or sa.startswith(sb) or sb.startswith(sa):
            continue
        if len(n) >= 4 and len(low) >= 4 and n[:4] == low[:4] and _shared_prefix(n, low) >= 0.6 * min(len(n), len(low)):
            continue
        if la & lb or (gb and gb & R.nickname_groups(n)):
            continue
        out.append(n)
    return tuple(out)


@R.depends_on_resources
@functools.lru_cache(maxsize=8)
def _name_forms(kind: str) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """(name, its stem, its WordNet forms) of every name of ``kind`` (lower case), in list order."""
    return tuple((n, R.stem(n), _lemmas(n)) for n in R.names_of_kind(kind))


def _most_similar(word: str, pool: list[str], kind: str, nb) -> str | None:
    """The name of ``pool`` (names of ``kind``) most similar to ``word`` in ``nb`` (cosine; ties by
    spelling), None when ``nb`` has no vectors or none for ``word`` or for any name of ``pool``."""
    matrix = getattr(nb, "matrix", None)
    index = getattr(nb, "index", None)
    if matrix is None or index is None or word not in index:
        return None
    known = [n for n in pool if n in index]
    if not known:
        return None
    try:
        rows, kind_matrix = _name_vectors(nb, kind)
    except TypeError:  # an unhashable backend
        rows, kind_matrix = {n: index[n] for n in known}, matrix
    # the same rows as matrix[[index[n] for n in known]] (a copy of the kind's vectors, at hand), the same product
    negated = (-(kind_matrix[[rows[n] for n in known]] @ matrix[index[word]])).tolist()
    if any(s != s for s in negated):  # NaN in a vector file: order them as a sort does
        return sorted(zip(negated, known))[0][1]
    return min(zip(negated, known))[1]


@R.depends_on_resources
@functools.lru_cache(maxsize=16)
def _name_vectors(nb, kind: str):
    """(name -> its row in the matrix, a copy of the vectors of the names of ``kind`` that ``nb`` has)."""
    names = [n for n in R.names_of_kind(kind) if n in nb.index]
    return {n: i for i, n in enumerate(names)}, nb.matrix[[nb.index[n] for n in names]]
