"""Examples as a Hugging Face ``datasets`` dataset (robust_mrc.export.hf_dataset) and read back
(format hf_dataset): every field back, from the save_to_disk directory, a split's directory and
the parquet file; the checks of an attacked set; bad input named in one line."""

from __future__ import annotations

import hashlib
import json

import pytest

from robust_mrc.data.errors import DataFormatError
from robust_mrc.data.examples import Answer, Edit, MCExample, SpanExample
from robust_mrc.data.readers import detect_format, load_examples
from robust_mrc.data.sources import load_splits
from robust_mrc.export.hf_dataset import (
    CARD,
    DatasetExportError,
    check_guarantees,
    example_row,
    export_problem,
    parquet_name,
    write_dataset,
)
from tests.helpers import make_cfg

PASSAGE = "Tom lives in a village.\nHe walks to school. Ça va? 你好。"
CONTEXT = "Nikola Tesla was born in 1856 in Smiljan. He died in 1943 in New York City."

MC = [
    MCExample("d1-0", PASSAGE, "Where does Tom live?", ("In a village.", "In a city."), 0, (Edit("charswap", "1 question word swapped"),)),
    MCExample("d1-1", PASSAGE, "How?", ("a", "b", "c", "d", "e"), 4),
    MCExample("odd id", "Another passage.", "Which?", ("x", "y", "x"), 1, (Edit("a", ""), Edit("b", "two edits"))),
]
SPAN = [
    SpanExample("s1", CONTEXT, "When was he born?", (Answer("1856", 25),), "Tesla", (Edit("char_noise", "3 characters"),)),
    SpanExample(
        "s2", CONTEXT, "Where did he die?", (Answer("New York City", CONTEXT.index("New")), Answer("New York", CONTEXT.index("New")))
    ),
    SpanExample("s3", CONTEXT, "Who built the moon?", ()),  # unanswerable (SQuAD v2.0)
]


def _card(rows, sha256):
    return {CARD: f"# {len(rows)} rows, {sha256}\n"}


def _export(examples, out, split="test"):
    return write_dataset(examples, out, split=split, files=_card)


def _same(a, b):
    assert list(a) == list(b) and [x.edits for x in a] == [x.edits for x in b]


@pytest.mark.parametrize("examples", [MC, SPAN], ids=["mc", "span"])
def test_written_examples_read_back_equal_from_every_form(tmp_path, examples):
    out = _export(examples, tmp_path / "ds")
    parquet = out / parquet_name("test")
    for source in (out, out / "test", parquet):
        assert detect_format(source) == "hf_dataset"
        back = load_examples(source)
        assert back.format == "hf_dataset"
        _same(back, examples)
    sha256 = hashlib.sha256(parquet.read_bytes()).hexdigest()
    assert (out / CARD).read_text() == f"# 3 rows, {sha256}\n" and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    again = _export(examples, tmp_path / "again")  # the same bytes each time
    for name in (parquet_name("test"), "test/data-00000-of-00001.arrow"):
        assert (again / name).read_bytes() == (out / name).read_bytes()
    import datasets

    ds = datasets.load_from_disk(str(out))["test"]  # the layouts people use: RACE / SQuAD hub columns
    assert ds.to_list() == [example_row(ex) for ex in examples]
    key = "example_id" if examples is MC else "id"
    assert ds.column_names[0] == key and ds.features["edits"].feature["attack"].dtype == "string"


def test_a_second_export_replaces_the_first_and_other_directories_are_refused(tmp_path):
    out = _export(MC, tmp_path / "ds")
    _export(MC[:1], out)
    assert len(load_examples(out)) == 1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    assert "holds other files (notes.txt)" in export_problem(tmp_path / "other", [])
    (out / ".git").mkdir()  # a clone of a hub repository is not replaced
    assert "holds other files (.git)" in export_problem(out, [])
    with pytest.raises(DatasetExportError, match="holds other files"):
        _export(MC, out)
    assert "is a file" in export_problem(tmp_path / "other" / "notes.txt", [])
    assert "destroy the input" in export_problem(tmp_path, [tmp_path / "ds" / "test"])
    (out / ".git").rmdir()
    assert export_problem(out, [tmp_path / "in.json"]) is None and export_problem(tmp_path / "new", []) is None


