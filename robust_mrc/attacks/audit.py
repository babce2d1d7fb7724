"""Validity audits: a blinded judging sheet of an attack's examples, and the table of a filled sheet.

The papers validated their adversarial sets with human judges (Si et al. 2021 (AdvRACE), section
4.1; Jia & Liang 2017, step 4). An audit repeats that for any attack, seed and data:

    robust-mrc attacks audit attack=addsent data=race_middle_validation.jsonl n=50 seed=7 out=audit/
    robust-mrc attacks audit score sheet=audit/sheet.csv        # after the judge filled it

:func:`draw_sample` draws the rows, :func:`write_audit` writes them, :func:`score_sheet` reads a
filled sheet back and :func:`score_markdown` renders its table. The rubric the questions follow is
:data:`RUBRIC` (:func:`rubric`; the questions, with their allowed values: :data:`QUESTIONS`),
carried by the package so that audits made anywhere compare.

What ``out=DIR`` holds:

* ``sheet.csv``: the sheet the judge fills, one row per example (passage, question, lettered
  options, gold, the marked sentences), with empty verdict columns whose headers state the allowed
  values (``valid [yes|weak|no]``) and a free-text ``reason``;
* ``sheet.md``: the same rows, rendered to read;
* ``instructions.md``: what the judge does, every question with the meaning of each value;
* ``key.json``, which the judge must not open: each row's kind (attacked or control), example id,
  what the attack changed (its edit record, the marked sentences, the replaced words with their
  originals), the attack's name, parameters and :meth:`~robust_mrc.attacks.base.Attack.provenance`,
  the seed, the data, the package version and the attack code's digest, the counts skipped.

**The sample.** ``random.Random(seed)`` shuffles the data's indices; the attacked rows are the first
``n`` examples along that order that the attack changes (an example it gives up on, or returns
unchanged, is skipped and the next one drawn: the key counts them), each attacked with the same
``seed`` (:func:`robust_mrc.attacks.apply.attack_example`, epoch 0). The controls are the next
examples along the same order, unattacked (default ``max(5, ceil(n / 10))``). A passage appears
in at most one row: two rows on one passage (RACE has several questions per passage) would show
the judge which sentences differ between them, so a later example on a passage already in the
sheet is skipped (counted). The rows are shuffled with the same generator and named ``R01``,
``R02``, ... in sheet order. The same command on the same data and installation writes the same
files, byte for byte; nothing in them depends on the time or the machine.

**Blinding.** No file the judge reads names the attack, its parameters, the seed, the version or a
row's kind, and no example id is shown (ids can tell passages apart). The instructions say only that
some rows are unaltered originals. What differs between the rows is what the judge must judge, and
the sheet shows it the same way for the controls:

* *Insertion attacks* (multiple-choice ``addsent``, ``diagnosis``; span ``addsent``, ``addonesent``,
  ``addsentmod``, ``addsent_cue``, ``random_words``: every attacked row differs from its original
  only by inserted text, with question, options, gold unchanged): the sheet is in *sentences* mode.
  The inserted text is found by a word diff of the passages (an inserted chunk is slid along
  repeated words onto sentence boundaries) and split into sentences, each marked ``[[S1: ...]]``
  in the passage and copied to its own column. A control row marks as many real sentences of its
  own passage as a randomly drawn attacked row marks, each the one nearest to that row's relative
  position in the passage (appended sentences: near the end; prepended: near the start) among those
  that end with the same mark (a full stop, a question mark) where there are such; span controls
  mark only sentences that hold no gold answer. The per-sentence questions are asked of
  every marked sentence: multiple choice ``flip`` and ``fluent``, span ``compatible``,
  ``grammatical``, ``on_topic``; multiple choice adds the per-example ``valid`` (and ``problem``).
* *Any other attack* (cue probes ``magnet_cue`` and ``extraction_cue``; DE, DG, magnet,
  ``random_option``, ``extra_option``, ``charswap``, ``word_replace``, the noise attacks, paraphrase):
  *changes* mode, the rubric's cue-probe questions: ``valid`` (the gold still the single correct
  answer), ``facts`` (the passage still states the facts the gold rests on: no word changed a fact
  or renamed someone) and, multiple choice, ``cue`` (a second cue: the gold told apart by its form).
  Options are shown as they are, never marked (which options are new is what the judge must not
  know; the questions are answerable from the options as shown). Words of the passage or question
  the attack replaced or added are highlighted ``{{...}}`` (a word diff; where it only deleted,
  nothing shows); a control highlights as many distinct content words (three letters or more, no
  stopword; span: outside the gold answers) of its own passage and question as a randomly drawn
  attacked row has, drawn at random, each wherever it occurs (as an attack that replaces a word
  replaces it everywhere), so a highlight says "check this word", never "this was changed".

The controls cannot hide everything: a judge may still recognise an attack's typical text (an
inserted sentence's odd wording, a near word out of place). They measure the judge's base rate:
how often this judge rejects examples no attack touched.

**Scoring.** :func:`score_sheet` reads the filled CSV with its key (``key=``, default ``key.json``
beside the sheet), checks that every row's passage and question are the ones the key describes
(:data:`DIGESTED`), and counts, for the attacked rows and for the controls beside them, each
question's verdicts with 95 % Wilson intervals: ``valid`` strict (weak counts as invalid) and lenient (weak counts as valid), and every
value of the per-sentence questions over the marked sentences. A row whose reason starts with
``item:`` (the item was flawed in a way no change made: the rubric's "do not count them against
it") is counted apart and left out of ``valid``. Values are read case-insensitively; a blank
verdict is *not judged yet* and counted as such, never dropped; any other value is an error that
names the file, the row, the column and the allowed values. A control is *rejected* when the judge
calls it invalid (strict), a marked sentence garbage or, span, not compatible, or its facts not
kept; when more than :data:`CONTROL_REJECT_LIMIT` of the judged controls are rejected, the table
carries a warning: recalibrate the judge, do not trust the figures.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from robust_mrc.core.errors import UserError
from robust_mrc.data.examples import LETTERS, MCExample

SHEET = "sheet.csv"
SHEET_MD = "sheet.md"
INSTRUCTIONS = "instructions.md"
KEY = "key.json"
ATTACKED, CONTROL = "attacked", "control"
CONTROL_REJECT_LIMIT = 0.2  # more than this share of the judged controls rejected: the warning
ITEM_PREFIX = "item:"  # a reason that starts so: the item was flawed before any change
Z95 = 1.959963984540054  # the standard normal quantile of 0.975

log = logging.getLogger(__name__)


class AuditError(UserError, ValueError):
    """A sheet or key that cannot be scored, or an audit that cannot be drawn; the message names the file and row."""


def default_controls(n: int) -> int:
    """The number of control rows beside ``n`` attacked ones: 10 %, at least 5."""
    return max(5, math.ceil(n / 10))


# --- the rubric -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One verdict column: asked per example or per marked sentence, with its allowed values."""

    name: str
    scope: str  # "example" | "sentence"
    ask: str
    values: tuple[tuple[str, str], ...]  # (value, what it means)
    optional: bool = False  # a blank is an answer (problem: only for invalid rows), not "not judged"

    @property
    def allowed(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.values)


