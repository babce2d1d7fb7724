"""A Distractor Generation bank made by the project's own generator (the DG of Si et al. 2021
(AdvRACE), section 3.2), the library under ``robust-mrc banks dg`` (:mod:`robust_mrc.cli.banks`)
and ``distractor_generation bank=auto`` (:class:`robust_mrc.banks.auto.DistractorBanks`):

1. the generator: a ``task=dg`` checkpoint, loaded weights-only through
   :func:`robust_mrc.models.checkpoints.load_checkpoint` (:func:`load_generator_checkpoint`; the
   command trains one first when it is given none);
2. for every question: beam search with ``beams`` beams (50), at most ``max_new_tokens`` (20) new
   tokens, no repeated unigrams (``no_repeat_ngram_size=1``), all beams returned, best first;
   uncased output is re-cased from the question's own text (:func:`recase`);
3. :func:`robust_mrc.attacks.mc.diverse.select_diverse` keeps beam 1, then later beams whose
   token-set Jaccard similarity to every kept one is below ``max_similarity`` (0.5), falls back to
   beams 2, 3, ..., never the correct answer or a duplicate (normalised); ``n`` = the question's
   number of wrong options (:func:`select_for`).

Each batch of finished questions is appended to a journal (:mod:`robust_mrc.core.journal`) when one
is given: a run after a crash or preemption goes on with the questions not yet done.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from robust_mrc.attacks.mc.diverse import select_diverse
from robust_mrc.core.clock import clock
from robust_mrc.core.journal import Journal
from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import WORD_RE, normalize

log = logging.getLogger(__name__)

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


def load_generator_checkpoint(path: str | Path, device: str = "auto", trust_remote_code: bool = False):
    """The ``task=dg`` module of the checkpoint ``path`` (weights only), moved to CUDA when
    ``device`` is ``cuda``, or ``auto`` and a GPU is there."""
    import torch

    from robust_mrc.models.checkpoints import load_checkpoint

    module = load_checkpoint(path, expected_task="dg", trust_remote_code=bool(trust_remote_code))
    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        module.to("cuda")
    return module


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
