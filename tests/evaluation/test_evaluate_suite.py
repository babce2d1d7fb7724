"""evaluate(cfg) as a robustness report: suites, disk cache, resume, ensembles, diagnostics."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("ROBUST_MRC_VECTORS", "wordnet")

from robust_mrc.core.errors import ConfigError  # noqa: E402
from robust_mrc.data.sources import load_splits  # noqa: E402
from robust_mrc.data.writers import write_examples  # noqa: E402
from robust_mrc.evaluation.predict import Predictor  # noqa: E402
from robust_mrc.evaluation.suites import SuiteConfigError  # noqa: E402
from robust_mrc.jobs.evaluate import evaluate  # noqa: E402
from robust_mrc.jobs.train import train  # noqa: E402
from robust_mrc.metrics import question_f1  # noqa: E402
from tests.helpers import make_cfg  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
MC_DATA = ["data.n_train=64", "data.n_val=16", "data.n_test=24"]
MC_TRAIN = ["model=tiny", *MC_DATA, "trainer.max_epochs=1", "batch_size=16", "test_after_fit=false"]
SPAN_DATA = ["task=span", "data.n_train=32", "data.n_val=8", "data.n_test=12"]


@pytest.fixture(scope="module")
def mc_ckpts(tmp_path_factory):
    """Two tiny multiple-choice checkpoints (different seeds) and an options-only one."""
    out = []
    for name, extra in (("a", ["seed=1"]), ("b", ["seed=2"]), ("oo", ["seed=3", "task.inputs=options_only"])):
        d = tmp_path_factory.mktemp(f"mc_{name}")
        out.append(train(make_cfg(*MC_TRAIN, *extra, f"output_dir={d}"))["ckpt_path"])
    return out


def run_eval(tmp_path, *overrides, name="eval"):
    out = tmp_path / name
    return evaluate(make_cfg(*overrides, f"output_dir={out}", config_name="eval")), out


def test_advrace_suite_writes_a_consistent_report(mc_ckpts, tmp_path):
    cache = tmp_path / "cache"
    metrics, out = run_eval(tmp_path, f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=advrace", f"cache_dir={cache}")
    report = json.loads((out / "report.json").read_text())
    sets = [
        "clean",
        "addsent",
        "charswap",
        "distractor_extraction",
        "distractor_generation",
        "diagnosis",
        "extraction_cue",
        "magnet_cue",
        "magnet",  # screened per model: after the sets every model shares
    ]
    probes = ["diagnosis", "extraction_cue", "magnet_cue"]  # cue probes: not in the attack average
    (model,) = report["models"]
    entry = report["models"][model]
    assert list(entry["sets"]) == sets and report["primary"] == "acc"
    clean_preds = json.loads((out / "predictions" / model.replace("/", "__") / "clean.json").read_text())
    for name in sets:
        preds = json.loads((out / "predictions" / model.replace("/", "__") / f"{name}.json").read_text())
        assert len(preds) == 24
        acc = sum(r["pred"] == r["label"] for r in preds.values()) / 24
        m = entry["sets"][name]
        assert m["acc"] == pytest.approx(acc) and m["n"] == 24
        if name != "clean":  # drop and flip by hand
            clean_acc = entry["sets"]["clean"]["acc"]
            assert m["drop"] == pytest.approx((clean_acc - acc) / clean_acc if clean_acc else 0.0, abs=1e-6)
            assert m["flip"] == pytest.approx(sum(preds[i]["pred"] != clean_preds[i]["pred"] for i in preds) / 24)
    attacked = [entry["sets"][s]["acc"] for s in sets[1:] if s not in probes]
    assert entry["attack_avg"] == pytest.approx(sum(attacked) / len(attacked))
    assert [s for s, info in report["sets"].items() if info.get("probe")] == probes
    for s in probes:  # the shortcut: the probe's accuracy minus clean's
        assert entry["sets"][s]["shortcut"] == pytest.approx(entry["sets"][s]["acc"] - entry["sets"]["clean"]["acc"])
    assert metrics["test/acc"] == pytest.approx(entry["sets"]["clean"]["acc"])
    assert metrics["test/charswap/acc"] == pytest.approx(entry["sets"]["charswap"]["acc"])
    # the attacked sets differ from the clean one (and were not all fallbacks); magnet_cue rewords with same-sense
    # synonyms only, and the synthetic passages' pets and colours have none (tests/attacks/test_cue_probes.py: real text)
    assert all(report["sets"][s]["unchanged"] < 24 for s in sets[1:] if s != "magnet_cue")
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert [r["set"] for r in rows] == sets + ["attack avg"]
    assert [r["shortcut"] != "" for r in rows] == [s in probes for s in sets] + [False]  # csv: empty elsewhere
    text = (out / "report.md").read_text()
    assert "| addsent" in text and "### Confidence and calibration" in text and "```json" not in text
    assert not re.search(r"\bnan\b", text, re.IGNORECASE), "a number cell reads nan"
    assert all(m["ci95"][0] <= m["acc"] <= m["ci95"][1] for m in entry["sets"].values())
    assert (out / "robustness.png").read_bytes()[:8] == PNG
    # diagnostics of a full-input model
    diag = report["diagnostics"]
    assert diag["pq_remove"][model]["options_only"] is False and "options-only" in diag["pq_remove"][model]["note"]
    conf = diag["confidence"][model]
    assert conf["mean_confidence"] == pytest.approx(sum(max(r["probs"]) for r in clean_preds.values()) / 24)
    assert conf["accuracy"] == pytest.approx(entry["sets"]["clean"]["acc"]) and (out / conf["plot"]).read_bytes()[:8] == PNG
    assert sum(b["count"] for b in conf["bins"]) == 24
    # with no extra arguments the suite runs AdvRACE's DE (the project's extractor, trained on the
    # training split and cached) and says so; DG has no generator here: the stand-in, labelled
    ran = report["sets"]
    assert ran["distractor_extraction"]["method"] == "paper" and ran["distractor_extraction"]["attack"] == "distractor_extraction"
    assert (
        ran["distractor_extraction"]["resources"]["bank"].startswith("auto: ") and "extractor" in ran["distractor_extraction"]["resources"]
    )
    assert ran["distractor_generation"]["method"] == "stand-in" and ran["distractor_generation"]["attack"] == "dg_retrieval"
    assert ran["addsent"]["method"] == "paper" and ran["addsent"]["paper"] == "Si et al. 2021 (AdvRACE)"
    # magnets: screened against this model, the set's new options among its top 20 by interference score
    assert ran["magnet"]["method"] == "paper" and ran["magnet"]["by_model"][model]["resources"]["screened against"] == model
    screening = report["magnet_screening"][model]["magnet"]
    assert len(screening["magnets"]) == 20 and screening["settings"] == {"questions": 50, "pool_size": 500, "top": 20}
    ranked = [json.loads(line)["option"] for line in (Path(screening["dir"]) / "magnet_scores.jsonl").read_text().splitlines()]
    assert screening["magnets"] == ranked[:20]
    magnet_preds = json.loads((out / "predictions" / model.replace("/", "__") / "magnet.json").read_text())
    assert len(magnet_preds) == 24
    assert screening["cached"] is False and screening["questions"] == 24 and screening["pairs"] == 24 * screening["pool"]
    clean_options = {ex.id: set(ex.options) for ex in load_splits(make_cfg(*MC_DATA, config_name="eval").data, "mc", seed=42)["test"]}
    inserted = [set(ex["options"]) - clean_options[ex["id"]] for ex in _cached_examples(cache, "magnet")]
    assert all(len(new) <= 1 for new in inserted) and sum(map(len, inserted)) > 12  # one wrong option replaced
    assert set().union(*inserted) <= set(ranked[:20])  # by one of the top 20 screened options
    pool = ran["magnet"]["by_model"][model]["resources"]["pool"]
    assert pool.startswith(f"screened top 20 of {screening['pool']} options (options of other passages of the training split)")
    assert "| distractor_generation | dg_retrieval | stand-in |" in re.sub(" +", " ", text)
    errors = diag["error_analysis"]  # Wu et al. 2021 section 6: rows from every set
    assert errors["sets"] == sets and errors["n"] == 24 * len(sets) and errors["models"] == {model: "none"}
    assert errors["n_errors"] == round(sum(24 * (1 - entry["sets"][s]["acc"]) for s in sets))
    assert {f for f, _ in errors["predictor"]["feature_importance"]} <= set(errors["features"]) and errors["predictor"]["folds"] == 10
    assert list(errors["by_set"]) == sets and "### Error prediction" in text


def test_second_evaluation_reuses_the_cache_and_gives_the_same_report(mc_ckpts, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    args = [f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=advrace", f"cache_dir={cache}", "diagnostics=[]"]
    _, first = run_eval(tmp_path, *args, name="first")
    cached_sets = sorted(p.name for p in (cache / "sets").iterdir())
    assert len(cached_sets) == 8  # one file per attacked set (the screened magnet set: its scores)

    def no_model(*a, **k):
        raise AssertionError("the model ran although every prediction is cached")

    monkeypatch.setattr("robust_mrc.jobs.evaluate.build_trainer", no_model)
    _, second = run_eval(tmp_path, *args, name="second")
    r1, r2 = (json.loads((d / "report.json").read_text()) for d in (first, second))
    assert all(s["cached"] for name, s in r2["sets"].items() if name != "clean")
    # the magnet screening too: its T_k read back (no forward pass: build_trainer would raise)
    (model,) = r2["models"]
    s1, s2 = r1["magnet_screening"][model]["magnet"], r2["magnet_screening"][model]["magnet"]
    assert (
        s1["cached"] is False and s2["cached"] is True and s2["magnets"] == s1["magnets"] and len(list((cache / "scores").iterdir())) == 1
    )
    assert r1["models"] == r2["models"]
    assert sorted(p.name for p in (cache / "sets").iterdir()) == cached_sets
    # another version of the attack code never reuses these sets
    monkeypatch.undo()
    monkeypatch.setattr("robust_mrc.evaluation.suites.attacks_code_digest", lambda: "another version")
    _, third = run_eval(tmp_path, *args, name="third")
    r3 = json.loads((third / "report.json").read_text())
    assert not any(s["cached"] for name, s in r3["sets"].items() if name != "clean")


def test_the_attack_code_digest_follows_the_code(tmp_path):
    from robust_mrc.attacks.apply import attacks_code_digest

    (tmp_path / "mc").mkdir()
    (tmp_path / "mc" / "a.py").write_text("RULE = 1\n")
    first = attacks_code_digest(tmp_path)
    attacks_code_digest.cache_clear()
    assert attacks_code_digest(tmp_path) == first
    (tmp_path / "audit.py").write_text("SHEET = 'sheet.csv'\n")  # the validity audits attack nothing themselves
    attacks_code_digest.cache_clear()
    assert attacks_code_digest(tmp_path) == first
    (tmp_path / "mc" / "a.py").write_text("RULE = 2\n")
    attacks_code_digest.cache_clear()
    second = attacks_code_digest(tmp_path)
    assert second != first and attacks_code_digest() != first
    (tmp_path / "resources" / "data").mkdir(parents=True)  # a word list the rules read (contrast sets, names)
    (tmp_path / "resources" / "data" / "contrast_sets.txt").write_text("day: Monday, Tuesday\n")
    attacks_code_digest.cache_clear()
    assert attacks_code_digest(tmp_path) != second


def test_a_damaged_or_unwritable_cache_heals_or_is_skipped(mc_ckpts, tmp_path, caplog):
    """Damaged cache entries are named and remade; an unwritable cache warns and runs uncached."""
    import logging

    cache = tmp_path / "cache"
    args = [f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=advrace", "diagnostics=[]"]
    _, first = run_eval(tmp_path, *args, f"cache_dir={cache}", name="first")
    entries = sorted(p for p in cache.rglob("*") if p.is_file())
    for entry in entries:  # every entry cut in half: a crash of another tool, a full disk
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    with caplog.at_level(logging.WARNING):
        _, healed = run_eval(tmp_path, *args, f"cache_dir={cache}", name="healed")
    assert all(f"cache entry {entry} is damaged" in caplog.text for entry in entries)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache directory should be")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _, uncached = run_eval(tmp_path, *args, f"cache_dir={blocker / 'cache'}", name="uncached")
    assert caplog.text.count("cannot be written") == 1 and "runs uncached" in caplog.text
    reports = [json.loads((d / "report.json").read_text())["models"] for d in (first, healed, uncached)]
    assert reports[0] == reports[1] == reports[2]
    assert sorted(p for p in cache.rglob("*") if p.is_file()) == entries  # remade
    assert all(entry.stat().st_size > 0 for entry in entries)


def test_interrupted_evaluation_resumes_from_the_cache(mc_ckpts, tmp_path, monkeypatch):
    args = [f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=advrace", "diagnostics=[]"]
    _, whole = run_eval(tmp_path, *args, f"cache_dir={tmp_path / 'c1'}", name="whole")
    real = Predictor.records
    done = []

    def crash_on_third(self, name, examples, fp):
        if len(done) == 2:
            raise KeyboardInterrupt("preempted")
        done.append(name)
        return real(self, name, examples, fp)

    monkeypatch.setattr(Predictor, "records", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        run_eval(tmp_path, *args, f"cache_dir={tmp_path / 'c2'}", name="broken")
    monkeypatch.setattr(Predictor, "records", real)
    assert len(list((tmp_path / "c2" / "predictions").iterdir())) == 2
    _, resumed = run_eval(tmp_path, *args, f"cache_dir={tmp_path / 'c2'}", name="resumed")
    a, b = (json.loads((d / "report.json").read_text()) for d in (whole, resumed))
    assert a["models"] == b["models"]


def test_an_external_file_joins_the_suite(mc_ckpts, tmp_path):
    test = load_splits(make_cfg(*MC_DATA).data, "mc")["test"]
    path = tmp_path / "copy.jsonl"
    write_examples(test, path, "race_jsonl")
    _, out = run_eval(tmp_path, f"ckpt_path={mc_ckpts[0]}", *MC_DATA, f"+suite.extra.copy={{file: {path}, dpr: true}}", "cache_dir=null")
    report = json.loads((out / "report.json").read_text())
    (model,) = report["models"]
    copy, clean = report["models"][model]["sets"]["copy"], report["models"][model]["sets"]["clean"]
    assert copy["acc"] == pytest.approx(clean["acc"]) and copy["flip"] == 0.0 and copy["drop"] == 0.0
    assert report["diagnostics"]["dpr"][model]["copy"]["dpr"] == 0.0


def test_ensemble_averages_option_probabilities(mc_ckpts, tmp_path):
    _, out = run_eval(tmp_path, f"ensemble=[{mc_ckpts[0]},{mc_ckpts[1]}]", *MC_DATA, "cache_dir=null", "diagnostics=[confidence]")
    report = json.loads((out / "report.json").read_text())
    assert len(report["models"]) == 3 and "ensemble" in report["models"]
    a, b = (json.loads((out / "predictions" / m.replace("/", "__") / "clean.json").read_text()) for m in list(report["models"])[:2])
    ens = json.loads((out / "predictions" / "ensemble" / "clean.json").read_text())
    for i, r in ens.items():
        avg = [(x + y) / 2 for x, y in zip(a[i]["probs"], b[i]["probs"])]
        assert r["probs"] == pytest.approx(avg, abs=1e-5)
        assert r["pred"] == max(range(len(avg)), key=avg.__getitem__)
    acc = sum(r["pred"] == r["label"] for r in ens.values()) / len(ens)
    assert report["models"]["ensemble"]["sets"]["clean"]["acc"] == pytest.approx(acc)


def test_pq_remove_probe_reports_an_options_only_model(mc_ckpts, tmp_path):
    _, out = run_eval(tmp_path, f"ckpt_path={mc_ckpts[2]}", *MC_DATA, "cache_dir=null", "diagnostics=[pq_remove]")
    report = json.loads((out / "report.json").read_text())
    (model,) = report["models"]
    pq = report["diagnostics"]["pq_remove"][model]
    assert pq["options_only"] is True and pq["chance"] == pytest.approx(0.25)
    assert pq["acc"] == pytest.approx(report["models"][model]["sets"]["clean"]["acc"])


def test_magnet_screening_ranks_the_pool_and_attacks_with_the_top(mc_ckpts, tmp_path):
    # magnet_screen.enabled=true: a `magnet_top` set screened like the suites' magnet sets
    cache = tmp_path / "cache"
    args = [
        f"ckpt_path={mc_ckpts[0]}",
        *MC_DATA,
        f"cache_dir={cache}",
        "diagnostics=[]",
        "magnet_screen.enabled=true",
        "magnet_screen.questions=6",
        "magnet_screen.max_pool=12",
        "magnet_screen.top=5",
    ]
    _, out = run_eval(tmp_path, *args, name="first")
    report = json.loads((out / "report.json").read_text())
    info = report["diagnostics"]["magnet_screen"]
    assert info["questions"] == 6 and info["pool"] == 12 and info["pairs"] == 72 and info["cached"] is False
    where = Path(info["dir"])
    assert where == out / "magnet_screening" / info["model"].replace("/", "__") / "magnet_top"
    ranked = [json.loads(line) for line in (where / "magnet_scores.jsonl").read_text().splitlines()]
    scores = [r["T"] for r in ranked]
    assert len(ranked) == 12 and scores == sorted(scores, reverse=True)
    # T is a share of the (at most 6) questions an option was tried on
    assert all(any(t * k == pytest.approx(round(t * k), abs=1e-3) for k in range(1, 7)) for t in scores)
    assert (where / "magnet_pool.txt").read_text().splitlines() == [r["option"] for r in ranked[:5]] == info["magnets"]
    assert (where / "magnet_scores.png").read_bytes()[:8] == PNG
    (model,) = report["models"]
    assert report["models"][model]["sets"]["magnet_top"]["n"] == 24
    assert report["sets"]["magnet_top"]["by_model"][model]["resources"]["screened against"] == model
    # the screened options are what the magnet_top set inserted
    top = set(info["magnets"])
    attacked = json.loads((out / "predictions" / model.replace("/", "__") / "magnet_top.json").read_text())
    assert len(attacked) == 24
    _, again = run_eval(tmp_path, *args, name="second")
    report2 = json.loads((again / "report.json").read_text())
    assert report2["diagnostics"]["magnet_screen"]["top"] == info["top"] and report2["diagnostics"]["magnet_screen"]["cached"] is True
    assert report2["sets"]["magnet_top"]["cached"] is True  # same top options -> same attacked set
    inserted = {o for ex in _cached_examples(cache, "magnet_top") for o in ex["options"]}
    assert inserted & top


def test_an_ensemble_screens_each_member_and_averages_their_scores(mc_ckpts, tmp_path):
    sets = "suite.sets=[{name: magnet, screen: {questions: 8, pool_size: 40, top: 5}}]"
    _, out = run_eval(
        tmp_path, f"ensemble=[{mc_ckpts[0]},{mc_ckpts[1]}]", *MC_DATA, "suite=clean", sets, "cache_dir=null", "diagnostics=[]"
    )
    report = json.loads((out / "report.json").read_text())
    names = [m for m in report["models"] if m != "ensemble"]
    screening = report["magnet_screening"]
    assert set(screening) == {*names, "ensemble"} and screening["ensemble"]["magnet"]["members"] == names

    def scores(model):
        rows = [json.loads(line) for line in (Path(screening[model]["magnet"]["dir"]) / "magnet_scores.jsonl").read_text().splitlines()]
        return {r["option"]: r["T"] for r in rows}

    members = [scores(m) for m in names]
    mean = scores("ensemble")
    assert len(mean) == 40 and all(mean[o] == pytest.approx((members[0][o] + members[1][o]) / 2) for o in mean)
    assert screening["ensemble"]["magnet"]["magnets"] == list(mean)[:5]
    for model in [*names, "ensemble"]:  # each its own magnet set, predicted and reported
        assert report["models"][model]["sets"]["magnet"]["n"] == 24
        assert len(json.loads((out / "predictions" / model.replace("/", "__") / "magnet.json").read_text())) == 24
    by_model = report["sets"]["magnet"]["by_model"]
    assert set(by_model) == {*names, "ensemble"} and "averaged over the members" in by_model["ensemble"]["resources"]["screened against"]


def _cached_examples(cache: Path, name: str) -> list[dict]:
    import gzip

    (path,) = (cache / "sets").glob(f"{name}-*.jsonl.gz")
    with gzip.open(path, "rt") as f:
        header, *lines = f.read().splitlines()  # the first line: the entry's name, size and digest
    assert set(json.loads(header)) == {"entry", "n", "digest"}
    return [json.loads(line) for line in lines]


def test_span_suite_and_token_vote_ensemble(tmp_path_factory, tmp_path):
    ckpts = []
    for seed in (1, 2):
        d = tmp_path_factory.mktemp(f"span{seed}")
        cfg = make_cfg(
            "model=tiny", *SPAN_DATA, "trainer.max_epochs=1", "batch_size=16", "test_after_fit=false", f"seed={seed}", f"output_dir={d}"
        )
        ckpts.append(train(cfg)["ckpt_path"])
    _, out = run_eval(tmp_path, f"ensemble=[{ckpts[0]},{ckpts[1]}]", *SPAN_DATA, "suite=squad", f"cache_dir={tmp_path / 'c'}")
    report = json.loads((out / "report.json").read_text())
    assert report["primary"] == "f1" and set(report["models"]) >= {"ensemble"}
    sets = ["clean", "addsent", "addonesent", "addsentmod", "random_words", "char_noise", "char_noise_all", "word_noise", "addsent_cue"]
    assert report["sets"]["addsent_cue"]["probe"] and not any(report["sets"][s].get("probe") for s in sets[:-1])
    for entry in report["models"].values():
        assert list(entry["sets"]) == sets
        assert entry["sets"]["addsent_cue"]["shortcut"] == pytest.approx(entry["sets"]["addsent_cue"]["f1"] - entry["sets"]["clean"]["f1"])
        assert all(m["n"] == 12 for m in entry["sets"].values())
    for model, entry in report["models"].items():  # F1 and confidence recomputed from the records
        for name, m in entry["sets"].items():
            records = json.loads((out / "predictions" / model.replace("/", "__") / f"{name}.json").read_text())
            assert m["f1"] == pytest.approx(100 * sum(question_f1("squad", r["pred"], r["golds"]) for r in records.values()) / 12)
            if name == "clean":
                conf = report["diagnostics"]["confidence"][model]
                assert conf["mean_confidence"] == pytest.approx(sum(r["confidence"] for r in records.values()) / 12)
    assert all(report["sets"][s]["unchanged"] < 12 for s in report["sets"] if s != "clean")


def test_suite_errors_are_clear(mc_ckpts, tmp_path):
    with pytest.raises(SuiteConfigError, match="suite=squad is for task=span"):
        run_eval(tmp_path, f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=squad", "cache_dir=null")
    with pytest.raises(SuiteConfigError, match="no such file"):
        run_eval(tmp_path, f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "+suite.extra.x=/nonexistent.jsonl", "cache_dir=null")
    # a diagnostic's name is checked with the config, before any model is loaded or any prediction made
    with pytest.raises(ConfigError, match=r"diagnostics=\['astrology'\]: expected items of confidence, .*\(astrology is none of them\)"):
        run_eval(tmp_path, f"ckpt_path={tmp_path / 'no.ckpt'}", *MC_DATA, "diagnostics=[astrology]", "cache_dir=null")


def test_report_table_and_plots_go_to_wandb_offline(mc_ckpts, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "wandb_data"))
    _, out = run_eval(
        tmp_path, f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=advrace", "cache_dir=null", "wandb=true", "diagnostics=[confidence]"
    )
    (run,) = list((out / "wandb").glob("offline-run-*"))
    images = sorted(p.name for p in (run / "files" / "media" / "images").rglob("*.png"))
    assert any(n.startswith("eval/plots/robustness") or "robustness" in n for n in images)
    assert any("reliability" in n for n in images)
    tables = {
        re.sub(r"_\d+_[0-9a-f]+\.table\.json$", "", str(p.relative_to(run / "files" / "media" / "table"))): json.loads(p.read_text())
        for p in (run / "files" / "media" / "table").rglob("*.table.json")
    }
    data, ran = tables["eval/report"], tables["eval/what_ran"]
    assert data["columns"][:3] == ["model", "set", "n"] and len(data["data"]) == 10  # 9 sets + attack avg
    assert data["columns"][-1] == "shortcut"  # the cue probes' column (None on the other rows)
    assert ran["columns"] == ["set", "attack", "method", "paper", "resources"] and len(ran["data"]) == 8  # the attacked sets
    report = json.loads((out / "report.json").read_text())
    (model,) = report["models"]
    drops = tables["eval/drop"]  # per attacked set: abs_drop with its interval, report.json's numbers
    assert [r[1] for r in drops["data"]] == [s for s in report["models"][model]["sets"] if s != "clean"]
    for _, name, abs_drop, lo, hi, *_ in drops["data"]:
        assert abs_drop == pytest.approx(report["models"][model]["sets"][name]["abs_drop"])
        assert [lo, hi] == pytest.approx(report["models"][model]["sets"][name].get("abs_drop_ci95", [None, None]))
    (history,) = run.glob("run-*.wandb")  # the bar chart over that table: W&B's bar preset, in the run's record
    assert b"eval/drop_chart_table" in history.read_bytes() and b"wandb/bar/v0" in history.read_bytes()
    examples = tables["eval/examples"]  # the examples browser of report.html, passages as HTML cells
    html_report = (out / "report.html").read_text()
    assert examples["columns"][:3] == ["set", "id", "status"] and len(examples["data"]) == html_report.count('<article class="ex"')
    # the HTML cells travel in the table's artifact, staged under W&B's data directory until synced
    staged = [p.read_text(errors="replace") for p in (tmp_path / "wandb_data").rglob("*") if p.is_file()]
    passages = [text for text in staged if 'class="ins"' in text]
    assert passages and all("default-src 'none'" in p and "<script" not in p for p in passages)


def test_model_in_the_loop_sets_are_searched_per_model_and_cached(tmp_path_factory, tmp_path, monkeypatch):
    d = tmp_path_factory.mktemp("span_adv")
    cfg = make_cfg("model=tiny", *SPAN_DATA, "trainer.max_epochs=1", "batch_size=16", "test_after_fit=false", f"output_dir={d}")
    ckpt = train(cfg)["ckpt_path"]
    sets = "[{name: addsent_model, attack: addsent, model: true}, {name: addany, model: true, limit: 4, params: {budget: 30}}]"
    args = [f"ckpt_path={ckpt}", *SPAN_DATA, "suite=squad", f"suite.sets={sets}", f"cache_dir={tmp_path / 'c'}", "diagnostics=[]"]
    _, out = run_eval(tmp_path, *args)
    report = json.loads((out / "report.json").read_text())
    (model,) = report["models"]
    entry = report["models"][model]["sets"]
    assert entry["addsent_model"]["n"] == 12 and entry["addany"]["n"] == 4
    for name in ("addsent_model", "addany"):
        m = entry[name]
        # orig_*: the clean questions the set was made from; adv_*: the set; drop compares them
        assert m["adv_f1"] == pytest.approx(m["f1"]) and m["abs_drop"] == pytest.approx(m["orig_f1"] - m["adv_f1"])
        assert report["sets"][name]["by_model"][model]["search"]["queries"] > 0
    assert report["sets"]["addany"]["by_model"][model]["search"]["queries"] <= 4 * 30
    # a second evaluation: the searched sets and their predictions come from the cache, no model query
    from robust_mrc.attacks import search

    def no_search(*a, **k):
        raise AssertionError("searched again")

    monkeypatch.setattr(search, "run_search", no_search)
    monkeypatch.setattr("robust_mrc.evaluation.suites.run_search", no_search)
    _, out2 = run_eval(tmp_path, *args, name="again")
    again = json.loads((out2 / "report.json").read_text())
    assert again["models"][model]["sets"]["addany"] == entry["addany"]
    assert again["sets"]["addany"]["by_model"][model]["cached"] is True


def test_every_report_says_what_ran_and_labels_stand_ins(mc_ckpts, tmp_path):
    sets = "'suite.sets=[{name: addsent}, {name: charswap}, {name: word_replace}]'"
    metrics, out = run_eval(tmp_path, f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=advrace", sets.strip("'"), f"cache_dir={tmp_path / 'c'}")
    report = json.loads((out / "report.json").read_text())
    info = report["sets"]
    assert info["addsent"]["method"] == "paper" and info["addsent"]["paper"] == "Si et al. 2021 (AdvRACE)"
    assert info["addsent"]["resources"]["neighbours"] and info["charswap"]["method"] == "paper"
    # WordReplace here is a random-neighbour substitute, not AdvRACE's SememePSO search: labelled so
    assert info["word_replace"]["method"] == "stand-in"
    md = (out / "report.md").read_text()
    assert "## What ran" in md and "| word_replace | word_replace | stand-in |" in re.sub(" +", " ", md)
    # the same labels from the cache: a second evaluation reads the sets back and still says what ran
    _, out2 = run_eval(
        tmp_path, f"ckpt_path={mc_ckpts[0]}", *MC_DATA, "suite=advrace", sets.strip("'"), f"cache_dir={tmp_path / 'c'}", name="again"
    )
    again = json.loads((out2 / "report.json").read_text())["sets"]
    assert again["word_replace"]["cached"] and again["word_replace"]["method"] == "stand-in"
    # reports.compare lists them under the table
    from robust_mrc.cli.compare import main as compare

    table = compare([str(out)])
    assert "What ran" in table and "word_replace (stand-in" in table
