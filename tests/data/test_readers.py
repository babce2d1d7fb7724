"""Readers and writers: good files, every kind of bad record, skipping, round trips, real data."""

from __future__ import annotations

import gzip
import json
import logging
import os
import time
from pathlib import Path

import pytest

from robust_mrc.data.errors import DataFormatError, HubUnavailableError
from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.data.readers import ExampleList, detect_format, load_examples
from robust_mrc.data.readers.squad import locate
from robust_mrc.data.writers import write_examples

# ----------------------------------------------------------------------------- helpers

ARTICLE = "Tom has a red ball. He plays with it every day."


def race_row(example_id="middle1.txt", answer="B", options=("a", "b", "c", "d"), **extra):
    row = {
        "example_id": example_id,
        "article": ARTICLE,
        "question": "What does Tom have?",
        "options": options if isinstance(options, str) else list(options),
        "answer": answer,
    }
    row.update(extra)
    return row


def write_jsonl(path: Path, rows) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def passage(pid="high1.txt", n=2, **overrides):
    p = {
        "id": pid,
        "article": ARTICLE,
        "questions": [f"question {i}?" for i in range(n)],
        "options": [["w", "x", "y", "z"] for _ in range(n)],
        "answers": ["ABCD"[i % 4] for i in range(n)],
    }
    p.update(overrides)
    return p


def dialogue(did="1-2", n=2):
    turns = ["M: Hello.", "W: Hi, how are you?"]
    qs = [{"question": f"q{i}?", "choice": ["Fine.", "Bad.", "So-so."], "answer": "Bad."} for i in range(n)]
    return [turns, qs, did]


CONTEXT = "The cat sat on the mat. The cat was black. The mat was red."


def squad_file(qas, context=CONTEXT, title="Cats", version="1.1"):
    return {"version": version, "data": [{"title": title, "paragraphs": [{"context": context, "qas": qas}]}]}


def qa(qid="q1", text="cat", start=4, **extra):
    d = {"id": qid, "question": "Who sat?", "answers": [{"text": text, "answer_start": start}]}
    d.update(extra)
    return d


def assert_error(excinfo, path: Path, *parts: str):
    msg = str(excinfo.value)
    assert str(path) in msg, msg
    for part in parts:
        assert part in msg, msg
    assert "\n" not in msg


# ----------------------------------------------------------------------------- RACE jsonl


def test_race_jsonl_good(tmp_path):
    path = write_jsonl(
        tmp_path / "dev.jsonl",
        [
            race_row("m1.txt", "A"),
            race_row("m1.txt", "D"),
            race_row("m2.txt", "C", ("p", "q", "r")),
            race_row("m1.txt", "b"),
        ],
    )
    examples = load_examples(path)
    assert isinstance(examples, ExampleList) and isinstance(examples, list)
    assert examples.format == "race_jsonl" and examples.source == str(path)
    assert examples.skipped.total == 0
    assert [e.id for e in examples] == ["m1.txt-0", "m1.txt-1", "m2.txt", "m1.txt-2"]
    assert [e.label for e in examples] == [0, 3, 2, 1]
    first = examples[0]
    assert isinstance(first, MCExample)
    assert first.passage == ARTICLE and first.options == ("a", "b", "c", "d")
    assert examples[2].options == ("p", "q", "r")
    # deterministic
    assert [e.id for e in load_examples(path, "race_jsonl")] == [e.id for e in examples]


def test_race_jsonl_detected_without_suffix(tmp_path):
    path = write_jsonl(tmp_path / "dev.data", [race_row("a"), race_row("b")])
    assert detect_format(path) == "race_jsonl"
    assert [e.id for e in load_examples(path)] == ["a", "b"]


BAD_RACE_ROWS = {
    "missing field": ({k: v for k, v in race_row("bad1.txt").items() if k != "article"}, "'article'"),
    "answer out of range": (race_row("bad1.txt", answer="E"), "'E' with 4 options"),
    "answer out of range ": (race_row("bad1.txt", answer="Q"), "'Q'"),
    "bad option count": (race_row("bad1.txt", answer="A", options=("only",)), "1 option(s)"),
    "bad option count ": (race_row("bad1.txt", options=tuple("abcdef")), "6 option(s)"),
    "wrong type": (race_row("bad1.txt", options="abcd"), "'options' is str"),
    "wrong type ": (race_row("bad1.txt", article=7), "'article' is int"),
    "wrong type  ": (race_row("bad1.txt", answer=1), "answer is int"),
}


