"""Span AddSent's grammar: rule repairs, the parse check, the statements made from the question's
parse, plausible fake years, and the attacks preferring the candidates the check passes.

The parse tests name the spaCy tagger (the attack tests' default is the heuristic one) and skip
where spaCy or its English pipeline is not installed.
"""

from __future__ import annotations

import re

import pytest

from robust_mrc.attacks import example_rng, get_attack
from robust_mrc.attacks.resources import spacy_tagger
from robust_mrc.attacks.span.addsent import fluency
from robust_mrc.attacks.span.addsent.alter import alter_question, content_changed, earlier_year
from robust_mrc.attacks.span.addsent.attacks import candidates, check, choice_pool
from robust_mrc.attacks.span.addsent.fakes import fake_answers
from robust_mrc.attacks.span.addsent.grammar import join_tokens, question_tokens
from robust_mrc.data.examples import Answer, SpanExample


@pytest.fixture
def parser():
    if not spacy_tagger.available():
        pytest.skip("spaCy and an English pipeline are not installed (pip install robust-mrc[nlp])")
    return spacy_tagger


def _parse(text: str):
    return spacy_tagger.parse_texts([text])[0]


def _years(text: str) -> list[int]:
    return [int(y) for y in re.findall(r"\b(1\d{3}|20\d{2})(?=s?\b)", text)]


# ------------------------------------------------------------------ rule repairs (no model)


@pytest.mark.parametrize(
    "raw,fixed,name",
    [
        ("Tesla ate a apple in 1890.", "Tesla ate an apple in 1890.", "article"),
        ("A unimportant settlement is Chicago.", "An unimportant settlement is Chicago.", "article"),
        ("Tesla moved to the the city.", "Tesla moved to the city.", "doubled_word"),
        ("Jeff Jeff founded the company.", "Jeff founded the company.", "doubled_word"),
        ("The house of The stones was the site.", "The house of the stones was the site.", "article_case"),
        ("Industry did harm until the 1980 s.", "Industry did harm until the 1980s.", "decade"),
        ("The war lasted from 1945 to 1939.", "The war lasted from 1939 to 1945.", "year_range"),
        ("Tesla patented the coil in 2891.", "Tesla patented the coil in 1891.", "future_year"),  # a changed first digit
    ],
)
def test_repair_fixes_what_rules_can(raw, fixed, name):
    assert fluency.repair(raw) == (fixed, (name,))


def test_repair_leaves_a_good_sentence_alone():
    for sentence in (
        "Tesla moved to Chicago in 1884.",
        "Jeff Dean had had enough.",
        "He said that that was an honour.",
        "The sea rose in 2090.",
    ):
        assert fluency.repair(sentence) == (sentence, ())


# ------------------------------------------------------------------ the parse check


def test_a_grammatical_sentence_passes(parser):
    for sentence in ("Tesla patented the stone in 1891.", "The museum in Sunderland is dedicated to children's books."):
        assert fluency.problems(_parse(sentence)) == (), sentence


@pytest.mark.parametrize(
    "sentence,problem",
    [
        ("Tesla moved to.", "dangling"),  # a preposition without its object
        ("The stone of the city.", "root"),  # no verb: a fragment
        ("Jeff Dean were the leader of the regime.", "agreement"),
        ("The percentage did the three networks represent in 1970.", "do_left"),
        ("The second part of the air was quickly.", "dangling"),  # a copula with no complement
    ],
)
def test_the_check_names_what_a_crowd_worker_would_fix(parser, sentence, problem):
    found = fluency.problems(_parse(sentence))
    assert problem in found and fluency.score(found) < 0


def test_agreement_is_repaired_only_on_a_subject_the_attack_wrote(parser):
    sentence = "Jeff Dean were the leader of the regime."
    assert fluency.repair_agreement(sentence, _parse(sentence), {"Jeff", "Dean"}) == "Jeff Dean was the leader of the regime."
    assert fluency.repair_agreement(sentence, _parse(sentence), {"regime"}) is None  # the question's own words: left as they are