def test_a_file_that_would_not_read_back_is_never_moved_into_place(tmp_path):
    with pytest.raises(DatasetExportError, match="duplicate example id 'd1-0'"):
        _export([MC[0], MC[0]], tmp_path / "ds")

    def broken(rows, sha256):
        raise DatasetExportError("no card")

    with pytest.raises(DatasetExportError, match="no card"):
        write_dataset(MC, tmp_path / "ds", files=broken)
    assert list(tmp_path.iterdir()) == []


def test_data_option_reads_a_split_of_a_dataset(tmp_path):
    out = _export(MC, tmp_path / "ds")
    splits = load_splits(make_cfg("data=hf_local", f"data.test={out}", config_name="eval").data, "mc")
    _same(splits["test"], MC)
    assert splits["train"] == [] and splits["validation"] == []
    span = load_splits(make_cfg("task=span", "data=hf_local", f"data.test={_export(SPAN, tmp_path / 's')}").data, "span")
    _same(span["test"], SPAN)


def test_a_dataset_of_several_splits_gives_the_one_asked(tmp_path):
    import datasets

    out = tmp_path / "two"
    datasets.DatasetDict(
        {name: datasets.Dataset.from_list([example_row(ex) for ex in part]) for name, part in (("train", MC[:2]), ("test", MC[2:]))}
    ).save_to_disk(str(out))
    assert [ex.id for ex in load_examples(out, split="test")] == ["odd id"]
    splits = load_splits(make_cfg("data=hf_local", f"data.test={out}", f"data.train={out}", config_name="eval").data, "mc")
    assert [ex.id for ex in splits["train"]] == ["d1-0", "d1-1"]
    with pytest.raises(DataFormatError, match=r"two: holds the splits \['train', 'test'\] and none was named: give one split's directory"):
        load_examples(out)


def test_bad_inputs_are_one_line_errors_naming_the_path(tmp_path):
    import datasets

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("x")
    with pytest.raises(DataFormatError, match=r"plain: not a Hugging Face datasets directory: no dataset_dict.json or state.json"):
        load_examples(plain, "hf_dataset")
    odd = tmp_path / "odd.parquet"
    datasets.Dataset.from_list([{"text": "hello", "label": 1}]).to_parquet(str(odd))
    with pytest.raises(
        DataFormatError,
        match=r"odd.parquet: missing columns: the RACE hub layout .* lacks \['example_id', .*the columns are \['text', 'label'\]",
    ):
        load_examples(odd)
    squadish = tmp_path / "squadish"
    datasets.Dataset.from_list([{"id": "1", "context": "c", "question": "q"}]).save_to_disk(str(squadish))
    with pytest.raises(DataFormatError, match=r"squadish: missing columns: .* the SQuAD hub layout .* lacks \['answers'\]"):
        load_examples(squadish)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(DataFormatError, match="broken.parquet: not a readable parquet file"):
        load_examples(broken)
    with pytest.raises(DataFormatError, match="nope.parquet: file not found"):
        load_examples(tmp_path / "nope.parquet")
    out = _export(MC, tmp_path / "ds")
    with pytest.raises(DataFormatError, match="format mismatch: format=race_jsonl was asked, but it is a Hugging Face datasets dataset"):
        load_examples(out / parquet_name("test"), "race_jsonl")
    with pytest.raises(DataFormatError) as info:
        load_examples(odd)
    assert "\n" not in str(info.value)


def test_a_bad_row_is_a_bad_record_and_strict_false_skips_it(tmp_path):
    import datasets

    rows = [example_row(ex) for ex in MC]
    rows[1] = {**rows[1], "answer": "Q"}
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_list(rows).to_parquet(str(path))
    with pytest.raises(DataFormatError, match=r"rows.parquet, record row 1 \(example_id d1-1\): answer out of range"):
        load_examples(path)
    back = load_examples(path, strict=False)
    assert [ex.id for ex in back] == ["d1-0", "odd id"] and back.skipped.total == 1