@pytest.mark.parametrize("reason", list(BAD_RACE_ROWS))
def test_race_jsonl_bad_record(tmp_path, reason):
    row, detail = BAD_RACE_ROWS[reason]
    path = write_jsonl(tmp_path / "dev.jsonl", [race_row("ok.txt"), row])
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path)
    assert_error(excinfo, path, "line 2 (example_id bad1.txt)", reason.strip() + ":", detail)
    assert excinfo.value.record == "line 2 (example_id bad1.txt)"
    assert excinfo.value.reason.startswith(reason.strip() + ":")


def test_race_jsonl_invalid_json_line_and_missing_id(tmp_path):
    path = write_jsonl(tmp_path / "dev.jsonl", [race_row("ok.txt"), "", '{"example_id": "x", "article": ', race_row()])
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path)
    assert_error(excinfo, path, "line 3", "invalid JSON:")
    path = write_jsonl(tmp_path / "noid.jsonl", [race_row("ok.txt"), {k: v for k, v in race_row().items() if k != "example_id"}])
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path)
    assert_error(excinfo, path, "line 2", "missing field: 'example_id'")
    path = write_jsonl(tmp_path / "list.jsonl", [race_row("ok.txt"), "[1, 2]"])
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path)
    assert_error(excinfo, path, "line 2", "wrong type:")


def test_race_jsonl_not_strict_skips_and_reports(tmp_path, caplog):
    rows = [
        race_row("ok1.txt"),
        race_row("b1", answer="E"),
        "not json",
        race_row("b2", answer="F"),
        race_row("b3", options=("x",), answer="A"),
        race_row("ok2.txt"),
        {k: v for k, v in race_row("b4").items() if k != "question"},
    ]
    path = write_jsonl(tmp_path / "dev.jsonl", rows)
    with caplog.at_level(logging.WARNING):
        examples = load_examples(path, strict=False)
    assert [e.id for e in examples] == ["ok1.txt", "ok2.txt"]
    report = examples.skipped
    assert report.total == 5
    assert dict(report.skipped) == {"answer out of range": 2, "invalid JSON": 1, "bad option count": 1, "missing field": 1}
    assert "skipped 5 bad record(s)" in caplog.text and str(path) in caplog.text
    assert any("line 2 (example_id b1)" in m for m in report.examples)


def test_limit(tmp_path):
    rows = [race_row(f"p{i}") for i in range(10)]
    rows.insert(1, race_row("bad", answer="Z"))
    path = write_jsonl(tmp_path / "dev.jsonl", rows)
    examples = load_examples(path, strict=False, limit=3)
    assert [e.id for e in examples] == ["p0", "p1", "p2"]
    assert load_examples(path, strict=False, limit=0) == []
    with pytest.raises(ValueError):
        load_examples(path, limit=-1)


# ----------------------------------------------------------------------------- RACE original


def test_race_original_directory(tmp_path):
    root = tmp_path / "RACE" / "dev"
    (root / "middle").mkdir(parents=True)
    (root / "high").mkdir()
    write_json(root / "middle" / "2.txt", passage("middle2.txt", 1))
    write_json(root / "middle" / "1.txt", passage("middle1.txt", 3))
    write_json(root / "high" / "5.json", passage("high5.txt", 2, options=[["a", "b"], ["a", "b", "c"]], answers=["B", "C"]))
    (root / "README.md").write_text("not a passage")
    examples = load_examples(tmp_path / "RACE")
    assert examples.format == "race_original"
    assert [e.id for e in examples] == ["high5.txt-0", "high5.txt-1", "middle1.txt-0", "middle1.txt-1", "middle1.txt-2", "middle2.txt-0"]
    assert [e.label for e in examples] == [1, 2, 0, 1, 2, 0]
    assert examples[1].options == ("a", "b", "c")
    assert examples[2].question == "question 0?"