def test_a_dangling_candidate_is_refused_when_a_grammatical_one_exists(parser):
    marks = [{"Chicago"}, {"Chicago"}]
    cands = check(["Tesla moved to in 1884 Chicago", "Tesla moved to Chicago in 1884"], marks, parser=True)
    pool, fallback = choice_pool(sorted(cands, key=lambda c: -c.score))
    assert [c.sentence for c in pool] == ["Tesla moved to Chicago in 1884."] and not fallback
    # none passes: the best-scored ones are kept, and the fall-back is reported
    only_bad = check(["Tesla moved to in 1884 Chicago"], marks[:1], parser=True)
    assert choice_pool(only_bad) == (only_bad, True)


def test_a_quotation_at_the_end_gets_its_full_stop():
    (c,) = check(['people use words like " howay "'], [set()], parser=False)
    assert c.sentence == 'People use words like "howay".'


def test_without_the_parser_nothing_is_judged():
    (c,) = check(["tesla ate a apple"], [set()], parser=False)
    assert c.sentence == "Tesla ate an apple." and c.repairs == ("article",) and c.problems is None and c.passed is None


# ------------------------------------------------------------------ statements from the question's parse


@pytest.mark.parametrize(
    "question,answer,sentence",
    [
        ("What did Tesla claim to be able to transmit?", "the stone", "Tesla claimed to be able to transmit the stone"),
        ("What did Tesla patent in 1891?", "the stone", "Tesla patented the stone in 1891"),
        ("Who is Kearney Boulevard named after?", "Jeff Dean", "Kearney Boulevard is named after Jeff Dean"),
        ("When did the y. pestis reach England?", "1962", "the y. pestis reached England in 1962"),
        (
            "What museum in Newcastle is dedicated to children's books?",
            "Jeff Dean",
            "The museum in Newcastle that is dedicated to children's books is Jeff Dean",
        ),
        ("How many major immune responses do plants have?", "42", "plants have 42 major immune responses"),
        ("In what year did Tesla move to Paris?", "1962", "Tesla moved to Paris in 1962"),
        ("How long is the Rhine?", "1,155 km", "the Rhine is 1,155 km long"),
        ("What did Luther tell the legate about the papacy?", "the stone", "Luther told the legate the stone about the papacy"),
        ("When was the suspension by FIFA lifted?", "1982", "the suspension by FIFA was lifted in 1982"),
        ("What lineage is Karenia in?", "the stone", "Karenia is in the stone"),
        (
            "What program that aired between Last Man Standing and Shark Tank was cancelled by ABC?",
            "Jeff Dean",
            "Jeff Dean, the program that aired between Last Man Standing and Shark Tank, was cancelled by ABC",
        ),
    ],
)
def test_statements_from_the_parse(parser, question, answer, sentence):
    from robust_mrc.attacks.span.addsent.syntax import statements

    toks = question_tokens(question)
    assert join_tokens(statements(spacy_tagger.parse(tuple(toks)), toks, answer)[0]) == sentence


def test_question_tokens_join_back_into_the_question():
    for q in ("What did Schurf's letter say?", 'Who paid $100,000 for "one-stop shopping" (in the 1990s)?', "Why doesn't Beyoncé sing?"):
        toks = question_tokens(q)
        assert join_tokens(" ".join(toks)) == q
    assert question_tokens("What was the U.S. Information Agency's French-language name?") == [
        "What", "was", "the", "U.S.", "Information", "Agency", "'s", "French-language", "name", "?"
    ]  # fmt: skip


# ------------------------------------------------------------------ plausible years, compatible alterations