@pytest.mark.parametrize(
    "answers, message",
    [
        ({"text": "Denver Broncos", "answer_start": [0]}, r"'answers.text' is str, expected a list of str"),
        ([{"text": "Denver Broncos", "answer_start": 0}], r"'answers' is list, expected \{text: \[...\], answer_start: \[...\]\}"),
        ({"text": ["Denver Broncos", "Broncos"], "answer_start": [0]}, r"'answers' holds 2 texts and 1 answer_start values"),
        ({"text": ["Denver Broncos"], "answer_start": ["0"]}, r"'answers.answer_start' holds '0' \(str\), expected a list of int"),
    ],
)
def test_squad_rows_whose_answers_have_another_shape_are_bad_records(tmp_path, answers, message):
    """A string ``answers.text`` was read letter by letter (gold "Denver Broncos" scored as "D"); a list
    of answer objects (the SQuAD file layout) ended in an AttributeError."""
    import datasets

    row = {"id": "q1", "title": "t", "context": "Denver Broncos won.", "question": "Who won?", "answers": answers}
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_list([row]).to_parquet(str(path))
    with pytest.raises(DataFormatError, match=rf"rows.parquet, record row 0 \(id q1\): (wrong type: )?{message}"):
        load_examples(path)


def test_checks_of_an_attacked_set_hold_or_name_the_row():
    attacked = [MC[0].replace(options=("A village.", "In a city."))]
    with pytest.raises(DatasetExportError, match=r"row 'd1-0': the labelled option 'A village.' is not the clean answer 'In a village.'"):
        check_guarantees(MC[:1], [example_row(ex) for ex in attacked], "mc")
    added = MC[0].replace(options=("Far away.", "In a village.", "In a city."), label=1)
    checks = check_guarantees(MC[:1], [example_row(added)], "mc")
    assert [(c["held"], c["of"]) for c in checks] == [(1, 1), (1, 1), (1, 1), (0, 1)] and checks[2]["note"] == "1 with one more"
    rows = [example_row(ex) for ex in SPAN]
    checks = check_guarantees(SPAN, rows, "span")
    assert checks[1]["held"] == checks[1]["of"] == 3 and all(c["held"] == c["of"] for c in checks)
    rows[0] = {**rows[0], "answers": {"text": ["1856"], "answer_start": [26]}}
    with pytest.raises(DatasetExportError, match=r"row 's1': the answer '1856' is not at its answer_start 26"):
        check_guarantees(SPAN, rows, "span")
    with pytest.raises(DatasetExportError, match="stands where the clean example 's1' is"):
        check_guarantees(SPAN, [example_row(ex) for ex in reversed(SPAN)], "span")
    assert json.dumps(checks)  # plain data, for stats.json


def test_a_data_file_without_questions_is_named_not_a_traceback_later(tmp_path):
    import datasets

    row = {"id": "q1", "title": "t", "context": "c d", "question": "q?", "answers": {"text": ["c"], "answer_start": [0]}}
    empty = tmp_path / "empty.parquet"
    datasets.Dataset.from_list([row]).select([]).to_parquet(str(empty))
    with pytest.raises(DataFormatError, match=r"empty.parquet: no examples: the file holds no questions"):
        load_examples(empty)
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n")
    with pytest.raises(DataFormatError, match=r"blank.jsonl: empty file: no records"):
        load_examples(blank)


def test_a_parquet_file_is_capped_by_what_it_decodes_to_not_its_size_on_disk(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    article = "word " * 20_000  # 100 KB, the same on every row: dictionary-encoded, the file stays small
    n = 200
    table = pa.table(
        {
            "example_id": [f"p{i}.txt" for i in range(n)],
            "article": [article] * n,
            "question": ["Who?"] * n,
            "options": [["a", "b", "c", "d"]] * n,
            "answer": ["A"] * n,
        }
    )
    path = tmp_path / "bomb.parquet"
    pq.write_table(table, path, use_dictionary=True, compression="zstd")
    assert path.stat().st_size < 1_000_000 < n * len(article)
    with pytest.raises(DataFormatError, match=r"bomb.parquet: too large: it decodes to more than 1,000,000 bytes \(a [\d,]+-byte file\)"):
        load_examples(path, max_bytes=1_000_000)
    assert len(load_examples(path, max_bytes=100_000_000)) == n


def test_a_parquet_example_id_on_two_passages_is_refused_as_in_jsonl(tmp_path):
    import datasets

    rows = [example_row(ex) for ex in MC]
    rows[1] = {**rows[1], "example_id": rows[0]["example_id"], "article": rows[0]["article"] + " Another passage."}
    path = tmp_path / "twice.parquet"
    datasets.Dataset.from_list(rows).to_parquet(str(path))
    with pytest.raises(DataFormatError, match=r"twice.parquet, record row 1 .*: duplicate example id: .* is also the id of another"):
        load_examples(path)