def test_race_original_directory_errors(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(empty)
    assert_error(excinfo, empty, "empty directory:")
    root = tmp_path / "race"
    root.mkdir()
    write_json(root / "1.txt", passage("high1.txt"))
    (root / "2.txt").write_text("{broken", encoding="utf-8")
    write_json(root / "3.txt", passage("high3.txt", 3, answers=["A", "E", "B"]))
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(root)
    assert_error(excinfo, root / "2.txt", "invalid JSON:", "line 1")
    examples = load_examples(root, strict=False)
    assert [e.id for e in examples] == ["high1.txt-0", "high1.txt-1", "high3.txt-0", "high3.txt-2"]
    assert dict(examples.skipped.skipped) == {"invalid JSON": 1, "answer out of range": 1}
    (root / "2.txt").unlink()
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(root)
    assert_error(excinfo, root / "3.txt", "record id high3.txt question 1", "answer out of range:")
    with pytest.raises(DataFormatError, match="is a directory"):
        load_examples(root, "squad")


def test_race_original_single_file_and_passage(tmp_path):
    data = {"version": "x", "data": [passage("p1", 2), passage("p2", 1, options=[["yes", "no"]], answers=["B"])]}
    path = write_json(tmp_path / "race_plus.json", data)
    examples = load_examples(path)
    assert examples.format == "race_original"
    assert [(e.id, len(e.options), e.label) for e in examples] == [("p1-0", 4, 0), ("p1-1", 4, 1), ("p2-0", 2, 1)]
    single = write_json(tmp_path / "one.txt", passage("high9.txt", 2))
    assert [e.id for e in load_examples(single)] == ["high9.txt-0", "high9.txt-1"]


@pytest.mark.parametrize(
    "bad, record, reason",
    [
        ({"answers": ["A", "B", "Z"]}, "data[1] (id high123.txt) question 2", "answer out of range:"),
        ({"options": [["a", "b"], ["a"], ["a", "b"]]}, "data[1] (id high123.txt) question 1", "bad option count:"),
        ({"questions": ["q", 5, "q"]}, "data[1] (id high123.txt) question 1", "wrong type:"),
        ({"answers": ["A", "B"]}, "data[1] (id high123.txt)", "length mismatch:"),
        ({"article": None}, "data[1] (id high123.txt)", "wrong type:"),
        ({"id": None}, "data[1]", "wrong type:"),
    ],
)
def test_race_original_bad_records(tmp_path, bad, record, reason):
    data = {"data": [passage("ok", 1), passage("high123.txt", 3, **bad)]}
    path = write_json(tmp_path / "race.json", data)
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path)
    assert_error(excinfo, path, record, reason)
    examples = load_examples(path, strict=False)
    assert examples[0].id == "ok-0" and examples.skipped.total >= 1


def test_race_original_missing_article(tmp_path):
    p = passage("high7.txt")
    del p["article"]
    path = write_json(tmp_path / "race.json", {"data": [p]})
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path, "race_original")
    assert_error(excinfo, path, "data[0] (id high7.txt)", "missing field: 'article'")


# ----------------------------------------------------------------------------- DREAM


def test_dream_good(tmp_path):
    d = dialogue("4-199", 2)
    d[1][1]["answer"] = "  So-so. "
    path = write_json(tmp_path / "dev.json", [d, dialogue("5-1", 1)])
    examples = load_examples(path)
    assert examples.format == "dream"
    assert [e.id for e in examples] == ["4-199-0", "4-199-1", "5-1-0"]
    assert [e.label for e in examples] == [1, 2, 1]
    assert examples[0].passage == "M: Hello.\nW: Hi, how are you?"
    assert examples[0].options == ("Fine.", "Bad.", "So-so.")


@pytest.mark.parametrize(
    "mutate, record, reason",
    [
        (lambda d: d[1][1].update(answer="Great."), "[1] (id 7-7) question 1", "answer not among choices:"),
        (lambda d: d[1][1].update(choice=["Bad.", "Bad.", "x"]), "[1] (id 7-7) question 1", "ambiguous answer:"),
        (lambda d: d[1][0].update(choice=["Bad."]), "[1] (id 7-7) question 0", "bad option count:"),
        (lambda d: d[1][0].pop("question"), "[1] (id 7-7) question 0", "missing field: 'question'"),
        (lambda d: d[0].append(3), "[1] (id 7-7)", "wrong type: turns[2]"),
        (lambda d: d.append("extra"), "[1]", "wrong type: expected [turns, questions, id]"),
    ],
)
def test_dream_bad_records(tmp_path, mutate, record, reason):
    bad = dialogue("7-7", 2)
    mutate(bad)
    path = write_json(tmp_path / "dream.json", [dialogue("1-1", 1), bad])
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path, "dream")
    assert_error(excinfo, path, record, reason)
    examples = load_examples(path, "dream", strict=False)
    assert examples[0].id == "1-1-0" and examples.skipped.total >= 1
    assert reason.split(":")[0] in examples.skipped.skipped