def test_fake_and_altered_years_stay_plausible():
    for answer in ("1998", "1928-1933", "the 1990s", "between 1914 and 1918", "spring of 1349", "July 4, 1776"):
        for mod in (False, True):
            fakes = fake_answers(answer, "When did it happen?", mod=mod)
            assert max(_years(fakes[0])) < min(_years(answer))  # the year rule moves the years back
            for fake in fakes:
                ys = _years(fake)
                assert all(y <= fluency.LATEST_YEAR for y in ys) and ys == sorted(ys), (answer, fake)  # a range stays in order
    assert fake_answers("between 10% and 18%", "What share?")[0] == "between 20% and 28%"
    assert fake_answers("1524\u201325", "When?")[0] == "1449\u201350"  # an abbreviated end year stays two digits
    assert earlier_year("1891") == "1881" and earlier_year("1980s", 1) == "1960s" and earlier_year("42") is None


def test_fakes_keep_the_answers_number_and_article(wordnet_ok):
    assert "a stone" in fake_answers("a genius", "What was he?", tagger="heuristic")  # "genius" is no plural
    assert "the stones" in fake_answers("the rivers", "What did they cross?", tagger="heuristic")
    assert fake_answers("In 1973", "When was he elected?")[0] == "in 1898"  # a leading preposition in lower case


def test_alterations_change_a_content_word_and_keep_grammar(wordnet_ok):
    toks, changed = alter_question("Which cell type is used in most types of invertebrate life?", tagger="heuristic")
    assert changed and "few" in toks and "least" not in toks  # "most types" -> "few types"
    toks, _ = alter_question("Most imperialism was carried out by sea?", tagger="heuristic")
    assert toks[0] == "Little"  # a mass noun: "little", not "few"
    toks, _ = alter_question("What is the most rainfall recorded in Fresno?", tagger="heuristic")
    assert "least" in toks and "few" not in toks  # "the most rainfall" is a superlative
    toks, _ = alter_question("Who appointed Phillips to man the tiger team?", tagger="heuristic")
    assert "man" in toks and "woman" not in toks  # "man" the verb is not swapped
    toks, _ = alter_question("Tell us why it is less likely?", tagger="heuristic")
    assert "us" in toks and "UK" not in toks and "unlikely" not in toks  # the pronoun stays; no double flip
    original = question_tokens("What type of housing was erected in Warsaw?")
    only_wh = [t if t != "type" else "antitype" for t in original]
    assert not content_changed(original, only_wh, "heuristic")  # a change inside the wh-phrase is no change
    assert content_changed(original, [t if t != "Warsaw" else "Chicago" for t in original], "heuristic")


def test_names_change_as_names(wordnet_ok):
    from robust_mrc.attacks import resources as R

    toks, _ = alter_question("Who did Tesla work for in the United States?", tagger="heuristic")
    assert toks[7:9] == ["United", "States"]  # a name of common words is not changed word by word ("United Governors")
    toks, changed = alter_question("What did Tesla study in the United States?", tagger="heuristic")
    assert changed and "States" in toks  # Tesla changed: the name stays
    toks, _ = alter_question("What is the capital in the United States?", tagger="heuristic")
    assert " ".join(t for t in toks if t) in ("What is the capital in Chicago ?", "What is the capital in Melbourne ?")
    toks, _ = alter_question("How much money did John Jacob Astor IV provide Tesla with?", tagger="heuristic")
    assert "IV" in toks  # a Roman numeral is no acronym
    from robust_mrc.attacks.span.addsent.alter import _usable

    # a nearest word that is the name's adjective, or a WordNet relative, is refused; a sister name is not
    assert not _usable("french", "france", set()) and not _usable("poland", "warsaw", set()) and _usable("italy", "france", set())
    toks, _ = alter_question("When was Jean De Rely born?", tagger="heuristic")
    assert toks[2] != "Jean" and R.name_kinds(toks[2]) and toks[3:5] == ["De", "Rely"]  # a first name to a first name


# ------------------------------------------------------------------ the attacks


