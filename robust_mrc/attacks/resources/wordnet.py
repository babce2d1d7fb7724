"""WordNet 3.0 from Debian's files, read through NLTK; sense counts, antonyms, offensive senses.

Source: Debian's ``wordnet-base`` (+ ``wordnet-sense-index``) files in ``/usr/share/wordnet`` (or
``$ROBUST_MRC_WORDNET_DIR``), copied once into an NLTK data directory under
``<cache_dir>/nltk_data`` with the ``lexnames`` file NLTK's reader needs. No fallback: attacks that
need it raise :class:`ResourceMissing` saying ``apt-get install wordnet-base wordnet-sense-index``.

The copy is safe when several processes (DataLoader workers, parallel jobs) set it up at once: it
is built in a private temporary directory and renamed into place under a file lock, so a process
either sees no directory or a complete one (``test_resources.py`` runs it in several processes).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from pathlib import Path

from robust_mrc.attacks.resources.store import ResourceMissing, cache_dir
from robust_mrc.core.errors import UserError
from robust_mrc.core.files import waiting_lock

_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_LEX_POS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
_WORDNET_FILES = [f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")]
_WORDNET_FILES += [f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")]
_WORDNET_OPTIONAL = ["index.sense", "cntlist.rev", "cntlist"]
_STAMP = ".robust_mrc_source"

WORDNET_HINT = (
    "WordNet is not installed: run `apt-get install wordnet-base wordnet-sense-index` "
    "(or set ROBUST_MRC_WORDNET_DIR to a directory holding WordNet 3.0's data.* and index.* files)"
)


def wordnet_source() -> Path | None:
    """The directory with the WordNet database files, or None."""
    candidates = [os.environ.get("ROBUST_MRC_WORDNET_DIR"), "/usr/share/wordnet", "/usr/share/wordnet/dict"]
    for c in candidates:
        if c and (Path(c) / "data.noun").is_file() and (Path(c) / "index.noun").is_file():
            return Path(c)
    return None


def _is_ready(root: Path, source: Path) -> bool:
    stamp = root / _STAMP
    return stamp.is_file() and stamp.read_text() == str(source)


def _build(source: Path, into: Path) -> None:
    for name in _WORDNET_FILES + _WORDNET_OPTIONAL:
        src = source / name
        if src.is_file():
            shutil.copyfile(src, into / name)
        elif name in _WORDNET_FILES:
            raise ResourceMissing(f"{src} is missing. {WORDNET_HINT}")
    lex = "".join(f"{i:02d}\t{n}\t{_LEX_POS[n.split('.')[0]]}\n" for i, n in enumerate(_LEXNAMES))
    (into / "lexnames").write_text(lex)
    (into / _STAMP).write_text(str(source))  # last: a directory with a stamp is complete


class CacheNotWritable(UserError, RuntimeError):
    """The directory a resource's copy goes to cannot be written; the message names it."""


def _not_writable(target: Path | None, err: OSError) -> CacheNotWritable:
    """``target``: the directory given, or None for the cache directory's."""
    what = f"{err.strerror or type(err).__name__}: {err.filename or target}"
    if target is not None:
        return CacheNotWritable(f"cannot copy WordNet into {target} ({what}): give a writable directory")
    env = os.environ.get("ROBUST_MRC_CACHE")
    where = f"ROBUST_MRC_CACHE={env}" if env else "the cache directory ~/.cache/robust_mrc (ROBUST_MRC_CACHE unset)"
    return CacheNotWritable(
        f"cannot copy WordNet into the cache ({what}): {where} is not writable; set the environment "
        "variable ROBUST_MRC_CACHE to a writable directory"
    )


def prepare_nltk_wordnet(source: Path | None = None, target: Path | None = None) -> Path:
    """Copy the WordNet files into ``<target>/corpora/wordnet`` (+ ``lexnames``); return that dir.

    ``target`` defaults to ``<cache_dir>/nltk_data``; ``NLTK_DATA=<target>`` then also lets
    ``nltk.corpus.wordnet`` find it. Safe to call from several processes at once. A directory that
    cannot be written: :class:`CacheNotWritable` naming it (and ``ROBUST_MRC_CACHE``).
    """
    source = source or wordnet_source()
    if source is None:
        raise ResourceMissing(WORDNET_HINT)
    try:
        return _copy_wordnet(source, target or cache_dir() / "nltk_data")
    except OSError as err:
        raise _not_writable(target, err) from err