# ----------------------------------------------------------------------------- SQuAD


def test_squad_good_v1_and_dedup(tmp_path):
    qas = [
        qa("q1", "cat", 4),
        {
            "id": "q2",
            "question": "Colour of the mat?",
            "answers": [{"text": "red", "answer_start": 55}, {"text": "red", "answer_start": 55}, {"text": "was red", "answer_start": 51}],
        },
    ]
    path = write_json(tmp_path / "dev-v1.1.json", squad_file(qas))
    examples = load_examples(path)
    assert examples.format == "squad"
    e1, e2 = examples
    assert isinstance(e1, SpanExample) and e1.id == "q1" and e1.title == "Cats"
    assert e1.answers == (Answer("cat", 4),)
    assert e2.answers == (Answer("red", 55), Answer("was red", 51))


def test_squad_v2_impossible(tmp_path):
    qas = [
        qa("q1"),
        {"id": "q2", "question": "Dog?", "answers": [], "is_impossible": True, "plausible_answers": [{"text": "cat", "answer_start": 4}]},
    ]
    examples = load_examples(write_json(tmp_path / "v2.json", squad_file(qas, version="v2.0")))
    assert examples[1].answers == () and examples[1].is_impossible
    assert not examples[0].is_impossible


def test_offset_recovery(tmp_path):
    assert locate(CONTEXT, "cat", -1) == 4
    assert locate(CONTEXT, "cat", 4) == 4
    assert locate(CONTEXT, "cat", 26) == 28  # nearest occurrence to a wrong start
    assert locate(CONTEXT, "cat", 100) == 28
    assert locate(CONTEXT, "mat", 0) == 19
    assert locate(CONTEXT, "dog", 3) == -1
    qas = [
        qa("q1", "cat", -1),
        qa("q2", "cat", 30),
        qa("q3", "mat", 999),
        {"id": "q4", "question": "?", "answers": [{"text": " black "}]},
        {"id": "q5", "question": "?", "answers": [{"text": "red", "answer_start": -1}, {"text": "", "answer_start": -1}]},
    ]
    examples = load_examples(write_json(tmp_path / "dureader.json", squad_file(qas)))
    assert [e.answers for e in examples] == [
        (Answer("cat", 4),),
        (Answer("cat", 28),),
        (Answer("mat", 47),),
        (Answer("black", 36),),
        (Answer("red", 55),),
    ]


@pytest.mark.parametrize(
    "bad, reason",
    [
        (qa("bad5", "dog", 3), "answer not in context:"),
        (qa("bad5", "cat", "4"), "wrong type:"),
        ({"id": "bad5", "question": "?", "answers": "cat"}, "wrong type:"),
        ({"id": "bad5", "answers": []}, "missing field: 'question'"),
        ({"id": "bad5", "question": "?", "answers": [{"text": ""}]}, "empty answer:"),
    ],
)
def test_squad_bad_records(tmp_path, bad, reason):
    qas = [qa(f"ok{i}") for i in range(5)] + [bad]
    path = write_json(tmp_path / "squad.json", squad_file(qas))
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path)
    assert_error(excinfo, path, "data[0].paragraphs[0].qas[5] (id bad5)", reason)
    examples = load_examples(path, strict=False)
    assert len(examples) == 5 and examples.skipped.total == 1
    assert reason.split(":")[0] in examples.skipped.skipped


def test_squad_bad_paragraph(tmp_path):
    data = squad_file([qa()])
    data["data"][0]["paragraphs"].append({"qas": []})
    path = write_json(tmp_path / "squad.json", data)
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(path, "squad")
    assert_error(excinfo, path, "data[0].paragraphs[1]", "missing field: 'context'")


