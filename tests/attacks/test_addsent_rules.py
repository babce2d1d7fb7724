"""AddSent step 3, one case (or a few) per question-shape rule: question + answer -> the exact sentence.

Each case asserts the rule's own output and that :func:`declarative` picks that rule for the
question (no earlier rule of the question's first word fits it). The heuristic tagger is named, so
the sentences do not depend on spaCy; it reads WordNet, hence ``wordnet_ok``. Sentences are raw
(the attack tidies spaces and adds the full stop). Cases marked "sic" record known wrong output of
a rule (see the rule's docstring) so that a change to it is a deliberate one.
"""

from __future__ import annotations

import itertools

import pytest

from robust_mrc.attacks.span.addsent import declarative
from robust_mrc.attacks.span.addsent import statement as S
from robust_mrc.data.text import TOKEN_RE, as_statement

CASES = [
    (S.in_what_did, "In what year did Tesla move to Paris?", "1962", "In 1962, Tesla moved to Paris"),
    (
        S.in_what_did,
        "At which Super Bowl did Beyonce headline the halftime show?",
        "Central Park",
        "At Central Park, Beyonce headlined the halftime show",
    ),
    (S.in_what_is, "In what country is the Amazon rainforest?", "Chicago", "the Amazon rainforest is in Chicago"),
    # sic: an auxiliary after the NP (has, will) keeps the question's word order
    (S.in_what, "In which city has Tesla lived?", "Chicago", "In Chicago, has Tesla lived"),
    (S.how_many_did, "How many yards did Newton throw in 2015?", "42", "Newton threw 42 yards in 2015"),
    (S.how_many, "How many people live in Warsaw?", "42", "42 people live in Warsaw"),
    (S.how_many, "How much money was spent on the project?", "42", "42 money was spent on the project"),
    (
        S.how_adjective,
        "How old was John Elway when he played in Super Bowl XXXIII?",
        "42",
        "John Elway was 42 when he played in Super Bowl XXXIII",
    ),
    (S.adverbial_did, "When did Tesla move to Paris?", "1850", "Tesla moved to Paris in 1850"),
    (S.adverbial_did, "Where did Tesla study engineering?", "Chicago", "Tesla studied engineering in Chicago"),
    (S.adverbial_did, "Why did Tesla leave Edison?", "the stone", "Tesla left Edison because of the stone"),
    (S.adverbial_is, "When was Nikola Tesla born?", "1831", "Nikola Tesla was born in 1831"),
    (S.adverbial_is, "Where was the Magna Carta signed?", "Chicago", "the Magna Carta was signed in Chicago"),
    (S.adverbial_modal, "Where can tourists see the Mona Lisa?", "Chicago", "tourists can see the Mona Lisa in Chicago"),
    (
        S.adverbial_modal,
        "How could Tesla transmit power without wires?",
        "the stone",
        "Tesla could transmit power without wires by the stone",
    ),
    (S.who_did, "Who did Tesla work for in the US?", "Jeff Dean", "Tesla worked for Jeff Dean in the US"),
    (S.who_did, "Who did Tesla admire most?", "Jeff Dean", "Tesla admired Jeff Dean most"),
    # a preposition after the verb is the verb's only when stranded ("work for?"), not an adjunct's
    (S.who_did, "Who did Denver beat in the AFC championship?", "Jeff Dean", "Denver beat Jeff Dean in the AFC championship"),
    (S.who_did, "Who did Tesla work for in 1890?", "Jeff Dean", "Tesla worked for Jeff Dean in 1890"),
    (S.what_did, "What does Omar work as?", "the stone", "Omar works as the stone"),
    (S.what_did, "What did the company sell shares of?", "the stone", "the company sold the stone shares of"),  # sic: object NP
    (S.wh_subject, "Who founded the company?", "Jeff Dean", "Jeff Dean founded the company"),
    (S.wh_subject, "What happened to Tesla in 1906?", "the stone", "the stone happened to Tesla in 1906"),
    (S.what_is, "What is the capital of France?", "Chicago", "the capital of France is Chicago"),
    (S.what_is, "What was Tesla known for?", "the stone", "Tesla was known for the stone"),
    (S.what_did, "What did Tesla invent in 1887?", "the stone", "Tesla invented the stone in 1887"),
    (S.what_did, "What does the sea monster hold in its claws?", "the stone", "the sea monster holds the stone in its claws"),
    (S.what_np_did, "Which prize did Tesla win in 1894?", "the stone", "Tesla won the stone in 1894"),
    # sic: the participle stays after the subject and the preposition before the verb
    (S.what_np_is_prep, "What country is Warsaw located in?", "Chicago", "Warsaw located in is the country Chicago"),
    (
        S.what_np,
        "What ABC division handles foreign television distribution?",
        "Central Park",
        "The ABC division of Central Park handles foreign television distribution",
    ),
    (
        S.what_np,
        "Which NFL team represented the AFC at Super Bowl 50?",
        "Initech Corporation",
        "The NFL team of Initech Corporation represented the AFC at Super Bowl 50",
    ),
    (S.wh_in_situ, "Tesla moved to what city in 1880?", "Chicago", "Tesla moved to Chicago in 1880"),
    # "what" without a noun phrase after it: nothing after it is taken with it
    (S.wh_in_situ, "Firms may act as what for a project?", "the stone", "Firms may act as the stone for a project"),
    (S.imperative, "Name a type of Toyota truck?", "Jeff Dean", "Jeff Dean is a type of Toyota truck"),
    # sic: yes/no questions have no rule of their own
    (S.answer_appended, "Is the Pope's confessor a Bishop?", "Jeff Dean", "Is the Pope's confessor a Bishop Jeff Dean"),
]


@pytest.mark.parametrize("rule,question,answer,expected", CASES, ids=[f"{c[0].__name__}:{c[1]}" for c in CASES])
def test_each_shape_rule_makes_its_sentence(wordnet_ok, rule, question, answer, expected):
    tokens = TOKEN_RE.findall(question)
    assert rule(S.Question.of(tokens, "heuristic"), answer) == expected
    assert declarative(tokens, answer, "heuristic") == expected


def test_every_rule_of_the_table_has_a_case():
    table = set(itertools.chain.from_iterable(S.RULES.values())) | {S.wh_in_situ, S.answer_appended}
    assert {c[0] for c in CASES} == table


@pytest.mark.parametrize("rule,question", [c[:2] for c in CASES], ids=[f"{c[0].__name__}:{c[1]}" for c in CASES])
def test_the_rules_before_it_decline_the_question(wordnet_ok, rule, question):
    """The rules tried before a case's rule (its first word's, in order) give None for it: the
    sentence comes from that rule, not from an earlier one that happens to agree."""
    q = S.Question.of(TOKEN_RE.findall(question), "heuristic")
    order = [*S.RULES.get(q.low[0], ()), S.wh_in_situ, S.answer_appended]
    for earlier in order[: order.index(rule)]:
        assert earlier(q, "Jeff Dean") is None, earlier.__name__


def test_how_picks_by_what_follows(wordnet_ok):
    """ "how many" and "how old" come before the adverbial "how did X V" (by A)."""
    say = lambda q: declarative(TOKEN_RE.findall(q), "the stone", "heuristic")  # noqa: E731
    assert say("How did Tesla die?") == "Tesla died  by the stone"
    assert as_statement(say("How did Tesla die?")) == "Tesla died by the stone."
    assert say("How many patents did Tesla obtain in 1888?") == "Tesla obtained the stone patents in 1888"


def test_no_tokens_give_the_answer_alone():
    assert declarative(["?"], "Jeff Dean") == "Jeff Dean"
