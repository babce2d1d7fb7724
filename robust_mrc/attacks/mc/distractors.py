"""Distractor Extraction (DE) and Distractor Generation (DG) for multiple choice (Si et al. 2021
(AdvRACE), sections 3.1-3.2), and their model-free stand-ins ``de_lexical`` and ``dg_retrieval``.

What they change: the wrong options (all of them: three in RACE), in place; the question, the
passage, the correct option and the label are untouched.

* ``distractor_extraction`` and ``distractor_generation`` read their distractors from a bank (one
  record per example id), drop any equal to the answer or to each other, and backfill with the
  original distractors; an example missing from the bank, or whose record is empty, cannot be
  attacked (None). The bank:

  - ``bank: auto`` (the default): the bank comes from the context's bank maker
    (:attr:`AttackContext.banks <robust_mrc.attacks.base.AttackContext>`, which the train,
    evaluate and attacks commands hand over: :class:`robust_mrc.banks.auto.DistractorBanks`). DE:
    the project's span extractor trained on the training examples beside the attack
    (``AttackContext.pool_examples``) reads the examples it will attack (``AttackContext.targets``),
    the path of ``robust-mrc banks de``, built once and cached. DG: a trained seq2seq generator
    checkpoint (``generator=PATH``) generates for the targets, cached likewise; none is trained.
    The attack itself trains and loads no model.
  - ``bank: PATH``: a bank file (``robust-mrc banks de`` / ``robust-mrc banks dg``), each
    record checked as it is read; a bank that covers none of the questions to attack is refused,
    one that misses some gives one warning with the share it covers.
  - ``bank: none``, or ``auto`` without what it needs (a bank maker, training examples and
    targets; for DG a generator): the stand-in runs, with a warning that names it; the attack's
    ``method`` is then "stand-in" and its :meth:`provenance` names the stand-in.

* The stand-ins, model-free and under their own names:

  - ``de_lexical``: spans of the passage (windows of about the answer's length inside a clause)
    ranked by how many question stems they share, walked in rank order (top 20) with the DE
    filtering rules: drop punctuation-only spans, stopwords, substrings of the answer, spans
    containing the answer, spans that contain or are contained in a kept span; keep spans with low
    lexical overlap (stem Jaccard < 0.5) with each other and with the answer (:func:`filter_spans`,
    which the DE bank builder uses too); backfill with original distractors.
  - ``dg_retrieval``: retrieval from a pool of other questions' options (``pool=``: a list of
    examples, a data file or an :class:`~robust_mrc.attacks.pools.OptionPool`, else the context's
    examples; never the same passage): options of the most similar questions (stem Jaccard) form a
    50-long "beam", from which :func:`~robust_mrc.attacks.mc.diverse.select_diverse` keeps the
    first, then later ones whose token-set Jaccard similarity to every kept one is below 0.5
    (distance > 0.5), and falls back to the next ones in rank order (the rule the generated bank
    uses too).

What they promise: label unchanged; every new option differs (after normalisation) from the
correct option and from the other options.
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Iterable
from typing import ClassVar

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, AttackContext, AttackUnavailable, get_attack, register
from robust_mrc.attacks.editing import sentence_spans, stems
from robust_mrc.attacks.mc.diverse import select_diverse
from robust_mrc.attacks.pools import (
    OptionPool,
    check_bank_coverage,
    describe_pool,
    describe_source,
    load_bank,
    passage_key,
    pool_for,
)
from robust_mrc.core import settings as S
from robust_mrc.data.text import WORD_RE, jaccard, normalize
from robust_mrc.papers import cite

log = logging.getLogger(__name__)

# a bank: auto attack built without a bank maker (robust_mrc.banks.auto.DistractorBanks)
NO_MAKER = "bank=auto with no bank maker in the context (the train, evaluate and attacks commands give one)"
MIN_TRAIN = 20  # fewer training examples than this: no extractor is trained (bank=auto falls back)
SMALL_TRAIN = 1000  # extractor=auto below this many training examples: model=tiny (fast), else minilm

_EDGE_WORDS = frozenset("and or but of to in on at for with by from as that which who than so".split())
_CLAUSE_SPLIT = re.compile(r"[,;:()\"\u201c\u201d]|\s-\s|--")


def _replace_wrong(ex, new: list[str], attack: str, source: str):
    """Put ``new`` distractors in place of the wrong options (in order), backfilling with originals."""
    answer = normalize(ex.answer)
    wrong_idx = [i for i in range(len(ex.options)) if i != ex.label]
    chosen, seen = [], {answer}
    for d in new:
        key = normalize(d)
        if key and key not in seen:
            chosen.append(d.strip())
            seen.add(key)
        if len(chosen) == len(wrong_idx):
            break
    n_new = len(chosen)
    for i in wrong_idx:  # backfill
        if len(chosen) == len(wrong_idx):
            break
        key = normalize(ex.options[i])
        if key not in seen:
            chosen.append(ex.options[i])
            seen.add(key)
    if n_new == 0 or len(chosen) < len(wrong_idx):
        return None
    options = list(ex.options)
    for i, d in zip(wrong_idx, chosen):
        options[i] = d
    if tuple(options) == ex.options:
        return None
    return ex.replace(attack=attack, detail=f"{n_new} distractors from {source}", options=tuple(options))


def _bank_distractors(bank, ex):
    return list(bank.get(ex.id, ())) if bank is not None else None


def extract_spans(ex, top: int = S.TOP) -> list[str]:
    """Model-free DE: passage spans related to the question, filtered by the DE rules."""
    answer = ex.answer
    q_stems = stems(ex.question) - stems(answer)
    n_answer = max(1, len(WORD_RE.findall(answer)))
    lengths = sorted({max(1, min(12, n)) for n in (n_answer - 1, n_answer, n_answer + 1)})
    cands = []
    for start, chunk, ws, lows, sts in _clauses(ex.passage):
        # hits[k]: words before k whose stem is a question stem; a window without one scores 0
        hits = [0]
        for st in sts:
            hits.append(hits[-1] + (st is not None and st in q_stems))
        if not hits[-1]:
            continue
        n = len(ws)
        windows = [(0, n)] if 0 < n <= 2 * n_answer + 3 else []  # a whole clause
        windows += [(i, i + L) for L in lengths for i in range(0, n - L + 1)]
        for i, j in windows:
            whole = (i, j) == (0, n)
            if not whole and (lows[j - 1] in R.STOPWORDS or lows[i] in _EDGE_WORDS):
                continue
            if hits[j] == hits[i]:
                continue
            sst = {st for st in sts[i:j] if st is not None}
            score = len(sst & q_stems)
            cands.append((-score, not whole, abs(j - i - n_answer), start + ws[i][0], chunk[ws[i][0] : ws[j - 1][1]], sst))
    cands.sort(key=lambda c: c[:4])
    return filter_spans([(span, sst) for *_, span, sst in cands[:top]], answer)


@functools.lru_cache(maxsize=256)
def _clauses(text: str) -> tuple:
    """The clauses of ``text`` (sentences cut at clause punctuation), each as ``(start, clause, words
    (start, end, word) in the clause, the words in lower case, their stems (None for a stopword))``;
    once per passage (its questions share it)."""
    out = []
    for s, e in sentence_spans(text):
        sent = text[s:e]
        pos = 0
        for chunk in _CLAUSE_SPLIT.split(sent):
            cstart = sent.find(chunk, pos)
            pos = cstart + len(chunk)
            ws = tuple((m.start(), m.end(), m.group()) for m in WORD_RE.finditer(chunk))
            lows = tuple(w.lower() for _, _, w in ws)
            sts = tuple(None if w in R.STOPWORDS else R.stem(w) for w in lows)
            out.append((s + cstart, chunk, ws, lows, sts))
    return tuple(out)


def filter_spans(
    candidates: Iterable[str | tuple[str, set[str]]], answer: str, limit: int | None = None, dropped: Counter | None = None
) -> list[str]:
    """The DE post-processing of Si et al. 2021 (AdvRACE), section 3.1 (``reference-algorithms.md``,
    "Distractor Extraction"): walk ``candidates`` (spans, best first; or ``(span, stems)`` pairs with the stems
    of its content words precomputed) and keep a span unless it

    * is punctuation only (``punctuation``) or a single stopword / has no content word
      (``stopword``),
    * is a substring of the answer or contains it (``answer``; normalized text, character level),
    * contains or is contained in a span already kept (``containment``; normalized text),
    * shares half or more of its content-word stems with the answer or with a kept span
      (``overlap``: stem Jaccard >= 0.5; the paper's "low lexical overlap" made concrete).

    At most ``limit`` spans are kept (all when None). ``dropped`` counts the rule that dropped
    each candidate. Shared by the model-free ``distractor_extraction`` and the DE bank builder
    (``robust-mrc banks de``).
    """
    answer_norm = normalize(answer)
    answer_stems = stems(answer)
    kept: list[tuple[str, str, set]] = []
    for cand in candidates:
        span, sst = (cand, None) if isinstance(cand, str) else cand
        sst = stems(span) if sst is None else sst
        norm = normalize(span)
        reason = None
        if not norm:
            reason = "punctuation"
        elif (len(norm.split()) == 1 and norm in R.STOPWORDS) or not sst:
            reason = "stopword"
        elif norm in answer_norm or answer_norm in norm:
            reason = "answer"
        elif any(norm in k or k in norm for _, k, _ in kept):
            reason = "containment"
        elif jaccard(sst, answer_stems) >= 0.5 or any(jaccard(sst, ks) >= 0.5 for *_, ks in kept):
            reason = "overlap"
        if reason is not None:
            if dropped is not None:
                dropped[reason] += 1
            continue
        kept.append((span, norm, sst))
        if limit is not None and len(kept) >= limit:
            break
    return [span for span, *_ in kept]


def _bank_mode(bank) -> str:
    """``auto``, ``none`` (also None) or ``given`` (a bank file or a dict)."""
    if bank is None or (isinstance(bank, str) and bank.strip().lower() in ("none", "null", "")):
        return "none"
    if isinstance(bank, str) and bank.strip().lower() == "auto":
        return "auto"
    return "given"


class _BankAttack(Attack):
    """A bank attack (DE, DG) that falls back to its model-free stand-in: then ``method`` is
    "stand-in", :meth:`resources` are the stand-in's and :meth:`provenance` names it."""

    stand_in: ClassVar[str] = ""
    bank_command: ClassVar[str] = ""  # the command that makes a bank file
    _bank: dict | None = None
    _stand_in: Attack | None = None
    _source: dict | None = None

    def _fall_back(self, reason: str, context: AttackContext, **params) -> None:
        stand_in = get_attack(self.stand_in, self.task, **params)
        log.warning(
            "%s: %s: running the model-free stand-in %s instead (%s), not the model-made distractors of %s",
            self.name,
            reason,
            stand_in.name,
            stand_in.description,
            self.paper,
        )
        object.__setattr__(self, "method", "stand-in")
        self._stand_in = stand_in.setup(context)

    def _use_bank(self, bank, context: AttackContext) -> None:
        """The bank ``bank`` (a file or a dict), checked against the questions the context will
        attack (:func:`~robust_mrc.attacks.pools.check_bank_coverage`) where it names them."""
        self._bank = load_bank(bank)
        self._source = {"bank": describe_source(bank)}
        if context.targets:
            name = "given in memory" if isinstance(bank, dict) else str(bank)
            check_bank_coverage(self._bank, name, context.targets, self.name, self.bank_command)

    def resources(self) -> dict[str, str]:
        return self._stand_in.resources() if self._stand_in is not None else dict(self._source or {})

    def provenance(self) -> dict:
        out = super().provenance()
        if self._stand_in is not None:
            out["attack"] = self._stand_in.name
        return out

    def apply(self, ex, rng):
        if self._stand_in is not None:
            return self._stand_in.apply(ex, rng)
        new = _bank_distractors(self._bank, ex)
        return _replace_wrong(ex, new, self.name, "bank") if new else None


@register
class DELexical(Attack):
    name = "de_lexical"
    task = "mc"
    paper = cite("advrace")
    method = "stand-in"
    description = (
        "stand-in for AdvRACE's DE without a model: the wrong options replaced by passage windows that share "
        "question words, filtered by the DE rules"
    )

    @classmethod
    def defaults(cls):
        return {"top": S.TOP}

    def resources(self) -> dict[str, str]:
        return {"extractor": "none: passage windows ranked by the question stems they share"}

    def apply(self, ex, rng):
        return _replace_wrong(ex, extract_spans(ex, int(self.top)), self.name, "passage spans")


@register
class DistractorExtraction(_BankAttack):
    """``bank``: ``auto`` (the project's span extractor trained on the context's training examples,
    applied to its targets, cached: :func:`robust_mrc.banks.auto.de_bank`), a bank file, or
    ``none`` (the stand-in ``de_lexical``, as when the context has no training examples or no
    targets). ``extractor`` (a ``robust_mrc/conf/model`` name; ``auto``: ``minilm``, ``tiny`` below
    :data:`SMALL_TRAIN` training examples), ``epochs``, ``max_length`` and ``train_batch_size``
    train it (those of the DE bank recipe in ``docs/results.md``); ``top`` n-best spans walked."""

    name = "distractor_extraction"
    task = "mc"
    paper = cite("advrace")
    stand_in = "de_lexical"
    bank_command = "robust-mrc banks de"
    description = (
        "replace the wrong options by passage spans of a span extractor trained on the training set "
        "(bank: auto, cached) or read from a bank file"
    )

    @classmethod
    def defaults(cls):
        return {"bank": "auto", "top": S.TOP, "extractor": "auto", "epochs": 1, "max_length": 256, "train_batch_size": 16}

    def _check_extractor(self) -> None:
        """The extractor's sizes; its name is checked by the bank maker (a model config of the project)."""
        for key in ("epochs", "max_length", "train_batch_size"):
            value = self.params[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise AttackUnavailable(f"{self.name}: {key}={value!r}: expected a whole number >= 1")

    def prepare(self, context: AttackContext) -> None:
        mode = _bank_mode(self.bank)
        if mode == "given":
            return self._use_bank(self.bank, context)
        if mode == "none":
            return self._fall_back("bank=none", context, top=self.top)
        train, targets = list(context.pool_examples or []), list(context.targets or [])
        if len(train) < MIN_TRAIN or not targets:
            reason = f"{len(train)} training examples (at least {MIN_TRAIN} train the extractor)" if targets else "no target examples"
            return self._fall_back(f"bank=auto with {reason} in the context", context, top=self.top)
        self._check_extractor()
        if context.banks is None:
            return self._fall_back(NO_MAKER, context, top=self.top)
        model = self.extractor
        if model == "auto":
            model = "minilm" if len(train) >= SMALL_TRAIN else "tiny"
            if model == "tiny":
                log.warning(
                    "%s: %d training examples (< %d): the span extractor is model=tiny (2 random-init layers: a pipeline "
                    "check, not AdvRACE's extractor); extractor=minilm trains the real one",
                    self.name,
                    len(train),
                    SMALL_TRAIN,
                )
        cached = context.banks.de_bank(
            train,
            targets,
            extractor=model,
            epochs=int(self.epochs),
            max_length=int(self.max_length),
            batch_size=int(self.train_batch_size),
            top=int(self.top),
            label=self.name,
        )
        self._bank = cached.bank
        self._source = {
            "bank": f"auto: {cached.path}",
            "extractor": f"{model}, {self.epochs} epoch(s), length {self.max_length}, batch {self.train_batch_size}, "
            f"trained on {len(train)} examples",
        }


def _pool_index(pool: OptionPool):
    """(each entry's question stems, stem -> entries holding it, each entry's normalised option),
    made once per pool."""
    idx = getattr(pool, "_dg_index", None)
    if idx is None:
        qstems = [frozenset(stems(e.question)) for e in pool.entries]
        inverted: dict[str, list[int]] = {}
        for i, st in enumerate(qstems):
            for s in sorted(st):
                inverted.setdefault(s, []).append(i)
        idx = (qstems, inverted, [normalize(e.option) for e in pool.entries])
        pool._dg_index = idx
    return idx


def retrieve_distractors(ex, pool: OptionPool, beam: int = 50, n: int = 3) -> list[str]:
    """Model-free DG: options of similar questions from other passages, kept diverse (Jaccard < 0.5)."""
    qstems, inverted, norms = _pool_index(pool)
    mine = stems(ex.question)
    key = passage_key(ex.passage)
    own = {normalize(o) for o in ex.options}
    shared: dict[int, int] = {}  # entry -> how many of the question's stems its question shares
    for s in mine:
        for i in inverted.get(s, ()):
            shared[i] = shared.get(i, 0) + 1
    size = len(mine)
    # stem Jaccard similarity |A & B| / |A | B| (data.text.jaccard), best first, ties by entry
    ranked = sorted([(-(n / (size + len(qstems[i]) - n)), i) for i, n in shared.items()])
    beam_opts: list[str] = []
    seen = set(own)
    for _, i in ranked:
        e = pool.entries[i]
        if e.passage == key or e.source_id == ex.id:
            continue
        norm = norms[i]
        if not norm or norm in seen:
            continue
        seen.add(norm)
        beam_opts.append(e.option)
        if len(beam_opts) >= beam:
            break
    return select_diverse(beam_opts, n)


@register
class DGRetrieval(Attack):
    name = "dg_retrieval"
    task = "mc"
    paper = cite("advrace")
    method = "stand-in"
    description = (
        "stand-in for AdvRACE's DG without a model: the wrong options replaced by options of similar "
        "questions from other passages (a pool), kept diverse"
    )

    @classmethod
    def defaults(cls):
        return {"pool": None, "beam": 50}

    _drawn: OptionPool | None = None
    _pool_source: str = ""

    def prepare(self, context: AttackContext) -> None:
        """The retrieval pool: ``pool=``, else the options of the context's examples."""
        self._drawn = pool_for(self.pool, context.pool_examples)
        self._pool_source = describe_pool(self.pool, context.pool_examples)

    def resources(self) -> dict[str, str]:
        return {"pool": self._pool_source or "none"}

    def apply(self, ex, rng):
        if self._drawn is None:
            raise AttackUnavailable(
                f"{self.name} needs pool= (examples or a data file whose options are retrieved), or training "
                "examples beside it (a training policy, an evaluation suite)"
            )
        n = len(ex.options) - 1
        return _replace_wrong(ex, retrieve_distractors(ex, self._drawn, int(self.beam), n), self.name, "retrieval")


@register
class DistractorGeneration(_BankAttack):
    """``bank``: ``auto`` (the distractors a trained generator checkpoint ``generator`` makes for the
    context's targets, ``beam`` beams, cached: :func:`robust_mrc.banks.auto.dg_bank`; no generator
    is trained here), a bank file, or ``none``. Without a generator (or without targets, or with
    ``bank: none``) it falls back to the stand-in ``dg_retrieval`` (``pool``, ``beam``)."""

    name = "distractor_generation"
    task = "mc"
    paper = cite("advrace")
    stand_in = "dg_retrieval"
    bank_command = "robust-mrc banks dg"
    description = (
        "replace the wrong options by those a trained seq2seq generator makes (bank: auto with generator=, cached) or read from a bank file"
    )

    @classmethod
    def defaults(cls):
        return {"bank": "auto", "generator": None, "pool": None, "beam": 50, "gen_batch_size": 8}

    def prepare(self, context: AttackContext) -> None:
        mode = _bank_mode(self.bank)
        if mode == "given":
            return self._use_bank(self.bank, context)
        retrieval = {"pool": self.pool, "beam": self.beam}
        if mode == "none":
            return self._fall_back("bank=none", context, **retrieval)
        if not self.generator:
            return self._fall_back("bank=auto without generator=PATH (a trained task=dg checkpoint)", context, **retrieval)
        if not context.targets:
            return self._fall_back("bank=auto with no target examples in the context", context, **retrieval)
        if context.banks is None:
            return self._fall_back(NO_MAKER, context, **retrieval)
        cached = context.banks.dg_bank(
            self.generator, list(context.targets), beams=int(self.beam), batch_size=int(self.gen_batch_size), label=self.name
        )
        self._bank = cached.bank
        self._source = {"bank": f"auto: {cached.path}", "generator": describe_source(self.generator)}
