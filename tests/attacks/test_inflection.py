"""English inflection of the words attacks put into sentences."""

import pytest

from robust_mrc.attacks import inflection as I


@pytest.mark.parametrize(
    ("noun", "want"),
    [("child", "children"), ("city", "cities"), ("box", "boxes"), ("wolf", "wolves"), ("day", "days"), ("ice hockey", "ice hockeys")],
)
def test_plural(noun, want):
    assert I.plural(noun) == want


@pytest.mark.parametrize(
    ("base", "tag", "want"),
    [
        ("stop", "VBD", "stopped"),
        ("open", "VBD", "opened"),
        ("go", "VBN", "gone"),
        ("go", "VBD", "went"),
        ("close", "VBZ", "closes"),
        ("try", "VBZ", "tries"),
        ("lie", "VBG", "lying"),
        ("visit", "VBG", "visiting"),
        ("sleep", "VBD", "slept"),
        ("like", "VBP", "like"),
        ("transmit", "VBD", "transmitted"),  # stressed on the last syllable: the consonant doubles
        ("occur", "VBG", "occurring"),
        ("limit", "VBD", "limited"),
        ("offer", "VBD", "offered"),
    ],
)
def test_verb_form(base, tag, want):
    assert I.verb_form(base, tag) == want


@pytest.mark.parametrize(
    ("adj", "tag", "want"),
    [
        ("bad", "JJS", "worst"),
        ("happy", "JJR", "happier"),
        ("big", "JJS", "biggest"),
        ("careful", "JJR", "more careful"),
        ("young", "JJ", "young"),
    ],
)
def test_degree(adj, tag, want):
    assert I.degree(adj, tag) == want


def test_articles_agree_with_the_next_word_and_leave_letters_alone():
    text = "A evil bed. Option A is a apple, an car, a hour, a university, an FBI agent, a unimportant one."
    want = "An evil bed. Option A is an apple, a car, an hour, a university, an FBI agent, an unimportant one."
    assert I.fix_articles(text) == want
