"""SQuAD v2.0 "no answer": the null score against the best span score, the
threshold tuned on validation (the v2.0 script's best-F1 idea), HasAns / NoAns figures; v1.1 data
keeps its plain span decoding."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest
import torch

from robust_mrc.data.readers import load_examples
from robust_mrc.datamodules.span import SpanCollator, resolve_span_task
from robust_mrc.metrics.no_answer import best_threshold, has_ans_no_ans, tune_threshold
from robust_mrc.models import SpanQAModule
from robust_mrc.models.backbone import load_tokenizer
from robust_mrc.models.scoring import ModelScorer
from robust_mrc.models.span_decoding import apply_no_answer, merge_span_records, no_answer_decision
from tests.helpers import TINY_MODEL

TINY = TINY_MODEL
LISBON = "He moved to Lisbon in 1755 and stayed there. The harbour was busy."
ROME = "Old roads and a road ran north for days. Travellers rested at small inns."


def squad_v2_file(path, rows) -> str:
    """A SQuAD v2.0 file: ``rows`` = (id, context, question, answer text or None for unanswerable)."""
    paragraphs = []
    for qid, context, question, answer in rows:
        qa = {
            "id": qid,
            "question": question,
            "is_impossible": answer is None,
            "answers": [] if answer is None else [{"text": answer, "answer_start": context.index(answer)}],
        }
        paragraphs.append({"context": context, "qas": [qa]})
    path.write_text(json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}))
    return str(path)


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(TINY)


class LisbonBackbone(torch.nn.Module):
    """Start and end logits 12 on the token 'lisbon', 1 on 'road', 5 on [CLS], 0 elsewhere: the
    null score (10) beats the best span of a context without Lisbon ('road', 2) and loses to
    'Lisbon' (24)."""

    def __init__(self, tokenizer):
        super().__init__()
        self.lisbon, self.road = tokenizer.convert_tokens_to_ids("lisbon"), tokenizer.convert_tokens_to_ids("road")
        self.cls = tokenizer.cls_token_id

    def forward(self, input_ids, **_):
        logits = 12.0 * (input_ids == self.lisbon) + 1.0 * (input_ids == self.road) + 5.0 * (input_ids == self.cls)
        return SimpleNamespace(start_logits=logits.float(), end_logits=logits.float())


def test_best_threshold_on_hand_made_differences():
    # (null - span score, F1 if answered, F1 if "no answer")
    diffs, answered, abstained = [-2.0, 0.5, 1.0, 1.0, 3.0], [1.0, 0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 1.0]
    # nothing answered: 2; answer up to -2: 3; up to 0.5: 2; up to 1.0 (two questions together): 4; up to 3: 3
    assert best_threshold(diffs, answered, abstained) == (1.0, 4.0)
    # equal differences switch together: +1 and -1 at 2.0 never beat answering nothing
    threshold, total = best_threshold([2.0, 2.0], [1.0, 0.0], [0.0, 1.0])
    assert total == 1.0 and threshold < 2.0 and threshold == math.nextafter(2.0, -math.inf)
    # a smaller threshold wins a tie of totals; +inf (no span at all) is never answered
    assert best_threshold([0.0, 5.0, math.inf], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0]) == (0.0, 1.0)
    assert best_threshold([], [], []) == (0.0, 0.0)


def test_tune_threshold_on_hand_made_predictions():
    spans = {"a": "Lisbon", "b": "the harbour", "c": "Rome", "d": "in 1755", "e": "the red"}
    diffs = {"a": -3.5, "b": 2.5, "c": 1.0, "d": 4.0, "e": 0.5}
    golds = {"a": ["Lisbon"], "b": [], "c": ["Rome"], "d": [], "e": ["red house"]}
    threshold, f1 = tune_threshold(spans, diffs, golds, "squad_v2")
    # totals: none answered 2 (b, d); + a (-3.5) 3; + e (0.5, F1 2/3) 3.67; + c (1.0) 4.67; + b (2.5) 3.67; + d 2.67
    assert threshold == 1.0 and f1 == pytest.approx(100 * (4 + 2 / 3) / 5)
    records = {k: {"pred": spans[k], "score": 0.0, "null_score": diffs[k], "golds": golds[k]} for k in spans}
    decided = apply_no_answer(records, threshold)
    assert [decided[k]["pred"] for k in "abcde"] == ["Lisbon", "", "Rome", "", "the red"]
    assert decided["d"]["span_pred"] == "in 1755" and no_answer_decision(decided["d"], 100.0) == ""  # decided once


def test_has_ans_no_ans_figures():
    predictions = {"h1": "Paris", "h2": "red", "n1": "", "n2": "x"}
    references = {"h1": ["Paris"], "h2": ["red house"], "n1": [], "n2": []}
    figures = has_ans_no_ans(predictions, references, "squad_v2")
    assert figures == pytest.approx({"HasAns_em": 50.0, "HasAns_f1": 100 * (1 + 2 / 3) / 2, "NoAns_em": 50.0, "NoAns_f1": 50.0})
    assert set(has_ans_no_ans({"h1": "Paris"}, {"h1": ["Paris"]})) == {"HasAns_em", "HasAns_f1"}


def test_an_unanswerable_question_is_answered_empty_when_the_null_score_wins(tokenizer, tmp_path):
    path = squad_v2_file(
        tmp_path / "dev-v2.0.json", [("has", LISBON, "Where did he move?", "Lisbon"), ("none", ROME, "Where did he move?", None)]
    )
    examples = load_examples(path)
    task = resolve_span_task(
        {"name": "span", "max_length": 64, "doc_stride": 16, "no_answer": "auto", "metric": "auto"}, {"validation": examples}
    )
    assert task["no_answer"] is True and task["metric"] == "squad_v2"
    module = SpanQAModule(TINY, task)
    module.backbone = LisbonBackbone(tokenizer)
    batch = SpanCollator(tokenizer, 64, 16)(examples)
    assert batch["start_positions"].tolist() == [batch["start_positions"][0].item(), 0] and batch["start_positions"][0] > 0
    records = module.predict_records(batch)
    assert records["none"]["null_score"] == 10.0 and records["none"]["pred"] == "road" and records["none"]["score"] == 2.0
    assert records["has"]["null_score"] == 10.0 and records["has"]["pred"] == "Lisbon" and records["has"]["score"] == 24.0
    module.tune_no_answer(records)
    assert module.no_answer_threshold == -14.0  # the smallest difference that answers "has" and not "none" (8.0)
    final = module.final_records("test", "clean", records)
    assert final["none"]["pred"] == "" and final["none"]["span_pred"] != "" and final["has"]["pred"] == "Lisbon"
    assert module.metrics_of(records) == {
        "em": 100.0,
        "f1": 100.0,
        "HasAns_em": 100.0,
        "HasAns_f1": 100.0,
        "NoAns_em": 100.0,
        "NoAns_f1": 100.0,
    }
    # without the no-answer rule the unanswerable question scores 0
    plain = SpanQAModule(TINY, {**task, "no_answer": False})
    plain.backbone = module.backbone
    assert plain.metrics_of(plain.predict_records(batch)) == {"em": 50.0, "f1": 50.0}


def test_squad_v1_data_keeps_plain_span_decoding(tokenizer, tmp_path):
    path = squad_v2_file(tmp_path / "dev-v1.1.json", [("has", LISBON, "Where did he move?", "Lisbon")])
    examples = load_examples(path)
    task = resolve_span_task(
        {"name": "span", "max_length": 64, "doc_stride": 16, "no_answer": "auto", "metric": "auto"}, {"validation": examples}
    )
    assert task["no_answer"] is False and task["metric"] == "squad_v1"
    assert resolve_span_task({**task, "no_answer": True, "metric": "dureader"}, {})["metric"] == "dureader"
    module = SpanQAModule(TINY, task)
    module.backbone = LisbonBackbone(tokenizer)
    records = module.predict_records(SpanCollator(tokenizer, 64, 16)(examples))
    assert set(records["has"]) == {"pred", "score", "golds", "confidence"}
    assert module.final_records("val", "clean", records) is records and module.no_answer_threshold is None
    assert module.metrics_of(records) == {"em": 100.0, "f1": 100.0}


def test_null_scores_merge_as_the_minimum_over_windows():
    a = {"q": {"pred": "x", "score": 3.0, "null_score": 4.0, "golds": []}}
    b = {"q": {"pred": "y", "score": 1.0, "null_score": 2.5, "golds": []}}
    merged = merge_span_records(dict(a), b)
    assert merged["q"]["pred"] == "x" and merged["q"]["score"] == 3.0 and merged["q"]["null_score"] == 2.5


def test_the_scorer_ranks_no_answer_as_the_threshold_decides(tokenizer, tmp_path):
    examples = load_examples(squad_v2_file(tmp_path / "v2.json", [("none", ROME, "Where did he move?", None)]))
    module = SpanQAModule(TINY, {"name": "span", "max_length": 64, "doc_stride": 16, "no_answer": True, "n_best": 3})
    module.backbone = LisbonBackbone(tokenizer)
    scorer = ModelScorer(module, tokenizer, "k")
    module.no_answer_threshold = 7.5  # null 10 - span 2 = 8 > 7.5: ""
    assert scorer.predict(examples)[0].nbest[0][0] == ""
    module.no_answer_threshold = 8.5
    assert scorer.predict(examples)[0].nbest[0][0] == "road"


def v2_rows(prefix: str, n: int):
    """``n`` questions, every third unanswerable (asked of a context without its answer)."""
    towns = ("Lisbon", "Porto", "Braga", "Faro", "Evora", "Coimbra")
    rows = []
    for i in range(n):
        town = towns[i % len(towns)]
        context = f"In the year {1700 + i} the merchant moved to {town} with his family. The harbour there was busy."
        if i % 3 == 2:
            context = f"In the year {1700 + i} the merchant stayed at home. The road north was closed."
        rows.append((f"{prefix}{i}", context, "Where did the merchant move?", None if i % 3 == 2 else town))
    return rows


def test_training_and_evaluation_tune_and_report_the_threshold(tmp_path):
    from robust_mrc.jobs.evaluate import evaluate
    from robust_mrc.jobs.train import train
    from tests.helpers import make_cfg

    files = {
        split: squad_v2_file(tmp_path / f"{split}-v2.0.json", v2_rows(split, n))
        for split, n in (("train", 24), ("validation", 12), ("test", 9))
    }
    data = ["task=span", "data=squad_local", *(f"data.{k}={v}" for k, v in files.items()), "task.max_length=64", "task.doc_stride=16"]
    metrics = train(make_cfg(*data, "model=tiny", "trainer.max_epochs=1", "batch_size=8", f"output_dir={tmp_path / 'run'}"))
    for key in ("val/no_answer_threshold", "val/HasAns_f1", "val/NoAns_f1", "val/HasAns_em", "test/NoAns_f1"):
        assert key in metrics, key
    saved = torch.load(metrics["ckpt_path"], weights_only=True)["no_answer_threshold"]
    assert saved == pytest.approx(metrics["val/no_answer_threshold"], abs=1e-6)  # logged as float32

    result = evaluate(
        make_cfg(
            *data,
            f"ckpt_path={metrics['ckpt_path']}",
            "split=test",
            f"output_dir={tmp_path / 'eval'}",
            f"cache_dir={tmp_path / 'cache'}",
            config_name="eval",
        )
    )
    # tuned again on the validation split's predictions: the threshold and test scores of training
    assert result["no_answer_threshold"] == pytest.approx(metrics["val/no_answer_threshold"])
    assert result["test/f1"] == pytest.approx(metrics["test/f1"]) and result["test/NoAns_f1"] == pytest.approx(metrics["test/NoAns_f1"])
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    (entry,) = report["no_answer"].values()
    assert entry["source"] == "tuned on the validation split" and entry["n"] == 12
    assert {"HasAns_f1", "NoAns_f1"} <= set(report["models"][next(iter(report["models"]))]["sets"]["clean"])
    predictions = json.loads((tmp_path / "eval" / "predictions.json").read_text())
    assert len(predictions) == 9
    for r in predictions.values():
        assert (r["pred"] == "") == (r["null_score"] - r["score"] > entry["threshold"]) or r["span_pred"] == ""


def test_bad_span_settings_name_their_key():
    from robust_mrc.config.checks import ConfigError, check_config
    from tests.helpers import make_cfg

    with pytest.raises(ConfigError) as err:
        check_config(make_cfg("task=span", "task.no_answer=maybe", "task.max_windows=0", "task.metric=bleu"))
    for part in (
        "task.no_answer='maybe': expected auto, true or false",
        "task.max_windows=0: expected an integer >= 1",
        "task.metric='bleu': expected one of auto",
    ):
        assert part in str(err.value)
    check_config(make_cfg("task=span", "task.no_answer=true", "task.metric=squad_v2", "task.max_windows=null"))
