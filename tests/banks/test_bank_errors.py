"""Distractor banks that cannot be used as they are, and bank outputs that cannot be written: one
line naming the file, the line, the record or the ids, before any work and with nothing written."""

from __future__ import annotations

import errno
import json
import logging
import random
import tempfile
from pathlib import Path

import pytest

from robust_mrc.attacks.apply import build_attack
from robust_mrc.attacks.pools import BankFileError, load_bank
from robust_mrc.core.errors import UserError
from robust_mrc.data.synthetic import synthetic_splits

BANK_ATTACKS = ("distractor_extraction", "distractor_generation")


@pytest.fixture(scope="module")
def splits():
    return synthetic_splits("mc", 20, 0, 6, 0)


def write_lines(path: Path, records) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def bank_for(examples, **changes) -> list[dict]:
    return [{"id": ex.id, "distractors": ["a red kite", "the old bridge"], **changes} for ex in examples]


def attack_with(name: str, bank: Path, splits):
    return build_attack({"name": name, "params": {"bank": str(bank)}}, "mc", splits["train"], targets=splits["test"])


@pytest.mark.parametrize(
    "second, says",
    [
        ({"distractors": "a red kite is seen"}, "'distractors' must be a list of strings, got a string 'a red kite is seen'"),
        ({"distractors": ["a red kite", 7]}, "'distractors' must be a list of strings, got a list holding a number 7"),
        ({"distractors": None}, "'distractors' must be a list of strings, got null"),
    ],
)
@pytest.mark.parametrize("name", BANK_ATTACKS)
def test_distractors_that_are_no_list_of_strings_name_the_file_line_and_id(splits, tmp_path, name, second, says):
    records = bank_for(splits["test"])
    records[1].update(second)
    bank = write_lines(tmp_path / "bank.jsonl", records)
    with pytest.raises(BankFileError) as info:
        attack_with(name, bank, splits)
    assert isinstance(info.value, UserError)
    assert str(info.value) == f"distractor bank {bank}, line 2, id {splits['test'][1].id!r}: {says}"


@pytest.mark.parametrize(
    "record, says",
    [
        ('["q1", ["a red kite"]]', 'a bank record is an object {"id": ..., "distractors": ["...", ...]}, got a list'),
        ('{"distractors": ["a red kite"]}', "a bank record is an object"),
        ('{"id": ["q1"], "distractors": ["a red kite"]}', "the id is a list ['q1']"),
    ],
)
def test_a_record_that_is_not_a_bank_record_is_named(tmp_path, record, says):
    bank = write_lines(tmp_path / "bank.jsonl", ['{"id": "q0", "distractors": ["a red kite"]}', "", record])
    with pytest.raises(BankFileError, match=r"^distractor bank .*bank\.jsonl, line 3: ") as info:
        load_bank(str(bank))
    assert says in str(info.value)


def test_a_bank_cut_short_names_the_file_and_its_last_line(splits, tmp_path):
    lines = [json.dumps(r) for r in bank_for(splits["test"])]
    lines[-1] = lines[-1][:20]  # the write stopped mid-record
    bank = write_lines(tmp_path / "bank.jsonl", lines)
    with pytest.raises(BankFileError) as info:
        attack_with("distractor_extraction", bank, splits)
    assert str(info.value).startswith(f"distractor bank {bank}, line {len(lines)}: not valid JSON (")
    assert "make the bank again" in str(info.value)
    obj = tmp_path / "bank.json"  # the {id: distractors} layout: the line inside the file
    obj.write_text('{\n "q1": ["a red kite"],\n "q2": "the old bridge"\n}\n')
    with pytest.raises(BankFileError, match=rf"^distractor bank {obj}, id 'q2': 'distractors' must be a list of strings"):
        load_bank(str(obj))
    obj.write_text('{\n "q1": ["a red kite"],\n "q2": ["the old\n')
    with pytest.raises(BankFileError, match=rf"^distractor bank {obj}, line 3: not valid JSON"):
        load_bank(str(obj))


