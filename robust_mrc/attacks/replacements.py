"""Which word may replace which in AddSent's meaning flip (Si et al. 2021 (AdvRACE), section 3.3).

AddSent takes a noun to another member of its contrast set
(:mod:`robust_mrc.attacks.resources.contrasts`); the WordNet relations here are the check a candidate
must still pass, so that no replacement says the same thing in other words: it may not be

* the same word in another form: the same Porter stem, one stem a prefix of the other, the same
  WordNet lemma, or a shared prefix of four or more letters covering 60 % of the shorter word
  ("china" / "chinese", "teacher" / "teaching") (:func:`same_word`);
* a WordNet synonym (:func:`synonyms`), a kind of the word or the word a kind of it within five IS-A
  steps between nouns (:func:`kind_of`: "computer" / "laptop"), or a part or member of it or the
  reverse (:func:`part_of`: "China" / "Beijing", "hand" / "finger").

A person's name goes to another name of the same kind (female / male / given / surname), the nearest
in the distributional space among those names when the word has a vector, else one drawn from the
list (:func:`nearest_name`, :func:`ranked_names`); never a form of the same name ("Tom" -> "Thomas",
"Bob" -> "Robert": :data:`~robust_mrc.attacks.resources.names.NICKNAMES`) nor another spelling of it
("Grey" -> "Gray": :func:`spelling_variant`).
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


def nearest_name(word: str, kind: str, nb, used: set[str], question_words: set[str], rng: random.Random) -> str:
    """Another person's name of ``kind``: the nearest of that kind in ``nb`` when ``word`` has a
    vector there, else one drawn with ``rng``; never ``word`` itself, a used word or a question word."""
    low = word.lower()
    try:
        ranked = ranked_names(low, kind, nb)
    except TypeError:  # an unhashable backend
        ranked = None
    if ranked:
        for n in ranked:
            if n not in used and n not in question_words:
                return n
    pool = [n for n in _other_names(kind, low) if n not in used and n not in question_words]
    if not pool:
        pool = [n for n in R.names_of_kind(kind) if n != low]
    nearest = _most_similar(low, pool, kind, nb)
    return nearest if nearest is not None else rng.choice(pool)


@R.depends_on_resources
@functools.lru_cache(maxsize=20_000)
def ranked_names(low: str, kind: str, nb) -> tuple[str, ...] | None:
    """The names of ``kind`` with a vector in ``nb`` that are not ``low`` in another form (:func:`_other_names`),
    nearest to ``low`` first (ties by spelling), None when ``nb`` has no vectors or none for ``low``:
    :func:`_most_similar`'s order, worked out once."""
    matrix = getattr(nb, "matrix", None)
    index = getattr(nb, "index", None)
    if matrix is None or index is None or low not in index:
        return None
    known = [n for n in _other_names(kind, low) if n in index]
    if not known:
        return ()
    rows, kind_matrix = _name_vectors(nb, kind)
    negated = (-(kind_matrix[[rows[n] for n in known]] @ matrix[index[low]])).tolist()
    return tuple(n for _, n in sorted(zip(negated, known)))


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
        if la & lb or (gb and gb & R.nickname_groups(n)) or spelling_variant(n, low):
            continue
        out.append(n)
    return tuple(out)


def spelling_variant(a: str, b: str) -> bool:
    """Whether two names are spellings of one ("Grey" / "Gray", "Jon" / "John", "Lee" / "Li"): one edit apart,
    or the same first letter and the same consonants in order."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    if abs(len(a) - len(b)) <= 1 and _one_edit(a, b):
        return True
    skeleton = lambda w: w[:1] + "".join(ch for ch in w[1:] if ch not in "aeiouyh")  # noqa: E731
    return a[:1] == b[:1] and skeleton(a) == skeleton(b)


def _one_edit(a: str, b: str) -> bool:
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) <= 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


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
