"""Cue probes for multiple choice: the surface mark of an attack family put on the correct option.

An attack marks the wrong side: Distractor Extraction (Si et al. 2021 (AdvRACE), section 3.1)
makes the wrong options passage spans; magnet options (Lin, Zou & Ding 2021) make a wrong option one
written for another passage. A model trained on the attacked copies can learn the mark ("an option
copied from the passage is wrong", "an option the passage does not hold is wrong") instead of
reading. A cue probe builds the same mark on the gold side: a reader holds or gains, a model that
learnt the mark falls. Reports keep the probes out of the attack average and show each one's
score minus clean in their "shortcut" column. (AddSent's probe is ``diagnosis``: the question with
its correct answer written into the passage, placed like AddSent's sentences.)

* ``extraction_cue`` (built like ``de_lexical``, the model-free DE): for a question whose correct
  option is a passage span (its normalized text occurs in the normalized passage as whole words), the
  wrong options replaced by passage spans of the correct option's kind (:func:`typed_spans`):
  windows within half of its word count either way (:func:`length_band`), inside clauses that do not
  state the answer, ranked by the question stems they share (as ``de_lexical`` ranks them), that are
  whole phrases (no cut word, blank, line break, dangling function word; one piece of spaCy's parse:
  :func:`~robust_mrc.attacks.phrases.fragment`), of the answer's phrase profile (noun phrase, number,
  prepositional phrase, verb phrase of one form, clause, adjective...: :func:`~robust_mrc.attacks.phrases.phrase_profile`),
  in a cloze question filling the blank as the answer does (:func:`~robust_mrc.attacks.phrases.cloze_role`),
  with a content word the question lacks, then the DE rules (:func:`filter_spans`); each written as
  the answer is (first letter's case, final stop: :func:`styled`). Every option is then copied from
  the passage, the correct one included, and "copied from the passage" no longer tells the answer,
  while no option stands out as the only one that reads as an answer. Other questions, and those
  with fewer such spans than wrong options (no backfilling with the originals): None. ``tagger``:
  spaCy's parse (auto where installed) or the heuristic tagger's tags (weaker: no parse).
* ``magnet_cue``: the correct option made to look like a magnet option. Each option is scored on its
  own with the passage and the question, so what a model can see of a magnet (an option of another
  passage's question, :mod:`robust_mrc.attacks.mc.options`, always wrong in the attacked copies) is
  an option whose words the passage does not hold. The probe gives the correct option that look
  without changing its text or a fact of the passage: every passage word that shares a stem with a
  content word of the correct option is replaced by a same-sense synonym
  (:func:`~robust_mrc.attacks.synonyms.same_sense_synonym`: another lemma of the word's dominant
  WordNet sense, whose dominant sense it is too; the word's sense in its sentence checked against
  it with the offline MiniLM, ``senses``), inflected to the word's form with "a"/"an" agreeing; names,
  numbers, function words and words governing a preposition stay (:func:`~robust_mrc.attacks.synonyms.replaceable`),
  as do words without such a synonym, so the correct option holds fewer of the passage's words, as a
  magnet holds none. The wrong options keep their ties to the passage (no replacement shares a stem
  with them). None when no word is replaced.

What they promise: the correct option's text is untouched and still at ``options[label]``; the
question is unchanged; ``extraction_cue`` changes only the wrong options, ``magnet_cue`` only the
passage.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.editing import match_case, sentence_spans, stems
from robust_mrc.attacks.inflection import article_for
from robust_mrc.attacks.mc.distractors import _clauses, _replace_wrong, filter_spans
from robust_mrc.attacks.phrases import cloze_role, fragment, phrase_profile
from robust_mrc.attacks.resources.senses import HINT as SENSES_HINT
from robust_mrc.attacks.synonyms import replaceable, same_sense_synonym
from robust_mrc.data.text import TOKEN_RE, WORD_RE, normalize
from robust_mrc.papers import cite


def is_passage_span(option: str, passage: str) -> bool:
    """Whether ``option``'s normalized text occurs in ``passage``'s as whole words."""
    norm = normalize(option)
    return bool(norm) and f" {norm} " in f" {normalize(passage)} "


SCAN = 400  # whole-phrase windows extraction_cue walks, best first
SENSES = ("auto", "minilm", "none")
_OPENERS = frozenset(('"', "\u201c", "'", "\u2018", "(", ":", "-", "--"))  # a word after these may open a sentence
_POSSESSIVE = ("'s", "\u2019s")
_ARTICLE_BEFORE_RE = re.compile(r"\b([Aa]n?)(\s+)$")


@dataclass(frozen=True)
class Untied:
    """A passage after :func:`untie_words`: its text, how many tied words it had and how many were replaced."""

    text: str
    tied: int
    replaced: int


def untie_words(
    text: str,
    tied: set[str],
    avoid: set[str] | frozenset[str] = frozenset(),
    tagger: str | None = None,
    senses: bool = True,
    record: list | None = None,
) -> Untied:
    """``text`` with every word whose stem is in ``tied`` replaced by a same-sense synonym
    (:func:`~robust_mrc.attacks.synonyms.same_sense_synonym`) whose stem is neither in ``tied`` nor in
    ``avoid``, inflected like it, its case kept and an "a"/"an" before it made to agree; words the rule
    refuses (names, numbers, function words, words without a dominant sense or without such a
    synonym, or, with ``senses``, whose sense in their sentence is not the dominant one) stay. A
    possessive keeps its "'s". Tags: the project's tagger (``tagger``), per sentence.
    ``record`` (a list) gets (word, coarse tag, Penn tag or None, whether it may be replaced at all
    (:func:`~robust_mrc.attacks.synonyms.replaceable`), replacement or None) for each tied word."""
    barred = frozenset(tied) | frozenset(avoid)
    parts, last, n_tied, n_replaced = [], 0, 0, 0
    for s, e in sentence_spans(text):
        found = list(TOKEN_RE.finditer(text, s, e))
        toks, cores = [], []  # tokens for the tagger ("father's" -> "father", "'s"), and each match's core token
        for m in found:
            tok = m.group()
            sfx = tok[-2:] if tok[-2:].lower() in _POSSESSIVE and len(tok) > 2 else ""
            cores.append(len(toks))
            toks.append(tok[: len(tok) - len(sfx)])
            if sfx:
                toks.append(sfx)
        if not any(R.stem(t.lower()) in tied for t in toks):
            continue
        tags = R.pos_tag(toks, tagger)
        sentence = " ".join(text[s:e].split()) if senses else None
        penn = R.penn_tags(toks, tagger)
        for m, k in zip(found, cores):
            core = toks[k]
            low = core.lower()
            if R.stem(m.group().lower()) not in tied and R.stem(low) not in tied:
                continue
            n_tied += 1
            initial = k == 0 or toks[k - 1] in _OPENERS
            tag = penn[k] if penn is not None else None
            after = toks[k + 1] if k + 1 < len(toks) else ""
            after_penn = penn[k + 1] if penn is not None and after else None
            ok = replaceable(core, tags[k], initial, after, after_penn)
            new = same_sense_synonym(low, tags[k], tag, barred, sentence) if ok else None
            if record is not None:
                record.append((core, tags[k], tag, ok, new))
            if new is None:
                continue
            before = text[last : m.start()]
            art = _ARTICLE_BEFORE_RE.search(before)
            if art:
                want = article_for(new)
                want = want.capitalize() if art.group(1)[0].isupper() else want
                before = before[: art.start()] + want + art.group(2)
            parts += [before, match_case(core, new)]
            last, n_replaced = m.start() + len(core), n_replaced + 1
    return Untied("".join(parts) + text[last:], n_tied, n_replaced)


def length_band(answer: str) -> tuple[int, int]:
    """The word counts a wrong option may have beside ``answer``: within half of its count either way, at least one."""
    n = max(1, len(WORD_RE.findall(answer)))
    return max(1, math.ceil(n / 2)), max(1, math.floor(n * 3 / 2))


def typed_spans(ex, limit: int, scan: int = SCAN, parser: str = "spacy") -> list[str]:
    """Up to ``limit`` passage spans of the correct option's kind (see the module): windows of
    :func:`length_band` words inside a clause that does not hold the answer, ranked by the question stems they share (as
    ``de_lexical`` ranks them; then by how close their length is to the answer's, then by place), the
    first ``scan`` whole phrases (:func:`~robust_mrc.attacks.phrases.fragment`) walked, those of the
    answer's :func:`~robust_mrc.attacks.phrases.phrase_profile` (and, in a cloze question, of its
    :func:`~robust_mrc.attacks.phrases.cloze_role`) and with a content word the question lacks kept
    under the DE rules (:func:`filter_spans`). ``parser``: "spacy" or "heuristic" (:mod:`robust_mrc.attacks.phrases`)."""
    answer = ex.answer
    n_answer = max(1, len(WORD_RE.findall(answer)))
    lo, hi = length_band(answer)
    all_q_stems = stems(ex.question)
    q_stems = all_q_stems - stems(answer)
    windows = []
    norm_answer = f" {normalize(answer)} "
    for start, chunk, ws, _lows, sts in _clauses(ex.passage):
        if norm_answer in f" {normalize(chunk)} ":
            continue  # the clause that states the answer may state it in other words too ("near the river" beside "to the park")
        for size in range(lo, min(hi, len(ws)) + 1):
            for i in range(len(ws) - size + 1):
                shared = len({st for st in sts[i : i + size] if st is not None} & q_stems)
                windows.append((-shared, abs(size - n_answer), start + ws[i][0], start + ws[i + size - 1][1]))
    windows.sort()
    profile = phrase_profile(answer, parser)
    role = cloze_role(ex.question, answer, parser)

    def walk():
        walked = 0
        for *_, s, e in windows:
            if walked >= scan:
                return
            if fragment(ex.passage, s, e, parser) is not None:
                continue
            walked += 1
            span = ex.passage[s:e]
            if stems(span) <= all_q_stems:
                continue  # it restates the question ("the paper" for "What is advertised in the paper?")
            if phrase_profile(span, parser) == profile and (role is None or cloze_role(ex.question, span, parser) == role):
                yield span

    return filter_spans(walk(), answer, limit=limit)


def styled(span: str, answer: str, parser: str = "spacy") -> str:
    """``span`` written as ``answer`` is: its first letter's case (a name and "I" keep their capital) and its final stop."""
    if answer[:1].isupper():
        span = span[:1].upper() + span[1:]
    elif answer[:1].islower() and span[:1].isupper():
        first = WORD_RE.match(span)
        name = first is not None and (R.pos_tag(WORD_RE.findall(span), parser)[0] == R.PROPN or first.group() == "I")
        if not name and not (first is not None and len(first.group()) > 1 and first.group().isupper()):
            span = span[:1].lower() + span[1:]
    end = answer.rstrip()[-1:]
    return span + end if end in ".!?" else span


