"""The DE bank made by the project's span model: MC -> span data, the DE rules on
hand-made n-best lists, bank files the attack reads, bank statistics, the end-to-end command."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import pytest

from robust_mrc.attacks import example_rng, get_attack
from robust_mrc.attacks.mc.distractors import filter_spans
from robust_mrc.attacks.pools import load_bank, write_bank
from robust_mrc.attacks.search import Prediction
from robust_mrc.banks.de import dangling, extract_bank, span_text
from robust_mrc.banks.span_data import insert_answer, insertion_points, query_example, write_span_data
from robust_mrc.banks.stats import bank_stats, collapse_warning
from robust_mrc.cli.banks import de_main as main
from robust_mrc.data.examples import MCExample
from robust_mrc.data.readers import load_examples
from robust_mrc.data.synthetic import synthetic_splits

PASSAGE = "Tom went to the market on Monday. He bought red apples and a blue bus ticket. Then he walked home."


def mc(ex_id="p1-0", question="What did Tom buy?", options=("a green pear", "red apples", "a cat"), label=1, passage=PASSAGE):
    return MCExample(id=ex_id, passage=passage, question=question, options=options, label=label)


# --- MC -> span data -------------------------------------------------------------------------


def test_insert_answer_puts_the_option_at_answer_start_and_leaves_the_rest():
    examples = synthetic_splits("mc", 40, 0, 0, 0)["train"]
    starts = set()
    for ex in examples:
        span = insert_answer(ex, seed=3)
        (answer,) = span.answers
        assert answer.text == ex.answer and span.context[answer.start : answer.end] == ex.answer
        assert answer.start in insertion_points(ex.passage)[:-1] or answer.start == len(ex.passage) + 1  # the end: after a space
        # removing the inserted option (and its separating space) gives the passage back
        if answer.start < len(ex.passage):
            assert span.context[: answer.start] + span.context[answer.end + 1 :] == ex.passage
        else:
            assert span.context.endswith(" " + ex.answer)
        assert span.question == ex.question and span.id == ex.id
        starts.add(answer.start)
    assert len(starts) > 10  # random positions, not one fixed place


def test_insertion_is_hashed_per_example_and_seed():
    ex = mc(passage=" ".join(f"w{i}" for i in range(200)))
    a = insert_answer(ex, seed=0)
    assert insert_answer(ex, seed=0) == a
    assert any(insert_answer(ex, seed=s).answers[0].start != a.answers[0].start for s in range(1, 6))
    assert any(insert_answer(ex.replace(id=f"p{k}-0"), seed=0).answers[0].start != a.answers[0].start for k in range(2, 7))
    # the end of the passage is a word position too; the option's white space is collapsed
    short = mc(passage="Hello.", options=("x", "two\n words", "z"))
    seen = {insert_answer(short.replace(id=f"s{k}"), seed=0).context for k in range(40)}
    assert seen == {"two words Hello.", "Hello. two words"}


def test_cloze_questions_kept_and_unusable_examples_skipped(tmp_path):
    cloze = mc(question="Tom bought _ on Monday.")
    assert insert_answer(cloze, 0).question == "Tom bought _ on Monday."
    assert insert_answer(mc(options=("a", "?!", "b")), 0) is None  # an answer without a word
    assert insert_answer(mc(question="  "), 0) is None
    examples = [cloze, mc("p1-1", options=("a", "...", "b")), mc("p2-0")]
    info = write_span_data(examples, tmp_path / "span.json", seed=0)
    assert info == {"examples": 2, "skipped": {"answer without a word": 1}}
    back = load_examples(tmp_path / "span.json")
    assert [e.id for e in back] == ["p1-0", "p2-0"]
    assert back[0] == insert_answer(cloze, 0)
    doc = json.loads((tmp_path / "span.json").read_text())
    assert doc["version"] == "1.1"


def test_query_example_is_the_unmodified_passage_without_answer():
    ex = mc()
    q = query_example(ex)
    assert (q.context, q.question, q.answers, q.id) == (ex.passage, ex.question, (), ex.id)


def test_dream_converts_and_reads_back(shared_data, tmp_path):
    examples = load_examples(shared_data / "dream" / "dev.json", limit=300)
    info = write_span_data(examples, tmp_path / "dream_span.json", seed=42)
    back = {e.id: e for e in load_examples(tmp_path / "dream_span.json")}
    assert info["examples"] == len(back) == len(examples) - sum(info["skipped"].values())
    for ex in examples:
        if ex.id in back:
            a = back[ex.id].answers[0]
            assert back[ex.id].context[a.start : a.end] == " ".join(ex.answer.split())


# --- the DE rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "span, reason",
    [
        ("...", "punctuation"),
        ("the", "stopword"),
        ("of the", "stopword"),  # no content word
        ("red apples", "answer"),  # a substring of the answer "fresh red apples"
        ("some fresh red apples today", "answer"),  # contains the answer
        ("fresh apple pie", "overlap"),  # stems {fresh, appl, pie} vs {fresh, red, appl}: 2/4
    ],
)
def test_each_rule_drops_its_span(span, reason):
    dropped = Counter()
    assert filter_spans([span, "a blue bus ticket"], "fresh red apples", dropped=dropped) == ["a blue bus ticket"]
    assert dropped == Counter({reason: 1})


def test_spans_are_checked_against_the_kept_ones_in_rank_order():
    nbest = [
        "blue bus ticket",
        "the blue bus",
        "ticket",
        "the blue bus ticket office",
        "market on Monday",
        "walked home",
        "Monday market",
        "home",
        "walking home slowly",
    ]
    dropped = Counter()
    kept = filter_spans(nbest, "red apples", dropped=dropped)
    assert kept == ["blue bus ticket", "market on Monday", "walked home"]
    # contained: ticket, home; contains: the blue bus ticket office; overlap: the blue bus (2/3),
    # Monday market (1), walking home slowly (2/3)
    assert dropped == Counter({"containment": 3, "overlap": 3})
    assert filter_spans(nbest, "red apples", limit=2) == kept[:2]
    # a low-overlap span is kept: stems {bus, stop} vs {blue, bus, ticket}: 1/4
    assert filter_spans(["blue bus ticket", "bus stop"], "red apples") == ["blue bus ticket", "bus stop"]


def test_span_text_drops_leading_punctuation_only():
    assert span_text(". The train  from") == "The train from"
    assert span_text('"Hello," he said.') == '"Hello," he said.'
    assert span_text("?!") == ""


def test_span_text_drops_a_speakers_tag_and_dangling_spans_are_fragments():
    assert span_text("W: Here it is.") == "Here it is."
    assert span_text(" M:  No.") == "No."
    assert span_text("Woman: I found it.") == "I found it."
    assert span_text("Florist: Men.") == "Men." and span_text("Mr Smith: Hello.") == "Hello."
    assert dangling("F") and not dangling("5") and not dangling("I see")
    assert span_text("F:") == ""
    assert span_text("It was 5:30") == "It was 5:30"  # a colon inside the span stays
    assert [dangling(t) for t in ("yes she's really a", "I want to", "went to the", "the")] == [True, True, True, False]
    assert [dangling(t) for t in ("Quebec City is.", "to the market", "See you", "Hold on", "I saw her", "I like this")] == [False] * 6
    scorer = HandScorer({"What did Tom buy?": ["W: blue bus ticket", "bought a", "market on Monday"]})
    dropped = Counter()
    assert extract_bank(scorer, [mc("p1-0")], dropped) == {"p1-0": ["blue bus ticket", "market on Monday"]}
    assert dropped == Counter({"fragment": 1})


class HandScorer:
    """Hand-made n-best lists keyed by question: a stand-in for the span model."""

    def __init__(self, nbest):
        self.nbest = nbest
        self.seen = []

    def predict(self, examples):
        self.seen += examples
        return [Prediction(nbest=tuple((t, 1.0 / (k + 1)) for k, t in enumerate(self.nbest[ex.question]))) for ex in examples]


def test_extract_bank_reads_unmodified_passages_and_keeps_n_options_minus_one():
    a, b, c = mc("p1-0"), mc("p1-1", question="When?", options=("on Monday", "on Friday"), label=0), mc("p2-0", question="Who?")
    scorer = HandScorer(
        {
            "What did Tom buy?": [". blue bus ticket", "red apples", "the", "market on Monday", "walked home", "Tom"],
            "When?": ["Monday", "Tom\nwent", "went to the market", "home"],
            "Who?": ["a green pear", "..."],
        }
    )
    dropped = Counter()
    bank = extract_bank(scorer, [a, b, c], dropped)
    assert dropped == Counter({"answer": 2, "stopword": 1, "punctuation": 1, "line_break": 1})
    assert bank == {"p1-0": ["blue bus ticket", "market on Monday"], "p1-1": ["went to the market"], "p2-0": ["a green pear"]}
    assert {(e.id, e.context, e.answers) for e in scorer.seen} == {(x.id, PASSAGE, ()) for x in (a, b, c)}


class CrashingScorer(HandScorer):
    """Reads ``calls`` chunks, then dies like a preempted job."""

    def __init__(self, nbest, calls):
        super().__init__(nbest)
        self.calls = calls

    def predict(self, examples):
        if self.calls == 0:
            raise KeyboardInterrupt("preempted")
        self.calls -= 1
        return super().predict(examples)


def test_an_interrupted_extraction_resumes_from_its_journal_and_gives_the_same_bank(tmp_path):
    from robust_mrc.core.journal import Journal

    examples = [mc(f"p{k}-0", question=f"Q{k}?") for k in range(5)]
    nbest = {f"Q{k}?": ["red apples", "blue bus ticket", f"market number {k}"] for k in range(5)}  # the answer first
    whole = extract_bank(HandScorer(nbest), examples, chunk=2)
    settings = {"ckpt": "x", "top": 20}
    path = tmp_path / "de.jsonl.partial.jsonl"
    with pytest.raises(KeyboardInterrupt):
        extract_bank(CrashingScorer(nbest, calls=2), examples, chunk=2, journal=Journal(path, settings))
    assert len(path.read_text().splitlines()) == 1 + 4  # the header and the two chunks read
    again = CrashingScorer(nbest, calls=1)
    dropped = Counter()
    assert extract_bank(again, examples, dropped, chunk=2, journal=Journal(path, settings)) == whole
    assert len(again.seen) == 1  # only the question left was read again
    assert dropped == Counter({"answer": 5})  # the filter ran on every question, the journaled ones too
    # other settings (another checkpoint) start afresh
    fresh = HandScorer(nbest)
    assert extract_bank(fresh, examples, chunk=2, journal=Journal(path, {"ckpt": "y", "top": 20})) == whole
    assert len(fresh.seen) == 5


# --- bank files and the attack ----------------------------------------------------------------


def test_bank_round_trips_and_the_attack_replaces_wrong_options_keeping_the_answer(tmp_path):
    examples = [mc("p1-0"), mc("p1-1", label=0), mc("p1-2"), mc("p1-3")]
    bank = {"p1-0": ["blue bus ticket", "market on Monday"], "p1-1": ["walked home"], "p1-2": [], "p1-3": ["Red apples!", "the market"]}
    path = write_bank(bank, tmp_path / "de.jsonl")
    assert load_bank(str(path)) == {k: tuple(v) for k, v in bank.items()}
    assert json.loads(path.read_text().splitlines()[0]) == {"id": "p1-0", "distractors": ["blue bus ticket", "market on Monday"]}
    attack = get_attack("distractor_extraction", "mc", bank=str(path))
    out = {ex.id: attack(ex, example_rng(0, 0, ex.id, attack.name)) for ex in examples}
    assert out["p1-0"].options == ("blue bus ticket", "red apples", "market on Monday")
    assert out["p1-1"].options == ("a green pear", "walked home", "red apples")  # backfilled
    assert out["p1-2"] is None  # nothing extracted: not attackable
    assert out["p1-3"].options == ("the market", "red apples", "a green pear")  # the answer's twin skipped
    for ex in examples:
        if out[ex.id] is not None:
            assert out[ex.id].label == ex.label and out[ex.id].answer == ex.answer
            assert out[ex.id].passage == ex.passage and out[ex.id].question == ex.question
    # rewriting the bank in the same process is read afresh
    write_bank({"p1-0": ["walked home"]}, path)
    assert load_bank(str(path)) == {"p1-0": ("walked home",)}


def test_bank_stats_by_hand():
    examples = [
        mc("a-0", options=("x y", "red apples", "z"), label=1),
        mc("b-0", options=("one two", "blue sky", "three"), label=1),
        mc("c-0", options=("p", "q", "r"), label=0),
    ]
    bank = {"a-0": ["red apples", "red wine", "green tea"], "b-0": ["sky blue", "blue sky today", "Three"]}
    s = bank_stats(bank, examples)
    assert (s["questions"], s["in_bank"], s["covered"]) == (3, 2, 2)
    # a-0: "red apples" is the answer (skipped): red wine, green tea -> full
    # b-0: "sky blue" (new, normalized differs from "blue sky"), "blue sky today" -> full; "Three" not taken
    assert s["share_full"] == round(2 / 3, 4)
    assert s["new_per_question"] == round(4 / 3, 4)
    assert s["same_as_original"] == 0.0
    # answer Jaccard: red wine/red apples 1/3, green tea 0, sky blue/blue sky 1, blue sky today 2/3
    assert s["answer_jaccard"]["bank"] == round((1 / 3 + 0 + 1 + 2 / 3) / 4, 4)
    # pairwise: a-0 (red wine, green tea) 0; b-0 (sky blue, blue sky today) 2/3
    assert s["pairwise_jaccard"]["bank"] == round((0 + 2 / 3) / 2, 4)
    assert s["pairwise_jaccard"]["original"] == 0.0
    assert s["mean_words"] == {"bank": 2.25, "original": round((2 + 1 + 2 + 1 + 1 + 1) / 6, 4), "answer": round(5 / 3, 4)}
    again = bank_stats({"b-0": ["three", "sky blue"]}, examples)
    assert again["same_as_original"] == 0.5 and again["covered"] == 1
    # 4 distinct of 4 bank distractors; originals: x y, z, one two, three, q, r: 6 of 6
    assert s["distinct"] == {"bank": 1.0, "original": 1.0} and s["most_common"]["share_of_questions"] == 0.5
    assert collapse_warning(s) is None


def test_a_bank_that_repeats_itself_is_flagged():
    examples = [mc(f"q{i}-0", options=(f"answer {i}", f"wrong {i}", f"other {i}"), label=0) for i in range(20)]
    diverse = {ex.id: [f"new {i}", f"newer {i}"] for i, ex in enumerate(examples)}
    same = {ex.id: ["The man's friend.", "He doesn't like the man."] for ex in examples}
    assert collapse_warning(bank_stats(diverse, examples)) is None
    stats = bank_stats(same, examples)
    assert stats["distinct"]["bank"] == 0.05 and stats["most_common"]["share_of_questions"] == 1.0
    assert "repeat themselves" in collapse_warning(stats, "dg")


# --- the command ------------------------------------------------------------------------------

TINY = ["model=tiny", "data.n_train=48", "data.n_val=16", "data.n_test=16", "trainer.max_epochs=1", "batch_size=16"]


def test_command_builds_a_bank_end_to_end_and_a_checkpoint_gives_it_again(tmp_path, capsys):
    out = tmp_path / "de.jsonl"
    assert main([*TINY, f"out={out}"]) == 0
    printed = capsys.readouterr().out
    assert "train:" in printed and "test:" in printed
    bank = load_bank(str(out))
    splits = synthetic_splits("mc", 48, 16, 16, 0)
    assert set(bank) == {ex.id for split in splits.values() for ex in split}
    stats = json.loads((tmp_path / "de.jsonl.stats.json").read_text())
    assert stats["all"]["questions"] == 80 and set(stats["splits"]) == {"train", "validation", "test"}
    assert stats["extractor"]["span_data"]["train"]["examples"] == 48
    assert stats["filter"]["mean_nbest"] == 20
    assert not (tmp_path / "de.jsonl.partial.jsonl").exists()  # the journal goes once the bank is written
    by_id = {ex.id: ex for split in splits.values() for ex in split}
    for ex_id, distractors in bank.items():
        assert len(distractors) <= len(by_id[ex_id].options) - 1
        assert all(d and d in by_id[ex_id].passage for d in distractors)  # spans of the passage
    assert stats["all"]["covered"] > 0
    ckpt = stats["extractor"]["ckpt"]
    again = tmp_path / "again.jsonl"
    assert main([*TINY, f"out={again}", f"ckpt={ckpt}", "splits=test"]) == 0
    assert load_bank(str(again)) == {ex.id: bank[ex.id] for ex in splits["test"]}
    # the span data is the same for the same seed
    first = (tmp_path / "de.work" / "span_data" / "train.json").read_bytes()
    write_span_data(splits["train"], tmp_path / "again.json", seed=42)
    assert (tmp_path / "again.json").read_bytes() == first


@pytest.mark.slow
def test_same_seed_same_bank_end_to_end(tmp_path):
    for name in ("one", "two"):
        assert main([*TINY, f"out={tmp_path / name}.jsonl", "splits=validation"]) == 0
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    first = json.loads((tmp_path / "one.jsonl.stats.json").read_text())
    assert first["extractor"]["val_f1"] == json.loads((tmp_path / "two.jsonl.stats.json").read_text())["extractor"]["val_f1"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["model=tiny"], "out=PATH is required"),
        (["out=x.jsonl", "task=span"], "sets the task itself"),
        (["out=x.jsonl", "trainer.max_epoch=1"], "max_epoch"),
        (["out=x.jsonl", "splits=train,dev"], "splits=train,dev"),
        (["out=x.jsonl", "ckpt=missing.ckpt"], "ckpt=missing.ckpt: no such checkpoint file"),
        (["out=x.jsonl", "data=nope"], "Could not find 'data/nope'; available: dream_local,"),
        (["out=x.jsonl", "data=synthetic_span"], "multiple-choice data"),
        (["out=x.jsonl", "top=0"], "top=0: expected a positive"),
        (["out=x.jsonl", "stats=x.jsonl"], "stats=x.jsonl is the bank file"),
    ],
)
def test_command_mistakes_are_one_line(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: ") and message in err and "\n" not in err
    assert not (tmp_path / "x.jsonl").exists()


def test_help(capsys):
    assert main(["--help"]) == 0
    assert "robust-mrc banks de" in capsys.readouterr().out


# --- distractor_extraction bank=auto: the same path, cached ------------------------------------


def test_auto_builds_the_bank_once_and_reads_it_from_the_cache(tmp_path, monkeypatch, caplog):
    """``bank: auto`` trains the span extractor on the context's training examples, reads the targets
    with it (a child process running :func:`build_de_bank`), caches the bank; the second build of the
    attack reads the cache, another target set reuses the trained extractor."""
    from robust_mrc.attacks.apply import build_attack
    from robust_mrc.banks import auto
    from robust_mrc.jobs.extractor import distractor_banks

    cache = tmp_path / "cache"
    monkeypatch.setenv("ROBUST_MRC_CACHE", str(cache))
    builds = []
    real_build = auto._build_de
    monkeypatch.setattr(auto, "_build_de", lambda *args, **kw: builds.append(args[1]) or real_build(*args, **kw))
    splits = synthetic_splits("mc", 48, 0, 16, 0)
    train, test = splits["train"], splits["test"]
    caplog.set_level(logging.INFO)
    attack = build_attack("distractor_extraction", "mc", train, targets=test, banks=distractor_banks())
    assert len(builds) == 1
    (bank_file,) = (cache / "banks" / "de").glob("*.jsonl")
    assert "building the DE bank (Si et al. 2021 (AdvRACE)): training the span extractor (model=tiny" in caplog.text
    assert f"cached as {bank_file}" in caplog.text and "[train] epoch 1/1 step" in caplog.text  # progress relayed
    assert "DE bank: 16 / 16 questions read" in caplog.text
    prov = attack.provenance()
    assert (prov["attack"], prov["method"]) == ("distractor_extraction", "paper")
    assert prov["resources"]["bank"] == f"auto: {bank_file}" and "tiny, 1 epoch(s), length 256" in prov["resources"]["extractor"]
    stats = json.loads(bank_file.with_name(bank_file.name + ".stats.json").read_text())
    assert stats["all"]["questions"] == 16 and stats["extractor"]["span_data"]["train"]["examples"] == 48

    caplog.clear()
    again = build_attack("distractor_extraction", "mc", train, targets=test, banks=distractor_banks())
    assert len(builds) == 1 and f"DE bank from the cache {bank_file}" in caplog.text

    # the attacked options are the bank's passage spans, the answer and label kept
    bank = load_bank(str(bank_file))
    assert set(bank) == {ex.id for ex in test}
    changed = 0
    for ex in test:
        new = again(ex, example_rng(0, 0, ex.id, again.name))
        if new is None:
            assert not bank[ex.id]
            continue
        changed += 1
        assert new.answer == ex.answer and new.label == ex.label and new.edits[-1].attack == "distractor_extraction"
        fresh = [o for i, o in enumerate(new.options) if i != new.label and o not in ex.options]
        assert fresh and all(o in bank[ex.id] and o in ex.passage for o in fresh)
    assert changed > 0

    # other targets, the same training examples and settings: the extractor is not trained again
    caplog.clear()
    build_attack("distractor_extraction", "mc", train, targets=test[:4], banks=distractor_banks())
    assert len(builds) == 2 and "reading 4 questions with the cached extractor" in caplog.text
    assert "[train]" not in caplog.text

    # a damaged cached extractor checkpoint: named in a warning, trained again once, the bank made
    record = json.loads(next((cache / "banks" / "de").glob("extractor-*/extractor.json")).read_text())
    ckpt = Path(record["ckpt"])
    ckpt.write_bytes(ckpt.read_bytes()[:1000])
    caplog.clear()
    again = build_attack("distractor_extraction", "mc", train, targets=test[:3], banks=distractor_banks())
    assert f"the cached span extractor {ckpt} could not be used" in caplog.text and "[train] epoch 1/1" in caplog.text
    assert again.provenance()["method"] == "paper" and len(builds) == 4