def test_gzip_detected_by_magic(tmp_path):
    payload = json.dumps(squad_file([qa()])).encode()
    for name in ("train.json.gz", "train.json", "train.bin"):
        path = tmp_path / name
        path.write_bytes(gzip.compress(payload))
        examples = load_examples(path)
        assert examples.format == "squad" and [e.id for e in examples] == ["q1"]
    jsonl_gz = tmp_path / "dev.jsonl.gz"
    jsonl_gz.write_bytes(gzip.compress((json.dumps(race_row()) + "\n").encode()))
    assert load_examples(jsonl_gz).format == "race_jsonl"
    corrupt = tmp_path / "corrupt.json.gz"
    corrupt.write_bytes(gzip.compress(payload)[:40])
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(corrupt)
    assert_error(excinfo, corrupt, "corrupt gzip file:")


# ----------------------------------------------------------------------------- whole-file errors


def test_file_level_errors(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(missing)
    assert_error(excinfo, missing, "file not found:")
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(DataFormatError, match="empty file"):
        load_examples(empty)
    broken = tmp_path / "broken.json"
    broken.write_text('{"data": [\n  {"a": 1,,}\n]}')
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(broken, strict=False)  # a whole-file problem raises even when not strict
    assert_error(excinfo, broken, "invalid JSON:", "line 2")
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"title": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(DataFormatError) as excinfo:
        load_examples(latin)
    assert_error(excinfo, latin, "not UTF-8 text:")
    for name, obj in [
        ("obj.json", {"foo": 1}),
        ("list.json", [1, 2]),
        ("num.json", 3),
        ("data.json", {"data": [{"foo": 1}]}),
        ("notes.json", "# notes"),
    ]:
        path = write_json(tmp_path / name, obj)
        with pytest.raises(DataFormatError) as excinfo:
            load_examples(path)
        assert_error(excinfo, path, "unknown format:")
    squad = write_json(tmp_path / "squad.json", squad_file([qa()]))
    for fmt in ("dream", "race_original"):
        with pytest.raises(DataFormatError) as excinfo:
            load_examples(squad, fmt)
        assert str(squad) in str(excinfo.value)
    with pytest.raises(ValueError, match="unknown format"):
        load_examples(squad, "csv")


def test_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(squad_file([qa()])).encode())
    assert len(load_examples(path)) == 1


# ----------------------------------------------------------------------------- hub


def test_hub_offline_is_a_clear_error(monkeypatch):
    import datasets
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True, raising=False)
    t0 = time.monotonic()
    with pytest.raises(HubUnavailableError) as excinfo:
        load_examples("ehovy/race", "hub_race", split="validation")
    assert time.monotonic() - t0 < 20
    msg = str(excinfo.value)
    assert "ehovy/race" in msg and "could not be reached" in msg and "data=race_local data.train=" in msg
    assert "\n" not in msg
    assert isinstance(excinfo.value, RuntimeError)
    # "auto" knows the hub names when no such local file exists
    with pytest.raises(HubUnavailableError, match="rajpurkar/squad"):
        load_examples("rajpurkar/squad", split="validation")


def test_hub_connection_errors_are_translated(monkeypatch):
    import datasets

    def fail(*args, **kwargs):
        try:
            raise OSError("[Errno -2] Name or service not known")
        except OSError as e:
            raise ConnectionError("Couldn't reach 'rajpurkar/squad' on the Hub (LocalEntryNotFoundError)") from e

    monkeypatch.setattr(datasets, "load_dataset", fail)
    with pytest.raises(HubUnavailableError) as excinfo:
        load_examples("rajpurkar/squad", "hub_squad", split="train")
    assert excinfo.value.__cause__ is None and "could not be reached" in str(excinfo.value)

    def other(*args, **kwargs):
        raise ValueError("BuilderConfig 'nope' not found")

    monkeypatch.setattr(datasets, "load_dataset", other)
    with pytest.raises(DataFormatError, match="cannot load from the hub: ValueError"):
        load_examples("ehovy/race", "hub_race", subset="nope", split="train")
    with pytest.raises(ValueError, match="give a split"):
        load_examples("ehovy/race", "hub_race")


