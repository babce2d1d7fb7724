"""Distractor Extraction (DE) and Distractor Generation (DG) for multiple choice (seed 000, 3.1-3.2).

What they change: the wrong options (all of them: three in RACE), in place; the question, the
passage, the correct option and the label are untouched.

* With ``bank=PATH`` (one record per example id with its new distractors, e.g. from the paper's
  span extractor, made by ``python -m robust_mrc.banks.de``, or from a seq2seq generator) both
  read their distractors from the bank, drop any equal to the answer or to each other, and
  backfill with the original distractors. An example missing from the bank, or whose record is
  empty, cannot be attacked (None).
* Without a bank, model-free versions:
  - DE: spans of the passage (windows of about the answer's length inside a clause) ranked by how
    many question stems they share, walked in rank order (top 20) with the DE filtering rules:
    drop punctuation-only spans, stopwords, substrings of the answer, spans containing the answer,
    spans that contain or are contained in a kept span; keep spans with low lexical overlap
    (stem Jaccard < 0.5) with each other and with the answer (:func:`filter_spans`, which the DE
    bank builder uses too); backfill with original distractors.
  - DG: retrieval from a pool of other questions' options (``pool=``: a list of examples, a data
    file or an :class:`~robust_mrc.attacks.pools.OptionPool`; never the same passage): options of
    the most similar questions (stem Jaccard) form a 50-long "beam", from which
    :func:`~robust_mrc.attacks.mc.diverse.select_diverse` keeps the first, then later ones whose
    token-set Jaccard similarity to every kept one is below 0.5 (distance > 0.5), and falls back
    to the next ones in rank order (the rule the generated bank uses too).

What they promise: label unchanged; every new option differs (after normalisation) from the
correct option and from the other options.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, AttackContext, AttackUnavailable, register
from robust_mrc.attacks.mc.diverse import select_diverse
from robust_mrc.attacks.pools import OptionPool, load_bank, passage_key, pool_for
from robust_mrc.attacks.text import WORD_RE, jaccard, normalize, sentence_spans, stems
from robust_mrc.papers import cite

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


def extract_spans(ex, top: int = 20) -> list[str]:
    """Model-free DE: passage spans related to the question, filtered by the DE rules."""
    answer = ex.answer
    q_stems = stems(ex.question) - stems(answer)
    n_answer = max(1, len(WORD_RE.findall(answer)))
    lengths = sorted({max(1, min(12, n)) for n in (n_answer - 1, n_answer, n_answer + 1)})
    cands = []
    text = ex.passage
    for s, e in sentence_spans(text):
        sent = text[s:e]
        pos = 0
        for chunk in _CLAUSE_SPLIT.split(sent):
            cstart = sent.find(chunk, pos)
            pos = cstart + len(chunk)
            ws = [(m.start(), m.end(), m.group()) for m in WORD_RE.finditer(chunk)]
            windows = [(0, len(ws))] if 0 < len(ws) <= 2 * n_answer + 3 else []  # a whole clause
            windows += [(i, i + L) for L in lengths for i in range(0, len(ws) - L + 1)]
            for i, j in windows:
                first, last = ws[i][2].lower(), ws[j - 1][2].lower()
                whole = (i, j) == (0, len(ws))
                if not whole and (last in R.STOPWORDS or first in _EDGE_WORDS):
                    continue
                span = chunk[ws[i][0] : ws[j - 1][1]]
                sst = {R.stem(w.lower()) for _, _, w in ws[i:j] if w.lower() not in R.STOPWORDS}
                score = len(sst & q_stems)
                if score:
                    cands.append((-score, not whole, abs(j - i - n_answer), s + cstart + ws[i][0], span, sst))
    cands.sort(key=lambda c: c[:4])
    return filter_spans([(span, sst) for *_, span, sst in cands[:top]], answer)


def filter_spans(
    candidates: Iterable[str | tuple[str, set[str]]], answer: str, limit: int | None = None, dropped: Counter | None = None
) -> list[str]:
    """The DE post-processing of seed 000 section 3.1 (``reference-algorithms.md``, "Distractor
    Extraction"): walk ``candidates`` (spans, best first; or ``(span, stems)`` pairs with the stems
    of its content words precomputed) and keep a span unless it

    * is punctuation only (``punctuation``) or a single stopword / has no content word
      (``stopword``),
    * is a substring of the answer or contains it (``answer``; normalized text, character level),
    * contains or is contained in a span already kept (``containment``; normalized text),
    * shares half or more of its content-word stems with the answer or with a kept span
      (``overlap``: stem Jaccard >= 0.5; the paper's "low lexical overlap" made concrete).

    At most ``limit`` spans are kept (all when None). ``dropped`` counts the rule that dropped
    each candidate. Shared by the model-free ``distractor_extraction`` and the DE bank builder
    (``robust_mrc.banks.de``).
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


@register
class DistractorExtraction(Attack):
    name = "distractor_extraction"
    task = "mc"
    paper = cite("advrace")
    description = "replace the wrong options by passage spans (from a bank, or model-free lexical extraction)"

    @classmethod
    def defaults(cls):
        return {"bank": None, "top": 20}

    _bank: dict | None = None

    def prepare(self, context: AttackContext) -> None:
        self._bank = load_bank(self.bank)

    def apply(self, ex, rng):
        if self._bank is not None:
            new = _bank_distractors(self._bank, ex)
            return _replace_wrong(ex, new, self.name, "bank") if new else None
        return _replace_wrong(ex, extract_spans(ex, int(self.top)), self.name, "passage spans")


def _pool_index(pool: OptionPool):
    idx = getattr(pool, "_dg_index", None)
    if idx is None:
        qstems = [frozenset(stems(e.question)) for e in pool.entries]
        inverted: dict[str, list[int]] = {}
        for i, st in enumerate(qstems):
            for s in sorted(st):
                inverted.setdefault(s, []).append(i)
        idx = (qstems, inverted)
        pool._dg_index = idx
    return idx


def retrieve_distractors(ex, pool: OptionPool, beam: int = 50, n: int = 3) -> list[str]:
    """Model-free DG: options of similar questions from other passages, kept diverse (Jaccard < 0.5)."""
    qstems, inverted = _pool_index(pool)
    mine = stems(ex.question)
    key = passage_key(ex.passage)
    own = {normalize(o) for o in ex.options}
    hits = sorted({i for s in sorted(mine) for i in inverted.get(s, ())})
    ranked = sorted(hits, key=lambda i: (-jaccard(mine, qstems[i]), i))
    beam_opts: list[str] = []
    seen = set(own)
    for i in ranked:
        e = pool.entries[i]
        if e.passage == key or e.source_id == ex.id:
            continue
        norm = normalize(e.option)
        if not norm or norm in seen:
            continue
        seen.add(norm)
        beam_opts.append(e.option)
        if len(beam_opts) >= beam:
            break
    return select_diverse(beam_opts, n)


@register
class DistractorGeneration(Attack):
    name = "distractor_generation"
    task = "mc"
    paper = cite("advrace")
    description = "replace the wrong options by generated ones (from a bank, or retrieved from other questions)"

    @classmethod
    def defaults(cls):
        return {"bank": None, "pool": None, "beam": 50}

    _bank: dict | None = None
    _drawn: OptionPool | None = None

    def prepare(self, context: AttackContext) -> None:
        """A bank when given; else the retrieval pool (``pool=``, else the context's examples)."""
        self._bank = load_bank(self.bank)
        if self._bank is None:
            self._drawn = pool_for(self.pool, context.pool_examples)

    def apply(self, ex, rng):
        if self._bank is not None:
            new = _bank_distractors(self._bank, ex)
            return _replace_wrong(ex, new, self.name, "bank") if new else None
        if self._drawn is None:
            raise AttackUnavailable(
                "distractor_generation needs bank=PATH (model-generated distractors) or pool= "
                "(examples or a data file whose options are retrieved)"
            )
        n = len(ex.options) - 1
        return _replace_wrong(ex, retrieve_distractors(ex, self._drawn, int(self.beam), n), self.name, "retrieval")