def test_a_missing_bank_file_is_a_users_mistake(splits, tmp_path):
    with pytest.raises(BankFileError, match=rf"^distractor bank {tmp_path / 'nope.jsonl'} does not exist \(bank= takes"):
        attack_with("distractor_generation", tmp_path / "nope.jsonl", splits)


@pytest.mark.parametrize("name, command", [(BANK_ATTACKS[0], "robust-mrc banks de"), (BANK_ATTACKS[1], "robust-mrc banks dg")])
def test_a_bank_that_covers_none_of_the_questions_is_refused_showing_both_ids(splits, tmp_path, name, command):
    records = [{**r, "id": "other-" + r["id"]} for r in bank_for(splits["test"])]
    bank = write_lines(tmp_path / "bank.jsonl", records)
    with pytest.raises(BankFileError) as info:
        attack_with(name, bank, splits)
    ids = [ex.id for ex in splits["test"]]
    assert str(info.value) == (
        f"{name}: distractor bank {bank} covers none of the {len(ids)} questions it attacks: the bank's ids look like "
        f"'other-{ids[0]}', 'other-{ids[1]}', 'other-{ids[2]}', ...; the data's like {ids[0]!r}, {ids[1]!r}, {ids[2]!r}, ...; "
        f"make a bank for this data ({command} data=... out=...)"
    )
    empty = write_lines(tmp_path / "empty.jsonl", [])
    with pytest.raises(BankFileError, match=rf"^{name}: distractor bank {empty} holds no records; make a bank for this data"):
        attack_with(name, empty, splits)


def test_a_bank_that_covers_some_questions_warns_once_with_the_share(splits, tmp_path, caplog):
    test = splits["test"]
    bank = write_lines(tmp_path / "bank.jsonl", bank_for(test[:2]))
    with caplog.at_level(logging.WARNING):
        attack = attack_with("distractor_extraction", bank, splits)
        attacked = [attack(ex, random.Random(0)) for ex in test]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"distractor_extraction: distractor bank {bank} covers 2 of the {len(test)} questions it attacks (33.3%); the 4 others "
        f"(e.g. {test[2].id!r}, {test[3].id!r}, {test[4].id!r}, ...) are left as they are"
    ]
    assert [a is not None for a in attacked] == [True, True, False, False, False, False]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        attack_with("distractor_extraction", bank, splits)  # built again (training, then evaluation): said once
    assert not caplog.records


def test_without_targets_a_bank_is_read_without_a_coverage_check(splits, tmp_path):
    bank = write_lines(tmp_path / "bank.jsonl", [{"id": "elsewhere", "distractors": ["a red kite"]}])
    attack = build_attack({"name": "distractor_extraction", "params": {"bank": str(bank)}}, "mc")
    assert attack(splits["test"][0], __import__("random").Random(0)) is None


def test_the_attacks_command_writes_nothing_for_a_bank_of_characters(splits, tmp_path, capsys):
    """A string ``distractors`` was iterated by character: options 'a', 'r', ... written with status 0."""
    from robust_mrc.cli.attacks import main
    from robust_mrc.data.writers import write_examples

    data = tmp_path / "test.jsonl"
    write_examples(splits["test"], data, "race_jsonl")
    bank = write_lines(tmp_path / "bank.jsonl", bank_for(splits["test"], distractors="a red kite is seen"))
    out = tmp_path / "attacked.jsonl"
    with pytest.raises(SystemExit) as info:
        main(["apply", "attack=distractor_extraction", f"data={data}", f"out={out}", f"bank={bank}"])
    code, err = info.value.code, capsys.readouterr().err.strip()
    message = code if isinstance(code, str) else err
    assert code not in (0, None) and "\n" not in message
    assert f"distractor bank {bank}, line 1, id {splits['test'][0].id!r}: 'distractors' must be a list of strings" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank.jsonl", "test.jsonl"]


