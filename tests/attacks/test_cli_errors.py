"""`robust-mrc attacks apply|stats`: a mistake in a key, the data or the output is one line
(``Error: ...``, exit status 1), found before any attack runs, with nothing written."""

from __future__ import annotations

import errno
import tempfile

import pytest
from attack_samples import mc_examples, span_examples

import robust_mrc.cli.attacks as cli
from robust_mrc.data.writers import write_examples


@pytest.fixture
def race(tmp_path):
    path = tmp_path / "in.jsonl"
    write_examples(mc_examples(), path, "race_jsonl")
    return path


def _one_line_error(capsys, argv: list[str]) -> str:
    """The message of ``robust-mrc attacks ARGV``, which must fail in one line."""
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    err = capsys.readouterr().err.strip()
    message = done.value.code if isinstance(done.value.code, str) else err
    assert done.value.code in (1, message) and "Traceback" not in err, err
    assert len(message.splitlines()) == 1 and message.startswith("Error: "), message
    return message


@pytest.mark.parametrize(
    "arg, message",
    [
        ("seed=abc", "Error: seed='abc': expected a whole number >= 0"),
        ("seed=1.5", "Error: seed=1.5: expected a whole number >= 0"),
        ("seed=[1,2]", "Error: seed=[1, 2]: expected a whole number >= 0"),
        ("limit=abc", "Error: limit='abc': expected a whole number >= 0 or null (all)"),
        ("limit=-3", "Error: limit=-3: expected a whole number >= 0 or null (all)"),
        ("epoch={a:1}", "Error: epoch={'a': 1}: expected a whole number >= 0"),
        ("strict=maybe", "Error: strict='maybe': expected true or false"),
        ("keep_failed=0", "Error: keep_failed=0: expected true or false"),
        ("task=qa", "Error: task='qa': expected one of mc, span or null (the data's)"),
    ],
)
def test_a_bad_key_is_named_with_what_it_accepts(race, tmp_path, capsys, arg, message):
    out = tmp_path / "adv.jsonl"
    assert _one_line_error(capsys, ["apply", "attack=charswap", f"data={race}", f"out={out}", arg]) == message
    assert list(tmp_path.iterdir()) == [race]


def test_stats_names_a_bad_limit(race, capsys):
    message = _one_line_error(capsys, ["stats", "attack=charswap", f"data={race}", "limit=abc"])
    assert message == "Error: limit='abc': expected a whole number >= 0 or null (all)"


def test_a_task_the_data_does_not_hold_is_named(tmp_path, capsys):
    squad = tmp_path / "dev.json"
    write_examples(span_examples(), squad, "squad")
    message = _one_line_error(capsys, ["apply", "attack=charswap", "task=mc", f"data={squad}", f"out={tmp_path / 'a.json'}"])
    assert message == f"Error: task=mc: data={squad} holds span examples (SpanExamples); give task=span or leave task= out"
    assert not (tmp_path / "a.json").exists()


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"example_id": "x", "article": "a b"}\n{bad\n', "record line 2: invalid JSON"),
        ("[1, 2]", "unknown format"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
    ],
)
def test_a_malformed_data_file_is_one_line_naming_it(tmp_path, capsys, text, words):
    data = tmp_path / ("bad.jsonl" if "example_id" in text else "bad.json")
    data.write_text(text)
    message = _one_line_error(capsys, ["apply", "attack=charswap", f"data={data}", f"out={tmp_path / 'a.jsonl'}"])
    assert message.startswith(f"Error: {data}") and words in message
    assert not (tmp_path / "a.jsonl").exists()


@pytest.fixture
def read_only(tmp_path, monkeypatch):
    """A directory that refuses new files (simulated: the tests may run as root, whom chmod does not stop)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and str(dir).startswith(str(locked)):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    return locked


def _no_attack(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the data was read and attacked before the output was checked")

    monkeypatch.setattr(cli, "_load_and_build", refuse)


@pytest.mark.parametrize(
    "out, extra",
    [("locked/adv.jsonl", []), ("locked/new/adv.jsonl", []), ("locked/set", ["format=hf"]), ("adv.jsonl", ["stats={}/locked/s.json"])],
)
def test_an_unwritable_output_is_refused_before_the_attack(race, tmp_path, read_only, monkeypatch, capsys, out, extra):
    _no_attack(monkeypatch)
    extra = [e.format(tmp_path) for e in extra]
    message = _one_line_error(capsys, ["apply", "attack=charswap", f"data={race}", f"out={tmp_path / out}", *extra])
    assert message.startswith(f"Error: cannot write {read_only}/") and "is not writable (Permission denied)" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "locked"] and not any(read_only.iterdir())


def test_stats_refuses_an_unwritable_out_before_measuring(race, tmp_path, read_only, monkeypatch, capsys):
    _no_attack(monkeypatch)
    message = _one_line_error(capsys, ["stats", "attack=charswap", f"data={race}", f"out={read_only / 's.json'}"])
    assert message == (
        f"Error: cannot write {read_only / 's.json'}: the directory {read_only} is not writable (Permission denied); "
        "write elsewhere or fix its permissions"
    )


def test_a_format_that_cannot_hold_the_examples_is_refused_before_the_attack(race, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "attack_example", lambda *a: pytest.fail("attacked before the format was checked"))
    message = _one_line_error(capsys, ["apply", "attack=charswap", f"data={race}", f"out={tmp_path / 'a.json'}", "format=squad"])
    assert message == f"Error: format=squad cannot hold mc examples (data={race}): give format= one of race_jsonl, race_original, dream, hf"
    assert not (tmp_path / "a.json").exists()


def test_a_stats_file_onto_the_input_or_the_output_is_refused(race, tmp_path, capsys):
    before = race.read_bytes()
    out = tmp_path / "a.jsonl"
    message = _one_line_error(capsys, ["apply", "attack=charswap", f"data={race}", f"out={out}", f"stats={race}"])
    assert message == f"Error: stats={race} is the input file {race}: writing it would destroy the input; give another file name"
    message = _one_line_error(capsys, ["apply", "attack=charswap", f"data={race}", f"out={out}", f"stats={out}"])
    assert message == f"Error: stats={out} is the attacked file out={out}: give another file name"
    assert race.read_bytes() == before and not out.exists()


def test_nothing_left_to_write_is_one_line(race, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "attack_example", lambda attack, ex, seed, epoch: (ex, False))  # the attack changes none
    out = tmp_path / "a.jsonl"
    message = _one_line_error(capsys, ["apply", "attack=charswap", f"data={race}", f"out={out}", "keep_failed=false"])
    assert message == "Error: the attack changed none of the 4 examples and keep_failed=false leaves them out: nothing to write"
    assert not out.exists()