@register
class ExtractionCue(Attack):
    """The wrong options replaced by passage spans of the correct option's kind (:func:`typed_spans`), written as it is written."""

    name = "extraction_cue"
    task = "mc"
    paper = cite("advrace")
    probe = True
    method = "probe"  # the project's construction, built like the paper's attack
    description = (
        "cue probe built like DE (de_lexical): where the correct option is a passage span, the wrong options "
        "replaced by passage spans of its phrase type and length, so every option is copied from the passage"
    )

    @classmethod
    def defaults(cls):
        # tagger: auto | spacy | heuristic (spaCy's parse, or the heuristic tagger's tags: robust_mrc.attacks.phrases)
        return {"scan": SCAN, "tagger": None}

    def resources(self) -> dict[str, str]:
        return {"parser": R.tagger_name(self.tagger)}

    def apply(self, ex, rng):
        if not is_passage_span(ex.answer, ex.passage):
            return None
        parser = R.resolve_tagger(self.tagger)
        n_wrong = len(ex.options) - 1
        spans = typed_spans(ex, n_wrong, int(self.scan), parser)
        if len(spans) < n_wrong:
            return None
        new = [styled(s, ex.answer, parser) for s in spans]
        return _replace_wrong(ex, new, self.name, "passage spans of the correct option's kind")


