"""The DG selection rule (Si et al. 2021 (AdvRACE), 3.2) on hand-made beam lists: Jaccard rule, fallback, exclusions."""

from __future__ import annotations

from robust_mrc.attacks.mc.diverse import select_diverse


def test_keeps_beam_one_then_beams_dissimilar_to_every_kept_one():
    beams = ["the red car", "the red car park", "a blue bike", "the green house", "a blue bike shop"]
    # "the red car park" ~ beam 1 (3/4); "a blue bike shop" ~ "a blue bike" (3/4)
    assert select_diverse(beams, 3) == ["the red car", "a blue bike", "the green house"]


def test_similarity_of_exactly_the_threshold_is_not_diverse():
    # {a, b} vs {a, b, c, d}: Jaccard 0.5 -- not below 0.5, so "x" comes first
    assert select_diverse(["a b", "a b c d", "x"], 2) == ["a b", "x"]
    assert select_diverse(["a b", "a b c d", "x"], 2, max_similarity=0.6) == ["a b", "a b c d"]


def test_falls_back_to_the_next_beams_in_rank_order():
    beams = ["a b", "a b c", "x y", "a b d"]
    # diverse: "a b", "x y"; then the fallback takes beam 2 ("a b c") before beam 4
    assert select_diverse(beams, 3) == ["a b", "x y", "a b c"]
    assert select_diverse(["red car", "red car park", "red car lot", "red car wash"], 3) == ["red car", "red car park", "red car lot"]


def test_never_the_answer_nor_a_duplicate_nor_an_empty_beam():
    beams = ["The answer.", "blue car", "Blue car!", "", "...", "the ANSWER", "green bus", "BLUE CAR"]
    assert select_diverse(beams, 3, exclude=["the answer"]) == ["blue car", "green bus"]  # only two survive
    assert select_diverse(beams, 1, exclude=["the answer"]) == ["blue car"]


def test_excluded_options_and_n():
    beams = ["at home", "at school", "in the park"]
    assert select_diverse(beams, 2, exclude=["At home.", "at school"]) == ["in the park"]
    assert select_diverse(beams, 0) == [] and select_diverse([], 3) == []
    assert select_diverse(beams, 5) == beams  # fewer candidates than asked: all of them, in order
