"""``robust-mrc metrics DATA_FILE PREDICTIONS_JSON``: the official scripts' command shape."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from robust_mrc.cli.metrics import main

REPO = Path(__file__).resolve().parents[2]


def squad_file(path: Path, qas: list[dict], version: str = "1.1", gz: bool = False) -> Path:
    """A SQuAD-layout file with one article and one paragraph (no offsets: they are not read)."""
    doc = {"version": version, "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]}
    raw = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def qa(qid: str, *answers: str, **extra) -> dict:
    return {"id": qid, "question": "?", "answers": [{"text": a, "answer_start": -1} for a in answers], **extra}


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path


def run_module(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robust_mrc.cli", "metrics", *args], cwd=REPO, capture_output=True, text=True)


def run_main(capsys, *args: str) -> tuple[int, dict | None, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as done:  # a user error: one line on stderr
        code = done.code
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_end_to_end_squad_v1(tmp_path):
    # golds that are only punctuation or empty are legal in the data file (the readers of the
    # project would refuse them: no offsets here)
    data = squad_file(
        tmp_path / "dev.json",
        [
            qa("q1", "Denver Broncos", "Broncos"),
            qa("q2", "Paris"),
            qa("q3", "."),
            qa("q4", "Oslo"),
        ],
    )
    preds = write_json(tmp_path / "preds.json", {"q1": "the Denver Broncos", "q2": "Lyon", "q3": ",", "q9": "extra"})
    done = run_module(str(data), str(preds))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().splitlines()) == 1
    # q1 1/1, q2 0/0, q3 "," vs ".": v1.1 EM 1 F1 0, q4 missing 0/0; q9 ignored
    assert json.loads(done.stdout) == pytest.approx({"exact_match": 50.0, "f1": 25.0})
    assert "1 of 4 questions have no prediction" in done.stderr
    assert "1 of 4 predicted ids are not questions" in done.stderr


def test_metric_choice_and_v2_default(tmp_path, capsys):
    qas = [qa("a", "Paris"), qa("b", is_impossible=True), qa("c", ".")]
    preds = write_json(tmp_path / "p.json", {"a": "Paris", "b": "", "c": ","})
    v2 = squad_file(tmp_path / "v2.json", qas, version="v2.0")
    # is_impossible: true -> squad_v2 by default: every question fully right
    assert run_main(capsys, v2, preds)[:2] == (0, {"exact_match": 100.0, "f1": 100.0})
    # forced v1.1: "" against no gold and "," against "." get EM 1, F1 0
    code, out, _ = run_main(capsys, v2, preds, "--metric", "squad_v1")
    assert (code, out) == (0, pytest.approx({"exact_match": 100.0, "f1": 100 / 3}))
    assert run_main(capsys, v2, preds, "--metric", "squad")[1] == out  # the alias


def test_dureader_metric_and_gzip(tmp_path, capsys):
    data = squad_file(tmp_path / "zh.json.gz", [qa("z1", "2018年6月"), qa("z2", "北京")], gz=True)
    preds = write_json(tmp_path / "p.json", {"z1": "2018年", "z2": "北京。"})
    code, out, _ = run_main(capsys, data, preds, "--metric", "dureader")
    # z1: tokens 2018 年 vs 2018 年 6 月 -> F1 2/3, EM 0; z2: "。" removed -> 1/1
    assert code == 0 and out == pytest.approx({"exact_match": 50.0, "f1": 100 * (2 / 3 + 1) / 2})
    code, _, err = run_main(capsys, data, preds)  # default squad_v1, with a hint
    assert code == 0 and "--metric dureader" in err


def test_adversarial_flag(tmp_path, capsys):
    data = squad_file(
        tmp_path / "addsent.json",
        [
            qa("q1", "Paris"),
            qa("q1-turk0", "Paris"),
            qa("q1-turk1", "Paris"),
            qa("q2", "Rome"),
            qa("q2-turk0", "Rome"),
        ],
    )
    # q1 right, one variant fooled; q2 wrong, its variant right (adv uses the variant)
    preds = write_json(tmp_path / "p.json", {"q1": "Paris", "q1-turk0": "Lyon", "q1-turk1": "Paris", "q2": "Milan", "q2-turk0": "Rome"})
    code, out, _ = run_main(capsys, data, preds, "--adversarial")
    assert code == 0
    assert out == pytest.approx(
        {
            "exact_match": 60.0,
            "f1": 60.0,
            "orig_exact_match": 50.0,
            "orig_f1": 50.0,
            "adv_exact_match": 50.0,
            "adv_f1": 50.0,
        }
    )
    assert list(out) == ["exact_match", "f1", "orig_exact_match", "orig_f1", "adv_exact_match", "adv_f1"]


@pytest.mark.parametrize(
    "data_text, preds_text, message",
    [
        (None, '{"q": "x"}', "data file .*dev.json: no such file"),
        ('{"data": [', '{"q": "x"}', "data file .*: not valid JSON"),
        ('{"version": "1.1"}', '{"q": "x"}', 'top level: no "data" list'),
        (
            '{"data": [{"paragraphs": [{"qas": [{"id": "q", "answers": [{"txt": "x"}]}]}]}]}',
            '{"q": "x"}',
            r"data\[0\]\.paragraphs\[0\]\.qas\[0\] \(id q\): \"answers\"",
        ),
        (
            '{"data": [{"paragraphs": [{"qas": [{"id": "q", "answers": []}, {"id": "q", "answers": []}]}]}]}',
            "{}",
            "question id 'q' appears twice",
        ),
        ("ok", None, "predictions file .*p.json: no such file"),
        ("ok", "{'q': 'x'}", "predictions file .*: not valid JSON"),
        ("ok", '["x"]', "a JSON array where an object"),
        ("ok", '{"q": ["x"]}', "the answer of 'q' is a JSON array, not a string"),
        ("ok", '{"q": null}', "the answer of 'q' is a JSON null"),
    ],
)
def test_user_errors_are_one_line_with_exit_1(tmp_path, capsys, data_text, preds_text, message):
    data, preds = tmp_path / "dev.json", tmp_path / "p.json"
    if data_text == "ok":
        squad_file(data, [qa("q", "x")])
    elif data_text is not None:
        data.write_text(data_text)
    if preds_text is not None:
        preds.write_text(preds_text)
    code, out, err = run_main(capsys, data, preds)
    assert (code, out) == (1, None)
    assert len(err.strip().splitlines()) == 1 and err.startswith("Error: ")
    assert re.search(message, err), err


def test_help_and_usage_errors():
    done = run_module("--help")
    assert done.returncode == 0 and "DATA_FILE" in done.stdout and "--adversarial" in done.stdout
    bad = run_module("a.json", "b.json", "--metric", "bleu")
    assert bad.returncode == 2 and "invalid choice: 'bleu'" in bad.stderr and "Traceback" not in bad.stderr
    missing = run_module("/nonexistent/dev.json", "/nonexistent/p.json")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip() == "Error: data file /nonexistent/dev.json: no such file"


def test_real_squad_dev_with_its_punctuation_golds(shared_data, tmp_path, capsys):
    """The official dev file (offsets unchecked): a gold answer as every prediction, "." for the
    three questions that have "." among their golds."""
    path = shared_data / "squad" / "dev-v1.1.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    qas = [q for a in doc["data"] for p in a["paragraphs"] for q in p["qas"]]
    golds = {q["id"]: [x["text"] for x in q["answers"]] for q in qas}
    preds = {qid: "." if "." in g else g[0] for qid, g in golds.items()}
    assert len(golds) == 10570 and sum(p == "." for p in preds.values()) == 3
    preds_file = write_json(tmp_path / "p.json", preds)
    n = len(golds)
    # v1.1: "." against "." is EM 1 but F1 0 (no token on either side)
    v1 = run_main(capsys, path, preds_file)[1]
    assert v1 == pytest.approx({"exact_match": 100.0, "f1": 100 * (n - 3) / n}, abs=1e-9)
    # v2.0 drops the "." golds first: "." matches none of the others
    v2 = run_main(capsys, path, preds_file, "--metric", "squad_v2")[1]
    assert v2 == pytest.approx({"exact_match": 100 * (n - 3) / n, "f1": 100 * (n - 3) / n}, abs=1e-9)


def test_unreadable_inputs(tmp_path, capsys):
    preds = write_json(tmp_path / "p.json", {})
    broken_gz = tmp_path / "dev.json.gz"
    broken_gz.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    code, out, err = run_main(capsys, broken_gz, preds)
    assert (code, out) == (1, None) and "not a readable gzip file" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_main(capsys, tmp_path, preds)  # a folder
    assert (code, out) == (1, None) and err.startswith(f"Error: data file {tmp_path}: cannot be read")
