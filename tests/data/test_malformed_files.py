"""Bad data files: duplicate ids, deep nesting, lone surrogates, inflating gzip files,
a format that does not match the file, blank or repeated texts, an all-bad validation file."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest

from robust_mrc.data.errors import DataFormatError
from robust_mrc.data.readers import load_examples
from robust_mrc.data.sources import DataConfigError, load_splits
from tests.data.test_readers import (
    assert_error,
    dialogue,
    passage,
    qa,
    race_row,
    squad_file,
    write_json,
    write_jsonl,
)
from tests.helpers import make_cfg


def raises(path: Path, *parts: str, **kwargs) -> DataFormatError:
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path, **kwargs)
    assert_error(excinfo, path, *parts)
    return excinfo.value


# ----------------------------------------------------------------------------- duplicate ids


def test_duplicate_squad_ids_name_both_records(tmp_path):
    path = write_json(tmp_path / "dev.json", squad_file([qa("q1"), qa("q2"), qa("q1", "mat", 19)]))
    raises(
        path, "data[0].paragraphs[0].qas[2] (id q1)", "duplicate example id: 'q1'", "also the id of data[0].paragraphs[0].qas[0] (id q1)"
    )
    examples = load_examples(path, strict=False)
    assert [e.id for e in examples] == ["q1", "q2"] and examples[0].answers[0].text == "cat"  # the first kept
    assert dict(examples.skipped.skipped) == {"duplicate example id": 1}


def test_duplicate_passage_and_dialogue_ids(tmp_path):
    race = write_json(tmp_path / "race.json", {"data": [passage("p1", 2), passage("p2", 1), passage("p1", 1)]})
    raises(race, "data[2] (id p1) question 0", "duplicate example id: 'p1-0'", "data[0] (id p1) question 0")
    assert [e.id for e in load_examples(race, strict=False)] == ["p1-0", "p1-1", "p2-0"]
    dream = write_json(tmp_path / "dream.json", [dialogue("7-1", 1), dialogue("7-1", 2)])
    raises(dream, "[1] (id 7-1) question 0", "duplicate example id: '7-1-0'", "[0] (id 7-1) question 0")
    examples = load_examples(dream, strict=False)
    assert [e.id for e in examples] == ["7-1-0", "7-1-1"] and examples.skipped.total == 1


def test_duplicate_ids_across_files_of_a_race_directory(tmp_path):
    root = tmp_path / "RACE"
    (root / "high").mkdir(parents=True)
    (root / "middle").mkdir()
    write_json(root / "high" / "1.txt", passage("same.txt", 1))
    write_json(root / "middle" / "1.txt", passage("same.txt", 1))
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(root)
    assert_error(excinfo, root / "middle" / "1.txt", "duplicate example id: 'same.txt-0'", str(root / "high" / "1.txt"))
    assert excinfo.value.record == "id same.txt question 0"
    assert len(load_examples(root, strict=False)) == 1


def test_race_jsonl_repeated_ids_are_legal_until_they_name_another_passage(tmp_path):
    ok = write_jsonl(tmp_path / "ok.jsonl", [race_row("m1.txt", "A"), race_row("m1.txt", "B")])
    assert [e.id for e in load_examples(ok)] == ["m1.txt-0", "m1.txt-1"]  # the hub layout
    other = write_jsonl(tmp_path / "other.jsonl", [race_row("m1.txt", "A"), race_row("m1.txt", "B", article="Another text.")])
    raises(other, "line 2 (example_id m1.txt)", "duplicate example id: 'm1.txt' is also the id of another passage at line 1")
    twice = write_jsonl(tmp_path / "twice.jsonl", [race_row("m1.txt", "A"), race_row("m2.txt"), race_row("m1.txt", "A")])
    raises(twice, "line 3 (example_id m1.txt)", "duplicate record:", "as line 1 (example_id m1.txt)")
    examples = load_examples(twice, strict=False)
    assert len(examples) == 2 and dict(examples.skipped.skipped) == {"duplicate record": 1}


def test_hub_duplicate_ids(monkeypatch):
    import datasets

    row = {"id": "q1", "title": "t", "context": "The cat sat.", "question": "Who?", "answers": {"text": ["cat"], "answer_start": [4]}}
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: datasets.Dataset.from_list([row, row]))
    with pytest.raises(DataFormatError, match=r"row 1 \(id q1\): duplicate example id: 'q1' is also the id of row 0"):
        load_examples("rajpurkar/squad", "hub_squad", split="validation")
    assert len(load_examples("rajpurkar/squad", "hub_squad", split="validation", strict=False)) == 1


# ----------------------------------------------------------------------------- hostile files


@pytest.mark.parametrize("fmt", ["auto", "squad", "dream", "race_original"])
def test_deeply_nested_json_is_a_format_error(tmp_path, fmt):
    path = tmp_path / "deep.json"
    path.write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    raises(path, "invalid JSON: nested too deeply", format=fmt)
    lines = write_jsonl(tmp_path / "deep.jsonl", [race_row("ok.txt"), "[" * 100_000 + "]" * 100_000])
    raises(lines, "line 2", "nested too deeply")
    assert len(load_examples(lines, strict=False)) == 1


def test_lone_surrogates_are_refused_with_the_field(tmp_path):
    path = tmp_path / "dev.jsonl"
    good = json.dumps(race_row("ok.txt", question="Smile \U0001f600?"))  # a valid pair: \ud83d\ude00
    assert "\\ud83d\\ude00" in good
    bad = json.dumps(race_row("bad.txt")).replace("What does", "What \\ud800does")
    path.write_text(good + "\n" + bad + "\n")
    raises(path, "line 2 (example_id bad.txt)", "lone surrogate: question has a lone UTF-16 surrogate \\ud800 at character 5")
    examples = load_examples(path, strict=False)
    assert [e.question for e in examples] == ["Smile \U0001f600?"] and dict(examples.skipped.skipped) == {"lone surrogate": 1}
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps(squad_file([qa()])).replace("The cat sat", "The cat\\udc00 sat"))
    raises(squad, "data[0].paragraphs[0].qas[0] (id q1)", "lone surrogate: context")


def test_gzip_that_inflates_past_the_cap(tmp_path, monkeypatch):
    payload = json.dumps(squad_file([qa()], title="x" * 200_000)).encode()
    bomb = tmp_path / "dev.json.gz"
    bomb.write_bytes(gzip.compress(payload))
    assert bomb.stat().st_size < 2_000  # compresses ~100x
    raises(bomb, "file too large: it inflates to more than 100,000 bytes", "+data.max_bytes=", max_bytes=100_000)
    monkeypatch.setenv("ROBUST_MRC_MAX_DATA_BYTES", "64KiB")
    raises(bomb, "more than 65,536 bytes", "ROBUST_MRC_MAX_DATA_BYTES")
    assert len(load_examples(bomb, max_bytes="1MiB")) == 1  # the argument wins over the environment
    plain = tmp_path / "dev.json"
    plain.write_bytes(payload)
    raises(plain, f"file too large: it is {len(payload):,} bytes, more than 65,536 bytes")
    monkeypatch.delenv("ROBUST_MRC_MAX_DATA_BYTES")
    assert len(load_examples(bomb)) == 1  # the default cap is generous
    cfg = make_cfg("task=span", "data=squad_local", f"data.train={bomb}", "data.validation=null", "+data.max_bytes=10000")
    with pytest.raises(DataFormatError, match="inflates to more than 10,000 bytes"):
        load_splits(cfg.data, "span")


@pytest.mark.parametrize(
    "fmt, content, found",
    [
        ("dream", "squad", "format mismatch: format=dream was asked, but the file holds SQuAD articles"),
        ("squad", "jsonl", "format=squad was asked, but the file holds RACE rows"),
        ("race_original", "dream", "format=race_original was asked, but the file holds DREAM dialogues"),
        ("squad", "race", "format=squad was asked, but the file holds RACE passages"),
    ],
)
def test_a_format_that_does_not_match_the_file(tmp_path, fmt, content, found):
    path = {
        "squad": lambda: write_json(tmp_path / "x.json", squad_file([qa()])),
        "jsonl": lambda: write_jsonl(tmp_path / "x.data", [race_row("a"), race_row("b")]),
        "dream": lambda: write_json(tmp_path / "x.json", [dialogue()]),
        "race": lambda: write_json(tmp_path / "x.json", {"data": [passage()]}),
    }[content]()
    error = raises(path, found, "(data.format=", "or format=auto", format=fmt)
    assert error.record is None


# ----------------------------------------------------------------------------- blank and repeated texts


@pytest.mark.parametrize(
    "row, reason",
    [
        (race_row("b.txt", question="  "), "blank question: the question is empty"),
        (race_row("b.txt", options=("a", " ", "c", "d"), answer="B"), "blank answer: the correct option B is empty"),
    ],
)
def test_blank_question_or_answer_option(tmp_path, row, reason):
    path = write_jsonl(tmp_path / "dev.jsonl", [race_row("ok.txt"), row])
    raises(path, "line 2 (example_id b.txt)", reason)
    examples = load_examples(path, strict=False)
    assert len(examples) == 1 and examples.skipped.total == 1


def test_blank_question_in_dream_and_squad(tmp_path):
    d = dialogue("3-1", 2)
    d[1][1]["question"] = ""
    dream = write_json(tmp_path / "dream.json", [d])
    raises(dream, "[0] (id 3-1) question 1", "blank question:")
    squad = write_json(tmp_path / "squad.json", squad_file([qa("q1"), qa("q2", question="\n")]))
    raises(squad, "qas[1] (id q2)", "blank question:")


def test_blank_wrong_options_and_repeated_options_are_kept_with_a_remark(tmp_path, caplog):
    path = write_jsonl(
        tmp_path / "dev.jsonl",
        [
            race_row("r.txt", options=("on 2", "on 22", "on 22", "on 2"), answer="B"),  # as RACE-M middle8073.txt
            race_row("e.txt", options=(".", "", "", ""), answer="A"),  # as ExpMRC 46742dc7-1
        ],
    )
    with caplog.at_level(logging.WARNING):
        examples = load_examples(path)
    assert [e.options for e in examples] == [("on 2", "on 22", "on 22", "on 2"), (".", "", "", "")]
    assert dict(examples.skipped.notes) == {"repeated option": 2, "blank option": 1}
    assert examples.skipped.total == 0
    assert "options B and C are both 'on 22' (one of them the answer" in caplog.text
    assert "line 2 (example_id e.txt): blank option: option(s) B, C, D empty" in caplog.text


def test_squad_v1_question_without_answers(tmp_path):
    path = write_json(tmp_path / "dev-v1.1.json", squad_file([qa("q1"), {"id": "q2", "question": "Dog?", "answers": []}]))
    raises(path, "qas[1] (id q2)", "no answers: the 'answers' list is empty and the question is not marked is_impossible")
    examples = load_examples(path, strict=False)
    assert [e.id for e in examples] == ["q1"] and dict(examples.skipped.skipped) == {"no answers": 1}
    v2 = write_json(tmp_path / "v2.json", squad_file([{"id": "q2", "question": "Dog?", "answers": [], "is_impossible": True}]))
    assert load_examples(v2)[0].is_impossible


# ----------------------------------------------------------------------------- a split of bad records


def test_an_all_bad_validation_file_is_not_replaced_by_a_holdout(tmp_path):
    train = write_jsonl(tmp_path / "train.jsonl", [race_row(f"t{i}.txt") for i in range(10)])
    dev = write_jsonl(tmp_path / "dev.jsonl", [race_row("d1.txt", answer="Z"), race_row("d2.txt", answer="Q"), "{"])
    cfg = make_cfg("data=race_local", f"data.train={train}", f"data.validation={dev}", "data.strict=false")
    with pytest.raises(DataConfigError) as excinfo:
        load_splits(cfg.data, "mc")
    msg = str(excinfo.value)
    assert f"data.validation={dev}: all 3 record(s) were skipped as bad" in msg
    assert "(2 x answer out of range, 1 x invalid JSON); first: " in msg and "record line 3: invalid JSON" in msg
    assert "set data.validation=null to hold out part of train instead" in msg and "pass strict=false" not in msg
    dev.write_text(json.dumps(race_row("d1.txt")) + "\n" + json.dumps(race_row("d2.txt", answer="Z")) + "\n")
    splits = load_splits(cfg.data, "mc")  # one good record: a validation split of one
    assert [e.id for e in splits["validation"]] == ["d1.txt"] and len(splits["train"]) == 10


# ----------------------------------------------------------------------------- the attacks command's output


def test_the_attacks_command_refuses_to_write_onto_its_input_or_a_directory(tmp_path, monkeypatch):
    from robust_mrc.cli.attacks import apply

    data = write_jsonl(tmp_path / "dev.jsonl", [race_row("a.txt"), race_row("b.txt")])
    before = data.read_bytes()
    monkeypatch.chdir(tmp_path)
    for out in (str(data), "dev.jsonl", f"{tmp_path}/./sub/../dev.jsonl"):
        with pytest.raises(SystemExit) as excinfo:
            apply({"attack": "charswap", "data": str(data), "out": out})
        assert str(excinfo.value) == (f"out={out} is the input file {data}: writing it would destroy the input; give another file name")
    assert data.read_bytes() == before
    with pytest.raises(SystemExit) as excinfo:
        apply({"attack": "charswap", "data": str(data), "out": str(tmp_path)})
    assert str(excinfo.value).startswith(f"out={tmp_path} is a directory: give a file name, e.g. out=")
    stats = apply({"attack": "charswap", "data": str(data), "out": str(tmp_path / "adv.jsonl")})
    assert stats["examples"] == 2 and (tmp_path / "adv.jsonl").is_file()
