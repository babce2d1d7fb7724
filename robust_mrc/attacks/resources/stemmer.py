"""Porter stemming (NLTK's :class:`PorterStemmer`), cached per word."""

from __future__ import annotations

import functools

# stems worked out by this stemmer and kept in the cache with a word list (a vector file's vocabulary:
# resources.vectors): looked up before stemming, the same answers
_KNOWN: dict[str, str] = {}


@functools.lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Porter stem of ``word`` in lower case."""
    low = word.lower()
    known = _KNOWN.get(low)
    return known if known is not None else _stemmer().stem(low)


def remember(stems: dict[str, str]) -> None:
    """Take stems this stemmer gave (lower-case word -> stem), kept from an earlier process."""
    _KNOWN.update(stems)


def forget() -> None:
    _KNOWN.clear()