def _copy_wordnet(source: Path, target: Path) -> Path:
    corpora = target / "corpora"
    root = corpora / "wordnet"
    if _is_ready(root, source):
        return root
    corpora.mkdir(parents=True, exist_ok=True)
    with waiting_lock(corpora / ".wordnet.lock"):
        if _is_ready(root, source):  # another process finished it while we waited
            return root
        tmp = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=corpora))
        try:
            _build(source, tmp)
            if root.exists():  # from another source or not a complete build: set it aside
                old = Path(tempfile.mkdtemp(prefix=".wordnet-old-", dir=corpora))
                os.replace(root, old / "wordnet")
                shutil.rmtree(old, ignore_errors=True)
            os.replace(tmp, root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return root


@functools.lru_cache(maxsize=1)
def _wordnet_cached():
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    root = prepare_nltk_wordnet()
    data_dir = str(root.parent.parent)
    if data_dir not in nltk.data.path:  # NLTK only reads corpora under its data path
        nltk.data.path.append(data_dir)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return WordNetCorpusReader(str(root), None)


def wordnet():
    """NLTK's WordNet reader over the Debian files; :class:`ResourceMissing` when absent."""
    if os.environ.get("ROBUST_MRC_NO_WORDNET"):  # lets tests exercise the fallbacks
        raise ResourceMissing(WORDNET_HINT + " (disabled by ROBUST_MRC_NO_WORDNET)")
    return _wordnet_cached()


def has_wordnet() -> bool:
    try:
        wordnet()
        return True
    except ResourceMissing:
        return False


# answers of morphy_forms and offensive_word kept in the cache with a word list (a vector file's
# vocabulary: resources.vectors), for the same WordNet files, NLTK version and code: looked up first
_KNOWN_FORMS: dict[tuple[str, str], tuple[str, ...]] = {}
_KNOWN_OFFENSIVE: dict[str, bool] = {}


@functools.lru_cache(maxsize=400_000)
def morphy_forms(word: str, pos: str) -> tuple[str, ...]:
    """NLTK's ``_morphy(word, pos)`` (the forms of ``word`` in WordNet's index for ``pos``), once per
    word and POS: the sense counts, the synsets of a word and the replacement rules share it.
    Callers check that WordNet is there (:func:`wordnet`) first."""
    known = _KNOWN_FORMS.get((word, pos))
    return known if known is not None else tuple(wordnet()._morphy(word, pos))


def remember(forms: dict[tuple[str, str], tuple[str, ...]], offensive: dict[str, bool]) -> None:
    """Take answers of :func:`morphy_forms` ((word, pos) -> forms) and :func:`offensive_word` (word ->
    flag) kept from an earlier process with the same WordNet files, NLTK version and code."""
    _KNOWN_FORMS.update(forms)
    _KNOWN_OFFENSIVE.update(offensive)


def forget_known() -> None:
    _KNOWN_FORMS.clear()
    _KNOWN_OFFENSIVE.clear()


@functools.lru_cache(maxsize=200_000)
def wn_pos_counts(word: str) -> tuple[tuple[str, int], ...]:
    """(pos, number of synsets) for ``word`` in WordNet, pos in n/v/a/r; empty without WordNet."""
    try:
        wn = wordnet()
    except ResourceMissing:
        return ()
    counts = {}
    offsets = getattr(wn, "_lemma_pos_offset_map", None)
    for pos in ("n", "v", "a", "r"):
        if offsets is not None and hasattr(wn, "_morphy"):
            # the index alone (no synset parsing): ~50x faster than len(wn.synsets(...))
            n = 0
            for form in morphy_forms(word, pos):
                entry = offsets.get(form, {})
                n += len(entry.get(pos, ())) + (len(entry.get("s", ())) if pos == "a" else 0)
        else:
            n = len(wn.synsets(word, pos=pos))
        if n:
            counts[pos] = n
    return tuple(counts.items())


@functools.lru_cache(maxsize=100_000)
def antonyms(word: str, pos: str, first_synset_only: bool = False) -> tuple[str, ...]:
    """WordNet antonyms of ``word`` with POS ``pos`` (n/v/a/r), single words, in WordNet order."""
    from robust_mrc.attacks.resources.wordnet_table import synset_rows, table

    t = table()
    out: list[str] = []
    rows = list(synset_rows(word, pos))
    if pos == "a":
        rows += [r for r in synset_rows(word, "s") if r not in rows]
    if first_synset_only:
        rows = rows[:1]
    for row in rows:
        for lemma in t.lemmas[row]:
            if lemma.lower() != word.lower():
                continue
            for name in t.antonyms(row, lemma):
                if "_" not in name and "-" not in name and name not in out:
                    out.append(name)
    return tuple(out)


@functools.lru_cache(maxsize=200_000)
def offensive_word(word: str) -> bool:
    """True when a sense of ``word`` in WordNet is a slur or an obscenity (False without WordNet)."""
    from robust_mrc.attacks.resources.wordnet_table import synset_rows, table

    known = _KNOWN_OFFENSIVE.get(word)
    if known is not None:
        return known
    try:
        return any(map(table().offensive, synset_rows(word)))
    except ResourceMissing:
        return False
