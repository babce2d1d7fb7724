"""AddSent for multiple choice (Si et al. 2021, AdvRACE, section 3.3).

What it changes: the passage only. Two distracting sentences are inserted at random sentence
boundaries. Each one is the question with its meaning flipped, filled with a random wrong option
(into the ``_`` blank, or appended); the two use different wrong options and replacement words:

1. integers shift by a random 10-100; a person's name goes to another name of the same kind
   (female / male / given / surname: "Hanson" -> "Morrison"); other nouns and proper nouns go to
   their nearest word in a distributional space (``vectors=``: a GloVe / word2vec file, the
   paper's choice; default ``$ROBUST_MRC_VECTORS``, else the offline MiniLM's input embeddings:
   "China" -> "Beijing", "afternoon" -> "evening"), never a synonym, a hypernym or hyponym, a form
   of the same word, a stopword or a pronoun (:mod:`robust_mrc.attacks.replacements`);
2. the *first* adjective / adverb / verb goes to a WordNet antonym of the same part of speech;
3. when nothing changed, a "not" is removed or inserted.

Pronouns, function words, titles ("Mr", "Mrs") and exam-question frame words ("Which of the
following ...") are never replaced. POS tags come from spaCy where installed (the
paper's tagger), else from a heuristic tagger; ``tagger=`` (auto | spacy | heuristic) picks one.

What it promises: question, options and label are unchanged (so the correct option stays distinct
from every option). Returns None when no sentence can be built. :meth:`AddSentMC.trace` also
returns each replacement with its step, for the fidelity statistics.
"""

from __future__ import annotations

import functools
import logging
import random

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.base import Attack, register
from robust_mrc.attacks.editing import insert_at, match_case, sentence_boundaries
from robust_mrc.attacks.replacements import nearest_different, nearest_name
from robust_mrc.data.cloze import fill_blank, has_blank
from robust_mrc.data.text import TOKEN_RE, as_statement
from robust_mrc.papers import cite

log = logging.getLogger(__name__)

_NOUNISH = (R.NOUN, R.PROPN)


def perturb_question(
    question: str,
    rng: random.Random,
    nb,
    used: set[str],
    use_antonyms: bool = True,
    tagger=None,
    record: list | None = None,
):
    """The question with its meaning flipped, and the number of changes (0 = could not).

    ``record``, when given, receives one ``(step, original, replacement)`` per change, step one of
    number / name / noun / antonym / not."""
    toks, tags, suffixes, cores, qwords = _analysis(question, R.resolve_tagger(tagger))
    nb.prefetch([t for t, g in zip(cores, tags) if g in _NOUNISH])
    out = list(toks)
    changes: list[tuple[str, str, str]] = []
    antonym_done = False
    for i, (tok, tag, sfx) in enumerate(zip(cores, tags, suffixes)):
        low = tok.lower()
        if tag in (R.PUNCT, R.FUNC, R.AUX) or low in R.STOPWORDS or low in R.PRONOUNS or low in R.FRAME_WORDS:
            continue
        if low.rstrip(".") in R.TITLES:  # "Mr", "Mrs": the name after it is swapped, the title stays
            continue
        if tok.isdigit():
            out[i] = str(int(tok) + rng.randint(10, 100))
            changes.append(("number", tok, out[i]))
            continue
        kind = R.person_name_kind(cores, i) if tok.isalpha() and (tag in _NOUNISH or i > 0) else None
        if kind is not None:
            name = nearest_name(low, kind, nb, used, qwords, rng)
            used.add(name)
            out[i] = name.capitalize() + sfx
            changes.append(("name", tok, name.capitalize()))
        elif tag in _NOUNISH and tok.isalpha():
            cand = nearest_different(low, nb, "n" if R.wn_pos_counts(low) else None, used, qwords)
            if cand:
                used.add(cand)
                out[i] = match_case(tok, cand) + sfx
                changes.append(("noun", tok, match_case(tok, cand)))
        elif tag in (R.ADJ, R.ADV, R.VERB) and not antonym_done and use_antonyms and tok.isalpha():
            pos = R.wn_pos(tag)
            wn = R.wordnet()
            base = wn.morphy(low, pos) or low
            for ant in R.antonyms(base, pos):
                if ant.lower() not in used:
                    used.add(ant.lower())
                    out[i] = match_case(tok, ant)
                    changes.append(("antonym", tok, out[i]))
                    antonym_done = True
                    break
    if not changes:
        out, n = _negate(out, tags)
        if n:
            changes.append(("not", "", "not"))
    if record is not None:
        record.extend(changes)
    return _join(out), len(changes)


