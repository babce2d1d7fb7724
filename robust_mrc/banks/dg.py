"""python -m robust_mrc.banks.dg data=dream_local out=banks/dream_dg.jsonl [ckpt=PATH] [model=minilm] [beams=50]

A Distractor Generation bank made by the project's own generator (the DG of Si et al. 2021
(AdvRACE), section 3.2):

1. the generator: ``ckpt=`` (a ``task=dg`` checkpoint, loaded weights-only through
   :func:`robust_mrc.models.checkpoints.load_checkpoint`), else one trained here by
   :func:`robust_mrc.jobs.train.train` with ``task=dg`` (every ``train.py`` key applies);
2. for every question of ``splits``: beam search with ``beams`` beams (50), at most
   ``task.max_new_tokens`` (20) new tokens, no repeated unigrams (``task.no_repeat_ngram_size=1``),
   all beams returned, best first; uncased output is re-cased from the question's own text;
3. :func:`robust_mrc.attacks.mc.diverse.select_diverse` keeps beam 1, then later beams whose
   token-set Jaccard similarity to every kept one is below ``max_similarity`` (0.5), falls back to
   beams 2, 3, ..., never the correct answer or a duplicate (normalised); ``n`` = the question's
   number of wrong options;
4. the bank (JSONL, ``{"id": ..., "distractors": [...]}``: what
   :func:`robust_mrc.attacks.pools.load_bank` reads) and its statistics (``<out>.stats.json``),
   both written atomically; both checked writable before the generator is trained or loaded.

Each batch of finished questions is appended to ``<out>.partial.jsonl``
(:mod:`robust_mrc.core.journal`): the same command run again after a crash or preemption goes on
with the questions not yet done (same checkpoint file and settings; else it starts afresh). With
training, ``output_dir=DIR ckpt_path=last_or_new`` makes the training part resume too.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig

from robust_mrc.attacks.mc.diverse import select_diverse
from robust_mrc.attacks.pools import write_bank
from robust_mrc.banks.stats import bank_stats, collapse_warning, format_stats
from robust_mrc.config.checks import ConfigError, check_config
from robust_mrc.core.clock import clock
from robust_mrc.core.journal import Journal, file_identity
from robust_mrc.data.examples import MCExample
from robust_mrc.data.sources import SPLITS
from robust_mrc.data.text import WORD_RE, normalize
from robust_mrc.data.writers import OutputWriteError, atomic_write_text, check_writable, output_path_problem

log = logging.getLogger(__name__)

CONF = str(Path(__file__).resolve().parents[2] / "conf")
_TIDY = [  # word-piece decoding leaves spaces inside tokens: "well - known", "3 : 00", "$ 5", "( a )"
    (re.compile(r"(?<=\w) ?- ?(?=\w)"), "-"),
    (re.compile(r"(?<=\d) ?([.:]) ?(?=\d)"), r"\1"),
    (re.compile(r"(?<=\d) ?, ?(?=\d{3}\b)"), ","),
    (re.compile(r"([$\u00a3\u20ac]) (?=\d)"), r"\1"),
    (re.compile(r"([(\[]) "), r"\1"),
    (re.compile(r" ([)\]])"), r"\1"),
]


def tidy(text: str) -> str:
    """A decoded generation with word-piece spacing artefacts removed (see ``_TIDY``)."""
    text = " ".join(text.split())
    for pattern, repl in _TIDY:
        text = pattern.sub(repl, text)
    return text


def recase(text: str, example: MCExample) -> str:
    """An all-lower-case generation (an uncased model's) re-cased from the example's passage,
    question and options: a word that occurs there only capitalised (names, "I") takes its most
    frequent form, every other word stays lower case; a capital first letter when most of the
    example's options start with one. Cased text is returned as it is."""
    if text != text.lower():
        return text
    forms: dict[str, Counter] = {}
    for source in (example.passage, example.question, *example.options):
        for word in WORD_RE.findall(source):
            forms.setdefault(word.lower(), Counter())[word] += 1
    cased = {w: c.most_common(1)[0][0] for w, c in forms.items() if w not in c}
    out = WORD_RE.sub(lambda m: cased.get(m.group(), m.group()), text)
    capitals = sum(o.strip()[:1].isupper() for o in example.options)
    if out and capitals * 2 > len(example.options):
        out = out[0].upper() + out[1:]
    return out


def select_for(
    example: MCExample, beams: Sequence[str], n: int | None = None, max_similarity: float = 0.5, exclude_options: bool = False
) -> list[str]:
    """The bank entry of ``example`` from its decoded beams (best first): tidied, re-cased, selected
    by :func:`select_diverse` (never the answer; with ``exclude_options`` never one of its options)."""
    wanted = len(example.options) - 1 if n is None else int(n)
    exclude = list(example.options) if exclude_options else [example.answer]
    return select_diverse([recase(tidy(b), example) for b in beams], wanted, exclude=exclude, max_similarity=max_similarity)


def generate_bank(
    module,
    examples: Sequence[MCExample],
    *,
    beams: int = 50,
    batch_size: int = 8,
    n: int | None = None,
    max_similarity: float = 0.5,
    exclude_options: bool = False,
    max_new_tokens: int | None = None,
    no_repeat_ngram_size: int | None = None,
    journal: Journal | None = None,
) -> tuple[list[dict], list[int]]:
    """Bank records (in the order of ``examples``) and the number of distinct beams of each question.
    Questions go in batches of ``batch_size``, longest first; a progress bar on a terminal. With
    ``journal``, questions that an interrupted build with the same settings finished are taken from
    it, and each batch is appended to it as it finishes."""
    from tqdm.auto import tqdm

    from robust_mrc.datamodules.generation import DGCollator, approx_length

    collate = DGCollator(module.tokenizer, max_length=int(module.task_cfg["max_length"]), targets=False)
    chosen: dict[int, list[str]] = {}
    distinct: dict[int, int] = {}
    finished = journal.load() if journal is not None else {}
    for i, ex in enumerate(examples):
        if ex.id in finished:
            chosen[i] = list(finished[ex.id]["distractors"])
            distinct[i] = int(finished[ex.id].get("distinct_beams", 0))
    if chosen:
        log.info("resuming %s: %d of %d questions were finished by an interrupted build", journal.path, len(chosen), len(examples))
    if journal is not None:
        journal.open({examples[i].id: finished[examples[i].id] for i in chosen})
    order = sorted((i for i in range(len(examples)) if i not in chosen), key=lambda i: -approx_length(examples[i]))
    module.eval()
    lines = not sys.stdout.isatty()  # logs (SLURM, CI, > log): a plain line every 10 batches instead of the bar
    began = time.perf_counter()
    try:
        with tqdm(total=len(examples), initial=len(chosen), unit="question", desc="beam search", disable=None) as bar:
            for step, start in enumerate(range(0, len(order), batch_size), 1):
                idx = order[start : start + batch_size]
                batch = collate([examples[i] for i in idx])
                outs = module.generate_beams(batch, beams, max_new_tokens=max_new_tokens, no_repeat_ngram_size=no_repeat_ngram_size)
                for i, out in zip(idx, outs):
                    chosen[i] = select_for(examples[i], out, n, max_similarity, exclude_options)
                    distinct[i] = len({normalize(b) for b in out if normalize(b)})
                if journal is not None:
                    journal.append({"id": examples[i].id, "distractors": chosen[i], "distinct_beams": distinct[i]} for i in idx)
                bar.update(len(idx))
                done = start + len(idx)
                if lines and (step % 10 == 0 or done == len(order)):
                    elapsed = time.perf_counter() - began
                    print(
                        f"[beam search] questions {len(examples) - len(order) + done}/{len(examples)} questions/s "
                        f"{done / elapsed:.2f} ETA {clock(elapsed / done * (len(order) - done))} (longest passages first)",
                        flush=True,
                    )
    finally:
        if journal is not None:
            journal.close()
    records = [{"id": ex.id, "distractors": chosen[i]} for i, ex in enumerate(examples)]
    return records, [distinct[i] for i in range(len(examples))]


def _check(cfg: DictConfig) -> None:
    """The bank keys of ``cfg``, before any work (then the train keys: :func:`check_config`)."""
    problems = []
    if not cfg.out:
        problems.append("out= is required: the bank file to write, e.g. out=banks/dream_dg.jsonl")
    else:
        inputs = [cfg.data.get(s) for s in SPLITS] if cfg.data.source == "local" else []
        problem = output_path_problem(cfg.out, [str(p) for p in inputs if p])
        if problem:
            problems.append(problem)
        else:
            problems += _unwritable([cfg.out, _stats_path(cfg)])
    for key, low in (("beams", 1), ("gen_batch_size", 1)):
        if not isinstance(cfg[key], int) or cfg[key] < low:
            problems.append(f"{key}={cfg[key]!r}: expected an integer >= {low}")
    if cfg.n is not None and (not isinstance(cfg.n, int) or cfg.n < 1):
        problems.append(f"n={cfg.n!r}: expected an integer >= 1 or null (the question's number of wrong options)")
    sim = cfg.max_similarity
    if not isinstance(sim, (int, float)) or not 0 < sim <= 1:
        problems.append(f"max_similarity={sim!r}: expected a number in (0, 1]")
    splits = list(cfg.splits or [])
    if not splits or any(s not in SPLITS for s in splits):
        problems.append(f"splits={splits}: expected a non-empty list of {', '.join(SPLITS)}")
    if cfg.device not in ("auto", "cpu", "cuda"):
        problems.append(f"device={cfg.device!r}: expected auto, cpu or cuda")
    if cfg.ckpt and not Path(str(cfg.ckpt)).is_file():
        problems.append(f"ckpt={cfg.ckpt}: no such checkpoint file (leave ckpt out to train a generator first)")
    if cfg.task.name != "dg":
        problems.append(f"task={cfg.task.name}: the bank needs a distractor generator (task=dg, the default here)")
    try:
        check_config(cfg, "train")
    except ConfigError as err:
        problems.append(str(err).removeprefix("bad config: "))
    if problems:
        raise ConfigError("bad config: " + "; ".join(problems))


def _stats_path(cfg: DictConfig) -> Path:
    """Where the bank's statistics go: ``stats=``, else ``<out>.stats.json``."""
    out = Path(str(cfg.out))
    return Path(str(cfg.stats)) if cfg.stats else out.with_name(out.name + ".stats.json")


def _unwritable(paths: Sequence) -> list[str]:
    """Why ``paths`` could not be written (:func:`check_writable`), once per directory."""
    problems, seen = [], set()
    for path in map(Path, paths):
        if path.parent in seen:
            continue
        seen.add(path.parent)
        try:
            check_writable(path)
        except OutputWriteError as err:
            problems.append(str(err))
    return problems


def bank_questions(cfg: DictConfig) -> list[MCExample]:
    """The questions of ``cfg.splits`` (``data.limit`` applies); ids must be unique across them."""
    from robust_mrc.data.sources import load_splits

    splits = load_splits(cfg.data, "mc", seed=int(cfg.seed))
    examples = [ex for s in cfg.splits for ex in splits.get(s) or []]
    seen: dict[str, int] = Counter(ex.id for ex in examples)
    twice = sorted(k for k, c in seen.items() if c > 1)
    if twice:
        raise ConfigError(
            f"data={cfg.data.name}: question id {twice[0]!r} occurs {seen[twice[0]]} times in splits="
            f"{list(cfg.splits)} ({len(twice)} such ids); a bank maps ids to distractors: choose fewer splits"
        )
    if not examples:
        raise ConfigError(f"data={cfg.data.name}: no questions in splits={list(cfg.splits)}")
    return examples


def load_generator_checkpoint(path: str | Path, device: str = "auto", trust_remote_code: bool = False):
    """The ``task=dg`` module of the checkpoint ``path`` (weights only), moved to CUDA when
    ``device`` is ``cuda``, or ``auto`` and a GPU is there."""
    import torch

    from robust_mrc.models.checkpoints import load_checkpoint

    module = load_checkpoint(path, expected_task="dg", trust_remote_code=bool(trust_remote_code))
    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        module.to("cuda")
    return module


def load_generator(cfg: DictConfig):
    """The generator of ``ckpt=``, else of a ``train(cfg)`` run (its best checkpoint); with its path."""
    path = cfg.ckpt
    if not path:
        from robust_mrc.jobs.train import train

        path = train(cfg)["ckpt_path"]
        if not path:
            raise ConfigError("training wrote no best checkpoint (no validation split?): set data.holdout=0.1 or data.validation=")
    return load_generator_checkpoint(path, cfg.device, bool(cfg.trust_remote_code)), str(path)


def build_dg_bank(
    generator: str | Path,
    targets: Sequence[MCExample],
    *,
    beams: int = 50,
    batch_size: int = 8,
    journal: Journal | None = None,
    device: str = "auto",
) -> tuple[dict[str, list[str]], list[int]]:
    """``({id: distractors}, distinct beams per question)`` for ``targets`` from the generator
    checkpoint ``generator``: :func:`generate_bank` with the checkpoint's own task settings (at
    most ``max_new_tokens`` new tokens, ``no_repeat_ngram_size``) and ``beams`` beams, the
    question's number of wrong options kept by :func:`select_for`. What ``distractor_generation
    bank=auto`` runs (:mod:`robust_mrc.banks.auto`)."""
    module = load_generator_checkpoint(generator, device)
    records, distinct = generate_bank(module, targets, beams=int(beams), batch_size=int(batch_size), journal=journal)
    return {r["id"]: list(r["distractors"]) for r in records}, distinct


def build_bank(cfg: DictConfig) -> dict:
    """Train (or load) the generator, generate, select, write the bank and its stats; the stats."""
    _check(cfg)
    module, ckpt = load_generator(cfg)
    examples = bank_questions(cfg)
    out = Path(str(cfg.out))
    settings = {
        "ckpt": file_identity(ckpt),
        "data": str(cfg.data.name),
        "splits": list(cfg.splits),
        **{key: cfg[key] for key in ("beams", "n", "max_similarity", "exclude_options")},
        **{key: cfg.task[key] for key in ("max_length", "max_new_tokens", "no_repeat_ngram_size")},
    }
    journal = Journal(out.with_name(out.name + ".partial.jsonl"), settings)
    t = time.perf_counter()
    records, distinct = generate_bank(
        module,
        examples,
        beams=int(cfg.beams),
        batch_size=int(cfg.gen_batch_size),
        n=cfg.n,
        max_similarity=float(cfg.max_similarity),
        exclude_options=bool(cfg.exclude_options),
        max_new_tokens=int(cfg.task.max_new_tokens),
        no_repeat_ngram_size=int(cfg.task.no_repeat_ngram_size),
        journal=journal,
    )
    seconds = time.perf_counter() - t
    bank = {r["id"]: list(r["distractors"]) for r in records}
    write_bank(bank, out)
    journal.finish()
    stats = {
        "bank": str(out),
        "ckpt": ckpt,
        "data": cfg.data.name,
        "splits": list(cfg.splits),
        "beams": int(cfg.beams),
        "max_new_tokens": int(cfg.task.max_new_tokens),
        "no_repeat_ngram_size": int(cfg.task.no_repeat_ngram_size),
        **bank_stats(bank, examples),
        "distinct_beams_mean": round(sum(distinct) / max(1, len(distinct)), 2),
        "seconds": round(seconds, 1),
        "resumed_questions": journal.resumed,
        "questions_per_second": round((len(examples) - journal.resumed) / max(seconds, 1e-9), 2),
        "samples": [
            {
                "id": ex.id,
                "question": ex.question,
                "answer": ex.answer,
                "original": [o for i, o in enumerate(ex.options) if i != ex.label],
                "generated": r["distractors"],
            }
            for ex, r in list(zip(examples, records))[:5]
        ],
    }
    stats_path = _stats_path(cfg)
    atomic_write_text(stats_path, json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    log.info("bank %s: %d questions; %s", out, len(records), format_stats(stats))
    if warning := collapse_warning(stats):
        log.warning(warning)
    return stats


def main() -> None:
    import hydra

    from robust_mrc.config.cli import register_resolvers, run_command

    register_resolvers()

    @hydra.main(version_base="1.3", config_path=CONF, config_name="bank_dg")
    def _main(cfg: DictConfig) -> None:
        stats = run_command(build_bank, cfg)
        print(json.dumps({k: v for k, v in stats.items() if k != "samples"}, indent=1))

    _main()


if __name__ == "__main__":
    main()
