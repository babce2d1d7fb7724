"""Hand-made examples and a tiny vector table shared by the attack tests."""

from __future__ import annotations

from robust_mrc.data.examples import Answer, MCExample, SpanExample

PASSAGE = (
    "Tom lives in a small village near the mountains. Every morning he walks to school with his sister. "
    "Their teacher, Mrs. Green, likes to tell stories about the old castle. "
    "Last year the students planted 120 trees around the school. "
    "Tom thinks the happiest day of the year is the village festival in October."
)


def mc_examples() -> list[MCExample]:
    return [
        MCExample("q1", PASSAGE, "How does Tom go to school every morning?", ("By bus.", "On foot.", "By bike.", "By car."), 1),
        MCExample("q2", PASSAGE, "The students planted _ trees last year.", ("100", "120", "150", "200"), 1),
        MCExample(
            "q3",
            PASSAGE,
            "What does Mrs. Green like to do?",
            ("Sing happy songs.", "Tell stories about the castle.", "Climb the mountains.", "Plant trees."),
            1,
        ),
        MCExample(
            "q4",
            PASSAGE,
            "Which is the happiest day for Tom?",
            ("His birthday.", "The first day of school.", "The village festival.", "New Year's Day."),
            2,
        ),
    ]


CONTEXT = (
    "Nikola Tesla was born in 1856 in Smiljan. He moved to the United States in 1884 to work for Thomas Edison. "
    "Tesla later founded his own laboratory in New York City. "
    "His alternating current system won the largest contract of the time, and it powered the 1893 World's Fair. "
    "He died in January 1943 at the age of 86."
)


def _ans(text: str, nth: int = 0) -> Answer:
    start = -1
    for _ in range(nth + 1):
        start = CONTEXT.index(text, start + 1)
    return Answer(text, start)


def span_examples() -> list[SpanExample]:
    return [
        SpanExample("s1", CONTEXT, "When was Nikola Tesla born?", (_ans("1856"),), "Tesla"),
        SpanExample("s2", CONTEXT, "Where did Tesla found his own laboratory?", (_ans("New York City"), _ans("New York")), "Tesla"),
        SpanExample("s3", CONTEXT, "Who did Tesla work for in the United States?", (_ans("Thomas Edison"),), "Tesla"),
        SpanExample("s4", CONTEXT, "What did the alternating current system win?", (_ans("the largest contract of the time"),), "Tesla"),
        SpanExample("s5", CONTEXT, "How old was Tesla when he died?", (_ans("86"),), "Tesla"),
    ]


TINY_VECTORS = {
    # word: a 4-d vector; neighbours are by cosine
    "school": [1, 0, 0, 0],
    "college": [0.95, 0.1, 0, 0],
    "academy": [0.9, 0.2, 0, 0],
    "morning": [0, 1, 0, 0],
    "evening": [0.1, 0.95, 0, 0],
    "dawn": [0, 0.9, 0.2, 0],
    "village": [0, 0, 1, 0],
    "town": [0, 0.1, 0.95, 0],
    "hamlet": [0, 0, 0.9, 0.3],
    "trees": [0, 0, 0, 1],
    "plants": [0.1, 0, 0, 0.95],
    "bushes": [0, 0.1, 0.1, 0.9],
    "teacher": [0.5, 0.5, 0, 0],
    "tutor": [0.55, 0.45, 0, 0],
    "mountains": [0, 0.5, 0.5, 0],
    "hills": [0, 0.45, 0.55, 0],
    "students": [0.5, 0, 0, 0.5],
    "pupils": [0.45, 0, 0, 0.55],
    "stories": [0, 0, 0.5, 0.5],
    "tales": [0, 0, 0.45, 0.55],
    "tom": [0.3, 0.3, 0.3, 0.1],
    "jim": [0.31, 0.29, 0.3, 0.1],
    "castle": [0.2, 0, 0.7, 0.1],
    "palace": [0.21, 0, 0.69, 0.1],
}
