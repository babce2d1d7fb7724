"""`robust-mrc attacks audit`: a blinded judging sheet with controls, and the table of a filled one."""

from __future__ import annotations

import csv
import json

import pytest

import robust_mrc.cli.attacks as cli
from robust_mrc.attacks.audit import (
    CONTROL_REJECT_LIMIT,
    AuditError,
    default_controls,
    draw_sample,
    inserted_chunks,
    score_sheet,
    sentence_spans,
    wilson,
    write_audit,
)
from robust_mrc.data.synthetic.generator import make_synthetic_mc, make_synthetic_span
from robust_mrc.data.writers import write_examples

SEED = 9173  # a number no synthetic passage holds
FILES = ("sheet.csv", "sheet.md", "instructions.md", "key.json")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    write_examples(make_synthetic_mc(40, 5), root / "mc.jsonl", "race_jsonl")
    write_examples(make_synthetic_span(40, 5), root / "span.json", "squad")
    return root


def _audit(data, out, attack="diagnosis", file="mc.jsonl", **keys):
    args = {"attack": attack, "data": str(data / file), "out": str(out), "n": 8, "seed": SEED, **keys}
    return cli.audit(args)


@pytest.fixture(scope="module")
def mc_audit(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("audit") / "mc"
    summary = _audit(data, out)
    return out, summary


def _rows(sheet) -> tuple[list[str], list[dict[str, str]]]:
    """The headers and the rows of a sheet, keyed by column name (the header without its allowed values)."""
    with open(sheet, newline="", encoding="utf-8") as fh:
        records = list(csv.reader(fh))
    headers = records[0]
    names = [h.split(" [")[0] for h in headers]
    return headers, [dict(zip(names, r)) for r in records[1:]]


def _fill(sheet, verdicts: dict[str, dict[str, str]]) -> None:
    """Write ``verdicts`` (row -> column name -> value) into the sheet, as a judge would."""
    headers, rows = _rows(sheet)
    names = [h.split(" [")[0] for h in headers]
    for row in rows:
        row.update(verdicts.get(row["row"], {}))
    with open(sheet, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(headers)
        writer.writerows([[row[n] for n in names] for row in rows])


def _key(out) -> dict:
    return json.loads((out / "key.json").read_text())


def test_the_sheet_names_no_attack_seed_version_or_kind(mc_audit):
    out, summary = mc_audit
    key = _key(out)
    assert summary["mode"] == key["mode"] == "sentences" and key["attack"] == "diagnosis" and key["seed"] == SEED
    assert key["provenance"]["attack"] == "diagnosis" and key["version"]
    for name in ("sheet.csv", "sheet.md", "instructions.md"):
        text = (out / name).read_text()
        for leak in ("diagnosis", str(SEED), "seed", key["version"], key["attack_code"], "control", "attack", "synmc-"):
            assert leak not in text.lower(), (name, leak)
    headers, rows = _rows(out / "sheet.csv")
    assert [r["row"] for r in rows] == [r["row"] for r in key["rows"]]
    assert "valid [yes|weak|no]" in headers and "s1_flip [yes|no|unclear]" in headers and "s1_fluent [ok|awkward|garbage]" in headers
    verdicts = [h.split(" [")[0] for h in headers if "[" in h and h != "reason [free text]"]
    assert all(r[v] == "" for r in rows for v in verdicts)


def test_controls_are_mixed_in_and_marked_like_the_attacked_rows(mc_audit, data):
    out, _ = mc_audit
    from robust_mrc.data.readers import load_examples

    originals = {ex.id: ex for ex in load_examples(data / "mc.jsonl")}
    key = _key(out)
    kinds = [r["kind"] for r in key["rows"]]
    assert kinds.count("attacked") == 8 and kinds.count("control") == default_controls(8) == 5
    first, last = kinds.index("control"), len(kinds) - 1 - kinds[::-1].index("control")
    assert "attacked" in kinds[first:last], "the controls sit in one block"
    _, rows = _rows(out / "sheet.csv")
    passages = set()
    for entry, row in zip(key["rows"], rows):
        original = originals[entry["id"]].passage
        assert entry["marked"] and row["S1"] == entry["marked"][0] and "[[S1: " in row["passage"]
        unmarked, without = row["passage"], row["passage"]
        for k, sentence in enumerate(entry["marked"], 1):
            assert f"[[S{k}: {sentence}]]" in row["passage"]
            unmarked = unmarked.replace(f"[[S{k}: {sentence}]]", sentence)
            without = without.replace(f"[[S{k}: {sentence}]]", "")
        # a control marks real sentences of its own passage; an attacked row the inserted ones
        shown = without if entry["kind"] == "attacked" else unmarked
        assert " ".join(shown.split()) == " ".join(original.split())
        passages.add(original)
    assert len(passages) == len(rows)  # one row per passage


def test_the_same_seed_gives_the_same_files_byte_for_byte(mc_audit, data, tmp_path):
    out, _ = mc_audit
    _audit(data, tmp_path / "again")
    for name in FILES:
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes(), name
    _audit(data, tmp_path / "other", seed=SEED + 1)
    assert (tmp_path / "other" / "sheet.csv").read_bytes() != (out / "sheet.csv").read_bytes()


def test_an_existing_audit_is_never_overwritten(mc_audit, data, capsys):
    out, _ = mc_audit
    before = (out / "sheet.csv").read_bytes()
    with pytest.raises(SystemExit) as done:
        cli.main(["audit", "attack=diagnosis", f"data={data / 'mc.jsonl'}", f"out={out}"])
    assert done.value.code.startswith(f"Error: out={out} already holds an audit (sheet.csv")
    assert (out / "sheet.csv").read_bytes() == before


def _copy(out, tmp_path):
    target = tmp_path / "judged"
    target.mkdir()
    for name in FILES:
        (target / name).write_bytes((out / name).read_bytes())
    return target


def test_score_counts_verdicts_with_wilson_intervals(mc_audit, tmp_path):
    out = _copy(mc_audit[0], tmp_path)
    key = _key(out)
    attacked = [r for r in key["rows"] if r["kind"] == "attacked"]
    controls = [r for r in key["rows"] if r["kind"] == "control"]
    fills = {}
    valid = ["yes", "yes", "yes", "yes", "weak", "no", "yes"]  # the eighth attacked row is left unjudged
    for entry, v in zip(attacked, valid):
        fills[entry["row"]] = {"valid": v.upper(), "problem": {"weak": "multiple", "no": "conflicting"}.get(v, ""), "reason": "x"}
        for k in range(1, len(entry["marked"]) + 1):
            fills[entry["row"]] |= {f"s{k}_flip": "yes" if k == 1 else "unclear", f"s{k}_fluent": "awkward"}
    for i, entry in enumerate(controls):
        fills[entry["row"]] = {"valid": "yes", "reason": "item: two answers" if i == 0 else ""}
        for k in range(1, len(entry["marked"]) + 1):
            fills[entry["row"]] |= {f"s{k}_flip": "yes", f"s{k}_fluent": "ok"}
    _fill(out / "sheet.csv", fills)
    table = score_sheet(out / "sheet.csv")
    a, c = table["attacked"], table["controls"]
    assert (a["rows"], a["judged"], a["not_judged"]) == (8, 7, 1)
    assert a["valid_strict"]["k"] == 5 and a["valid_strict"]["n"] == 7
    assert a["valid_lenient"]["k"] == 6 and a["valid_lenient"]["n"] == 7
    assert a["problem"]["values"]["conflicting"]["k"] == 1 and a["problem"]["values"]["multiple"]["k"] == 1
    sentences = sum(len(e["marked"]) for e in attacked[:7])
    seconds = sum(len(e["marked"]) >= 2 for e in attacked[:7])
    assert a["flip"]["values"]["yes"]["k"] == 7 and a["flip"]["values"]["unclear"]["k"] == seconds
    assert a["flip"]["values"]["yes"]["n"] == sentences and a["flip"]["not_judged"] == len(attacked[7]["marked"])
    assert a["fluent"]["values"]["awkward"] == {**a["fluent"]["values"]["awkward"], "k": sentences, "share": 1.0}
    assert c["item_problems"]["k"] == 1 and c["valid_strict"]["n"] == 4 and c["valid_strict"]["k"] == 4
    # the Wilson interval, against the textbook values for 5/7 and for 4/4
    assert a["valid_strict"]["ci95"] == pytest.approx([0.3589, 0.9178], abs=1e-4)
    assert c["valid_strict"]["ci95"] == pytest.approx([0.5101, 1.0], abs=1e-4)
    assert wilson(0, 0) is None and wilson(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert table["controls_check"]["warning"] is None and table["controls_check"]["rejected"] == 0
    assert [r["row"] for r in table["rejected_attacked"]] == [attacked[5]["row"], attacked[4]["row"]]  # no before weak
    md = (out / "sheet.score.md").read_text() if (out / "sheet.score.md").exists() else None
    assert md is None  # score_sheet writes nothing; the command writes the table
    result = cli.score({"sheet": str(out / "sheet.csv")})
    assert (out / "sheet.score.md").read_text() == result["markdown"]
    assert json.loads((out / "sheet.score.json").read_text())["attacked"] == a
    assert "| valid, strict (weak = invalid) | yes | 5/7 = 71.4 % [35.9, 91.8] |" in result["markdown"]
    assert "Not judged yet (blank): valid: 1 attacked, 0 controls" in result["markdown"]


def test_controls_rejected_past_the_limit_warn(mc_audit, tmp_path):
    out = _copy(mc_audit[0], tmp_path)
    controls = [r for r in _key(out)["rows"] if r["kind"] == "control"]
    bad = int(len(controls) * CONTROL_REJECT_LIMIT) + 1
    fills = {}
    for i, entry in enumerate(controls):
        fills[entry["row"]] = {"valid": "no" if i < bad else "yes", "problem": "multiple" if i < bad else ""}
        fills[entry["row"]] |= {f"s{k}_{q}": v for k in range(1, len(entry["marked"]) + 1) for q, v in (("flip", "yes"), ("fluent", "ok"))}
    _fill(out / "sheet.csv", fills)
    table = score_sheet(out / "sheet.csv")
    assert table["controls_check"]["rejected"] == bad and table["controls_check"]["judged"] == len(controls)
    assert f"rejected {bad} of {len(controls)} controls" in table["controls_check"]["warning"]
    assert "WARNING: the judge rejected" in cli.score({"sheet": str(out / "sheet.csv")})["markdown"]
    # below the limit: no warning
    _fill(out / "sheet.csv", {e["row"]: {"valid": "yes", "problem": ""} for e in controls[1:]})
    assert score_sheet(out / "sheet.csv")["controls_check"]["warning"] is None


def test_an_unfilled_sheet_counts_every_row_unjudged_and_warns(mc_audit):
    table = score_sheet(mc_audit[0] / "sheet.csv")
    assert table["attacked"]["not_judged"] == 8 and table["attacked"]["valid_strict"]["n"] == 0
    assert table["controls_check"]["warning"] == "no control row is judged yet: the judge is unchecked"


@pytest.mark.parametrize(
    "column, value, words",
    [
        ("valid", "maybe", "column valid: 'maybe' is not one of yes, weak, no (blank: not judged yet)"),
        ("s1_fluent", "fine", "column s1_fluent: 'fine' is not one of ok, awkward, garbage (blank: not judged yet)"),
    ],
)
def test_a_bad_verdict_is_one_line_naming_file_row_and_values(mc_audit, tmp_path, capsys, column, value, words):
    out = _copy(mc_audit[0], tmp_path)
    row = _key(out)["rows"][3]["row"]
    _fill(out / "sheet.csv", {row: {column: value}})
    with pytest.raises(SystemExit) as done:
        cli.main(["audit", "score", f"sheet={out / 'sheet.csv'}"])
    message = capsys.readouterr().err.strip()
    assert done.value.code == 1 and len(message.splitlines()) == 1
    assert message == f"Error: {out / 'sheet.csv'}: row {row}, {words}"


class Inserter:
    """A stand-in attack: one or two sentences inserted at sentence boundaries; gives up on every third example."""

    name = "test_inserter"
    params = {"most": 2}

    def provenance(self):
        return {"attack": self.name, "method": "test"}

    def __call__(self, ex, rng):
        if int(ex.id.rsplit("-", 1)[1]) % 3 == 0:
            return None
        sentences = ex.passage.split(". ")
        added = [f"The ghost ate {rng.randint(2, 99)} pies" for _ in range(rng.randint(1, self.params["most"]))]
        for sentence in added:
            sentences.insert(rng.randint(0, len(sentences) - 1), sentence)
        return ex.replace(attack=self.name, detail=" | ".join(added), passage=". ".join(sentences))


def test_draws_replace_examples_the_attack_gives_up_on_and_rows_mark_their_own_sentences(data, tmp_path):
    from robust_mrc.data.readers import load_examples

    examples = load_examples(data / "mc.jsonl")
    sample = draw_sample(Inserter(), examples, 9, SEED, controls=3)
    assert [r.kind for r in sample.rows].count("attacked") == 9 and sample.skipped["gave_up"] > 0
    assert sample.drawn == 9 + 3 + sum(sample.skipped.values())
    counts = {len(r.marks) for r in sample.rows if r.kind == "attacked"}
    assert counts == {1, 2} and sample.sentences == 2
    for row in sample.rows:
        marked = [row.shown.passage[s:e] for s, e in row.marks]
        if row.kind == "attacked":
            assert sorted(row.shown.edits[-1].detail.split(" | ")) == sorted(m.rstrip(".") for m in marked)
        else:
            assert all(m in row.original.passage for m in marked)
    out = tmp_path / "a"
    write_audit(sample, out, {"data": "mc.jsonl"})
    key = _key(out)
    one = next(e for e in key["rows"] if len(e["marked"]) == 1)["row"]
    _fill(out / "sheet.csv", {one: {"s2_flip": "yes"}})
    with pytest.raises(AuditError, match=f"row {one}, column s2_flip: the row marks 1 sentence.s., no S2; leave it blank"):
        score_sheet(out / "sheet.csv")
    _fill(out / "sheet.csv", {one: {"s2_flip": "", "valid": "yes", "problem": "multiple"}})
    with pytest.raises(AuditError, match=f"row {one}, column problem: 'multiple' beside valid=yes"):
        score_sheet(out / "sheet.csv")
    other = tmp_path / "b"
    write_audit(draw_sample(Inserter(), examples, 9, SEED + 1, controls=3), other, {})
    with pytest.raises(AuditError, match="passage or question is not the one the key .* describes"):
        score_sheet(other / "sheet.csv", key=out / "key.json")


def test_an_inserted_chunk_is_found_on_sentence_boundaries():
    before = "Tom ate a pie. Mrs. Green ate a pie. Then they slept."
    after = "Tom ate a pie. Ann ate a pie. Mrs. Green ate a pie. Then they slept. Bob ran. Sue hid."
    chunks = inserted_chunks(before, after)
    assert [after[s:e] for s, e in chunks] == ["Ann ate a pie.", "Bob ran. Sue hid."]
    assert [after[s:e] for s, e in sentence_spans(after)][:3] == ["Tom ate a pie.", "Ann ate a pie.", "Mrs. Green ate a pie."]
    assert inserted_chunks(before, before.replace("Tom", "Tim")) is None
    text = "Taken to Madison Ave. and 81st St. A friend came. He left on September 1. Under Webb, H.W. Wembly went.\nWas it? Yes!"
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "Taken to Madison Ave. and 81st St. A friend came.",
        "He left on September 1.",
        "Under Webb, H.W. Wembly went.",
        "Was it?",
        "Yes!",
    ]


def test_span_insertions_mark_answerless_sentences_of_the_controls(data, tmp_path):
    from robust_mrc.data.readers import load_examples

    originals = {ex.id: ex for ex in load_examples(data / "span.json")}
    out = tmp_path / "span"
    summary = _audit(data, out, attack="random_words", file="span.json", n=6)
    key = _key(out)
    assert summary["mode"] == "sentences" and key["task"] == "span"
    headers, rows = _rows(out / "sheet.csv")
    assert "s1_compatible [yes|no]" in headers and "s1_grammatical [yes|minor|rewrite|garbage]" in headers
    assert "s1_on_topic [yes|no]" in headers and "options" not in headers
    for entry in key["rows"]:
        ex = originals[entry["id"]]
        for sentence in entry["marked"]:
            if entry["kind"] == "control":
                assert sentence in ex.context and not any(a in sentence for a in ex.answer_texts)
            else:
                assert sentence not in ex.context
    assert [r["kind"] for r in key["rows"]].count("control") == 5


def test_option_attacks_ask_the_cue_probe_questions_and_mark_no_option(data, tmp_path):
    out = tmp_path / "options"
    _audit(data, out, attack="random_option", n=6)
    key = _key(out)
    assert key["mode"] == "changes"
    headers, rows = _rows(out / "sheet.csv")
    assert "facts [yes|no]" in headers and "cue [yes|no]" in headers and not any(h.startswith("s1_") for h in headers)
    assert not any("{{" in r["passage"] + r["options"] + r["question"] for r in rows)  # nothing changed in the text: no highlight
    assert "Nothing is marked" in (out / "instructions.md").read_text()
    changed = [e for e in key["rows"] if e["kind"] == "attacked"]
    assert all(e["original_options"] and e["changed"] == [] for e in changed)


def test_word_changes_are_highlighted_and_controls_highlight_as_many_words(data, tmp_path):
    from robust_mrc.data.readers import load_examples

    originals = {ex.id: ex for ex in load_examples(data / "span.json")}
    out = tmp_path / "words"
    _audit(data, out, attack="char_noise", file="span.json", n=6)
    key = _key(out)
    assert key["mode"] == "changes" and key["columns"][-3:] == ["valid", "facts", "reason"]
    _, rows = _rows(out / "sheet.csv")
    counts = {"attacked": set(), "control": set()}
    for entry, row in zip(key["rows"], rows):
        ex = originals[entry["id"]]
        assert row["passage"].count("{{") == len(entry["highlighted"]) > 0, entry
        counts[entry["kind"]].add(len({h.lower() for h in entry["highlighted"]}))
        if entry["kind"] == "attacked":
            assert not any(h in ex.context for h in entry["highlighted"])  # every highlighted word is a noised one
        else:
            assert all(h in ex.context and h not in ex.answer_texts for h in entry["highlighted"])
    assert counts["control"] <= counts["attacked"]  # a control highlights as many distinct words as an attacked row


@pytest.mark.parametrize(
    "args, message",
    [
        (["n=0"], "Error: n=0: expected a whole number >= 1"),
        (["controls=-1"], "Error: controls=-1: expected a whole number >= 0 or null (10 % of n, at least 5)"),
        (["ckpt=run.ckpt"], "Error: ckpt=run.ckpt: audit runs the attack without a model (apply with ckpt= makes a searched set)"),
        (["score", "sheet=s.csv", "rate=2"], "Error: audit score takes sheet= and key=, not rate"),
        (["score"], "Error: audit score needs sheet=...  (the filled sheet.csv; key= defaults to key.json beside it)"),
    ],
)
def test_a_bad_audit_argument_is_one_line(data, tmp_path, capsys, args, message):
    base = [] if args[0] == "score" else ["attack=diagnosis", f"data={data / 'mc.jsonl'}", f"out={tmp_path / 'a'}"]
    with pytest.raises(SystemExit) as done:
        cli.main(["audit", *args[:1], *base, *args[1:]])
    assert done.value.code == message
    assert not (tmp_path / "a").exists()
