"""AddSent for multiple choice (seed 000, AdvRACE section 3.3).

What it changes: the passage only. Two distracting sentences are inserted at random sentence
boundaries. Each one is the question with its meaning flipped -- integers shifted by a random
10-100, nouns and proper nouns replaced by their nearest word (same POS where known, not a
stopword, another stem, not used before), the *first* adjective / adverb / verb replaced by a
WordNet antonym; a "not" removed or inserted when nothing else changed -- filled with a random
wrong option (into the ``_`` blank, or appended). The two sentences use different wrong options and
different replacement words.
POS tags (which words are nouns, adjectives...) come from spaCy where installed (the paper's
tagger), else from a heuristic tagger; ``tagger=`` (auto | spacy | heuristic) picks one.

What it promises: question, options and label are unchanged (so the correct option stays distinct
from every option). Returns None when no sentence can be built.
"""

from __future__ import annotations

import logging
import random

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.text import TOKEN_RE, as_statement, insert_at, match_case, sentence_boundaries
from robust_mrc.data.cloze import fill_blank, has_blank
from robust_mrc.papers import cite

log = logging.getLogger(__name__)

_NOUNISH = (R.NOUN, R.PROPN)


def _stem_related(a: str, b: str) -> bool:
    sa, sb = R.stem(a), R.stem(b)
    return sa == sb or sa.startswith(sb) or sb.startswith(sa)


def _nearest(word: str, nb, used: set[str], pos: str | None, question_words: set[str]) -> str | None:
    has_wn = R.has_wordnet()
    for cand in nb.neighbours(word, 25):
        if not cand.isalpha() or cand in R.STOPWORDS or cand in used or cand in question_words:
            continue
        if _stem_related(cand, word):
            continue
        counts = dict(R.wn_pos_counts(cand))
        if has_wn and not counts:  # not an English word WordNet knows (typos in vector vocabularies)
            continue
        if pos is not None and counts and pos not in counts:  # POS known and different
            continue
        return cand
    return None


def perturb_question(question: str, rng: random.Random, nb, used: set[str], use_antonyms: bool = True, tagger=None):
    """The question with its meaning flipped, and the number of changes (0 = could not)."""
    toks = TOKEN_RE.findall(question)
    tags = R.pos_tag(toks, tagger)
    nb.prefetch([t for t, g in zip(toks, tags) if g in _NOUNISH])
    qwords = {t.lower() for t in toks}
    out = list(toks)
    changed = 0
    antonym_done = False
    for i, (tok, tag) in enumerate(zip(toks, tags)):
        low = tok.lower()
        if tag in (R.PUNCT, R.FUNC, R.AUX) or low in R.STOPWORDS:
            continue
        if tok.isdigit():
            out[i] = str(int(tok) + rng.randint(10, 100))
            changed += 1
        elif tag in _NOUNISH and tok.isalpha():
            cand = _nearest(low, nb, used, "n" if R.wn_pos_counts(low) else None, qwords)
            if cand:
                used.add(cand)
                out[i] = match_case(tok, cand)
                changed += 1
        elif tag in (R.ADJ, R.ADV, R.VERB) and not antonym_done and use_antonyms and tok.isalpha():
            pos = R.wn_pos(tag)
            wn = R.wordnet()
            base = wn.morphy(low, pos) or low
            for ant in R.antonyms(base, pos):
                if ant.lower() not in used:
                    used.add(ant.lower())
                    out[i] = match_case(tok, ant)
                    changed += 1
                    antonym_done = True
                    break
    if not changed:
        out, changed = _negate(out, tags)
    return _join(out), changed


def _negate(toks: list[str], tags: list[str]) -> tuple[list[str], int]:
    low = [t.lower() for t in toks]
    for i, t in enumerate(low):
        if t == "not":
            return toks[:i] + toks[i + 1 :], 1
        if t.endswith("n't") and len(t) > 3:
            stemmed = {"won't": "will", "can't": "can", "shan't": "shall"}.get(t, toks[i][:-3])
            return toks[:i] + [stemmed] + toks[i + 1 :], 1
    for i, t in enumerate(low):
        if t in R.NEGATABLE_AUXILIARIES:
            return toks[: i + 1] + ["not"] + toks[i + 1 :], 1
    for i, tag in enumerate(tags):
        if tag in (R.ADJ, R.VERB):
            return toks[:i] + ["not"] + toks[i:], 1
    return toks, 0


def _join(toks: list[str]) -> str:
    text = ""
    for t in toks:
        if not text:
            text = t
        elif t in ",.;:!?)'\u2019" or t.startswith(("'", "\u2019")) or text.endswith(("(", "$")):
            text += t
        else:
            text += " " + t
    return text


@register
class AddSentMC(Attack):
    name = "addsent"
    task = "mc"
    paper = cite("advrace")
    description = "insert two sentences: the meaning-flipped question filled with a random wrong option"

    def __init__(self, **params):
        super().__init__(**params)
        R.check_tagger(self.params["tagger"], self.name)

    @classmethod
    def defaults(cls):
        # sentences: how many to insert; vectors: nearest-word backend (path, counter-fitted, wordnet, auto);
        # tagger: auto | spacy | heuristic (None: $ROBUST_MRC_TAGGER, else auto)
        return {"sentences": 2, "vectors": None, "antonyms": True, "tagger": None}

    def apply(self, ex, rng):
        nb = R.neighbours(self.vectors)
        use_antonyms = bool(self.antonyms) and R.has_wordnet()
        wrong = [o for i, o in enumerate(ex.options) if i != ex.label and o.strip()]
        if not wrong:
            return None
        n = int(self.sentences)
        picks = rng.sample(wrong, n) if len(wrong) >= n else [rng.choice(wrong) for _ in range(n)]
        used: set[str] = set()
        passage = ex.passage
        added = []
        question = ex.question.strip()
        for distractor in picks:
            altered, changed = perturb_question(question, rng, nb, used, use_antonyms, self.tagger)
            if not changed:
                continue
            body = altered.rstrip()
            if body.endswith("?") and not has_blank(body):
                body = body[:-1].rstrip()
            sentence = as_statement(fill_blank(body, distractor))
            pos = rng.choice(sentence_boundaries(passage))
            passage, _, _ = insert_at(passage, pos, sentence)
            added.append(sentence)
        if not added:
            return None
        return ex.replace(attack=self.name, detail=" | ".join(added), passage=passage)
