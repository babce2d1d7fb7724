"""WordNet synsets read straight from the data files give NLTK's answers: the nearest words and
antonyms built on them equal the same lookups through NLTK's Synset objects (the oracle here)."""

from __future__ import annotations

import pytest

from robust_mrc.attacks.resources import wordnet_records as records
from robust_mrc.attacks.resources.vectors import WordNetNeighbours
from robust_mrc.attacks.resources.wordnet import antonyms, offensive_word, wordnet

# nouns with many hyponyms, verbs, adjectives with satellites, adverbs, words with syntactic
# markers ("(a)", "(p)", "(ip)"), inflected forms (morphology), capitalised lemmas, unknown words
WORDS = (
    "dog person music teacher city water money school story friend mother child house tree car "
    "run give make went took children mice better best happy beautiful big quick little old new "
    "quickly slowly well galore elect aforesaid sun Sun paris January alive dead open close win "
    "hot cold good bad up down black white eat ate eaten bank light fair fine kind mean zzzzqx the"
).split()


def offensive_synset(syn) -> bool:
    """The offensive-sense rule written on NLTK's Synset objects."""
    definition = syn.definition().lower()
    if any(mark in definition for mark in records.OFFENSIVE_MARKS):
        return True
    return any(d.name().split(".")[0] in records.OFFENSIVE_DOMAINS for d in syn.usage_domains())


def nltk_neighbours(word: str, k: int = 25) -> tuple[str, ...]:
    """The nearest-word rule of WordNetNeighbours written on NLTK's objects."""
    wn, w, out = wordnet(), word.lower(), []

    def add(name: str) -> None:
        name = name.lower()
        if "_" not in name and "-" not in name and name != w and name not in out and name.isalpha():
            out.append(name)

    synsets = [s for s in wn.synsets(w)[:4] if not offensive_synset(s)]
    for syn in synsets:
        for lemma in syn.lemmas():
            add(lemma.name())
    for syn in synsets[:2]:
        for hyper in sorted(syn.hypernyms(), key=lambda x: x.name())[:2]:
            for sibling in sorted(hyper.hyponyms(), key=lambda x: x.name())[:15]:
                if not offensive_synset(sibling):
                    for lemma in sibling.lemmas()[:2]:
                        add(lemma.name())
    return tuple(out[:k])


def nltk_antonyms(word: str, pos: str) -> tuple[str, ...]:
    wn, out = wordnet(), []
    synsets = wn.synsets(word, pos=pos)
    if pos == "a":
        synsets += [s for s in wn.synsets(word, pos="s") if s not in synsets]
    for syn in synsets:
        for lemma in syn.lemmas():
            if lemma.name().lower() == word.lower():
                for ant in lemma.antonyms():
                    if "_" not in ant.name() and "-" not in ant.name() and ant.name() not in out:
                        out.append(ant.name())
    return tuple(out)


def test_synsets_names_and_fields_are_nltks(wordnet_ok):
    wn = wordnet()
    for word in WORDS:
        ours, theirs = records.synsets(word), wn.synsets(word)
        assert [records.synset_name(s) for s in ours] == [s.name() for s in theirs], word
        for mine, nltk_syn in zip(ours, theirs):
            assert list(mine.lemmas) == nltk_syn.lemma_names()
            assert mine.definition == nltk_syn.definition()
            assert sorted(map(records.synset_name, records.related(mine, "~"))) == sorted(s.name() for s in nltk_syn.hyponyms())
            assert records.offensive(mine) == offensive_synset(nltk_syn)
    flagged = 0
    for word in (*WORDS, "bastard", "bitch"):  # two words with a sense WordNet marks as offensive
        assert offensive_word(word) == any(offensive_synset(s) for s in wn.synsets(word)), word
        flagged += offensive_word(word)
    assert flagged >= 1


def test_neighbours_and_antonyms_equal_the_lookup_through_nltk(wordnet_ok):
    nb = WordNetNeighbours()
    changed = 0
    for word in WORDS:
        assert nb.neighbours(word, 25) == nltk_neighbours(word), word
        changed += bool(nb.neighbours(word, 25))
        for pos in "nvar":
            assert antonyms(word, pos) == nltk_antonyms(word, pos), (word, pos)
    assert changed >= len(WORDS) - 3  # the comparison is not between empty answers
    assert "cold" in antonyms("hot", "a") and "bad" in antonyms("good", "a")


def test_a_marker_is_removed_like_nltk():
    assert records._strip_marker("galore(ip)") == "galore"
    assert records._strip_marker("elect(p)") == "elect"
    assert records._strip_marker("dog") == "dog"


def test_without_wordnet_it_raises_the_install_hint(no_wordnet):
    from robust_mrc.attacks import ResourceMissing

    with pytest.raises(ResourceMissing, match="apt-get install wordnet-base"):
        records.synsets("dog")
