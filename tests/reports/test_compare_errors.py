"""`robust-mrc compare`: a directory that is no run, a damaged file, runs of two
tasks: one line naming them (``Error: ...``, exit status 1); ``--debug`` shows the traceback."""

from __future__ import annotations

import functools
import json

import pytest

from robust_mrc.cli.compare import main
from robust_mrc.reports.compare import CompareError
from tests.helpers import command_error


def _train_run(path, task, metrics):
    path.mkdir()
    (path / "metrics.json").write_text(json.dumps(metrics))
    (path / "config.yaml").write_text(f"attack:\n  name: none\ntask:\n  name: {task}\n")
    return path


_error = functools.partial(command_error, main)  # _error(capsys, *args): the one line it printed


def test_a_missing_or_empty_directory_is_named(tmp_path, capsys):
    assert _error(capsys, tmp_path / "nope") == f"Error: {tmp_path / 'nope'}: no such directory: give run directories"
    assert _error(capsys, tmp_path) == (
        f"Error: {tmp_path}: no metrics.json (a finished train.py run) nor report.json (an evaluate.py directory): is it a finished run?"
    )


@pytest.mark.parametrize(
    "name, text, message",
    [
        (
            "metrics.json",
            "{bad",
            "damaged metrics.json: not valid JSON (Expecting property name enclosed in double quotes at line 1, column 2)",
        ),
        ("metrics.json", "[1]", "damaged metrics.json: a JSON list where an object is expected"),
        ("report.json", '{"models": {', "damaged evaluation report: not valid JSON (Expecting property name enclosed"),
        ("report.json", '{"task": "mc"}', "damaged evaluation report: no split, models (written by evaluate.py?)"),
        ("config.yaml", "a: [\n", "damaged config.yaml: "),
    ],
)
def test_a_damaged_run_file_is_named(tmp_path, capsys, name, text, message):
    run = _train_run(tmp_path / "run", "mc", {"test/acc": 0.5})
    (run / name).write_text(text)
    assert _error(capsys, run).startswith(f"Error: {run / name}: {message}")


def test_runs_of_two_tasks_are_refused_naming_each_tasks_runs(tmp_path, capsys):
    mc = _train_run(tmp_path / "mc", "mc", {"test/acc": 0.8, "test/charswap/acc": 0.6})
    span = _train_run(tmp_path / "span", "span", {"test/f1": 70.0, "test/addsent/f1": 40.0})
    assert _error(capsys, mc, span) == (
        f"Error: the runs are of different tasks (mc: {mc}; span: {span}): one table compares one task's runs "
        "(accuracy for mc, F1 / EM for span); compare each task's runs separately"
    )


def test_a_span_run_without_config_is_told_by_its_metrics(tmp_path, capsys):
    mc = _train_run(tmp_path / "mc", "mc", {"test/acc": 0.8})
    span = tmp_path / "span"
    span.mkdir()
    (span / "metrics.json").write_text(json.dumps({"test/f1": 70.0}))
    assert "different tasks" in _error(capsys, mc, span)


def test_an_unknown_against_row_is_one_line(tmp_path, capsys):
    run = _train_run(tmp_path / "run", "mc", {"test/acc": 0.8})
    assert _error(capsys, run, "--against", "nothing s9") == "Error: --against 'nothing s9': no such row (rows: none)"


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(CompareError, match="no such directory"):
        main([str(tmp_path / "nope"), "--debug"])


def test_an_unwritable_out_is_refused_before_the_runs_are_read(tmp_path, monkeypatch, capsys):
    import errno
    import tempfile

    locked = tmp_path / "locked"
    locked.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):  # a read-only directory (chmod does not stop root)
        if dir is not None and str(dir) == str(locked):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    out = locked / "table.md"
    assert _error(capsys, tmp_path / "not-read", "--out", out) == (
        f"Error: cannot write {out}: the directory {locked} is not writable (Permission denied); write elsewhere or fix its permissions"
    )
