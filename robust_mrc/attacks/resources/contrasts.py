"""Contrast sets: categories whose members name different things (``data/contrast_sets.txt``).

AddSent's meaning flip (Si et al. 2021 (AdvRACE), section 3.3) needs a word that names a *different
member of the same category*: Saturday -> Sunday, football -> basketball, Chicago -> Detroit,
mother -> aunt. A distributional neighbour alone does not promise it (its nearest words include
near-synonyms: police -> cops, highway -> roadway, dictionary -> vocabulary), and WordNet's sister
terms do not either (kid, youth and adolescent are sisters under "juvenile"; teacher and lecturer
under "educator"). A contrast set states the category and its members outright; forms of one member
(``mother|mom|mum``, ``America|USA|the US``) are never swapped for each other, and
``tests/attacks/test_contrasts.py`` checks that no two members of a set are WordNet synonyms, kinds or
parts of each other.

* :func:`find` -- where a text names a member: ``(start, end, form, plural)`` for each, longest form
  first, whole words only; capitalised forms match with their capitals ("US", not "us"; "May", not
  "may"), lower-case forms in any case and in the plural (apples, children, mice).
* :func:`contrasts` -- the other members of every set the form is in, each by its first form, ranked by
  a similarity (the AddSent nearest-word order: the nearest first), ties in list order;
  :func:`similarity` gives that order's similarity in a nearest-word backend's vectors.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

SETS_FILE = Path(__file__).with_name("data") / "contrast_sets.txt"


class ContrastSetError(ValueError):
    """A malformed line of the contrast-set file (the message names the file and line)."""


class Found(NamedTuple):
    start: int
    end: int
    form: str  # the member's form as listed (its case), e.g. "the USA"
    plural: bool  # the text has the plural of a lower-case form ("apples")


@functools.lru_cache(maxsize=1)
def contrast_sets() -> tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]:
    """``(set name, members)`` of every set, a member being the tuple of its forms (first: the one written out)."""
    out = []
    for n, line in enumerate(SETS_FILE.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, rest = line.partition(":")
        members = tuple(tuple(f.strip() for f in m.split("|")) for m in rest.split(","))
        if not sep or not name.strip() or len(members) < 2 or any(not f for m in members for f in m):
            raise ContrastSetError(f"{SETS_FILE}, line {n}: expected 'name: member, member|form, ...' with two members or more")
        out.append((name.strip(), members))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, tuple[tuple[int, int], ...]]:
    """Lower-case form -> the (set, member) pairs it is a form of."""
    index: dict[str, list[tuple[int, int]]] = {}
    for s, (_, members) in enumerate(contrast_sets()):
        for m, forms in enumerate(members):
            for form in forms:
                index.setdefault(form.lower(), []).append((s, m))
    return {k: tuple(v) for k, v in index.items()}


def _is_proper(form: str) -> bool:
    return any(ch.isupper() for ch in form)


def _pattern(form: str) -> str:
    """The regex of one form: a leading "the" in any case; a capitalised form with its capitals."""
    head, rest = ("the ", form[4:]) if form.lower().startswith("the ") else ("", form)
    body = re.escape(rest).replace(r"\ ", r"\s+")
    if head:
        body = r"(?i:the)\s+" + body
    return body if _is_proper(rest) else f"(?i:{body})"


@functools.lru_cache(maxsize=1)
def _matcher() -> tuple[re.Pattern, dict[str, tuple[str, bool]]]:
    """One regex over every form (and the plurals of the lower-case ones), longest first; and the
    lower-case matched text -> (listed form, plural)."""
    from robust_mrc.attacks.inflection import plural

    spelled: dict[str, tuple[str, bool]] = {}
    for _, members in contrast_sets():
        for forms in members:
            for form in forms:
                spelled.setdefault(form.lower(), (form, False))
                if not _is_proper(form):
                    spelled.setdefault(plural(form), (form, True))
    alternatives = sorted(spelled, key=lambda k: (-len(k), k))
    # the listed spelling's case decides how it matches (the plural of a lower-case form: any case)
    patterns = [_pattern(spelled[k][0] if not spelled[k][1] else k) for k in alternatives]
    regex = re.compile(r"(?<![\w'\-])(?:" + "|".join(patterns) + r")(?![\w\-])")
    return regex, spelled


def find(text: str) -> list[Found]:
    """Every member of a contrast set that ``text`` names (see the module doc), in text order."""
    regex, spelled = _matcher()
    out = []
    for m in regex.finditer(text):
        key = " ".join(m.group().lower().split())
        form, is_plural = spelled[key]
        out.append(Found(m.start(), m.end(), form, is_plural))
    return out


def members_of(form: str) -> tuple[tuple[str, ...], ...]:
    """The members (tuples of forms) that ``form`` is a form of, in every set."""
    sets = contrast_sets()
    return tuple(sets[s][1][m] for s, m in _index().get(form.lower(), ()))


def set_names(form: str) -> tuple[str, ...]:
    """The names of the sets ``form`` is a member of."""
    sets = contrast_sets()
    return tuple(dict.fromkeys(sets[s][0] for s, _ in _index().get(form.lower(), ())))


@functools.lru_cache(maxsize=20_000)
def _others(form: str) -> tuple[str, ...]:
    """The first forms of the other members of ``form``'s sets, in list order, none sharing a form with it."""
    mine = {f.lower() for member in members_of(form) for f in member}
    sets = contrast_sets()
    out: dict[str, None] = {}
    for s, _ in _index().get(form.lower(), ()):
        for member in sets[s][1]:
            if mine.isdisjoint(f.lower() for f in member):
                out.setdefault(member[0])
    return tuple(out)


def contrasts(form: str, similarity=None) -> tuple[str, ...]:
    """The other members of ``form``'s sets (first forms), nearest first by ``similarity(a, b)`` (a
    float, None when unknown: after the known ones), ties in list order; () when ``form`` is in no set."""
    others = _others(form)
    if similarity is None or len(others) < 2:
        return others
    scored = [(similarity(form, o), i, o) for i, o in enumerate(others)]
    return tuple(o for s, i, o in sorted(scored, key=lambda t: (t[0] is None, -(t[0] or 0.0), t[1])))


def similarity(nb):
    """``sim(a, b)``: the cosine of two words or phrases in ``nb``'s vectors (a phrase: the mean of its
    words' vectors), None when unknown; None for a backend without vectors (WordNet's)."""
    try:
        return _similarity(nb)
    except TypeError:  # an unhashable backend
        return _make_similarity(nb)


@functools.lru_cache(maxsize=8)
def _similarity(nb):
    return _make_similarity(nb)


def _make_similarity(nb):
    matrix = getattr(nb, "matrix", None)
    index = getattr(nb, "index", None)
    if matrix is None or index is None:
        return None

    @functools.lru_cache(maxsize=50_000)
    def vector(phrase: str):
        rows = [index[w] for w in re.findall(r"[a-z]+", phrase.lower()) if w in index]
        if not rows:
            return None
        v = matrix[rows].mean(axis=0)
        n = float((v @ v) ** 0.5)
        return v / n if n else None

    def sim(a: str, b: str):
        va, vb = vector(a), vector(b)
        return None if va is None or vb is None else float(va @ vb)

    return sim


def digest() -> str:
    """A short digest of the set file (what attacked data depends on)."""
    import hashlib

    return hashlib.blake2b(SETS_FILE.read_bytes(), digest_size=6).hexdigest()
