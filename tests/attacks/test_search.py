"""Model-in-the-loop adversaries: the runner, span AddSent's worst candidate, AddAny / AddCommon's
local search (stop at F1 0, query budget), batched equals one at a time, through a real model."""

from __future__ import annotations

import pytest

from robust_mrc.attacks import AttackUnavailable, example_rng
from robust_mrc.attacks.apply import build_attack
from robust_mrc.attacks.search import Prediction, run_search
from robust_mrc.attacks.span.addsent import candidate_sentences
from robust_mrc.data.examples import Answer, SpanExample

CONTEXT = "The Broncos defeated the Panthers in Super Bowl 50, played in 2016 at Levi's Stadium."


def example(i: int = 0) -> SpanExample:
    return SpanExample(f"q{i}", CONTEXT, "Which team won Super Bowl 50?", (Answer("Broncos", 4),))


class TableScorer:
    """A hand-made model: the answer is ``wrong`` when ``trigger`` is in the context, else the
    gold "Broncos"; counts the calls and the examples it saw."""

    key = "table"

    def __init__(self, trigger: str | None, wrong: str = "Panthers"):
        self.trigger, self.wrong = trigger, wrong
        self.calls, self.seen = 0, 0

    def predict(self, examples):
        self.calls += 1
        self.seen += len(examples)
        out = []
        for ex in examples:
            fooled = self.trigger is not None and self.trigger in ex.context
            answer = self.wrong if fooled else "Broncos"
            out.append(Prediction(nbest=((answer, 0.9), ("Super Bowl", 0.1))))
        return out


class Worst:
    """An attack whose search proposes three suffixes and keeps the one the model rates worst."""

    name, task = "worst_of_three", "span"

    def search(self, ex, rng):
        cands = [ex.replace(attack=self.name, context=ex.context + f" Note {w}.") for w in ("alpha", "beta", "gamma")]
        preds = yield cands
        scores = [1.0 if p.answer == "Broncos" else 0.0 for p in preds]
        return cands[scores.index(min(scores))]


def test_the_runner_keeps_the_candidate_the_scorer_rates_worst():
    scorer = TableScorer("beta")
    result, stats = run_search(Worst(), [example(0), example(1)], scorer, seed=0, progress=False)
    assert [ex.context.endswith("Note beta.") for ex in result.examples] == [True, True]
    assert stats.queries == 6 and stats.rounds == 1 and scorer.calls == 1  # both examples in one call
    assert result.fallbacks == 0


def test_the_runner_prints_a_progress_line_per_group_in_logs(capsys):
    """stdout not a terminal (capsys, like SLURM or ``> log``): one plain line per lockstep group."""
    run_search(Worst(), [example(i) for i in range(5)], TableScorer("beta"), seed=0, lockstep=2)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" queries/s")[0] for line in lines] == [
        "[search worst_of_three] examples 2/5 queries 6",
        "[search worst_of_three] examples 4/5 queries 12",
        "[search worst_of_three] examples 5/5 queries 15",
    ]
    assert all(" ETA " in line for line in lines)


def test_span_addsent_search_keeps_the_worst_candidate_and_the_answer_offsets():
    ex = example()
    attack = build_attack("addsent", "span")
    cands = candidate_sentences(ex, variants=int(attack.variants), fakes=int(attack.fakes))
    assert len(cands) >= 2
    # the model is fooled only by the last candidate: the search must pick it, not the canonical one
    scorer = TableScorer(cands[-1])
    result, stats = run_search(attack, [ex], scorer, seed=0, progress=False)
    (adv,) = result.examples
    assert cands[-1] in adv.context and stats.queries == len(cands)
    assert adv.context[adv.answers[0].start : adv.answers[0].end] == "Broncos"
    # never fooled: ties keep the canonical (first) candidate, what model-free addsent adds
    (tied,) = run_search(attack, [ex], TableScorer(None), seed=0, progress=False)[0].examples
    assert tied == attack(ex, example_rng(0, 0, ex.id, "addsent"))


def test_addany_stops_as_soon_as_the_argmax_answer_has_f1_zero():
    ex = example()
    common = "time"  # among the common words every position tries
    scorer = TableScorer(f" {common} ")
    attack = build_attack({"name": "addany", "params": {"budget": 5000}}, "span")
    (adv,), stats = (lambda r: (r[0].examples, r[1]))(run_search(attack, [ex], scorer, seed=0, progress=False))
    added = adv.context[len(CONTEXT) :].split()
    assert common in added and len(added) == 10
    assert stats.queries < 5000  # stopped early, not at the budget
    assert adv.context[adv.answers[0].start : adv.answers[0].end] == "Broncos"


@pytest.mark.parametrize("budget", [1, 37, 200])
def test_addany_and_addcommon_respect_the_query_budget(budget):
    for name in ("addany", "addcommon"):
        attack = build_attack({"name": name, "params": {"budget": budget}}, "span")
        scorer = TableScorer(None)  # never fooled: the search runs until the budget is spent
        result, stats = run_search(attack, [example()], scorer, seed=0, progress=False)
        assert stats.queries == budget == scorer.seen
        assert len(result.examples[0].context[len(CONTEXT) :].split()) == 10