_VALID_MC = Question(
    "valid",
    "example",
    "Is the gold option still the single defensible answer?",
    (
        ("yes", "the gold is the one answer a careful reader defends"),
        ("weak", "another option becomes defensible, but only on a reading that needs some decoding"),
        ("no", "another option is defensible too, or no option is correct, key information is missing, or the text is uninterpretable"),
    ),
)
_PROBLEM = Question(
    "problem",
    "example",
    "Where valid is weak or no: why (leave blank where valid is yes)",
    (
        ("conflicting", "a sentence or word contradicts the passage's evidence for the gold, so a wrong option becomes defensible"),
        ("multiple", "a wrong option becomes a second answer that can coexist with the passage"),
        ("missing", "key information is missing"),
        ("uninterpretable", "the text cannot be interpreted"),
        ("no_correct", "no option is correct"),
        ("other", "another reason (say it in the reason)"),
    ),
    optional=True,
)
_FLIP = Question(
    "flip",
    "sentence",
    "Does the sentence differ from the question in meaning (a clearly different entity, property or time, an antonym, a "
    "negation), so that a reader would not take it as answering the question with a wrong option?",
    (
        ("yes", "flipped: it gives no wrong option as the answer (it differs in meaning, is about something else, or supports the gold)"),
        (
            "no",
            "not flipped: it reads as the question answered with a wrong option (its differences from the question are synonyms, "
            'near-synonyms, spelling variants, or words the question\'s frame pins anyway such as "passage", "writer")',
        ),
        ("unclear", "a wrong-sense or garbled word that a reader may or may not decode"),
    ),
)
_FLUENT = Question(
    "fluent",
    "sentence",
    "Is the sentence fluent English?",
    (
        ("ok", "fluent (one minor slip tolerated)"),
        ("awkward", "ungrammatical but decodable"),
        ("garbage", "nonsense words standing in for names or nouns, or word salad"),
    ),
)
_COMPATIBLE = Question(
    "compatible",
    "sentence",
    "Is the sentence compatible with the gold: it does not answer the question and does not contradict the gold answer?",
    (
        ("yes", "it neither answers the question nor contradicts the gold answer"),
        ("no", "it answers the question, or contradicts the gold"),
    ),
)
_GRAMMATICAL = Question(
    "grammatical",
    "sentence",
    "As a crowd worker would leave it: is the sentence grammatical?",
    (
        ("yes", "grammatical"),
        ("minor", "a minor slip"),
        ("rewrite", "it needs a rewrite"),
        ("garbage", "nonsense, word salad"),
    ),
)
_ON_TOPIC = Question(
    "on_topic",
    "sentence",
    "Is the sentence on the question's topic: does it share the question's content words?",
    (("yes", "it shares the question's content words"), ("no", "it does not")),
)
_VALID_SPAN = Question(
    "valid",
    "example",
    "Is the gold answer still a correct answer, the one the context supports?",
    (
        ("yes", "the context states the gold answer and supports no other"),
        ("weak", "it does, but only on a reading that needs some decoding"),
        ("no", "the context no longer supports the gold, or supports another answer too"),
    ),
)
_FACTS = Question(
    "facts",
    "example",
    "Does the passage still state the facts the gold rests on, with no highlighted word changing a fact or renaming someone?",
    (
        ("yes", "the facts behind the gold are stated; every highlighted word reads as a rewording at most"),
        ("no", "a fact the gold rests on is gone or changed, or someone is renamed"),
    ),
)
_CUE = Question(
    "cue",
    "example",
    "Could a reader pick the gold without the passage, because it differs in form from the other options?",
    (
        (
            "yes",
            "the gold stands out by form: another phrase type, a length far from the others', or the only option that fits the "
            "question's grammar (whether an option's words occur in the passage does not count here)",
        ),
        ("no", "the options are alike in phrase type and length, and all fit the question's frame"),
    ),
)

#: the verdict columns of each (task, mode), in sheet order: per-sentence ones first, then per example
QUESTIONS: dict[tuple[str, str], tuple[Question, ...]] = {
    ("mc", "sentences"): (_FLIP, _FLUENT, _VALID_MC, _PROBLEM),
    ("span", "sentences"): (_COMPATIBLE, _GRAMMATICAL, _ON_TOPIC),
    ("mc", "changes"): (_VALID_MC, _PROBLEM, _FACTS, _CUE),
    ("span", "changes"): (_VALID_SPAN, _FACTS),
}

#: the rubric's paragraphs; :func:`rubric` picks those of a sheet's task and mode
RUBRIC = {
    "intro": "The rubric follows the papers' human validation (Si et al. 2021 (AdvRACE), section 4.1; Jia & Liang 2017, "
    "step 4), so that audits made anywhere compare.",
    "whole": "Read each example whole: the passage, the question, the options where there are, the gold, and every marked "
    "sentence or highlighted word.",
    "mc": "Multiple choice: an example is *valid* when the gold option is still the single defensible answer. It is invalid "
    "when a sentence or word contradicts the passage's evidence for the gold, so a wrong option becomes defensible "
    "(*conflicting*); when a wrong option becomes a second answer that can coexist with the passage (*multiple*); when key "
    "information is missing, the content cannot be interpreted, or no option is correct. *Weak*: the misleading reading "
    "needs some decoding.",
    "flip": "A marked sentence is *flipped* when it differs from the question in meaning (a clearly different entity, "
    "property or time, an antonym, a negation), so that a reader would not take it as answering the question with a wrong "
    "option; it is *not flipped* when its differences are synonyms, near-synonyms, spelling variants or words the frame "
    'pins anyway ("passage", "writer"), so that it reads as the question answered with a wrong option.',
    "span": "Span QA: a marked sentence is *compatible* when it does not answer the question and does not contradict the gold "
    "answer; *grammatical* as a crowd worker would leave it; *on topic* when it shares the question's content words.",
    "changes": "The gold is still the single correct answer, and the passage still states the facts the gold rests on (a "
    "rewording changes no fact, renames no one).",
    "cue": "No second cue: nothing but content tells the gold apart (the options alike in phrase type and length band, all "
    "grammatical in the question's frame).",
    "item": "Note problems of the item itself, ones that no marked sentence or highlighted word made (a wrong gold, two "
    'answers the text supports anyway): judge the row as it is and start the reason with "item:"; such rows are counted '
    "apart and not against the change.",
}
_RUBRIC_PARTS = {
    ("mc", "sentences"): ("whole", "mc", "flip", "item"),
    ("span", "sentences"): ("whole", "span", "item"),
    ("mc", "changes"): ("whole", "mc", "changes", "cue", "item"),
    ("span", "changes"): ("whole", "changes", "item"),
}


def rubric(task: str, mode: str) -> str:
    """The rubric's paragraphs for a sheet of ``task`` in ``mode``, as Markdown."""
    return RUBRIC["intro"] + "\n\n" + "\n".join(f"- {RUBRIC[part]}" for part in _RUBRIC_PARTS[(task, mode)]) + "\n"


def _sentence_columns(questions: Sequence[Question], k: int) -> list[str]:
    return [f"S{k}"] + [f"s{k}_{q.name}" for q in questions if q.scope == "sentence"]


