"""Porter stemming (NLTK's :class:`PorterStemmer`), cached per word."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Porter stem of ``word`` in lower case."""
    return _stemmer().stem(word.lower())