def _example() -> SpanExample:
    context = "Nikola Tesla was born in 1856 in Smiljan. He worked for Thomas Edison in New York City in 1884."
    return SpanExample(
        id="g1",
        context=context,
        question="Who did Tesla work for in New York City?",
        answers=(Answer("Thomas Edison", context.index("Thomas Edison")),),
        title="Tesla",
    )


@pytest.mark.parametrize("name", ["addsent", "addonesent", "addsentmod"])
def test_attacks_insert_a_checked_sentence_and_keep_the_offsets(parser, wordnet_ok, name):
    ex = _example()
    attack = get_attack(name, "span", tagger="spacy")
    new, chosen, fallback = attack.trace(ex, example_rng(0, 0, ex.id, name))
    assert new is not None and chosen.passed and not fallback
    assert chosen.sentence in new.context and "thomas edison" not in chosen.sentence.lower()
    for a in new.answers:
        assert new.context[a.start : a.start + len(a.text)] == a.text
    assert attack(ex, example_rng(0, 0, ex.id, name)) == new  # trace is what apply does
    assert "parse check" in attack.resources()["grammar"]


def test_a_verb_fake_answer_is_no_subject(parser, wordnet_ok):
    context = "Subscriber numbers flattened in other areas of Europe."
    ex = SpanExample(
        id="g3", context=context, question="What was happening to subscriber numbers in Europe?", answers=(Answer("flattened", 19),)
    )
    sentences = [c.sentence for c in candidates(ex, variants=3, fakes=3, tagger="spacy")]
    assert sentences and not any(s.lower().startswith(("jump", "swim")) for s in sentences)


def test_the_canonical_candidate_is_the_first_that_passes(parser, wordnet_ok):
    ex = _example()
    full = candidates(ex, variants=3, fakes=3, tagger="spacy")
    lazy = candidates(ex, variants=3, fakes=3, tagger="spacy", first_passing=True)
    assert full and full[0] == lazy[0] and full[0].passed
    assert [c.score for c in full] == sorted((c.score for c in full), reverse=True)


def test_grammar_off_or_heuristic_tagger_checks_nothing(wordnet_ok):
    ex = _example()
    for params in ({"tagger": "heuristic"}, {"grammar": False}):
        attack = get_attack("addsent", "span", **params)
        assert attack.resources()["grammar"].startswith("none")
        _, chosen, _ = attack.trace(ex, example_rng(0, 0, ex.id, "addsent"))
        if params.get("tagger") == "heuristic" or not spacy_tagger.available():
            assert chosen is not None and chosen.problems is None


class _NeverFooled:
    """A model that always answers the gold, counting the examples it is asked about."""

    key = "never-fooled"

    def __init__(self):
        self.seen = 0

    def predict(self, examples):
        from robust_mrc.attacks.search import Prediction

        self.seen += len(examples)
        return [Prediction(nbest=((ex.answers[0].text, 1.0),)) for ex in examples]


def test_the_search_tries_only_the_candidates_that_pass(parser, wordnet_ok):
    from robust_mrc.attacks.apply import build_attack
    from robust_mrc.attacks.search import run_search

    context = "Tesla described Edison as a genius in 1890."
    ex = SpanExample(
        id="g2", context=context, question="What did Tesla describe Edison as?", answers=(Answer("a genius", context.index("a genius")),)
    )
    attack = build_attack({"name": "addsent", "params": {"tagger": "spacy"}}, "span")
    cands = candidates(ex, variants=3, fakes=3, tagger="spacy")
    passed = [c for c in cands if c.passed]
    assert passed and len(passed) < len(cands)  # the check refused some
    scorer = _NeverFooled()
    (adv,), stats = (lambda r: (r[0].examples, r[1]))(run_search(attack, [ex], scorer, seed=0, progress=False))
    assert stats.queries == scorer.seen == min(len(passed), 9)
    assert adv.edits[-1].detail == passed[0].sentence  # ties: the best-ranked, what model-free addsent adds
