"""Helpers of the span-QA attacks: protected answer spans or sentences, answer offsets after edits."""

from __future__ import annotations

from robust_mrc.attacks.editing import insert_at, sentence_boundaries, sentence_spans
from robust_mrc.data.examples import Answer, SpanExample


def answer_sentences(ex: SpanExample) -> list[tuple[int, int]]:
    """The sentence spans that hold (part of) a gold answer: attacks never touch them."""
    spans = sentence_spans(ex.context)
    out = []
    for s, e in spans:
        if any(a.start < e and a.end > s for a in ex.answers) or any(a.start == s for a in ex.answers if a.end == a.start):
            out.append((s, e))
    # an answer outside every sentence span (e.g. spanning white space) protects itself
    for a in ex.answers:
        if not any(s <= a.start and a.end <= e for s, e in out):
            out.append((a.start, max(a.end, a.start + 1)))
    return sorted(out)


def answer_spans(ex: SpanExample) -> list[tuple[int, int]]:
    """The character spans of the gold answers (an empty answer protects the character it points at)."""
    return sorted({(a.start, max(a.end, a.start + 1)) for a in ex.answers})


SPARE = ("span", "sentence", "none")


def spared_regions(ex: SpanExample, spare: str, attack: str) -> list[tuple[int, int]]:
    """What a noise attack leaves alone: the gold answer spans (``spare="span"``), the sentences
    that hold them (``spare="sentence"``) or nothing (``spare="none"``: the answers are noised too)."""
    if spare == "span":
        return answer_spans(ex)
    if spare == "sentence":
        return answer_sentences(ex)
    if spare == "none":
        return []
    raise ValueError(f"attack {attack!r}: spare must be one of {', '.join(SPARE)}, got {spare!r}")


def protector(ex: SpanExample, spans: list[tuple[int, int]] | None = None):
    """``protect(s, e)``: True when [s, e) overlaps a protected span (default: the answer sentences)."""
    spans = answer_sentences(ex) if spans is None else spans

    def protect(s: int, e: int) -> bool:
        return any(s < pe and e > ps for ps, pe in spans)

    return protect


def straddles_an_answer(ex: SpanExample):
    """``straddles(s, e)``: True when [s, e) holds an answer boundary strictly inside it (a word
    that is only partly in an answer: replacing it would cut the answer)."""
    bounds = {b for a in ex.answers if a.text for b in (a.start, a.end)}

    def straddles(s: int, e: int) -> bool:
        return any(s < b < e for b in bounds)

    return straddles


def remap_answers(answers, edits, context: str) -> tuple[Answer, ...]:
    """Answers after edits (start, end, delta, in the original text's coordinates) that lie wholly
    outside or wholly inside each of them: the start moves by the edits before it, the end by those
    before it too, and the text is what the new ``context`` holds there (unchanged when every edit
    lies outside the answer; the noised text when the answer was noised with the rest)."""
    out = []
    for a in answers:
        start = a.start + sum(d for s, e, d in edits if e <= a.start)
        if not a.text:
            out.append(Answer("", start))
            continue
        end = a.end + sum(d for s, e, d in edits if e <= a.end)
        out.append(Answer(context[start:end], start))
    return tuple(out)


def contains_answer(sentence: str, ex: SpanExample) -> bool:
    low = sentence.lower()
    return any(a.text.strip() and a.text.strip().lower() in low for a in ex.answers)


def insertion_point(ex: SpanExample, position: str, rng) -> int:
    """Where to insert: "end", "start" or a "random" sentence boundary not inside an answer."""
    if position == "end":
        return len(ex.context)
    if position == "start":
        return 0
    if position == "random":
        bounds = [b for b in sentence_boundaries(ex.context) if not any(a.start < b < a.end for a in ex.answers)]
        return rng.choice(bounds or [len(ex.context)])
    raise ValueError(f"position must be 'end', 'start' or 'random', got {position!r}")


def insert_sentence(ex: SpanExample, sentence: str, pos: int, attack: str, detail: str) -> SpanExample:
    """The example with ``sentence`` inserted at ``pos``; every answer offset moved with it."""
    context, at, shift = insert_at(ex.context, pos, sentence)
    answers = tuple(Answer(a.text, a.start + shift if a.start >= pos else a.start) for a in ex.answers)
    if pos >= len(ex.context.rstrip()) and pos > 0:
        answers = tuple(Answer(a.text, a.start) for a in ex.answers)  # appended: nothing moves
    return ex.replace(attack=attack, detail=detail, context=context, answers=answers)
