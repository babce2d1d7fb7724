"""AddSent with the heuristic tagger and with spaCy: the sentences to judge, and the cost.

``sample`` prints, as JSON, one inserted AddSent sentence per example for 50 random SQuAD dev
questions (span ``addsent``) and 50 random RACE-M validation questions (multiple-choice
``addsent``, its first sentence), each attacked with both taggers (the examples for which both
build a sentence; ``random.Random(2024)`` order). docs/addsent-grammar-sample.md holds them with
a reader's verdicts.

``speed`` times multiple-choice ``addsent`` over ``--examples`` RACE-M examples with each
tagger, twice: *cold*, in a fresh process per tagger with only WordNet and spaCy loaded (like a
DataLoader worker's first epoch: the nearest-word caches fill as it goes), and *warm*, in one
process after an untimed pass with each tagger has filled the nearest-word caches, so that the
passes differ only by the tagger (whose caches are emptied first); and the tagger alone on those
questions. One rough run, not a benchmark suite: the figures move with the load of the machine.

    python benchmarks/addsent_tagger.py sample > /tmp/addsent_sample.json
    python benchmarks/addsent_tagger.py speed --examples 200

Needs ../shared/data (or ``--data``), WordNet, and spaCy with an English pipeline
(``pip install robust-mrc[nlp]``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from robust_mrc.attacks import example_rng, get_attack  # noqa: E402
from robust_mrc.attacks import resources as R  # noqa: E402
from robust_mrc.data.readers import load_examples  # noqa: E402
from robust_mrc.data.text import TOKEN_RE  # noqa: E402

TAGGERS = ("heuristic", "spacy")


def sample(examples, task: str, n: int = 50, seed: int = 2024) -> tuple[list[dict], int]:
    """The first ``n`` examples (shuffled by ``seed``) with a sentence from both taggers, and how many were passed over."""
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    attacks = {t: get_attack("addsent", task, tagger=t) for t in TAGGERS}
    rows, skipped = [], 0
    for i in order:
        ex = examples[i]
        out = {}
        for t, attack in attacks.items():
            new = attack(ex, example_rng(0, 0, ex.id, "addsent"))
            out[t] = None if new is None else new.edits[-1].detail.split(" | ")[0]
        if None in out.values():
            skipped += 1
            continue
        rows.append({"id": ex.id, "question": ex.question, **out})
        if len(rows) == n:
            break
    return rows, skipped


def _clear_tagging_caches() -> None:
    R._spacy_tagger.tag.cache_clear()
    R._tagger._lexical_tag.cache_clear()


def speed_cold(examples, tagger: str) -> float:
    """Examples/s of mc addsent with ``tagger`` in this process, only the resources loaded before."""
    R.wordnet()
    R.pos_tag(["Load", "the", "tagger", "."], tagger)
    attack = get_attack("addsent", "mc", tagger=tagger)
    start = time.perf_counter()
    for ex in examples:
        attack(ex, example_rng(1, 0, ex.id, "addsent"))
    return len(examples) / (time.perf_counter() - start)


def speed(examples, data: Path) -> dict[str, float]:
    """Examples/s of mc addsent per tagger (cold and warm), and ms per question of the tagger alone."""
    import subprocess

    out: dict[str, float] = {}
    for t in TAGGERS:
        cmd = [sys.executable, __file__, "speed-cold", "--tagger", t, "--examples", str(len(examples)), "--data", str(data)]
        out[f"addsent_examples_per_s_cold_{t}"] = float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    for t in TAGGERS:  # warm-up: WordNet, the nearest words of both taggers' choices, spaCy loaded
        attack = get_attack("addsent", "mc", tagger=t)
        for ex in examples:
            attack(ex, example_rng(1, 0, ex.id, "addsent"))
    for t in TAGGERS:
        attack = get_attack("addsent", "mc", tagger=t)
        _clear_tagging_caches()
        start = time.perf_counter()
        for ex in examples:
            attack(ex, example_rng(1, 0, ex.id, "addsent"))
        out[f"addsent_examples_per_s_warm_{t}"] = len(examples) / (time.perf_counter() - start)
    questions = [TOKEN_RE.findall(ex.question) for ex in examples]
    for t in TAGGERS:
        _clear_tagging_caches()
        start = time.perf_counter()
        for toks in questions:
            R.pos_tag(toks, t)
        out[f"tag_ms_per_question_{t}"] = 1000 * (time.perf_counter() - start) / len(questions)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("sample", "speed", "speed-cold"))
    p.add_argument("--tagger", choices=TAGGERS, default="spacy", help="speed-cold: the tagger of this process")
    p.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    p.add_argument("--examples", type=int, default=200)
    args = p.parse_args()
    data = Path(args.data)
    race = list(load_examples(data / "race" / "race_middle_validation.jsonl"))
    if args.what == "speed-cold":
        print(speed_cold(race[: args.examples], args.tagger))
        return
    if args.what == "speed":
        result = {"tagger": R.tagger_name("spacy"), "examples": args.examples, **speed(race[: args.examples], data)}
        print(json.dumps(result, indent=1))
        return
    squad = list(load_examples(data / "squad" / "dev-v1.1.json"))
    s_rows, s_skip = sample(squad, "span")
    r_rows, r_skip = sample(race, "mc")
    print(json.dumps({"squad": s_rows, "race": r_rows, "skipped": {"squad": s_skip, "race": r_skip}}, indent=1))


if __name__ == "__main__":
    main()
