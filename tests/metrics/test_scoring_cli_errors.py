"""`robust-mrc metrics`: hostile inputs are one line naming the file (``Error: ...``, exit
status 1), ``--debug`` shows the traceback."""

from __future__ import annotations

import functools
import gzip
import json

import pytest

from robust_mrc.cli.metrics import main
from robust_mrc.metrics.data_file import ScoringInputError
from tests.helpers import command_error


def _squad(path, ids):
    qas = [{"id": i, "question": "?", "answers": [{"text": "x", "answer_start": 0}]} for i in ids]
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"context": "x", "qas": qas}]}]}))
    return path


_error = functools.partial(command_error, main)  # _error(capsys, *args): the one line it printed


@pytest.mark.parametrize("which", ["data", "predictions"])
def test_deeply_nested_json_is_named(tmp_path, capsys, which):
    deep = tmp_path / "deep.json"
    deep.write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    data = deep if which == "data" else _squad(tmp_path / "dev.json", ["q1"])
    preds = deep if which == "predictions" else tmp_path / "p.json"
    if not preds.exists():
        preds.write_text("{}")
    assert _error(capsys, data, preds) == (
        f"Error: {which} file {deep}: invalid JSON: nested too deeply (more levels of [ and {{ than Python's recursion limit, about 1,000)"
    )


def test_a_gzip_that_inflates_past_the_cap_stops_there(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROBUST_MRC_MAX_DATA_BYTES", "1MiB")
    bomb = tmp_path / "dev.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (8 << 20)))  # 8 MiB of blanks: valid JSON text would follow
    (tmp_path / "p.json").write_text("{}")
    assert _error(capsys, bomb, tmp_path / "p.json") == (
        f"Error: data file {bomb}: more than 1,048,576 bytes once gunzipped, the cap on one file; "
        "if the file is genuine, raise it with ROBUST_MRC_MAX_DATA_BYTES=<bytes, e.g. 8GiB>"
    )


def test_a_plain_file_past_the_cap_is_refused_unread(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROBUST_MRC_MAX_DATA_BYTES", "100")
    data = _squad(tmp_path / "dev.json", [f"q{i}" for i in range(10)])
    (tmp_path / "p.json").write_text("{}")
    assert _error(capsys, data, tmp_path / "p.json").startswith(f"Error: data file {data}: more than 100 bytes, the cap on one file")


def test_a_data_file_without_questions_is_an_error_not_a_zero(tmp_path, capsys):
    data = tmp_path / "dev.json"
    data.write_text('{"data": [{"paragraphs": []}]}')
    (tmp_path / "p.json").write_text('{"q1": "x"}')
    assert _error(capsys, data, tmp_path / "p.json") == (
        f'Error: data file {data}: no questions (no "qas" entry in its "data" list): nothing to score'
    )


def test_adversarial_on_a_set_without_variants_is_refused(tmp_path, capsys):
    data = _squad(tmp_path / "dev.json", ["q1", "q2"])
    (tmp_path / "p.json").write_text('{"q1": "x", "q2": "x"}')
    assert _error(capsys, data, tmp_path / "p.json", "--adversarial") == (
        f"Error: --adversarial: data file {data} has no adversarial variants (question ids '<original id>-<suffix>'): "
        "its grouped scores would be the plain ones; give the attacked set, or drop --adversarial"
    )
    _squad(data, ["q1", "q1-adv"])  # one variant is enough
    assert main([str(data), str(tmp_path / "p.json"), "--adversarial"]) == 0


def test_debug_shows_the_traceback(tmp_path, capsys):
    (tmp_path / "p.json").write_text("{}")
    with pytest.raises(ScoringInputError, match="no such file"):
        main([str(tmp_path / "missing.json"), str(tmp_path / "p.json"), "--debug"])
