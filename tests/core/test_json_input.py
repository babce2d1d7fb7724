"""Reading a user's JSON file: the value, or one error naming the file and what is wrong with it."""

from __future__ import annotations

import pytest

from robust_mrc.core.json_input import NESTED_TOO_DEEPLY, read_json_file


class Refused(ValueError):
    pass


def test_reads_the_value(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text('{"a": [1, 2]}', encoding="utf-8")
    assert read_json_file(path, Refused) == {"a": [1, 2]}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"a": ', "not valid JSON (Expecting value at line 1, column 7)"),
        (b'{"a": "\xff"}', "not UTF-8 text (invalid start byte at byte 7)"),
        (b"[" * 100_000 + b"]" * 100_000, NESTED_TOO_DEEPLY),
    ],
)
def test_a_bad_file_names_itself_and_the_reason(tmp_path, content, reason):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(Refused) as err:
        read_json_file(path, Refused)
    assert str(err.value) == f"{path}: {reason}"
    with pytest.raises(Refused) as err:
        read_json_file(path, Refused, label="report=bad.json", damaged="evaluation report")
    assert str(err.value) == f"report=bad.json: damaged evaluation report: {reason}"


def test_a_missing_file_is_not_called_damaged(tmp_path):
    path = tmp_path / "absent.json"
    with pytest.raises(Refused) as err:
        read_json_file(path, Refused, damaged="results")
    assert str(err.value).startswith(f"{path}: cannot be read (")
    assert "damaged" not in str(err.value)
