"""Paraphrase (Si et al. 2021 (AdvRACE), appendix A.2, for multiple choice; Wu et al. 2021,
sentence level, for span QA).

A pluggable sentence paraphraser: ``paraphraser="package.module:function"``, a callable that
takes a list of sentences and returns a list of the same length (a seq2seq model the user has).
No paraphraser ships with robust-mrc (SCPN and ParaBank need model weights that cannot be fetched
here): without one, the attack raises :class:`AttackUnavailable` saying so.

What it changes: multiple choice: the passage's sentences; span QA: the context's sentences that
hold no gold answer (answer sentences stay byte-identical, offsets are moved).
"""

from __future__ import annotations

import importlib

from robust_mrc.attacks.base import Attack, AttackUnavailable, register
from robust_mrc.attacks.editing import sentence_spans
from robust_mrc.attacks.span.common import protector, remap_answers
from robust_mrc.papers import cite

NO_PARAPHRASER = (
    "no paraphraser is configured: paraphrase needs paraphraser='module:function' (a callable "
    "mapping a list of sentences to a list of paraphrases, e.g. wrapping a seq2seq model you have); "
    "robust-mrc ships none"
)


def _load(spec):
    if callable(spec):
        return spec
    if not spec:
        raise AttackUnavailable(NO_PARAPHRASER)
    module, _, fn = str(spec).partition(":")
    try:
        return getattr(importlib.import_module(module), fn)
    except (ImportError, AttributeError) as exc:
        raise AttackUnavailable(f"paraphraser {spec!r} cannot be loaded: {exc}") from exc


def paraphrase_text(text: str, fn, skip=lambda s, e: False):
    spans = [(s, e) for s, e in sentence_spans(text) if not skip(s, e)]
    if not spans:
        return text, []
    new = list(fn([text[s:e] for s, e in spans]))
    if len(new) != len(spans):
        raise ValueError(f"the paraphraser returned {len(new)} sentences for {len(spans)}")
    parts, last, edits = [], 0, []
    for (s, e), p in zip(spans, new):
        p = str(p).strip() or text[s:e]
        parts += [text[last:s], p]
        edits.append((s, e, len(p) - (e - s)))
        last = e
    parts.append(text[last:])
    return "".join(parts), edits


class _Paraphrase(Attack):
    paper = cite("advrace", "wu")

    @classmethod
    def defaults(cls):
        return {"paraphraser": None}


@register
class ParaphraseMC(_Paraphrase):
    name = "paraphrase"
    task = "mc"
    description = "paraphrase the passage sentences with a user-supplied seq2seq paraphraser"

    def apply(self, ex, rng):
        fn = _load(self.paraphraser)
        passage, _ = paraphrase_text(ex.passage, fn)
        if passage == ex.passage:
            return None
        return ex.replace(attack=self.name, detail="passage paraphrased", passage=passage)


@register
class ParaphraseSpan(_Paraphrase):
    name = "paraphrase"
    task = "span"
    description = "paraphrase the context sentences without an answer (user-supplied paraphraser)"

    def apply(self, ex, rng):
        fn = _load(self.paraphraser)
        context, edits = paraphrase_text(ex.context, fn, protector(ex))  # the answer sentences stay
        if context == ex.context:
            return None
        answers = remap_answers(ex.answers, edits, context)
        return ex.replace(attack=self.name, detail="context paraphrased", context=context, answers=answers)