def test_a_damaged_cached_bank_is_made_again(splits, tmp_path, monkeypatch, caplog):
    """``bank=auto``'s cache: a bank file cut short is built again, with a warning naming it."""
    from robust_mrc.banks import auto, dg

    monkeypatch.setenv("ROBUST_MRC_CACHE", str(tmp_path / "cache"))
    generator = tmp_path / "generator.ckpt"
    generator.write_bytes(b"a generator")
    made = []

    def generate(path, targets, **kwargs):
        made.append(len(targets))
        return {ex.id: ["a red kite", "the old bridge"] for ex in targets}, [2] * len(targets)

    monkeypatch.setattr(dg, "build_dg_bank", generate)
    first = auto.dg_bank(generator, splits["test"])
    first.path.write_text(first.path.read_text()[:-25])
    with caplog.at_level(logging.WARNING):
        again = auto.dg_bank(generator, splits["test"])
    assert made == [6, 6] and again.built and again.bank == first.bank
    assert f"the cached bank {first.path} cannot be read (distractor bank {first.path}, line 6: not valid JSON" in caplog.text


def test_a_damaged_extractor_record_trains_the_extractor_again(tmp_path, caplog):
    from robust_mrc.banks.auto import _recorded_ckpt

    record = tmp_path / "extractor.json"
    assert _recorded_ckpt(record) is None
    record.write_text('{"ckpt": "X/best.ckpt"}')
    assert _recorded_ckpt(record) == "X/best.ckpt"
    for damaged in ('{"ckpt": "X/be', "[1, 2]"):
        record.write_text(damaged)
        with caplog.at_level(logging.WARNING):
            assert _recorded_ckpt(record) is None
        assert f"the extractor record {record} cannot be read: the span extractor is trained again" in caplog.text


# --- bank commands: outputs that cannot be written, refused before any work ---------------------


@pytest.fixture
def read_only(tmp_path, monkeypatch) -> Path:
    """A directory where no file can be made (as a read-only file system answers, root included)."""
    where = tmp_path / "ro"
    where.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir).resolve() == where.resolve():
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    return where


def no_work(monkeypatch, *targets):
    def refuse(*args, **kwargs):
        raise AssertionError("work started before the outputs were checked")

    for module, name in targets:
        monkeypatch.setattr(module, name, refuse)


@pytest.mark.parametrize("where", ["out", "stats", "work_dir"])
def test_de_command_refuses_an_unwritable_output_before_any_work(read_only, tmp_path, monkeypatch, capsys, where):
    import robust_mrc.data.sources as sources
    from robust_mrc.cli.banks import de_main as main

    no_work(monkeypatch, (sources, "load_splits"))
    paths = {"out": tmp_path / "de.jsonl", "stats": tmp_path / "de.stats.json", "work_dir": tmp_path / "de.work"}
    paths[where] = read_only / ("de.work" if where == "work_dir" else "de.jsonl" if where == "out" else "de.stats.json")
    with pytest.raises(SystemExit) as info:
        main(["model=tiny", *(f"{k}={v}" for k, v in paths.items())])
    assert info.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"Error: cannot write {paths[where]}: the directory {read_only} is not writable (Read-only file system); "
        "write elsewhere or fix its permissions"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"] and not any(read_only.iterdir())


def test_dg_command_refuses_an_unwritable_output_before_training(read_only, tmp_path, monkeypatch):
    import robust_mrc.cli.banks as dg
    from robust_mrc.config.checks import ConfigError
    from tests.helpers import make_cfg

    no_work(monkeypatch, (dg, "load_generator"), (dg, "bank_questions"))
    out = read_only / "dg.jsonl"
    cfg = make_cfg("model=tiny", f"out={out}", f"output_dir={tmp_path / 'run'}", config_name="bank_dg")
    with pytest.raises(ConfigError) as info:
        dg.build_dg(cfg)
    assert str(info.value) == (
        f"bad config: cannot write {out}: the directory {read_only} is not writable (Read-only file system); "
        "write elsewhere or fix its permissions"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"] and not any(read_only.iterdir())