def test_hub_rows_convert_like_local_files(monkeypatch, tmp_path):
    import datasets

    race_rows = [race_row("m1.txt", "A"), race_row("m1.txt", "C"), race_row("m2.txt", "B"), race_row("m3.txt", "E")]
    squad_rows = [
        {"id": "q1", "title": "Cats", "context": CONTEXT, "question": "Who?", "answers": {"text": ["cat", "cat"], "answer_start": [4, 4]}},
        {"id": "q2", "title": "Cats", "context": CONTEXT, "question": "Dog?", "answers": {"text": [], "answer_start": []}},
    ]
    calls = []

    def fake(name, subset=None, split=None):
        calls.append((name, subset, split))
        return datasets.Dataset.from_list(race_rows if "race" in name else squad_rows)

    monkeypatch.setattr(datasets, "load_dataset", fake)
    hub = load_examples("ehovy/race", "hub_race", split="validation", strict=False)
    assert calls[-1] == ("ehovy/race", "all", "validation")
    local = load_examples(write_jsonl(tmp_path / "r.jsonl", race_rows), strict=False)
    assert hub == local and [e.id for e in hub] == ["m1.txt-0", "m1.txt-1", "m2.txt"]
    assert hub.skipped.total == 1 and hub.format == "hub_race"
    squad = load_examples("rajpurkar/squad_v2", "hub_squad", split="validation")
    assert calls[-1] == ("rajpurkar/squad_v2", None, "validation")
    assert squad[0].answers == (Answer("cat", 4),) and squad[0].title == "Cats"
    assert squad[1].is_impossible


# ----------------------------------------------------------------------------- writers


def mc(ex_id, passage=ARTICLE, options=("a", "b", "c", "d"), label=0, question="Q?"):
    return MCExample(ex_id, passage, question, options, label)


MC_EXAMPLES = [
    mc("high1.txt-0", label=2),
    mc("high1.txt-1", options=("yes", "no"), label=1),
    mc("high1.txt-2", options=("x", "y", "z", "w", "v"), label=4),
    mc("two-0", passage="Line one.\nLine two.", options=("p", "q", "r")),
    mc("odd id", passage="Another one.", label=3),
    mc("gap-3", passage="Gap passage."),
    mc("gap-7", passage="Gap passage.", label=1),
    mc("high1.txt-9", passage="Attacked copy of the passage.", label=1),
    mc("ünïcode-0", passage="Ça va? 你好。", options=("oui", "non"), label=0),
]


@pytest.mark.parametrize(
    "fmt, name", [("race_jsonl", "out.jsonl"), ("race_original", "out.json"), ("dream", "dream.json"), ("race_jsonl", "out.jsonl.gz")]
)
def test_mc_round_trip(tmp_path, fmt, name):
    path = tmp_path / "sub" / name
    write_examples(MC_EXAMPLES, path, fmt)
    back = load_examples(path)
    assert back.format == fmt and back.skipped.total == 0
    assert back == MC_EXAMPLES
    assert [p.name for p in path.parent.iterdir()] == [name]  # no temp file left behind
    assert load_examples(path, fmt) == MC_EXAMPLES


def test_race_original_writer_groups_by_passage(tmp_path):
    path = tmp_path / "race.json"
    write_examples(MC_EXAMPLES[:3], path, "race_original")
    data = json.loads(path.read_text())
    assert len(data["data"]) == 1
    p = data["data"][0]
    assert p["id"] == "high1.txt" and p["answers"] == ["C", "B", "E"] and "question_ids" not in p
    interleaved = [MC_EXAMPLES[0], MC_EXAMPLES[3], MC_EXAMPLES[1]]
    write_examples(interleaved, path, "race_original")
    back = load_examples(path)
    assert sorted(back, key=lambda e: e.id) == sorted(interleaved, key=lambda e: e.id)


def test_squad_round_trip(tmp_path):
    examples = [
        SpanExample("s1", CONTEXT, "Who?", (Answer("cat", 4), Answer("The cat", 0)), title="Cats"),
        SpanExample("s2", CONTEXT, "Dog?", (), title="Cats"),
        SpanExample("s3", "Other context, with a cat.", "What?", (Answer("cat", 22),), title="Cats"),
        SpanExample("s4", "无题", "?", (Answer("无", 0),)),
    ]
    for name in ("squad.json", "squad.json.gz"):
        path = tmp_path / name
        write_examples(examples, path, "squad")
        back = load_examples(path)
        assert back == examples and [e.title for e in back] == ["Cats", "Cats", "Cats", ""]
    v1 = examples[:1]
    write_examples(v1, tmp_path / "v1.json", "squad")
    assert json.loads((tmp_path / "v1.json").read_text())["version"] == "1.1"
    assert gzip.decompress((tmp_path / "squad.json.gz").read_bytes())