def _header(name: str, questions: dict[str, Question]) -> str:
    """A column's header: a verdict column states its allowed values."""
    base = name.split("_", 1)[1] if re.fullmatch(r"s\d+_\w+", name) else name
    if base in questions:
        return f"{name} [{'|'.join(questions[base].allowed)}]"
    return f"{name} [free text]" if name == "reason" else name


# --- text: words, sentences, diffs ----------------------------------------------------------

_TOKEN = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s|$)")
_ENDS_SENTENCE = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*$")
_ABBREVIATIONS = frozenset("mr mrs ms dr st jr sr prof mt vs etc fig gen col lt sgt rev inc ltd co ave".split())
_EDGE_PUNCT = "\"'\u201c\u201d\u2018\u2019()[]{}<>.,;:!?-\u2014\u2013"
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below between both but by
    can could did do does doing down during each few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves
    one two also said says say many much may might must shall us""".split()
)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text``: a sentence ends after ``. ! ?`` (and closing
    quotes or brackets) before white space, not after an abbreviation or an initial ("Mrs. Green",
    "J. Smith") nor before a small letter ("Madison Ave. and"); a line break always ends one. White
    space around a sentence is in no span."""
    spans = []
    for line in re.finditer(r"[^\n]+", text):
        body, offset, start = line.group(), line.start(), 0
        for end in _SENTENCE_END.finditer(body):
            if end.group() == ".":
                word = re.search(r"(\w+)$", body[: end.start()])
                initial = word and len(word.group(1)) == 1 and word.group(1).isupper()
                if (word and word.group(1).lower() in _ABBREVIATIONS) or initial or body[end.end() :].lstrip()[:1].islower():
                    continue
            if body[start : end.end()].strip():
                spans.append((offset + start, offset + end.end()))
            start = end.end()
        if body[start:].strip():
            spans.append((offset + start, offset + len(body.rstrip())))
    return [(s + len(text[s:e]) - len(text[s:e].lstrip()), e) for s, e in spans]


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


def _opcodes(before: list[str], after: list[str]):
    return SequenceMatcher(None, before, after, autojunk=False).get_opcodes()


def inserted_chunks(before: str, after: str) -> list[tuple[int, int]] | None:
    """The character spans of ``after`` that were inserted into ``before``, or None when ``after`` is
    not ``before`` with text inserted (a word changed or removed). Words are compared; an inserted
    chunk that could sit at several places along repeated words is put where it starts (and, if it
    can, ends) a sentence."""
    bt, at = _tokens(before), _tokens(after)
    aw = [t[2] for t in at]
    ops = _opcodes([t[2] for t in bt], aw)
    if any(tag not in ("equal", "insert") for tag, *_ in ops):
        return None
    chunks = [(j1, j2) for tag, _i1, _i2, j1, j2 in ops if tag == "insert"]
    placed: list[tuple[int, int]] = []
    for k, (j1, j2) in enumerate(chunks):
        lo = placed[-1][1] if placed else 0
        hi = chunks[k + 1][0] if k + 1 < len(chunks) else len(aw)
        placed.append(_slide(aw, j1, j2, lo, hi))
    return [(at[j1][0], at[j2 - 1][1]) for j1, j2 in placed]


def _slide(words: list[str], j1: int, j2: int, lo: int, hi: int) -> tuple[int, int]:
    """Where the inserted words ``words[j1:j2]`` sit best among the places they could equally be
    (shifted along equal words, within ``[lo, hi)``): on sentence boundaries where one is."""
    a, b = j1, j2
    while a > lo and words[a - 1] == words[b - 1]:
        a, b = a - 1, b - 1
    places = [(a, b)]
    while b < hi and words[a] == words[b]:
        a, b = a + 1, b + 1
        places.append((a, b))

    def starts(a: int) -> bool:
        return a == 0 or bool(_ENDS_SENTENCE.search(words[a - 1]))

    def ends(b: int) -> bool:
        return bool(_ENDS_SENTENCE.search(words[b - 1]))

    for fits in (lambda p: starts(p[0]) and ends(p[1]), lambda p: starts(p[0])):
        if fits((j1, j2)):
            return j1, j2
        for place in places:
            if fits(place):
                return place
    return j1, j2


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    """``[s, e)`` without punctuation and white space at its ends."""
    while s < e and (text[s] in _EDGE_PUNCT or text[s].isspace()):
        s += 1
    while e > s and (text[e - 1] in _EDGE_PUNCT or text[e - 1].isspace()):
        e -= 1
    return s, e


def changed_words(before: str, after: str) -> tuple[list[tuple[int, int]], list[tuple[str, str]]]:
    """The spans of ``after`` that replace or add words of ``before`` (runs of adjacent changed words
    on one line, punctuation at their ends left out), and each change as ``(old words, new words)``."""
    bt, at = _tokens(before), _tokens(after)
    spans, changes = [], []
    for tag, i1, i2, j1, j2 in _opcodes([t[2] for t in bt], [t[2] for t in at]):
        if tag == "equal":
            continue
        changes.append((" ".join(t[2] for t in bt[i1:i2]), " ".join(t[2] for t in at[j1:j2])))
        if j2 == j1:
            continue
        start = at[j1][0]
        for j in range(j1, j2):  # a line break ends a run
            if j + 1 == j2 or "\n" in after[at[j][1] : at[j + 1][0]]:
                s, e = _trim(after, start, at[j][1])
                if s < e:
                    spans.append((s, e))
                if j + 1 < j2:
                    start = at[j + 1][0]
    return spans, changes


