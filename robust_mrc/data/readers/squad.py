"""SQuAD reader (v1.1 and v2.0 layout, plain or gzipped), also used for DuReader_robust.

One :class:`SpanExample` per ``qa``: ``id = qa["id"]``, the article's ``title`` kept. An answer
whose ``answer_start`` is -1, missing, or not pointing at the answer text gets its offset
recovered by searching the context: the occurrence nearest the given start when that is >= 0,
else the first. v2.0 ``is_impossible`` questions get ``answers=()``. Answers repeated with the
same text and start are kept once, in order. A question with an empty ``answers`` list that is not
marked ``is_impossible`` (a SQuAD v1.1 question with no answers) is a bad record, and so is a
blank question; an example id used twice is a bad record naming both places.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from robust_mrc.data.errors import DataFormatError
from robust_mrc.data.examples import Answer, SpanExample
from robust_mrc.data.readers._common import (
    Collector,
    RecordError,
    build,
    check_blank,
    field,
    id_field,
    keep,
    type_name,
)


def locate(context: str, text: str, start: int) -> int:
    """Where ``text`` starts in ``context``: ``start`` if it is right, else the nearest occurrence
    to ``start`` (the first one when ``start`` < 0); -1 when ``text`` does not occur."""
    if start >= 0 and context.startswith(text, start):
        return start
    pos = context.find(text)
    if pos < 0 or start < 0:
        return pos
    best = pos
    while pos >= 0:
        if abs(pos - start) < abs(best - start):
            best = pos
        if pos > start:
            break
        pos = context.find(text, pos + 1)
    return best


def parse_answers(raw_answers: Any, context: str) -> tuple[Answer, ...]:
    if not isinstance(raw_answers, list):
        raise RecordError(f"wrong type: 'answers' is {type_name(raw_answers)}, expected a list")
    answers: list[Answer] = []
    seen: set[tuple[str, int]] = set()
    for j, raw in enumerate(raw_answers):
        if not isinstance(raw, dict):
            raise RecordError(f"wrong type: answers[{j}] is {type_name(raw)}, expected an object")
        text = field(raw, "text", str)
        start = raw.get("answer_start", -1)
        if not isinstance(start, int) or isinstance(start, bool):
            raise RecordError(f"wrong type: answers[{j}].answer_start is {type_name(start)}, expected an integer")
        if not text:
            continue  # DuReader_robust has a few "" among other answers; all-empty is an error below
        pos = locate(context, text, start)
        if pos < 0 and text.strip() and text.strip() != text:
            text = text.strip()
            pos = locate(context, text, start)
        if pos < 0:
            shown = text if len(text) <= 60 else text[:57] + "..."
            raise RecordError(f"answer not in context: answers[{j}] {shown!r} does not occur in the context")
        key = (text, pos)
        if key not in seen:
            seen.add(key)
            answers.append(Answer(text, pos))
    if raw_answers and not answers:
        raise RecordError("empty answer: every answer text is empty")
    return tuple(answers)


def example_from_qa(qa: Any, context: str, title: str, check_texts: bool = True) -> SpanExample:
    """A :class:`SpanExample` from a SQuAD ``qa`` object (``id, question, answers[, is_impossible]``)."""
    qa_id = id_field(qa, "id")
    question = field(qa, "question", str)
    check_blank(question, "question")
    if qa.get("is_impossible"):
        answers: tuple[Answer, ...] = ()
    else:
        if "answers" not in qa:
            raise RecordError("missing field: 'answers'")
        answers = parse_answers(qa["answers"], context)
        if not answers:
            raise RecordError(
                "no answers: the 'answers' list is empty and the question is not marked "
                'is_impossible (SQuAD v2.0 marks an unanswerable question with "is_impossible": true)'
            )
    return build(SpanExample, check_texts, id=qa_id, context=context, question=question, answers=answers, title=title)


def iter_squad(path: Path, obj: Any, collector: Collector) -> Iterator[SpanExample]:
    if not isinstance(obj, dict) or not isinstance(obj.get("data"), list):
        got = type_name(obj) if not isinstance(obj, dict) else f"'data' {type_name(obj.get('data'))}"
        raise DataFormatError(path, None, f"not a SQuAD file: expected an object with a 'data' list, got {got}")
    for a, article in enumerate(obj["data"]):
        where_a = f"data[{a}]"
        try:
            paragraphs = field(article, "paragraphs", list, "a list")
            title = article.get("title") or ""
            if not isinstance(title, str):
                raise RecordError(f"wrong type: 'title' is {type_name(title)}, expected a string")
        except RecordError as e:
            collector.bad(path, where_a, e.reason)
            continue
        for p, paragraph in enumerate(paragraphs):
            where_p = f"{where_a}.paragraphs[{p}]"
            try:
                context = field(paragraph, "context", str)
                qas = field(paragraph, "qas", list, "a list")
            except RecordError as e:
                collector.bad(path, where_p, e.reason)
                continue
            for q, qa in enumerate(qas):
                qa_id = qa.get("id") if isinstance(qa, dict) else None
                where = f"{where_p}.qas[{q}]" + (f" (id {qa_id})" if qa_id is not None else "")
                try:
                    example = example_from_qa(qa, context, title, collector.check_texts)
                except RecordError as e:
                    collector.bad(path, where, e.reason)
                    continue
                if keep(collector, path, where, example):
                    yield example
