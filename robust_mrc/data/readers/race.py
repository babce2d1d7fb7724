"""RACE readers: the hub's one-question-a-line layout and the original one-passage-a-file layout.

* ``race_jsonl``: one JSON object a line with ``example_id, article, question, options, answer``
  (the answer a letter "A".."E"). The hub repeats a passage's ``example_id`` for each of its
  questions; such ids get ``-<k>`` (k = 0, 1, ... in file order) so that ids are unique.
* ``race_original``: ``{id, article, questions[], options[][], answers[]}`` per passage, as files
  in a directory tree (the RACE release) or as a single ``{"data": [...]}`` file (ExpMRC).
  Example ids are ``f"{passage_id}-{question_index}"`` (0-based), unless the passage carries a
  ``question_ids`` list (written by :mod:`robust_mrc.data.writers` when the ids do not follow
  that pattern).
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
    id_field,
    keep,
    letter_label,
    parse_json,
    parse_json_lines,
    string_list,
    type_name,
    unique_ids,
)
from robust_mrc.data.readers._files import read_text

RACE_FILE_SUFFIXES = (".txt", ".json")


def example_from_row(ex_id: str, row: Any, check_texts: bool = True) -> tuple[MCExample, list[str]]:
    """An :class:`MCExample` from a hub-layout row (``article, question, options, answer``), and
    the remarks of :func:`check_mc` on it."""
    article = field(row, "article", str)
    question = field(row, "question", str)
    if "options" not in row:
        raise RecordError("missing field: 'options'")
    options = check_options(row["options"])
    if "answer" not in row:
        raise RecordError("missing field: 'answer'")
    label = letter_label(row["answer"], len(options))
    remarks = check_mc(question, options, label)
    example = build(MCExample, check_texts, id=ex_id, passage=article, question=question, options=tuple(options), label=label)
    return example, remarks


class RowRepeats:
    """The hub layout repeats a passage's ``example_id`` on each of its questions; a repeated id is
    a duplicate when it names a different passage, or repeats a whole row (question, options and
    answer: a file concatenated with itself)."""

    def __init__(self) -> None:
        self.passage: dict[str, tuple[str, str]] = {}  # raw id -> (article, first record)
        self.question: dict[tuple, str] = {}

    def problem(self, raw: str | None, record: str, ex: MCExample) -> str | None:
        if raw is None:
            return None
        article, first = self.passage.setdefault(raw, (ex.passage, record))
        if article != ex.passage:
            return f"duplicate example id: {raw!r} is also the id of another passage at {first}"
        earlier = self.question.setdefault((raw, ex.question, ex.options, ex.label), record)
        if earlier != record:
            return f"duplicate record: the same example_id, question, options and answer as {earlier}"
        return None


def iter_race_jsonl(path: Path, text: str, collector: Collector) -> Iterator[MCExample]:
    yield from iter_race_rows(path, parse_json_lines(path, text, collector), collector)


def iter_race_rows(path: Path, rows: list[tuple[int, Any]], collector: Collector) -> Iterator[MCExample]:
    """Hub-layout rows ``(line number, parsed row)``."""
    raw_ids = []
    for _, row in rows:
        raw = row.get("example_id") if isinstance(row, dict) else None
        raw_ids.append(str(raw) if isinstance(raw, (str, int)) and not isinstance(raw, bool) else None)
    repeats = RowRepeats()
    for (lineno, row), ex_id, raw in zip(rows, unique_ids(raw_ids), raw_ids):
        record = f"line {lineno}" if raw is None else f"line {lineno} (example_id {raw})"
        try:
            if ex_id is None:
                id_field(row, "example_id")  # raises the precise reason (missing / wrong type)
            example, remarks = example_from_row(ex_id, row, collector.check_texts)
            problem = repeats.problem(raw, record, example)
            if problem:
                raise RecordError(problem)
        except RecordError as e:
            collector.bad(path, record, e.reason)
            continue
        if keep(collector, path, record, example, remarks):
            yield example


def iter_passages(path: Path, passage: Any, record: str, collector: Collector, default_id: str | None = None) -> Iterator[MCExample]:
    """The questions of one original-layout passage; ``record`` names it in messages."""
    try:
        if default_id is not None and isinstance(passage, dict) and "id" not in passage:
            pid = default_id
        else:
            pid = id_field(passage, "id")
    except RecordError as e:
        collector.bad(path, record, e.reason)
        return
    record = f"{record} (id {pid})".strip() if record else f"id {pid}"
    try:
        article = field(passage, "article", str)
        questions = field(passage, "questions", list, "a list")
        options = field(passage, "options", list, "a list")
        answers = field(passage, "answers", list, "a list")
        if not len(questions) == len(options) == len(answers):
            raise RecordError(f"length mismatch: {len(questions)} questions, {len(options)} option lists, {len(answers)} answers")
        qids = passage.get("question_ids")
        if qids is not None:
            qids = string_list(qids, "question_ids")
            if len(qids) != len(questions):
                raise RecordError(f"length mismatch: {len(qids)} question_ids, {len(questions)} questions")
    except RecordError as e:
        collector.bad(path, record, e.reason)
        return
    for q, (question, opts, answer) in enumerate(zip(questions, options, answers)):
        where = f"{record} question {q}"
        try:
            if not isinstance(question, str):
                raise RecordError(f"wrong type: questions[{q}] is {type_name(question)}, expected a string")
            opts = check_options(opts, f"options[{q}]")
            label = letter_label(answer, len(opts))
            remarks = check_mc(question, opts, label)
            ex_id = qids[q] if qids is not None else f"{pid}-{q}"
            example = build(
                MCExample, collector.check_texts, id=ex_id, passage=article, question=question, options=tuple(opts), label=label
            )
        except RecordError as e:
            collector.bad(path, where, e.reason)
            continue
        if keep(collector, path, where, example, remarks):
            yield example


def _top_level_problem(obj: Any) -> str | None:
    if isinstance(obj, dict) and "data" in obj and "article" not in obj:
        if not isinstance(obj["data"], list):
            return f"not a RACE file: 'data' is {type_name(obj['data'])}, expected a list"
        return None
    if isinstance(obj, dict):
        return None
    return f'not a RACE file: expected a JSON object (a passage or {{"data": [...]}}), got {type_name(obj)}'


def iter_race_original_json(path: Path, obj: Any, collector: Collector, default_id: str | None = None) -> Iterator[MCExample]:
    """A parsed original-layout file: ``{"data": [passages]}`` or a single passage."""
    problem = _top_level_problem(obj)
    if problem:
        raise DataFormatError(path, None, problem)
    if "data" in obj and "article" not in obj:
        for i, passage in enumerate(obj["data"]):
            yield from iter_passages(path, passage, f"data[{i}]", collector)
    else:
        yield from iter_passages(path, obj, "", collector, default_id=default_id)


def race_files(directory: Path) -> list[Path]:
    """The passage files (*.txt, *.json) under ``directory``, recursively, in sorted order."""
    files = [p for p in directory.rglob("*") if p.suffix.lower() in RACE_FILE_SUFFIXES and p.is_file() and not p.name.startswith(".")]
    return sorted(files, key=lambda p: p.relative_to(directory).as_posix())


def iter_race_directory(directory: Path, collector: Collector, max_bytes: int | None = None) -> Iterator[MCExample]:
    files = race_files(directory)
    if not files:
        raise DataFormatError(directory, None, "empty directory: no *.txt or *.json passage files found")
    for file in files:
        # a broken passage file is a bad record of the directory: skipped when not strict
        try:
            obj = parse_json(file, read_text(file, max_bytes))
        except DataFormatError as e:
            collector.bad(file, None if collector.strict else file.name, e.reason)
            continue
        problem = _top_level_problem(obj)
        if problem:
            collector.bad(file, None if collector.strict else file.name, problem)
            continue
        yield from iter_race_original_json(file, obj, collector, default_id=file.name)
