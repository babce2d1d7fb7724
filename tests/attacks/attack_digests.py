"""Digests of the attacked data: every registered attack on fixed examples with fixed seeds.

A refactoring that must not change the attacked data compares these digests before and after::

    python tests/attacks/attack_digests.py            # synthetic + hand-made examples
    python tests/attacks/attack_digests.py --real     # + 20 RACE-M and 20 SQuAD dev examples
                                                      #   (needs ../shared or $ROBUST_MRC_SHARED)
    python tests/attacks/attack_digests.py --real --record   # (re)record this environment's digests

It prints one JSON object: ``environment`` (what the output depends on besides the code: WordNet,
the nearest-word backend, the homoglyph source, the tagger) and ``digests`` (attack -> BLAKE2b of
the ``repr`` of every attacked example, ``None`` included, in order). ``--record`` stores them in
``digests.json`` under their environment; ``test_digests.py`` compares with the entry of the
environment it runs in. Record again only when a change of the attacked data is meant.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

os.environ.setdefault("ROBUST_MRC_VECTORS", "wordnet")

SEEDS = (0, 3)
N_SYNTHETIC = 12
N_REAL = 20


def upper_paraphraser(sentences):
    """A deterministic stand-in paraphraser (the project ships none)."""
    return [s.upper() for s in sentences]


def _params(name: str, task: str, pool) -> dict:
    if name == "paraphrase":
        return {"paraphraser": upper_paraphraser}
    if task == "mc" and name in ("distractor_generation", "dg_retrieval", "magnet", "random_option", "extra_option"):
        return {"pool": pool}
    return {}


def shared_data() -> Path | None:
    """``$ROBUST_MRC_SHARED/data`` or ``../shared/data`` beside the checkout, None when absent."""
    data = Path(os.environ.get("ROBUST_MRC_SHARED", REPO.parent / "shared")) / "data"
    return data if data.is_dir() else None


def example_sets(real: bool = False) -> dict[str, dict[str, list]]:
    """``{"mc": {set name: examples}, "span": {...}}``: synthetic, hand-made, and real when asked."""
    from attack_samples import mc_examples, span_examples

    from robust_mrc.data.synthetic import make_synthetic_mc, make_synthetic_span

    sets = {
        "mc": {"synthetic": make_synthetic_mc(N_SYNTHETIC, seed=5), "samples": mc_examples()},
        "span": {"synthetic": make_synthetic_span(N_SYNTHETIC, seed=5), "samples": span_examples()},
    }
    if real:
        from robust_mrc.data.readers import load_examples

        data = shared_data()
        if data is None:
            raise SystemExit("--real needs ../shared/data beside the checkout (or set ROBUST_MRC_SHARED)")
        sets["mc"]["race_m"] = list(load_examples(data / "race" / "race_middle_validation.jsonl", limit=N_REAL))
        sets["span"]["squad"] = list(load_examples(data / "squad" / "dev-v1.1.json", limit=N_REAL))
    return sets


def environment() -> dict[str, str]:
    """What the attacked data depends on besides the code and the seed."""
    from robust_mrc.attacks import resources as R

    return R.environment()


def attack_digests(real: bool = False) -> dict[str, str]:
    """attack key ("task/name/set") -> digest of its outputs over the set's examples and SEEDS."""
    from robust_mrc.attacks import AttackUnavailable, ResourceMissing, example_rng, get_attack, list_attacks

    out = {}
    for task, sets in example_sets(real).items():
        for row in list_attacks(task):
            name = row["name"]
            for set_name, examples in sets.items():
                attack = get_attack(name, task, **_params(name, task, examples))
                h = hashlib.blake2b(digest_size=12)
                try:
                    for seed in SEEDS:
                        for ex in examples:
                            h.update(repr(attack(ex, example_rng(seed, 1, ex.id, name))).encode("utf-8"))
                            h.update(b"\x1e")
                except (ResourceMissing, AttackUnavailable) as exc:  # e.g. no WordNet: the error is the output
                    out[f"{task}/{name}/{set_name}"] = f"raises {type(exc).__name__}"
                    continue
                out[f"{task}/{name}/{set_name}"] = h.hexdigest()
    return out


RECORDED = HERE / "digests.json"


def recorded(env: dict[str, str]) -> dict[str, str] | None:
    """The digests recorded for ``env`` in digests.json, or None."""
    if not RECORDED.is_file():
        return None
    for entry in json.loads(RECORDED.read_text())["environments"]:
        if entry["environment"] == env:
            return entry["digests"]
    return None


def record(env: dict[str, str], digests: dict[str, str]) -> None:
    entries = json.loads(RECORDED.read_text())["environments"] if RECORDED.is_file() else []
    entries = [e for e in entries if e["environment"] != env] + [{"environment": env, "digests": digests}]
    RECORDED.write_text(json.dumps({"environments": entries}, indent=1, sort_keys=True) + "\n")


def main(argv: list[str]) -> None:
    env, digests = environment(), attack_digests("--real" in argv)
    if "--record" in argv:
        record(env, digests)
    print(json.dumps({"environment": env, "digests": digests}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
