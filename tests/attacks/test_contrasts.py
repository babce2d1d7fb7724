"""The contrast sets of AddSent's meaning flip: members that name different things."""

from __future__ import annotations

import itertools

import pytest

from robust_mrc.attacks.resources import contrasts as C


def test_every_set_has_distinct_members():
    for name, members in C.contrast_sets():
        forms = [f.lower() for m in members for f in m]
        assert len(forms) == len(set(forms)), f"{name}: a form listed twice"
        assert len(members) >= 2, name


# sets of units: one member is a part of the next by definition (a minute of an hour), and "hundreds of years" /
# "hundreds of weeks" still name different times
UNIT_SETS = {"unit of time", "money", "large quantity"}


def _first_sense(word: str):
    from robust_mrc.attacks import resources as R

    wn = R.wordnet()
    senses = wn.synsets(word.replace(" ", "_"), "n") or wn.synsets(word.replace(" ", "_"), "a")
    return senses[0] if senses else None


def _ancestors(sense, depth: int = 5) -> set:
    out, frontier = set(), [sense]
    for _ in range(depth):
        frontier = [h for s in frontier for h in s.hypernyms() + s.instance_hypernyms()]
        out.update(frontier)
    return out


def _parts(sense) -> set:
    return set(
        sense.part_holonyms() + sense.part_meronyms() + sense.member_holonyms() + sense.member_meronyms() + sense.substance_holonyms()
    ) | set(sense.substance_meronyms())


def _related(a: str, b: str, units: bool) -> str | None:
    """How WordNet relates the commonest senses of two members, if it does (the sense a reader takes)."""
    sa, sb = _first_sense(a), _first_sense(b)
    if sa is None or sb is None:
        return None
    if sa == sb:
        return "the same sense"
    if sa in _ancestors(sb) or sb in _ancestors(sa):
        return "a kind of the other"
    if not units and (sa in _parts(sb) or sb in _parts(sa)):
        return "a part of the other"
    return None


def test_no_two_members_of_a_set_are_synonyms_kinds_or_parts_in_wordnet(wordnet_ok):
    bad = []
    for name, members in C.contrast_sets():
        for m1, m2 in itertools.combinations(members, 2):
            for a, b in itertools.product(m1, m2):
                why = _related(a, b, name in UNIT_SETS)
                if why:
                    bad.append(f"{name}: {a} / {b} ({why})")
    assert not bad, bad


def test_find_matches_whole_words_longest_first_capitals_kept_plurals_too():
    found = C.find("The aunts met us in New York and the US on Saturday, may be in May, with ice cream and mice.")
    got = [(f.form, f.plural) for f in found]
    assert ("aunt", True) in got and ("New York", False) in got and ("the US", False) in got
    assert ("Saturday", False) in got and ("May", False) in got and ("ice cream", False) in got and ("mouse", True) in got
    assert not any(f.form in ("US", "the US") and f.start == 9 for f in found)  # "us" is a pronoun
    assert [f.form for f in found].count("May") == 1  # "may" is a verb
    assert not any(f.form in ("ice", "cream", "York") for f in found)


def test_contrasts_are_other_members_never_a_form_of_the_same():
    assert "Sunday" in C.contrasts("Saturday") and "Saturday" not in C.contrasts("Saturday")
    others = C.contrasts("mother")
    assert "aunt" in others and not {"mom", "mum", "mommy"} & set(others)
    assert not {"USA", "United States", "the US"} & set(C.contrasts("America"))
    assert not {"kid", "teen", "adolescent", "youth"} & set(C.contrasts("child"))  # the near-synonyms of a judged sample
    assert C.contrasts("passage") == ()


@pytest.mark.parametrize(
    ("word", "other"),
    [("police", "cops"), ("highway", "roadway"), ("teenager", "youth"), ("dog", "pup"), ("teacher", "lecturer"), ("money", "cash")],
)
def test_near_synonyms_are_never_contrasts(word, other):
    assert other not in C.contrasts(word)