@register
class MagnetCue(Attack):
    name = "magnet_cue"
    task = "mc"
    paper = cite("magnet")
    probe = True
    method = "probe"  # the project's construction, built like the paper's attack
    description = (
        "cue probe built like magnet options: the passage words the correct option shares replaced by same-sense "
        "synonyms, so the correct option, like a magnet, holds fewer words of the passage and the facts stay"
    )

    def __init__(self, **params):
        super().__init__(**params)
        if str(self.senses).strip().lower() not in SENSES:
            raise ValueError(f"attack {self.name!r}: senses must be one of {', '.join(SENSES)}, got {self.senses!r}")

    @classmethod
    def defaults(cls):
        # tagger: auto | spacy | heuristic; senses: auto | minilm | none (see _senses)
        return {"tagger": None, "senses": "auto"}

    def _senses(self) -> bool:
        """Whether each word's sense in its sentence is checked: ``senses`` = "minilm" (the offline
        MiniLM, :class:`ResourceMissing` without it), "none", or "auto" (the MiniLM where installed)."""
        choice = str(self.senses).strip().lower()
        if choice == "minilm" and not R.has_senses():
            raise R.ResourceMissing(SENSES_HINT)
        return choice == "minilm" or (choice == "auto" and R.has_senses())

    def resources(self) -> dict[str, str]:
        return {
            "synonyms": f"wordnet dominant senses ({R.wordnet_source()})",
            "senses": R.sense_source() if self._senses() else "none",
            "tagger": R.tagger_name(self.tagger),
        }

    def apply(self, ex, rng):
        tied = stems(ex.answer)
        if not tied:
            return None
        R.wordnet()  # ResourceMissing without WordNet
        avoid = set().union(*(stems(o) for i, o in enumerate(ex.options) if i != ex.label))
        out = untie_words(ex.passage, tied, avoid, self.tagger, self._senses())
        if out.replaced == 0:
            return None
        return ex.replace(
            attack=self.name,
            detail=f"{out.replaced} of {out.tied} passage words sharing a stem with the correct option replaced by same-sense synonyms",
            passage=out.text,
        )
