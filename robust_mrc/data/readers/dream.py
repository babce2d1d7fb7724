"""DREAM reader: dialogue-based multiple choice.

The file is a JSON list of ``[dialogue turns[], [{question, choice[], answer}], dialogue_id]``.
The passage is the turns joined by newlines; the label is the index of the choice equal to the
answer text (both stripped); example ids are ``f"{dialogue_id}-{question_index}"`` (0-based),
unless a question carries its own ``id`` (written by :mod:`robust_mrc.data.writers` when the ids
do not follow that pattern).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from robust_mrc.data.errors import DataFormatError
from robust_mrc.data.examples import MCExample
from robust_mrc.data.readers._common import (
    Collector,
    RecordError,
    build,
    check_mc,
    check_options,
    field,
    keep,
    string_list,
    type_name,
)


def answer_label(choices: list[str], answer: str) -> int:
    """The index of the choice equal to ``answer`` (after strip); a :class:`RecordError` if none or several."""
    wanted = answer.strip()
    matches = [i for i, c in enumerate(choices) if c.strip() == wanted]
    if not matches:
        raise RecordError(f"answer not among choices: {answer!r} is not one of {choices!r}")
    if len(matches) > 1:
        raise RecordError(f"ambiguous answer: {answer!r} matches choices {matches}")
    return matches[0]


def iter_dream(path: Path, obj: Any, collector: Collector) -> Iterator[MCExample]:
    if not isinstance(obj, list):
        raise DataFormatError(path, None, f"not a DREAM file: expected a JSON list of [turns, questions, id], got {type_name(obj)}")
    for i, item in enumerate(obj):
        record = f"[{i}]"
        try:
            if not isinstance(item, list) or len(item) != 3:
                got = f"a list of {len(item)}" if isinstance(item, list) else type_name(item)
                raise RecordError(f"wrong type: expected [turns, questions, id], got {got}")
            turns, questions, dialogue_id = item
            if not isinstance(dialogue_id, (str, int)) or isinstance(dialogue_id, bool):
                raise RecordError(f"wrong type: dialogue id is {type_name(dialogue_id)}, expected a string")
            dialogue_id = str(dialogue_id)
            record = f"[{i}] (id {dialogue_id})"
            turns = string_list(turns, "turns")
            if not isinstance(questions, list):
                raise RecordError(f"wrong type: questions is {type_name(questions)}, expected a list")
        except RecordError as e:
            collector.bad(path, record, e.reason)
            continue
        passage = "\n".join(turns)
        for q, entry in enumerate(questions):
            where = f"{record} question {q}"
            try:
                question = field(entry, "question", str)
                choices = check_options(field(entry, "choice", list, "a list"), "choice")
                label = answer_label(choices, field(entry, "answer", str))
                remarks = check_mc(question, choices, label)
                ex_id = field(entry, "id", str) if "id" in entry else f"{dialogue_id}-{q}"
                example = build(
                    MCExample, collector.check_texts, id=ex_id, passage=passage, question=question, options=tuple(choices), label=label
                )
            except RecordError as e:
                collector.bad(path, where, e.reason)
                continue
            if keep(collector, path, where, example, remarks):
                yield example