def test_addcommon_tries_common_words_only_and_addany_adds_the_question_words():
    ex = example()
    seen: dict[str, set] = {}
    for name in ("addany", "addcommon"):
        words: set = set()

        class Recorder(TableScorer):
            def predict(self, examples, _words=words):
                for e in examples:
                    _words.update(e.context[len(CONTEXT) :].split())
                return super().predict(examples)

        run_search(build_attack({"name": name, "params": {"budget": 300}}, "span"), [ex], Recorder(None), seed=0, progress=False)
        seen[name] = words
    assert {"Which", "team", "won"} <= seen["addany"]
    assert not {"Which", "Super"} & seen["addcommon"]


def test_addany_without_a_model_says_how_to_give_it_one():
    with pytest.raises(AttackUnavailable, match="checkpoint"):
        build_attack("addany", "span")(example(), example_rng(0, 0, "q0", "addany"))


def test_batched_search_equals_one_at_a_time_with_a_real_model(tmp_path):
    from robust_mrc.data.synthetic import synthetic_splits
    from robust_mrc.models.backbone import load_tokenizer
    from robust_mrc.models.scoring import ModelScorer
    from robust_mrc.models.span import SpanQAModule
    from tests.helpers import make_cfg

    cfg = make_cfg("task=span", "model=tiny")
    module = SpanQAModule(dict(cfg.model), dict(cfg.task)).eval()
    tokenizer = load_tokenizer(cfg.model)
    examples = synthetic_splits("span", 4, 2, 6, 0)["test"]
    attack = build_attack({"name": "addany", "params": {"budget": 40}}, "span")
    one, s1 = run_search(attack, examples, ModelScorer(module, tokenizer, "k", batch_size=1), seed=3, lockstep=1, progress=False)
    many, s2 = run_search(attack, examples, ModelScorer(module, tokenizer, "k", batch_size=64), seed=3, lockstep=64, progress=False)
    assert one.examples == many.examples and s1.queries == s2.queries
    assert s2.rounds < s1.rounds  # the batched run asked the model fewer times
    assert all(a.context != e.context for a, e in zip(many.examples, examples))


def test_bf16_scorer_is_close_to_float32_and_keys_its_cache_apart():
    from robust_mrc.data.synthetic import synthetic_splits
    from robust_mrc.models.backbone import load_tokenizer
    from robust_mrc.models.mc import MultipleChoiceModule
    from robust_mrc.models.scoring import ModelScorer
    from tests.helpers import make_cfg

    cfg = make_cfg("task=mc", "model=tiny")
    module = MultipleChoiceModule(dict(cfg.model), dict(cfg.task)).eval()
    tokenizer = load_tokenizer(cfg.model)
    examples = synthetic_splits("mc", 4, 2, 8, 0)["test"]
    full = ModelScorer(module, tokenizer, "k").predict(examples)
    half_scorer = ModelScorer(module, tokenizer, "k", precision="bf16")
    half = half_scorer.predict(examples)
    assert half_scorer.key != "k"  # a search in bf16 is cached apart from float32's
    assert len(half) == len(full) == len(examples)
    for a, b in zip(full, half):
        assert len(a.probs) == len(b.probs) and max(abs(x - y) for x, y in zip(a.probs, b.probs)) < 0.02
    with pytest.raises(ValueError, match="precision='16'"):
        ModelScorer(module, tokenizer, "k", precision="16")


def test_an_interrupted_model_search_resumes_from_its_journal(tmp_path):
    """Stopped after its first lockstep group (64 examples), a suite's model set goes on from the
    journal in the cache: the finished examples are not searched again and the set equals the one
    of a search that ran through; once the set is cached the journal is gone."""
    from robust_mrc.evaluation.cache import DiskCache
    from robust_mrc.evaluation.suites import build_sets, suite_specs

    examples = [example(i) for i in range(130)]  # groups 0-63, 64-127, 128-129
    specs = suite_specs({"sets": [{"name": "addany", "model": True, "params": {"budget": 6}}]}, "span")

    def build(cache_dir, scorer):
        return build_sets(specs, examples, "span", seed=0, cache=DiskCache(cache_dir), scorer=scorer)["addany"]

    whole = build(tmp_path / "whole", TableScorer(" time "))

    class Preempted(TableScorer):
        def predict(self, candidates):
            if any(int(c.id[1:]) >= 64 for c in candidates):
                raise KeyboardInterrupt("preempted")
            return super().predict(candidates)

    class Watching(TableScorer):
        def predict(self, candidates):
            self.ids = getattr(self, "ids", set()) | {c.id for c in candidates}
            return super().predict(candidates)

    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "c", Preempted(" time "))
    (journal,) = (tmp_path / "c" / "searches").glob("addany-*.partial.jsonl")
    assert len(journal.read_text().splitlines()) == 2  # the header and group 0
    watching = Watching(" time ")
    resumed = build(tmp_path / "c", watching)
    assert watching.ids == {f"q{i}" for i in range(64, 130)}  # the first group came from the journal
    assert resumed.examples == whole.examples and resumed.fallbacks == whole.fallbacks
    assert resumed.search["queries"] == whole.search["queries"] > 0  # the journaled queries count too
    assert sum(a != c for a, c in zip(resumed.examples, examples)) > 0  # the search did change text
    assert not journal.exists()