def content_words(text: str, avoid: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """The spans of the content words of ``text`` (three letters or more, no stopword), none
    overlapping a span of ``avoid``."""
    out = []
    for s, e, _ in _tokens(text):
        s, e = _trim(text, s, e)
        word = text[s:e]
        if re.fullmatch(r"[A-Za-z][A-Za-z'\u2019-]{2,}", word) and word.lower() not in STOPWORDS:
            if not any(s < ae and e > as_ for as_, ae in avoid):
                out.append((s, e))
    return out


# --- the sample -----------------------------------------------------------------------------


def _task(ex) -> str:
    return "mc" if isinstance(ex, MCExample) else "span"


def _text(ex) -> str:
    return ex.passage if isinstance(ex, MCExample) else ex.context


def _answer_spans(ex) -> list[tuple[int, int]]:
    return [] if isinstance(ex, MCExample) else [(a.start, max(a.end, a.start + 1)) for a in ex.answers]


def _gold(ex) -> str:
    if isinstance(ex, MCExample):
        return f"{ex.answer_letter}) {ex.answer}"
    return " | ".join(dict.fromkeys(ex.answer_texts)) or "(no answer)"


def _shown_fields(ex) -> tuple:
    """What the sheet shows of an example: an attack that changes none of it changed nothing."""
    if isinstance(ex, MCExample):
        return (ex.passage, ex.question, ex.options, ex.label)
    return (ex.context, ex.question, tuple(sorted(set(ex.answer_texts))))


@dataclass
class Row:
    """One row of the sheet: the example as shown, its original, and what is marked in it.

    ``marks``: sentences mode, the marked sentences' spans in the shown passage; changes mode, the
    highlighted words' spans (``question_marks``: in the question). ``changes``: the attack's word
    changes ``(old, new)`` (for the key); ``positions``: each marked sentence's middle as a share
    of the passage's length."""

    kind: str
    original: Any
    shown: Any
    marks: list[tuple[int, int]] = field(default_factory=list)
    question_marks: list[tuple[int, int]] = field(default_factory=list)
    changes: list[tuple[str, str]] = field(default_factory=list)
    positions: list[float] = field(default_factory=list)
    name: str = ""


@dataclass
class Sample:
    """The rows of an audit (in sheet order) and how they were drawn."""

    task: str
    mode: str
    rows: list[Row]
    attack: Any
    seed: int
    epoch: int
    asked: int
    controls_asked: int
    drawn: int
    examples: int
    skipped: dict[str, int]

    @property
    def sentences(self) -> int:
        """The most sentences a row marks (sentences mode; 0 in changes mode)."""
        return max((len(r.marks) for r in self.rows), default=0) if self.mode == "sentences" else 0


def _insertion(original, attacked) -> list[tuple[int, int]] | None:
    """The inserted sentences' spans in ``attacked``'s passage when the attack only inserted text
    into the passage (question, options, gold unchanged); else None."""
    if original.question != attacked.question:
        return None
    if isinstance(original, MCExample):
        if original.options != attacked.options or original.label != attacked.label:
            return None
    elif set(original.answer_texts) != set(attacked.answer_texts):
        return None
    text = _text(attacked)
    chunks = inserted_chunks(_text(original), text)
    if not chunks:
        return None
    return [(s + a, s + b) for s, e in chunks for a, b in sentence_spans(text[s:e])]


def _positions(spans: Sequence[tuple[int, int]], text: str) -> list[float]:
    """Where each span sits in ``text``: its middle as a share of the text's length."""
    return [(s + e) / 2 / max(1, len(text)) for s, e in spans]


def _attacked_row(original, attacked, mode: str) -> Row:
    text = _text(attacked)
    if mode == "sentences":
        marks = _insertion(original, attacked) or []
        return Row(ATTACKED, original, attacked, marks, positions=_positions(marks, text))
    marks, changes = changed_words(_text(original), text)
    qmarks, qchanges = changed_words(original.question, attacked.question)
    return Row(ATTACKED, original, attacked, marks, qmarks, changes + qchanges)


def _control_row(ex, template: Row, mode: str, rng: random.Random) -> Row | None:
    """``ex`` unattacked, marked like ``template`` (an attacked row): as many sentences at the nearest
    relative positions, each ending with the same mark as the template's where one does (a full stop,
    a question mark), or as many content words at random; None when it has no sentence to mark."""
    text = _text(ex)
    answers = _answer_spans(ex)
    if mode == "sentences":
        free = [(s, e) for s, e in sentence_spans(text) if not any(s < ae and e > as_ for as_, ae in answers)]
        chosen: list[tuple[int, int]] = []
        shown = _text(template.shown)
        for position, (_, end) in zip(template.positions, template.marks):
            left = [span for span in free if span not in chosen]
            if not left:
                break
            alike = [span for span in left if text[span[1] - 1] == shown[end - 1]]
            chosen.append(min(alike or left, key=lambda span: (abs(_positions([span], text)[0] - position), span[0])))
        if not chosen:
            return None
        chosen.sort()
        return Row(CONTROL, ex, ex, chosen, positions=_positions(chosen, text))
    marks = _decoys(text, answers, _text(template.shown), template.marks, rng)
    qmarks = _decoys(ex.question, [], template.shown.question, template.question_marks, rng)
    return Row(CONTROL, ex, ex, marks, qmarks)


def _decoys(text: str, avoid, template_text: str, template_marks, rng: random.Random) -> list[tuple[int, int]]:
    """Content words of ``text`` to highlight like ``template_marks`` of ``template_text``: as many
    distinct words, drawn at random, each highlighted wherever it occurs (an attack that replaces a
    word replaces it everywhere)."""
    want = len({template_text[s:e].lower() for s, e in template_marks})
    groups: dict[str, list[tuple[int, int]]] = {}
    for s, e in content_words(text, avoid):
        groups.setdefault(text[s:e].lower(), []).append((s, e))
    picked = rng.sample(sorted(groups), min(want, len(groups)))
    return sorted(span for word in picked for span in groups[word])


def draw_sample(attack, examples: Sequence, n: int, seed: int, controls: int | None = None, epoch: int = 0) -> Sample:
    """``n`` attacked rows and ``controls`` control rows (default :func:`default_controls`) drawn
    from ``examples`` with ``random.Random(seed)``, shuffled (see the module doc)."""
    from robust_mrc.attacks.apply import attack_example

    if not len(examples):
        raise AuditError("no examples to draw the audit from")
    if n < 1:
        raise AuditError(f"n={n}: an audit needs at least one attacked row")
    task = _task(examples[0])
    want = default_controls(n) if controls is None else controls
    rng = random.Random(seed)
    order = list(range(len(examples)))
    rng.shuffle(order)
    skipped = {"gave_up": 0, "unchanged": 0, "same_passage": 0, "control_without_sentence": 0}
    seen: set[str] = set()  # passages already on the sheet: one row per passage
    drawn = 0

    def unseen_passages():
        """The examples in the drawn order whose passage is not on the sheet yet (counting each drawn)."""
        nonlocal drawn
        for i in order:
            drawn += 1
            if _text(examples[i]) in seen:
                skipped["same_passage"] += 1
                continue
            yield examples[i]

    draw = unseen_passages()
    pairs = []
    for ex in draw:
        attacked, ok = attack_example(attack, ex, seed, epoch)
        if not ok:
            skipped["gave_up"] += 1
            continue
        if _shown_fields(attacked) == _shown_fields(ex):
            skipped["unchanged"] += 1
            continue
        seen.add(_text(ex))
        pairs.append((ex, attacked))
        if len(pairs) == n:
            break
    if not pairs:
        raise AuditError(f"attack {attack.name!r} changed none of the {drawn} examples drawn: nothing to audit")
    not_inserted = [o.id for o, a in pairs if not _insertion(o, a)]
    mode = "changes" if not_inserted else "sentences"
    if not_inserted and len(not_inserted) < len(pairs):  # an insertion attack whose text changed more somewhere
        log.warning(
            "audit: %d of %d attacked examples differ from their originals by more than inserted text (%s): "
            "the sheet asks the change questions (valid, facts, cue) of every row, not the per-sentence ones",
            len(not_inserted),
            len(pairs),
            ", ".join(not_inserted[:5]),
        )
    rows = [_attacked_row(o, a, mode) for o, a in pairs]
    templates = list(rows)
    control_rows: list[Row] = []
    for ex in draw if want > 0 else ():
        row = _control_row(ex, rng.choice(templates), mode, rng)
        if row is None:
            skipped["control_without_sentence"] += 1
            continue
        seen.add(_text(ex))
        control_rows.append(row)
        if len(control_rows) == want:
            break
    rows += control_rows
    rng.shuffle(rows)
    width = max(2, len(str(len(rows))))
    for i, row in enumerate(rows, 1):
        row.name = f"R{i:0{width}d}"
    return Sample(task, mode, rows, attack, seed, epoch, n, want, drawn, len(examples), skipped)


# --- writing --------------------------------------------------------------------------------


def _mark(text: str, spans: Sequence[tuple[int, int]], open_: Any, close: Any, escape=lambda t: t) -> str:
    """``text`` with each span wrapped: ``open_(k)`` before the k-th (from 1), ``close(k)`` after."""
    out, last = [], 0
    for k, (s, e) in enumerate(sorted(spans), 1):
        out += [escape(text[last:s]), open_(k), escape(text[s:e]), close(k)]
        last = e
    out.append(escape(text[last:]))
    return "".join(out)


def _csv_passage(row: Row, mode: str) -> str:
    text = _text(row.shown)
    if mode == "sentences":
        return _mark(text, row.marks, lambda k: f"[[S{k}: ", lambda k: "]]")
    return _mark(text, row.marks, lambda k: "{{", lambda k: "}}")


def _md_escape(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def _md_passage(row: Row, mode: str) -> str:
    text = _text(row.shown)
    if mode == "sentences":
        marked = _mark(text, row.marks, lambda k: f"**[S{k}]** ", lambda k: f" **[/S{k}]**", _md_escape)
    else:
        marked = _mark(text, row.marks, lambda k: "**", lambda k: "**", _md_escape)
    return "\n\n".join(line.strip() for line in marked.split("\n") if line.strip())


def _options(ex) -> str:
    return "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(ex.options))


def _columns(task: str, mode: str, sentences: int) -> tuple[list[str], list[str]]:
    """``(shown columns, verdict columns)`` of a sheet, in order (``reason`` last)."""
    questions = QUESTIONS[(task, mode)]
    shown = ["row", "passage", "question"] + (["options"] if task == "mc" else []) + ["gold"]
    verdicts: list[str] = []
    for k in range(1, sentences + 1):
        cols = _sentence_columns(questions, k)
        shown.append(cols[0])
        verdicts += cols[1:]
    verdicts += [q.name for q in questions if q.scope == "example"] + ["reason"]
    return shown, verdicts


def _ordered(task: str, mode: str, sentences: int) -> list[str]:
    """Every column in sheet order: each sentence's text before its verdicts."""
    questions = QUESTIONS[(task, mode)]
    cols = ["row", "passage", "question"] + (["options"] if task == "mc" else []) + ["gold"]
    for k in range(1, sentences + 1):
        cols += _sentence_columns(questions, k)
    return cols + [q.name for q in questions if q.scope == "example"] + ["reason"]


def _shown_cells(row: Row, task: str, mode: str, sentences: int) -> dict[str, str]:
    ex = row.shown
    cells = {
        "row": row.name,
        "passage": _csv_passage(row, mode),
        "question": _mark(ex.question, row.question_marks, lambda k: "{{", lambda k: "}}"),
    }
    if task == "mc":
        cells["options"] = _options(ex)
    cells["gold"] = _gold(ex)
    text = _text(ex)
    for k in range(1, sentences + 1):
        cells[f"S{k}"] = text[row.marks[k - 1][0] : row.marks[k - 1][1]] if k <= len(row.marks) else ""
    return cells


#: the cells a row's digest covers (a spreadsheet may turn a short cell such as "1/2" into a date)
DIGESTED = ("row", "passage", "question")


def _digest(cells: dict[str, str], names: Sequence[str]) -> str:
    """A digest of the cells ``names``, white space collapsed (a spreadsheet may change line breaks)."""
    h = hashlib.blake2b(digest_size=8)
    for name in names:
        h.update(" ".join(str(cells.get(name, "")).split()).encode() + b"\x1f")
    return h.hexdigest()


def _sheet_csv(sample: Sample) -> str:
    questions = {q.name: q for q in QUESTIONS[(sample.task, sample.mode)]}
    cols = _ordered(sample.task, sample.mode, sample.sentences)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([_header(c, questions) for c in cols])
    for row in sample.rows:
        cells = _shown_cells(row, sample.task, sample.mode, sample.sentences)
        writer.writerow([cells.get(c, "") for c in cols])
    return buf.getvalue()


def _sheet_md(sample: Sample) -> str:
    questions = QUESTIONS[(sample.task, sample.mode)]
    per_sentence = [q.name for q in questions if q.scope == "sentence"]
    per_example = [q.name for q in questions if q.scope == "example"] + ["reason"]
    lines = [
        "# Judging sheet",
        "",
        f"{len(sample.rows)} rows. Read {INSTRUCTIONS} first. This file shows the rows of {SHEET} to read; write your verdicts in "
        f"{SHEET}, one row per example.",
        "",
    ]
    for row in sample.rows:
        ex = row.shown
        lines += ["---", "", f"## {row.name}", "", "**Passage.**", "", _md_passage(row, sample.mode), ""]
        question = _mark(ex.question, row.question_marks, lambda k: "**", lambda k: "**", _md_escape)
        lines += [f"**Question.** {question}", ""]
        if sample.task == "mc":
            lines += ["**Options.**", ""] + [f"- {LETTERS[i]}) {_md_escape(o)}" for i, o in enumerate(ex.options)] + [""]
        lines += [f"**Gold.** {_md_escape(_gold(ex))}", ""]
        if sample.mode == "sentences":
            text = _text(ex)
            lines += [f"**Marked sentences** (for each: {', '.join(per_sentence)}):", ""]
            lines += [f"- S{k}: {_md_escape(text[s:e])}" for k, (s, e) in enumerate(row.marks, 1)] + [""]
        lines += [f"**Verdicts** (in {SHEET}, row {row.name}): " + ", ".join(per_example) + ".", ""]
    return "\n".join(lines)


def _instructions(sample: Sample) -> str:
    task, mode = sample.task, sample.mode
    questions = QUESTIONS[(task, mode)]
    what = (
        "passage, question, options (lettered A, B, ...) and gold (the correct option)"
        if task == "mc"
        else "context, question and gold answer"
    )
    lines = [
        "# Instructions for the judge",
        "",
        f"You judge {len(sample.rows)} reading-comprehension examples, one row of `{SHEET}` each (`{SHEET_MD}` shows the same "
        f"rows to read). Each row holds a {what}. Some examples were changed by a program and some are unaltered originals; "
        "you are not told which, and it must not matter: judge every row the same way, by the rubric below.",
        "",
        f"Do not open `{KEY}`: it says which rows are which. Give it back unopened with the filled sheet.",
        "",
        "## What is marked",
        "",
    ]
    if mode == "sentences":
        lines += [
            "Some sentences of each passage are marked `[[S1: ...]]`, `[[S2: ...]]` in the passage column (bold **[S1]** ... "
            f"**[/S1]** in `{SHEET_MD}`) and copied to the columns `S1`, `S2`, .... Read the whole passage, then judge each "
            "marked sentence on its own (its columns `s1_...`, `s2_...`) and the example as a whole. A row with fewer marked "
            "sentences leaves the columns of the others blank.",
        ]
    else:
        rest = "the options are shown as they are, none marked." if task == "mc" else "the gold answer is shown as text."
        if any(r.marks or r.question_marks for r in sample.rows):
            lines += [
                "Some words of the passage or question are highlighted `{{...}}` (bold in "
                f"`{SHEET_MD}`): check each one, it may or may not have been changed. Read the whole example: " + rest,
            ]
        else:
            lines += ["Nothing is marked: read the whole example; " + rest]
    lines += ["", "## The questions", ""]
    for q in questions:
        scope = "each marked sentence, columns `sK_" + q.name + "`" if q.scope == "sentence" else "each example, column `" + q.name + "`"
        lines += [f"**{q.name}** ({scope}): {q.ask}", ""]
        lines += [f"- `{v}`: {meaning}" for v, meaning in q.values] + [""]
    lines += [
        "**reason** (each example): one line saying why, for every verdict other than the best one (e.g. which other answer "
        'becomes defensible, and by which words). Start it with "item:" when the problem was in the item itself, not in any '
        "marked sentence or highlighted word.",
        "",
        "## Filling the sheet",
        "",
        "- Write exactly one of the allowed values (shown in each column's header, e.g. `valid [yes|weak|no]`) into each "
        "verdict cell; capitals do not matter. Leave a cell blank only when you have not judged it yet.",
        "- Do not change the other columns, the headers or the row names.",
        "- Save it as CSV (UTF-8).",
        "",
        "## The rubric",
        "",
        rubric(task, mode),
    ]
    return "\n".join(lines)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def package_version() -> str:
    """The installed robust-mrc's version ("unknown" when it runs from a checkout not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("robust-mrc")
    except PackageNotFoundError:
        return "unknown"


def _key(sample: Sample, meta: dict) -> dict:
    from robust_mrc.attacks.apply import attacks_code_digest

    attack = sample.attack
    shown_cols, _ = _columns(sample.task, sample.mode, sample.sentences)
    rows = []
    for row in sample.rows:
        cells = _shown_cells(row, sample.task, sample.mode, sample.sentences)
        text = _text(row.shown)
        entry: dict[str, Any] = {"row": row.name, "kind": row.kind, "id": row.original.id}
        if row.kind == ATTACKED:
            entry["edit"] = row.shown.edits[-1].detail if row.shown.edits else ""
        if sample.mode == "sentences":
            entry["marked"] = [text[s:e] for s, e in row.marks]
        else:
            entry["highlighted"] = [text[s:e] for s, e in row.marks] + [row.shown.question[s:e] for s, e in row.question_marks]
            if row.kind == ATTACKED:
                entry["changed"] = [{"old": old, "new": new} for old, new in row.changes]
                if isinstance(row.shown, MCExample) and (row.shown.options, row.shown.label) != (row.original.options, row.original.label):
                    entry["original_options"] = list(row.original.options)
                    entry["original_label"] = row.original.label
        entry["digest"] = _digest(cells, DIGESTED)
        rows.append(entry)
    kinds = [r.kind for r in sample.rows]
    return {
        "what": "robust-mrc validity audit key: which rows are attacked and which controls. The judge must not open it.",
        "sheet": SHEET,
        "task": sample.task,
        "mode": sample.mode,
        "attack": attack.name,
        "params": _jsonable({k: v for k, v in attack.params.items() if not k.startswith("_")}),
        "given": _jsonable(meta.get("given", {})),
        "provenance": _jsonable(attack.provenance()),
        "seed": sample.seed,
        "epoch": sample.epoch,
        "data": meta.get("data"),
        "limit": meta.get("limit"),
        "examples": sample.examples,
        "drawn": sample.drawn,
        "n": sample.asked,
        "controls_asked": sample.controls_asked,
        "attacked": kinds.count(ATTACKED),
        "controls": kinds.count(CONTROL),
        "skipped": dict(sample.skipped),
        "version": package_version(),
        "attack_code": attacks_code_digest(),
        "command": meta.get("command"),
        "sentences": sample.sentences,
        "columns": _ordered(sample.task, sample.mode, sample.sentences),
        "shown_columns": shown_cols,
        "digested": list(DIGESTED),
        "rows": rows,
    }


def audit_dir_problem(out: str | Path) -> str | None:
    """Why ``out=`` cannot take a new audit, or None: a file, or a directory that holds one already
    (a judge's filled sheet must never be overwritten)."""
    target = Path(str(out)).expanduser()
    if target.exists() and not target.is_dir():
        return f"out={out} is a file: give a directory for the audit (it holds {SHEET}, {SHEET_MD}, {INSTRUCTIONS} and {KEY})"
    taken = [name for name in (SHEET, SHEET_MD, INSTRUCTIONS, KEY) if (target / name).exists()]
    if taken:
        return f"out={out} already holds an audit ({', '.join(taken)}): give a new directory, so that no filled sheet is overwritten"
    return None


def audit_files(out: str | Path) -> list[Path]:
    """The files an audit writes into ``out``."""
    return [Path(str(out)) / name for name in (SHEET, SHEET_MD, INSTRUCTIONS, KEY)]


def write_audit(sample: Sample, out: str | Path, meta: dict | None = None) -> dict:
    """The sheet (CSV and Markdown), the instructions and the key of ``sample`` in the directory
    ``out``; ``meta``: ``data``, ``limit``, ``given`` (the parameters as given) and ``command`` for
    the key. Returns a summary (paths, counts, skipped)."""
    from robust_mrc.data.writers import atomic_write_text

    if problem := audit_dir_problem(out):
        raise AuditError(problem)
    out = Path(str(out))
    out.mkdir(parents=True, exist_ok=True)
    key = _key(sample, meta or {})
    atomic_write_text(out / SHEET, _sheet_csv(sample))
    atomic_write_text(out / SHEET_MD, _sheet_md(sample))
    atomic_write_text(out / INSTRUCTIONS, _instructions(sample))
    atomic_write_text(out / KEY, json.dumps(key, indent=2, ensure_ascii=False) + "\n")
    summary = {
        "out": str(out),
        "for_the_judge": [str(out / SHEET), str(out / SHEET_MD), str(out / INSTRUCTIONS)],
        "key": str(out / KEY),
        "attack": key["attack"],
        "task": sample.task,
        "mode": sample.mode,
        "seed": sample.seed,
        "rows": len(sample.rows),
        "attacked": key["attacked"],
        "controls": key["controls"],
        "examples_drawn": sample.drawn,
        "skipped": dict(sample.skipped),
        "score_with": f"robust-mrc attacks audit score sheet={out / SHEET}",
    }
    if key["attacked"] < sample.asked or key["controls"] < sample.controls_asked:
        summary["short"] = (
            f"the data gave {key['attacked']} of n={sample.asked} attacked rows and {key['controls']} of {sample.controls_asked} "
            "controls (every example drawn)"
        )
    return summary


# --- scoring --------------------------------------------------------------------------------


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of ``k`` successes in ``n`` trials (95 % by default); None for n = 0."""
    if n <= 0:
        return None
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def _count(k: int, n: int) -> dict:
    ci = wilson(k, n)
    return {"k": k, "n": n, "share": round(k / n, 4) if n else None, "ci95": [round(ci[0], 4), round(ci[1], 4)] if ci else None}


def _read_key(path: Path) -> dict:
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AuditError(f"{path}: no such key file (give key=FILE, the {KEY} written with the sheet)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise AuditError(f"{path}: not an audit key ({type(err).__name__}: {err})") from None
    needed = ("task", "mode", "rows", "columns", "digested", "attack")
    if not isinstance(key, dict) or any(k not in key for k in needed) or (key["task"], key["mode"]) not in QUESTIONS:
        raise AuditError(f"{path}: not an audit key written by `robust-mrc attacks audit` (it needs {', '.join(needed)})")
    return key


def _read_sheet(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The column names (headers without their allowed values) and the rows of a sheet."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise AuditError(f"{path}: no such sheet") from None
    except (OSError, UnicodeDecodeError) as err:
        raise AuditError(f"{path}: cannot read the sheet ({type(err).__name__}: {err}); save it as UTF-8 CSV") from None
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as err:
        raise AuditError(f"{path}: not a CSV sheet ({err})") from None
    if not records:
        raise AuditError(f"{path}: empty sheet")
    names = [h.split(" [", 1)[0].strip() for h in records[0]]
    rows = []
    for i, record in enumerate(records[1:], 2):
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != len(names):
            raise AuditError(f"{path}: record {i} has {len(record)} cells, the header {len(names)}")
        rows.append(dict(zip(names, record)))
    return names, rows


def _verdict(sheet: Path, row: str, column: str, raw: str, question: Question) -> str | None:
    value = raw.strip().lower()
    if not value:
        return None
    if value not in question.allowed:
        raise AuditError(
            f"{sheet}: row {row}, column {column}: {raw.strip()!r} is not one of {', '.join(question.allowed)} (blank: not judged yet)"
        )
    return value


def _judged_rows(sheet: Path, key: dict, key_path: Path) -> list[dict]:
    """Each key row with its verdicts from ``sheet`` (None: blank), after checking that the sheet is
    the key's: the same rows with the same text, every column there."""
    task, mode = key["task"], key["mode"]
    questions = {q.name: q for q in QUESTIONS[(task, mode)]}
    names, records = _read_sheet(sheet)
    missing = [c for c in key["columns"] if c not in names]
    if missing:
        raise AuditError(f"{sheet}: no column {missing[0]!r}; the key {key_path} expects {', '.join(key['columns'])}")
    by_name: dict[str, dict[str, str]] = {}
    for record in records:
        name = record["row"].strip()
        if name in by_name:
            raise AuditError(f"{sheet}: row {name} appears twice")
        by_name[name] = record
    expected = [r["row"] for r in key["rows"]]
    unknown = [name for name in by_name if name not in set(expected)]
    if unknown:
        raise AuditError(f"{sheet}: row {unknown[0]!r} is not in the key {key_path} (is it this sheet's key?)")
    out = []
    for entry in key["rows"]:
        name = entry["row"]
        record = by_name.get(name)
        if record is None:
            raise AuditError(f"{sheet}: row {name} is missing (the key {key_path} has {len(expected)} rows)")
        if _digest(record, key["digested"]) != entry["digest"]:
            raise AuditError(
                f"{sheet}: row {name}'s passage or question is not the one the key {key_path} describes "
                "(another audit's key, or the sheet's text was edited)"
            )
        marked = len(entry.get("marked", []))
        verdicts: dict[str, Any] = {"sentences": []}
        for k in range(1, key.get("sentences", 0) + 1):
            per = {}
            for q in questions.values():
                if q.scope != "sentence":
                    continue
                column = f"s{k}_{q.name}"
                value = _verdict(sheet, name, column, record[column], q)
                if k > marked and value is not None:
                    raise AuditError(f"{sheet}: row {name}, column {column}: the row marks {marked} sentence(s), no S{k}; leave it blank")
                per[q.name] = value
            if k <= marked:
                verdicts["sentences"].append(per)
        for q in questions.values():
            if q.scope == "example":
                verdicts[q.name] = _verdict(sheet, name, q.name, record[q.name], q)
        if verdicts.get("problem") and verdicts.get("valid") == "yes":
            raise AuditError(
                f"{sheet}: row {name}, column problem: {verdicts['problem']!r} beside valid=yes; a problem is for rows judged weak or no"
            )
        reason = record["reason"].strip()
        out.append({**entry, "verdicts": verdicts, "reason": reason, "item": reason.lower().startswith(ITEM_PREFIX)})
    return out


def _row_valid(row: dict, mode: str, task: str) -> str | None:
    """A row's validity: its ``valid`` verdict, or (span sentences) yes when every marked sentence is
    compatible, no when one is not; None while not judged."""
    v = row["verdicts"]
    if task == "span" and mode == "sentences":
        marks = [s.get("compatible") for s in v["sentences"]]
        if "no" in marks:
            return "no"
        return "yes" if marks and None not in marks else None
    return v.get("valid")


def _judged(row: dict, questions: Sequence[Question]) -> bool:
    """Whether every verdict the row needs is given (``problem`` only where valid is weak or no)."""
    v = row["verdicts"]
    for q in questions:
        if q.optional:
            continue
        if q.scope == "sentence":
            if any(s.get(q.name) is None for s in v["sentences"]):
                return False
        elif v.get(q.name) is None:
            return False
    return True


def _rejected(row: dict, mode: str, task: str) -> bool:
    """Whether the judge rejected the row: invalid (strict), a marked sentence garbage or not
    compatible, or its facts not kept."""
    v = row["verdicts"]
    if _row_valid(row, mode, task) in ("no", "weak") or v.get("facts") == "no":
        return True
    return any(s.get("fluent") == "garbage" or s.get("grammatical") == "garbage" for s in v["sentences"])


def _group_figures(rows: list[dict], task: str, mode: str) -> dict:
    questions = QUESTIONS[(task, mode)]
    figures: dict[str, Any] = {"rows": len(rows), "judged": sum(_judged(r, questions) for r in rows)}
    figures["not_judged"] = figures["rows"] - figures["judged"]
    valid = [(_row_valid(r, mode, task), r["item"]) for r in rows]
    judged_valid = [v for v, item in valid if v is not None and not item]
    figures["item_problems"] = _count(sum(1 for v, item in valid if v is not None and item), sum(1 for v, _ in valid if v is not None))
    figures["valid_strict"] = _count(sum(v == "yes" for v in judged_valid), len(judged_valid))
    figures["valid_lenient"] = _count(sum(v in ("yes", "weak") for v in judged_valid), len(judged_valid))
    figures["valid_not_judged"] = sum(v is None for v, _ in valid)
    for q in questions:
        if q.name == "valid":
            continue
        if q.scope == "sentence":
            given = [s.get(q.name) for r in rows for s in r["verdicts"]["sentences"]]
        elif q.name == "problem":
            given = [
                r["verdicts"].get("problem") or "(none given)"
                for r in rows
                if _row_valid(r, mode, task) in ("weak", "no") and not r["item"]
            ]
        else:
            given = [r["verdicts"].get(q.name) for r in rows]
        judged = [g for g in given if g is not None]
        values = list(q.allowed) + (["(none given)"] if q.name == "problem" else [])
        figures[q.name] = {
            "scope": q.scope,
            "values": {value: _count(sum(g == value for g in judged), len(judged)) for value in values},
            "not_judged": len(given) - len(judged),
        }
    return figures


def score_sheet(sheet: str | Path, key: str | Path | None = None) -> dict:
    """The table of a filled sheet (see the module doc): per group (attacked, controls) the counts
    and 95 % Wilson intervals of every verdict, the controls' check, the attacked rows judged invalid."""
    sheet = Path(str(sheet))
    key_path = Path(str(key)) if key else sheet.parent / KEY
    key_data = _read_key(key_path)
    task, mode = key_data["task"], key_data["mode"]
    rows = _judged_rows(sheet, key_data, key_path)
    groups = {ATTACKED: [r for r in rows if r["kind"] == ATTACKED], CONTROL: [r for r in rows if r["kind"] == CONTROL]}
    figures = {kind: _group_figures(group, task, mode) for kind, group in groups.items()}
    questions = QUESTIONS[(task, mode)]
    judged_controls = [r for r in groups[CONTROL] if _judged(r, questions)]
    rejected = sum(_rejected(r, mode, task) for r in judged_controls)
    check: dict[str, Any] = {"rejected": rejected, "judged": len(judged_controls), "limit": CONTROL_REJECT_LIMIT, "warning": None}
    if not groups[CONTROL]:
        check["warning"] = "the sheet has no control rows: the judge is unchecked"
    elif not judged_controls:
        check["warning"] = "no control row is judged yet: the judge is unchecked"
    elif rejected / len(judged_controls) > CONTROL_REJECT_LIMIT:
        check["warning"] = (
            f"the judge rejected {rejected} of {len(judged_controls)} controls ({100 * rejected / len(judged_controls):.0f} %, more than "
            f"{100 * CONTROL_REJECT_LIMIT:.0f} %): recalibrate the judge on the rubric before trusting these figures"
        )
    invalid = []
    for r in groups[ATTACKED]:
        validity = _row_valid(r, mode, task)
        if validity in ("no", "weak") or any(
            s.get("fluent") == "garbage" or s.get("grammatical") == "garbage" for s in r["verdicts"]["sentences"]
        ):
            invalid.append(
                {
                    "row": r["row"],
                    "id": r["id"],
                    "valid": validity,
                    "item": r["item"],
                    "verdicts": r["verdicts"],
                    "reason": r["reason"],
                    "marked": r.get("marked") or r.get("highlighted") or [],
                }
            )
    invalid.sort(key=lambda r: ({"no": 0, "weak": 1}.get(r["valid"], 2), r["row"]))
    return {
        "sheet": str(sheet),
        "key": str(key_path),
        "attack": key_data["attack"],
        "task": task,
        "mode": mode,
        "seed": key_data.get("seed"),
        "data": key_data.get("data"),
        "version": key_data.get("version"),
        "attack_code": key_data.get("attack_code"),
        "attacked": figures[ATTACKED],
        "controls": figures[CONTROL],
        "controls_check": check,
        "rejected_attacked": invalid,
    }


def _cell(c: dict) -> str:
    if not c["n"]:
        return "-"
    lo, hi = c["ci95"]
    return f"{c['k']}/{c['n']} = {100 * c['share']:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"


def score_markdown(table: dict) -> str:
    """The table of :func:`score_sheet` as Markdown."""
    a, c = table["attacked"], table["controls"]
    valid_label = "valid (every marked sentence compatible)" if (table["task"], table["mode"]) == ("span", "sentences") else "valid"
    lines = [
        f"# Validity audit of `{table['attack']}` ({table['task']}, {table['mode']} mode)",
        "",
        f"Sheet `{table['sheet']}`, key `{table['key']}`; seed {table['seed']}, data `{table['data']}`, robust-mrc "
        f"{table['version']} (attack code {table['attack_code']}).",
        "",
        f"Rows: {a['rows']} attacked ({a['judged']} fully judged, {a['not_judged']} not), {c['rows']} controls ({c['judged']} fully "
        f"judged, {c['not_judged']} not). Shares with 95 % Wilson intervals; rows whose reason starts with `{ITEM_PREFIX}` are "
        "left out of valid.",
        "",
        "| question | verdict | attacked | controls |",
        "| --- | --- | --- | --- |",
        f"| {valid_label}, strict (weak = invalid) | yes | {_cell(a['valid_strict'])} | {_cell(c['valid_strict'])} |",
        f"| {valid_label}, lenient (weak = valid) | yes or weak | {_cell(a['valid_lenient'])} | {_cell(c['valid_lenient'])} |",
        f"| item problems (`{ITEM_PREFIX}`) | flagged | {_cell(a['item_problems'])} | {_cell(c['item_problems'])} |",
    ]
    for q in QUESTIONS[(table["task"], table["mode"])]:
        if q.name == "valid":
            continue
        label = q.name + (" (per marked sentence)" if q.scope == "sentence" else " (invalid rows)" if q.name == "problem" else "")
        for value in a[q.name]["values"]:
            if q.name == "problem" and not (a[q.name]["values"][value]["k"] or c[q.name]["values"][value]["k"]):
                continue  # a reason no row was given: in the JSON only
            lines.append(f"| {label} | {value} | {_cell(a[q.name]['values'][value])} | {_cell(c[q.name]['values'][value])} |")
    blanks = [(name, a[name]["not_judged"], c[name]["not_judged"]) for name in a if isinstance(a[name], dict) and "not_judged" in a[name]]
    blanks = [(name, x, y) for name, x, y in blanks if x or y]
    if a["valid_not_judged"] or c["valid_not_judged"]:
        blanks.insert(0, ("valid", a["valid_not_judged"], c["valid_not_judged"]))
    if blanks:
        lines += ["", "Not judged yet (blank): " + "; ".join(f"{name}: {x} attacked, {y} controls" for name, x, y in blanks) + "."]
    check = table["controls_check"]
    lines += ["", f"Controls rejected: {check['rejected']} of {check['judged']} judged (limit {100 * check['limit']:.0f} %)."]
    if check["warning"]:
        lines += ["", f"**WARNING: {check['warning']}.**"]
    if table["rejected_attacked"]:
        lines += ["", "Attacked rows judged invalid or garbage (worst first; the reason as the judge wrote it):", ""]
        for r in table["rejected_attacked"][:10]:
            what = " | ".join(r["marked"])[:300]
            lines.append(f"- {r['row']} (`{r['id']}`), valid {r['valid']}: {r['reason'] or '(no reason given)'} -- {what}")
    return "\n".join(lines) + "\n"


def write_score(table: dict, sheet: str | Path) -> tuple[Path, Path]:
    """The table as Markdown and JSON beside the sheet: ``<sheet stem>.score.md`` and ``.score.json``."""
    from robust_mrc.data.writers import atomic_write_text

    sheet = Path(str(sheet))
    md, js = sheet.with_name(sheet.stem + ".score.md"), sheet.with_name(sheet.stem + ".score.json")
    atomic_write_text(md, score_markdown(table))
    atomic_write_text(js, json.dumps(table, indent=2, ensure_ascii=False) + "\n")
    return md, js