def test_writer_errors_and_atomicity(tmp_path, monkeypatch):
    path = tmp_path / "out.jsonl"
    write_examples(MC_EXAMPLES[:2], path, "race_jsonl")
    before = path.read_bytes()
    with pytest.raises(TypeError):
        write_examples([SpanExample("s", "c", "q", ())], path, "race_jsonl")
    with pytest.raises(ValueError, match="duplicate"):
        write_examples([MC_EXAMPLES[0], MC_EXAMPLES[0]], path, "race_jsonl")
    with pytest.raises(ValueError, match="no examples"):
        write_examples([], path, "race_jsonl")
    with pytest.raises(ValueError, match="unknown format"):
        write_examples(MC_EXAMPLES, path, "csv")
    with pytest.raises(ValueError, match="not unique"):
        write_examples([mc("d-0", options=("same", "same ", "x"), label=0)], tmp_path / "d.json", "dream")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_examples(MC_EXAMPLES, path, "race_jsonl")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


# ----------------------------------------------------------------------------- real data


def test_real_race_middle(shared_data):
    examples = load_examples(shared_data / "race" / "race_middle_validation.jsonl")
    assert examples.format == "race_jsonl" and len(examples) == 1436 and examples.skipped.total == 0
    assert len({e.id for e in examples}) == 1436
    assert len({e.passage for e in examples}) <= 368
    assert examples[0].id == "middle511.txt-0"
    assert all(len(e.options) == 4 for e in examples)


def test_real_expmrc(shared_data):
    examples = load_examples(shared_data / "race" / "expmrc_race_plus_dev.json")
    assert examples.format == "race_original" and len(examples) == 561
    assert sum(len(e.options) in (2, 3) for e in examples) == 22
    assert len({e.id.rsplit("-", 1)[0] for e in examples}) == 167


def test_real_dream(shared_data):
    examples = load_examples(shared_data / "dream" / "dev.json")
    assert examples.format == "dream" and len(examples) == 2040 and examples.skipped.total == 0
    assert all(len(e.options) == 3 for e in examples)
    assert len({e.id for e in examples}) == 2040


def test_real_squad_dev(shared_data):
    examples = load_examples(shared_data / "squad" / "dev-v1.1.json")
    assert examples.format == "squad" and len(examples) == 10570 and examples.skipped.total == 0
    assert all(e.answers for e in examples)
    assert examples[0].title


def test_real_dureader_offsets_recovered(shared_data):
    path = shared_data / "dureader_robust" / "dev.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert all(a["answer_start"] == -1 for art in raw["data"] for p in art["paragraphs"] for q in p["qas"] for a in q["answers"])
    examples = load_examples(path)
    assert len(examples) == 1417 and examples.skipped.total == 0
    for e in examples:
        assert e.answers
        for a in e.answers:
            assert a.start >= 0 and e.context[a.start : a.end] == a.text


def test_real_squad_train_gz(shared_data):
    t0 = time.monotonic()
    examples = load_examples(shared_data / "squad" / "train-v1.1.json.gz")
    assert len(examples) == 87599 and examples.skipped.total == 0
    assert time.monotonic() - t0 < 15


def test_real_round_trip(shared_data, tmp_path):
    race = load_examples(shared_data / "race" / "expmrc_race_plus_dev.json")
    write_examples(race, tmp_path / "race.json", "race_original")
    assert load_examples(tmp_path / "race.json") == race
    dream = load_examples(shared_data / "dream" / "dev.json")
    write_examples(dream, tmp_path / "dream.json", "dream")
    assert load_examples(tmp_path / "dream.json") == dream
    middle = load_examples(shared_data / "race" / "race_middle_validation.jsonl")
    write_examples(middle, tmp_path / "middle.json", "race_original")
    assert load_examples(tmp_path / "middle.json") == middle