@R.depends_on_resources
@functools.lru_cache(maxsize=4096)
def _analysis(question: str, tagger: str) -> tuple:
    """The question's tokens, their tags, possessive suffixes and cores (token less suffix), and its
    words in lower case; once per question and tagger (each inserted sentence starts from them)."""
    toks = TOKEN_RE.findall(question)
    # a word written in capitals for emphasis ("NOT TRUE") is tagged as the word, not as a name
    tags = R.pos_tag([t.lower() if len(t) > 1 and t.isupper() and R.wn_pos_counts(t.lower()) else t for t in toks], tagger)
    # a possessive is replaced without its "'s" ("Smith's" -> "Brown's")
    suffixes = [t[-2:] if t[-2:].lower() in ("'s", "\u2019s") and len(t) > 2 else "" for t in toks]
    cores = [t[: len(t) - len(sfx)] for t, sfx in zip(toks, suffixes)]
    return tuple(toks), tuple(tags), tuple(suffixes), tuple(cores), frozenset(t.lower() for t in cores)


def _negate(toks: list[str], tags: list[str]) -> tuple[list[str], int]:
    """Remove a "not" (or "n't"); else insert one after the first auxiliary ("What's" -> "What is
    not"), else before the first adjective or verb, else after the first word."""
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
        if t[:-2] in R.WH_WORDS and t[-2:] in ("'s", "\u2019s"):
            return toks[:i] + [toks[i][:-2], "is", "not"] + toks[i + 1 :], 1
    for i, tag in enumerate(tags):
        if tag in (R.ADJ, R.VERB):
            return toks[:i] + ["not"] + toks[i:], 1
    if len(toks) > 1:
        return toks[:1] + ["not"] + toks[1:], 1
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
    neighbour_default = "distributional"

    @classmethod
    def defaults(cls):
        # sentences: how many to insert; vectors: nearest-word backend (a GloVe/word2vec path, embeddings,
        # wordnet; None: $ROBUST_MRC_VECTORS, else the MiniLM input embeddings); tagger: auto | spacy |
        # heuristic (None: $ROBUST_MRC_TAGGER, else auto)
        return {"sentences": 2, "vectors": None, "antonyms": True, "tagger": None}

    def resources(self) -> dict[str, str]:
        return {
            "neighbours": R.describe(R.neighbours(self.vectors, self.neighbour_default)),
            "names": "person_names.tsv",
            "antonyms": "wordnet" if self.antonyms and R.has_wordnet() else "none",
            "tagger": R.tagger_name(self.tagger),
        }

    def apply(self, ex, rng):
        return self.trace(ex, rng)[0]

    def trace(self, ex, rng):
        """``(attacked example or None, sentences)``: :meth:`apply` with the replacements it made, one
        list of ``(step, original, replacement)`` per sentence it built (the same output for the same ``rng``)."""
        record: list[list[tuple[str, str, str]]] = []
        nb = R.neighbours(self.vectors, self.neighbour_default)
        use_antonyms = bool(self.antonyms) and R.has_wordnet()
        wrong = [o for i, o in enumerate(ex.options) if i != ex.label and o.strip()]
        if not wrong:
            return None, record
        n = int(self.sentences)
        picks = rng.sample(wrong, n) if len(wrong) >= n else [rng.choice(wrong) for _ in range(n)]
        used: set[str] = set()
        passage = ex.passage
        added = []
        question = ex.question.strip()
        for distractor in picks:
            changes: list[tuple[str, str, str]] = []
            altered, changed = perturb_question(question, rng, nb, used, use_antonyms, self.tagger, changes)
            record.append(changes)
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
            return None, record
        return ex.replace(attack=self.name, detail=" | ".join(added), passage=passage), record
