"""DE and DG read model-made banks (``bank: auto``, a file); where they cannot, they run their model-free
stand-ins ``de_lexical`` / ``dg_retrieval``, say so in a warning, and report the stand-in as what ran.
(The ``auto`` DE build itself: ``tests/banks/test_de.py``; the ``auto`` DG bank: ``tests/models/test_generation.py``.)"""

from __future__ import annotations

import logging

import pytest

from robust_mrc.attacks import example_rng, get_attack
from robust_mrc.attacks.apply import build_attack
from robust_mrc.banks import BankError
from robust_mrc.data.synthetic import synthetic_splits
from robust_mrc.jobs.extractor import distractor_banks


@pytest.fixture(scope="module")
def splits():
    return synthetic_splits("mc", 40, 0, 12, 0)


def outputs(attack, examples):
    return [attack(ex, example_rng(0, 0, ex.id, "x")) for ex in examples]


def check_stand_in(attack, stand_in: str, caplog, reason: str):
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "robust_mrc.attacks.mc.distractors"]
    assert warnings, "no warning"
    message = warnings[-1].getMessage()
    assert f"running the model-free stand-in {stand_in} instead" in message and reason in message
    assert attack.method == "stand-in"
    prov = attack.provenance()
    assert prov["attack"] == stand_in and prov["method"] == "stand-in" and prov["paper"] == "Si et al. 2021 (AdvRACE)"
    assert prov["resources"] == attack._stand_in.resources()  # what the stand-in draws on
    assert type(attack).method == "paper"  # the class still names the paper's method


def test_the_stand_ins_say_what_they_are():
    for name in ("de_lexical", "dg_retrieval"):
        attack = get_attack(name, "mc")
        assert attack.method == "stand-in" and attack.description.startswith("stand-in for AdvRACE's")
    for name in ("distractor_extraction", "distractor_generation"):
        assert get_attack(name, "mc").bank == "auto"
    assert get_attack("distractor_generation", "mc").generator is None


def test_bank_none_runs_de_lexical_with_a_warning(splits, caplog):
    train, test = splits["train"], splits["test"]
    attack = build_attack({"name": "distractor_extraction", "params": {"bank": "none"}}, "mc", train, targets=test)
    check_stand_in(attack, "de_lexical", caplog, "bank=none")
    attacked = outputs(attack, test)
    assert attacked == outputs(get_attack("de_lexical", "mc"), test)
    assert any(a is not None and a.edits[-1].attack == "de_lexical" for a in attacked)


@pytest.mark.parametrize(
    "context, reason",
    [
        ({"pool_examples": None, "targets": "test"}, "0 training examples (at least 20"),
        ({"pool_examples": "few", "targets": "test"}, "5 training examples (at least 20"),
        ({"pool_examples": "train", "targets": None}, "no target examples"),
    ],
)
def test_auto_without_what_it_needs_runs_de_lexical(splits, caplog, context, reason):
    named = {"train": splits["train"], "few": splits["train"][:5], "test": splits["test"], None: None}
    attack = build_attack("distractor_extraction", "mc", named[context["pool_examples"]], targets=named[context["targets"]])
    check_stand_in(attack, "de_lexical", caplog, reason)
    assert outputs(attack, splits["test"]) == outputs(get_attack("de_lexical", "mc"), splits["test"])


def test_called_directly_it_has_no_context_and_says_so(splits, caplog):
    attack = get_attack("distractor_extraction", "mc")
    ex = splits["test"][0]
    assert attack(ex, example_rng(0, 0, ex.id, "x")) == get_attack("de_lexical", "mc")(ex, example_rng(0, 0, ex.id, "x"))
    check_stand_in(attack, "de_lexical", caplog, "bank=auto")


def test_dg_without_a_generator_runs_dg_retrieval(splits, caplog):
    train, test = splits["train"], splits["test"]
    attack = build_attack("distractor_generation", "mc", train, targets=test)
    check_stand_in(attack, "dg_retrieval", caplog, "without generator=PATH")
    assert attack.provenance()["resources"] == {"pool": "options of the context's 40 examples"}
    retrieval = build_attack("dg_retrieval", "mc", train)
    assert outputs(attack, test) == outputs(retrieval, test)
    caplog.clear()
    none = build_attack({"name": "distractor_generation", "params": {"bank": "none", "generator": "x.ckpt"}}, "mc", train, targets=test)
    check_stand_in(none, "dg_retrieval", caplog, "bank=none")


def test_dg_with_a_missing_generator_says_so(splits, tmp_path):
    with pytest.raises(BankError, match="generator=.*nope.ckpt: no such checkpoint file"):
        build_attack(
            {"name": "distractor_generation", "params": {"generator": str(tmp_path / "nope.ckpt")}},
            "mc",
            splits["train"],
            targets=splits["test"],
            banks=distractor_banks(),
        )


def test_auto_without_a_bank_maker_runs_the_stand_ins(splits, caplog, tmp_path):
    """An attack trains and loads no model itself: ``bank: auto`` built without a bank maker in its
    context (a library caller's ``build_attack`` without ``banks=``) runs the stand-in, and says so."""
    de = build_attack("distractor_extraction", "mc", splits["train"], targets=splits["test"])
    check_stand_in(de, "de_lexical", caplog, "no bank maker in the context")
    spec = {"name": "distractor_generation", "params": {"generator": str(tmp_path / "g.ckpt")}}
    dg = build_attack(spec, "mc", splits["train"], targets=splits["test"])
    check_stand_in(dg, "dg_retrieval", caplog, "no bank maker in the context")


def test_a_bank_file_is_the_papers_method_and_named_in_the_resources(splits, tmp_path):
    from robust_mrc.attacks.pools import write_bank

    ex = splits["test"][0]
    path = write_bank({ex.id: ["a red kite", "the old bridge"]}, tmp_path / "bank.jsonl")
    for name in ("distractor_extraction", "distractor_generation"):
        attack = build_attack({"name": name, "params": {"bank": str(path)}}, "mc", splits["train"], targets=splits["test"])
        prov = attack.provenance()
        assert (prov["attack"], prov["method"]) == (name, "paper")
        assert prov["resources"]["bank"].startswith(f"{path} (")
        new = attack(ex, example_rng(0, 0, ex.id, name))
        assert {"a red kite", "the old bridge"} <= set(new.options) and new.answer == ex.answer


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"extractor": "nope"}, BankError, "extractor='nope' is no model config of robust_mrc/conf/model"),
        ({"epochs": 0}, "unavailable", "epochs=0: expected a whole number"),
    ],
)
def test_bad_extractor_settings_are_named_before_any_work(splits, params, error, message):
    from robust_mrc.attacks import AttackUnavailable

    with pytest.raises(AttackUnavailable if error == "unavailable" else error, match=message):
        spec = {"name": "distractor_extraction", "params": params}
        build_attack(spec, "mc", splits["train"], targets=splits["test"], banks=distractor_banks())
