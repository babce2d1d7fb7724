"""Token lengths for length-grouped training batches, attacked items included.

Dynamic padding pays off only when a batch holds items of similar *token* length. Two things make
a character count a poor key: a multiple-choice batch is padded to its longest option sequence
(truncated at ``max_length``), not to the sum of its options; and an attack changes the length of
the item it makes (AddSent adds a sentence, CharSwap splits words into more word pieces), but the
sampler orders the epoch's items before the DataLoader workers attack them.

So the sampler's keys are:

* clean items: the token length the collator will produce, counted once per run with the fast
  tokenizer (each distinct text tokenized once, no special tokens, then the model's special
  tokens added);
* attacked items: the clean length mapped through a per-attack line ``a + b * clean`` (capped at
  ``max_length`` for multiple choice), fitted by least squares on the attack's output for the first
  training examples (epoch 0). AddSent's added sentence shows as ``a``, CharSwap's extra word
  pieces as ``b``. The fit runs in the main process before the workers fork, which also loads the
  attack's resources once for all of them.

Everything here depends on the seed and the training examples only, so the batch order is the
same for any number of workers and on every DDP rank.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from robust_mrc.attacks.apply import attack_example
from robust_mrc.core import settings as S
from robust_mrc.datamodules import generation, mc
from robust_mrc.datamodules.span_windows import LONG_CONTEXT_CHARS, tokenize_context

log = logging.getLogger(__name__)

FIT_EXAMPLES = 32


class TokenCounter:
    """Token lengths of examples as the task's collator will see them."""

    def __init__(self, task_cfg: Mapping[str, Any], tokenizer):
        task_cfg = S.complete_task(task_cfg)
        self.task = task_cfg["name"]
        self.max_length = int(task_cfg["max_length"])
        self.inputs = task_cfg["inputs"] if self.task == "mc" else None  # multiple choice: which parts the rows hold
        self.tokenizer = tokenizer
        self.pair_extra = tokenizer.num_special_tokens_to_add(pair=True)
        self.single_extra = tokenizer.num_special_tokens_to_add(pair=False)

    def _count(self, texts: set[str]) -> dict[str, int]:
        # a long context is counted piece by piece (bounded memory, the same tokens)
        counts: dict[str, int] = {t: len(tokenize_context(self.tokenizer, t)[0]) for t in texts if len(t) > LONG_CONTEXT_CHARS}
        texts = sorted(t for t in texts if t not in counts)
        for i in range(0, len(texts), 2048):
            chunk = texts[i : i + 2048]
            ids = self.tokenizer(chunk, add_special_tokens=False, return_attention_mask=False, return_token_type_ids=False)["input_ids"]
            counts.update(zip(chunk, map(len, ids)))
        return counts

    def __call__(self, examples: Sequence) -> list[int]:
        """Multiple choice: the longest option sequence, capped at ``max_length`` (the batch is
        padded to it). Span: question + context, uncapped (a longer context makes more windows).
        Distractor generation: the source (question, answer, passage), capped at ``max_length``."""
        if self.task == "dg":
            sep = generation.separator(self.tokenizer)
            pairs = [generation.source_pair(ex, sep) for ex in examples]
            counts = self._count({t for p in pairs for t in p})
            return [min(counts[a] + counts[b] + self.pair_extra, self.max_length) for a, b in pairs]
        if self.task == "mc":
            pairs = [mc.option_pairs(ex, self.inputs) for ex in examples]
            counts = self._count({t for ps in pairs for p in ps for t in p if t is not None})
            out = []
            for ps in pairs:
                rows = [counts[a] + (counts[b] + self.pair_extra if b is not None else self.single_extra) for a, b in ps]
                out.append(min(max(rows, default=0), self.max_length))
            return out
        counts = self._count({t for ex in examples for t in (ex.question.lstrip(), ex.context)})
        return [counts[ex.question.lstrip()] + counts[ex.context] + self.pair_extra for ex in examples]


@dataclass(frozen=True)
class LengthLine:
    """attacked length ~ ``intercept + slope * clean length`` (``cap``: the collator's truncation)."""

    intercept: float = 0.0
    slope: float = 1.0
    cap: int | None = None

    def __call__(self, clean: float) -> float:
        est = self.intercept + self.slope * clean
        return min(est, self.cap) if self.cap is not None else est


def fit_line(pairs: Sequence[tuple[int, int]], cap: int | None) -> LengthLine:
    """Least squares through ``(clean, attacked)`` pairs; with too few distinct clean lengths, a
    pure shift by the mean difference (none when there are no pairs)."""
    if not pairs:
        return LengthLine(cap=cap)
    n = len(pairs)
    mx = sum(x for x, _ in pairs) / n
    my = sum(y for _, y in pairs) / n
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    if n < 3 or sxx == 0:
        return LengthLine(intercept=my - mx, cap=cap)
    slope = sum((x - mx) * (y - my) for x, y in pairs) / sxx
    return LengthLine(intercept=my - slope * mx, slope=slope, cap=cap)


def fit_attack_lengths(
    counter: TokenCounter, attacks: Sequence, examples: Sequence, seed: int, n: int = FIT_EXAMPLES
) -> dict[str, LengthLine]:
    """One :class:`LengthLine` per attack, from its epoch-0 output on the first ``n`` examples
    (the ones it gives up on are left out)."""
    sample = list(examples[:n])
    clean = counter(sample)
    cap = counter.max_length if counter.task == "mc" else None
    lines = {}
    for attack in attacks:
        t = time.perf_counter()
        done = [(i, out) for i, (out, ok) in enumerate(attack_example(attack, ex, seed, 0) for ex in sample) if ok]
        attacked = counter([out for _, out in done])
        lines[attack.name] = line = fit_line([(clean[i], a) for (i, _), a in zip(done, attacked)], cap)
        log.info(
            "length of %s items ~ %.1f + %.3f x clean tokens (%d of %d examples, %.1f s)",
            attack.name,
            line.intercept,
            line.slope,
            len(done),
            len(sample),
            time.perf_counter() - t,
        )
    return lines
