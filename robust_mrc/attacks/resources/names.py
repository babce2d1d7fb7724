"""Person names: the list AddSent draws replacement names from (``data/person_names.tsv``).

The list holds common English first names by gender (``female`` / ``male``), common English,
Chinese, Japanese and Korean surnames (``surname``) and common Chinese given names (``given``:
gender unknown). :func:`name_kinds` says which kinds a word is (``Thomas``: male and surname);
:func:`names_of_kind` lists the names of one kind, in file order.
"""

from __future__ import annotations

import functools
from pathlib import Path

NAMES_FILE = Path(__file__).with_name("data") / "person_names.tsv"
KINDS = ("female", "male", "given", "surname")
FIRST_NAME_KINDS = ("female", "male", "given")
TITLES = frozenset("mr mrs ms miss dr prof mister madam sir lady uncle aunt grandpa grandma".split())


# forms of one first name: a swap between them keeps the person ("Tom" -> "Thomas" is no flip)
NICKNAMES = tuple(
    frozenset(group.split())
    for group in (
        "thomas tom tommy",
        "robert bob bobby rob robbie bert",
        "william bill billy will willie",
        "james jim jimmy jamie",
        "michael mike mick mickey",
        "stephen steven steve",
        "david dave davy",
        "joseph joe joey",
        "anthony tony",
        "benjamin ben benny",
        "samuel sam sammy",
        "daniel dan danny",
        "nicholas nick nicky",
        "edward ted eddie ed ned",
        "henry harry hank",
        "john jack johnny jon",
        "andrew andy drew",
        "alexander alex",
        "christopher chris",
        "matthew matt",
        "patrick pat",
        "frederick fred freddie",
        "charles charlie chuck",
        "frank frankie francis",
        "richard rick dick",
        "lawrence larry",
        "gerald jerry gerry",
        "timothy tim",
        "kenneth ken kenny",
        "ronald ron ronnie",
        "donald don donnie",
        "katherine kate katie kathy catherine kathryn kitty",
        "elizabeth liz beth lizzie betty eliza",
        "margaret meg peggy maggie",
        "susan sue susie",
        "jennifer jenny jen",
        "patricia pat patty",
        "rebecca becky",
        "deborah debra debbie",
        "cynthia cindy",
        "pamela pam",
        "amanda mandy",
        "dorothy dolly dot",
        "mary polly molly",
        "sarah sara sally",
        "victoria vicky",
        "jessica jess jessie",
        "isabella bella",
        "ann anne anna annie",
        "lucy lucia",
    )
)


@functools.lru_cache(maxsize=1)
def _nickname_groups() -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}
    for i, group in enumerate(NICKNAMES):
        for name in group:
            out.setdefault(name, set()).add(i)
    return {k: frozenset(v) for k, v in out.items()}


def nickname_groups(word: str) -> frozenset[int]:
    """The :data:`NICKNAMES` groups ``word`` is a form in (case-insensitive); empty for most words."""
    return _nickname_groups().get(word.lower(), frozenset())


def same_name(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are forms of one first name ("Tom", "Thomas"), or the same word."""
    a, b = a.lower(), b.lower()
    groups = _nickname_groups()
    return a == b or bool(groups.get(a, frozenset()) & groups.get(b, frozenset()))


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, tuple[str, ...]]:
    kinds: dict[str, list[str]] = {}
    with open(NAMES_FILE, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            name, kind = line.rstrip("\n").split("\t")
            kinds.setdefault(name.lower(), []).append(kind)
    for group in NICKNAMES:  # every form of a listed first name is a first name of the same kind
        found = sorted({k for name in group for k in kinds.get(name, ()) if k in FIRST_NAME_KINDS})
        for name in group:
            kinds.setdefault(name, []).extend(k for k in found if k not in kinds[name])
    return {name: tuple(k for k in KINDS if k in found) for name, found in kinds.items()}


def name_kinds(word: str) -> tuple[str, ...]:
    """The kinds of ``word`` as a person's name (case-insensitive), () when it is not in the list."""
    return _table().get(word.lower(), ())


@functools.lru_cache(maxsize=8)
def names_of_kind(kind: str) -> tuple[str, ...]:
    """Every name of ``kind`` (lower case), in a fixed order."""
    if kind not in KINDS:
        raise ValueError(f"unknown name kind {kind!r}; expected one of {KINDS}")
    return tuple(sorted(n for n, ks in _table().items() if kind in ks))


def person_name_kind(tokens: list[str], i: int) -> str | None:
    """The kind of name ``tokens[i]`` is in its place, or None when it is not a person's name.

    A name must be capitalised. After a title ("Mr", "Mrs", "Dr") or a first name it is a surname;
    otherwise a first name where it can be one, else a surname. A word opening the text that can
    only be a surname and is also an English word ("Long", "Young", "Day") is not taken for a name."""
    tok = tokens[i]
    if not tok[:1].isupper():
        return None
    kinds = name_kinds(tok)
    if not kinds:
        return None
    if i == 0 and kinds == ("surname",):
        from robust_mrc.attacks.resources.wordnet import wn_pos_counts

        if wn_pos_counts(tok.lower()):
            return None
    j = i - 1
    while j >= 0 and tokens[j] == ".":  # "Mrs. Smith"
        j -= 1
    prev = tokens[j].rstrip(".").lower() if j >= 0 else ""
    after_first = j >= 0 and tokens[j][:1].isupper() and any(k in FIRST_NAME_KINDS for k in name_kinds(tokens[j]))
    if "surname" in kinds and (prev in TITLES or after_first):
        return "surname"
    first = [k for k in kinds if k in FIRST_NAME_KINDS]
    return first[0] if first else "surname"
