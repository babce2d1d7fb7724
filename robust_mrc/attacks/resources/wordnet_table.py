"""Every WordNet synset in one table, built once from the data files and kept in the cache
directory: what the nearest words, antonyms, offensive senses and replacement rules read of a
synset (lemma names, the offensive flag, semantic pointers in name order, antonym pointers, and
for a noun its hypernyms within :data:`IS_A_DEPTH` steps), looked up without parsing a line,
sorting a pointer list or walking the hierarchy.

Why: :mod:`.wordnet_records` parses a synset the first time a process asks for it and sorts its
pointers on every call; the first lookups of words (their synsets, their hypernyms' hyponyms, the
senses of the candidates that replace them) took ~80 % of mc ``addsent``'s and ``word_replace``'s
time on RACE-M (cProfile of ``benchmarks/attack_throughput.py``'s rows), and a process meets new
words all along (every DataLoader worker starts cold). The table is only read once loaded:
forked workers share it, and every answer is the same whatever was asked before.

A row is an int: the synsets of ``data.noun``, ``data.verb``, ``data.adj`` and ``data.adv`` in file
order. :func:`synset_rows` gives a word's rows in NLTK's order (NLTK's own morphology and index,
as :func:`.wordnet_records.synsets`). The table is built *from* :mod:`.wordnet_records` (the parser
checked against NLTK's objects): the same lemmas, flags and pointer orders by construction
(``tests/attacks/test_wordnet_table.py`` compares them).

Where: ``<cache_dir>/wordnet/table-<key>.npz`` (~9 MB of plain arrays, read without pickle in
~0.15 s; the tables of other keys beside it are deleted when one is written),
``key`` a digest of the WordNet files it is read from (name, size, modification time of the
``data.*``, ``index.*`` and ``*.exc`` files), NLTK's version, and the source of this module and of the
parser. Built under a file lock (several processes starting at once build it once), written
atomically (:func:`robust_mrc.data.writers.atomic_write_bytes`), rebuilt when missing, unreadable
or not the one its key promises (3-5 s on one core). Where the cache directory is not writable
the table is built in memory, once per process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import logging
from pathlib import Path

from robust_mrc.attacks.resources import wordnet_records as records
from robust_mrc.attacks.resources.store import cache_dir
from robust_mrc.attacks.resources.wordnet import morphy_forms, prepare_nltk_wordnet
from robust_mrc.core.files import waiting_lock

log = logging.getLogger(__name__)

FILES = ("noun", "verb", "adj", "adv")
_FILE_LETTER = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_FILE_CODE = {"n": 0, "v": 1, "a": 2, "s": 2, "r": 3}  # a synset's POS letter -> its data file
_ANTONYM = "!"
IS_A_DEPTH = 5  # ancestors(row): the hypernyms and instance hypernyms up to this many steps
FORMAT = 2  # bumped when the arrays change meaning (the key changes with the code anyway)


def _key_parts() -> list[str]:
    import nltk

    root = prepare_nltk_wordnet()
    parts = [f"format {FORMAT}", f"nltk {nltk.__version__}", str(root)]
    for name in [f"{kind}.{pos}" for kind in ("data", "index") for pos in FILES] + [f"{pos}.exc" for pos in FILES]:
        st = (root / name).stat()  # the exceptions too: the key also stands for NLTK's morphology over them
        parts.append(f"{name} {st.st_size} {st.st_mtime_ns}")
    for module in (__file__, records.__file__):
        parts.append(hashlib.blake2b(Path(module).read_bytes(), digest_size=12).hexdigest())
    return parts


def table_key() -> str:
    """The digest naming the table of the WordNet files and code in use."""
    return hashlib.blake2b("\n".join(_key_parts()).encode(), digest_size=10).hexdigest()


def table_path() -> Path:
    return cache_dir() / "wordnet" / f"table-{table_key()}.npz"


class WordNetTable:
    """The synsets as rows (see the module doc). ``pos[row]``: its POS letter (n, v, a, s, r);
    ``offset[row]``; ``lemmas[row]``: its lemma names as written, in order; :meth:`offensive`,
    :meth:`related`, :meth:`antonyms`; :meth:`row` from a POS letter and an offset."""

    def __init__(self, arrays: dict, key: str):
        self.key = key
        self.pos = arrays["pos"].tobytes().decode("ascii")
        self.offset = arrays["offset"].tolist()
        n = len(self.offset)
        names = arrays["lemma_text"].tobytes().decode("utf-8").split("\n")
        starts = arrays["lemma_start"].tolist()
        self.lemmas = [tuple(names[a:b]) for a, b in zip(starts, starts[1:])]
        self._offensive = arrays["offensive"].tobytes()
        self._symbols = {s: i for i, s in enumerate(arrays["symbols"].tobytes().decode("ascii").split("\n"))}
        self._group_start = arrays["group_start"].tolist()
        self._group_symbol = arrays["group_symbol"].tolist()
        self._group_target = arrays["group_target"].tolist()
        self._targets = arrays["targets"].tolist()
        self._ant_start = arrays["ant_start"].tolist()
        self._ant = arrays["ant"].tolist()  # (source lemma, target row, target lemma) per antonym pointer
        self._anc_start = arrays["anc_start"].tolist()
        self._anc = arrays["anc"].tolist()
        # the WordNet neighbours (neighbours_in) of every alphabetic index word, as indices into a list of names
        self._nb_names = _lines(arrays["nb_names"])
        self._nb_word = {w: i for i, w in enumerate(_lines(arrays["nb_words"]))}
        self._nb_start = arrays["nb_start"]  # numpy: 2 million indices are not turned into Python ints
        self._nb_list = arrays["nb_list"]
        self._rows = {(_FILE_CODE[p], o): i for i, (p, o) in enumerate(zip(self.pos, self.offset))}
        lengths = (len(self.pos), len(self.lemmas), len(self._offensive))
        lengths += (len(self._group_start) - 1, len(self._ant_start) - 1, len(self._anc_start) - 1)
        if any(m != n for m in lengths) or len(self._group_target) != len(self._group_symbol) + 1:
            raise ValueError(f"WordNet table {key}: arrays of different lengths")
        if len(self._nb_start) != len(self._nb_word) + 1:
            raise ValueError(f"WordNet table {key}: neighbour lists of another word list")

    def __len__(self) -> int:
        return len(self.offset)

    def row(self, pos: str, offset: int) -> int:
        """The row of the synset at ``offset`` of the data file of ``pos`` (n, v, a, s or r)."""
        return self._rows[(_FILE_CODE[pos], offset)]

    def offensive(self, row: int) -> bool:
        """:func:`.wordnet_records.offensive` of the synset."""
        return self._offensive[row] == 1

    def related(self, row: int, symbol: str) -> tuple[int, ...]:
        """The rows :func:`.wordnet_records.related` gives for ``symbol``, in its order (by name)."""
        code = self._symbols.get(symbol)
        gs = self._group_start
        for g in range(gs[row], gs[row + 1]):
            if self._group_symbol[g] == code:
                return tuple(self._targets[self._group_target[g] : self._group_target[g + 1]])
        return ()

    def ancestors(self, row: int) -> tuple[int, ...]:
        """The rows within 1 to :data:`IS_A_DEPTH` hypernym / instance-hypernym steps of a noun row
        (what :func:`ancestor_walk` finds from it; () for the other parts of speech)."""
        return tuple(self._anc[self._anc_start[row] : self._anc_start[row + 1]])

    def neighbours(self, word: str) -> tuple[str, ...] | None:
        """:func:`neighbours_in` of ``word`` (lower case) as stored for WordNet's alphabetic index
        words (the lemmas, 81 % of RACE-M's passage words); None for another word."""
        i = self._nb_word.get(word)
        if i is None:
            return None
        names = self._nb_names
        return tuple(names[j] for j in self._nb_list[self._nb_start[i] : self._nb_start[i + 1]].tolist())

    def antonyms(self, row: int, lemma: str) -> list[str]:
        """:func:`.wordnet_records.lemma_related` with symbol "!": the antonyms of ``lemma`` (a lemma
        name of the synset), in WordNet's order."""
        names = self.lemmas[row]
        pointers = self._ant[self._ant_start[row] : self._ant_start[row + 1]]
        return [self.lemmas[target][which] for source, target, which in pointers if names[source] == lemma]


def _lines(blob) -> list[str]:
    """The lines of a text stored as bytes (none for an empty one)."""
    text = blob.tobytes().decode("utf-8")
    return text.split("\n") if text else []


def _synset_lines(data: bytes):
    """The byte offsets of the synset lines of a data file (the licence lines start with spaces)."""
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        if data[pos : pos + 1].isdigit():
            yield pos
        pos = end + 1


def build_arrays() -> dict:
    """The table's arrays, from :mod:`.wordnet_records` (every synset parsed once: a few seconds)."""
    import numpy as np

    parse = records.synset.__wrapped__  # not kept in the parser's cache: each line is read once here
    synsets = []
    for name in FILES:
        letter = _FILE_LETTER[name]
        synsets += [parse(letter, offset) for offset in _synset_lines(records._data(name))]
    rows = {(_FILE_CODE[s.pos], s.offset): i for i, s in enumerate(synsets)}
    symbols: dict[str, int] = {}
    lemma_names: list[str] = []
    lemma_start, group_start, group_symbol, group_target, targets, ant_start, ant = [0], [0], [], [0], [], [0], []
    offensive = bytearray()
    for syn in synsets:
        lemma_names += syn.lemmas
        lemma_start.append(len(lemma_names))
        offensive.append(1 if records.offensive(syn) else 0)
        for symbol, _ in syn.pointers:
            targets += [rows[(_FILE_CODE[p], o)] for p, o in records.related_keys(syn, symbol)]
            group_symbol.append(symbols.setdefault(symbol, len(symbols)))
            group_target.append(len(targets))
        group_start.append(len(group_symbol))
        ant += [(source, rows[(_FILE_CODE[p], o)], target) for sym, source, p, o, target in syn.lexical if sym == _ANTONYM]
        ant_start.append(len(ant))
    if any("\n" in n for n in lemma_names):
        raise ValueError("a WordNet lemma name with a line break")
    arrays = {
        "pos": np.frombuffer("".join(s.pos for s in synsets).encode("ascii"), dtype=np.uint8),
        "offset": np.asarray([s.offset for s in synsets], dtype="int64"),
        "lemma_text": np.frombuffer("\n".join(lemma_names).encode("utf-8"), dtype=np.uint8),
        "lemma_start": np.asarray(lemma_start, dtype="int32"),
        "offensive": np.frombuffer(bytes(offensive), dtype=np.uint8),
        "symbols": np.frombuffer("\n".join(symbols).encode("ascii"), dtype=np.uint8),
        "group_start": np.asarray(group_start, dtype="int32"),
        "group_symbol": np.asarray(group_symbol, dtype="uint8"),
        "group_target": np.asarray(group_target, dtype="int32"),
        "targets": np.asarray(targets, dtype="int32"),
        "ant_start": np.asarray(ant_start, dtype="int32"),
        "ant": np.asarray(ant, dtype="int32").reshape(-1, 3),
        "anc_start": np.zeros(len(synsets) + 1, dtype="int32"),
        "anc": np.zeros(0, dtype="int32"),
    }
    partial = WordNetTable({**arrays, **_no_neighbours()}, "")
    anc_start, anc = [0], []
    for row in range(len(synsets)):
        if partial.pos[row] == "n":
            anc += sorted(ancestor_walk(partial, [row]))
        anc_start.append(len(anc))
    arrays["anc_start"] = np.asarray(anc_start, dtype="int32")
    arrays["anc"] = np.asarray(anc, dtype="int32")
    # the neighbour lists of the alphabetic index words (looked up far more than other words)
    words = sorted(w for w in records._reader()._lemma_pos_offset_map if w.isalpha())
    names: dict[str, int] = {}
    nb_start, nb_list = [0], []
    for w in words:
        nb_list += [names.setdefault(n, len(names)) for n in neighbours_in(partial, w)]
        nb_start.append(len(nb_list))
    arrays["nb_words"] = np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)
    arrays["nb_names"] = np.frombuffer("\n".join(names).encode("utf-8"), dtype=np.uint8)
    arrays["nb_start"] = np.asarray(nb_start, dtype="int32")
    arrays["nb_list"] = np.asarray(nb_list, dtype="int32")
    return arrays


def _no_neighbours() -> dict:
    import numpy as np

    empty = np.zeros(0, dtype=np.uint8)
    return {"nb_words": empty, "nb_names": empty, "nb_start": np.zeros(1, dtype="int32"), "nb_list": np.zeros(0, dtype="int32")}


def neighbours_in(t: WordNetTable, w: str) -> tuple[str, ...]:
    """The WordNet nearest words of ``w`` (lower case), nearest first: the lemma names of its first
    four senses, then of the first two senses' co-hyponyms (the first two lemmas of the first 15
    hyponyms, by name, of each of their first two hypernyms, by name); no offensive sense, no
    multi-word or hyphenated name, no repeat, not ``w`` itself (``WordNetNeighbours``' rule)."""
    out: list[str] = []
    seen = {w}  # the word itself and the names taken

    def add(name: str) -> None:
        name = name.lower()
        if name in seen or "_" in name or "-" in name or not name.isalpha():
            return
        out.append(name)
        seen.add(name)

    rows = [r for r in rows_in(t, w)[:4] if not t.offensive(r)]
    for row in rows:
        for lemma in t.lemmas[row]:
            add(lemma)
    # related synsets come sorted by name: WordNet does not order them
    for row in rows[:2]:
        for hyper in t.related(row, "@")[:2]:
            for sibling in t.related(hyper, "~")[:15]:
                if t.offensive(sibling):
                    continue
                for lemma in t.lemmas[sibling][:2]:
                    add(lemma)
    return tuple(out)


def ancestor_walk(t: WordNetTable, rows, depth: int = IS_A_DEPTH) -> set[int]:
    """The rows reached from ``rows`` in 1 to ``depth`` hypernym / instance-hypernym steps, walked
    level by level (the replacement rules' IS-A walk; the table keeps it per noun row, and the walk
    from several rows is the union of theirs)."""
    out: set[int] = set()
    frontier = list(rows)
    for _ in range(depth):
        frontier = [h for row in frontier for symbol in ("@", "@i") for h in t.related(row, symbol)]
        new = [h for h in frontier if h not in out]
        out.update(new)
        frontier = new
    return out


def _read(path: Path, key: str) -> WordNetTable | None:
    """The table stored at ``path``, or None when it is missing, unreadable or another key's."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        if arrays.pop("key").tobytes().decode("ascii") != key:
            return None
        return WordNetTable(arrays, key)
    except FileNotFoundError:
        return None
    except Exception as err:  # noqa: BLE001 - a truncated or foreign file is rebuilt, never trusted
        log.warning("WordNet table %s is unreadable (%s): rebuilding it", path, err)
        return None


def _encode(arrays: dict, key: str) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, key=np.frombuffer(key.encode("ascii"), dtype=np.uint8), **arrays)
    return buf.getvalue()


@functools.lru_cache(maxsize=1)
def table() -> WordNetTable:
    """The table of the WordNet in use: read from the cache, else built (and stored when the cache
    directory is writable). :class:`ResourceMissing` without WordNet, like every WordNet user."""
    records._reader()  # ResourceMissing (or ROBUST_MRC_NO_WORDNET) first
    key = table_key()
    try:
        path = table_path()
        found = _read(path, key)
        if found is not None:
            return found
        path.parent.mkdir(parents=True, exist_ok=True)
        with waiting_lock(path.parent / ".table.lock"):
            return _read(path, key) or _build_and_store(path, key)  # another process may have built it meanwhile
    except OSError as err:  # no cache directory to write in, or no lock in it: this process only
        log.warning("WordNet table: no cache directory to keep it in (%s): building it in memory", err)
        return WordNetTable(build_arrays(), key)


def _build_and_store(path: Path, key: str) -> WordNetTable:
    from robust_mrc.data.writers import atomic_write_bytes

    log.info("WordNet table: building it once (a few seconds) into %s", path)
    arrays = build_arrays()
    try:
        atomic_write_bytes(path, _encode(arrays, key))
        remove_stale(path)
    except OSError as err:  # a read-only cache directory: the table lives in this process only
        log.warning("WordNet table: cannot store it in %s (%s): kept in memory", path.parent, err)
    return WordNetTable(arrays, key)


_POS_ORDER = ("n", "v", "a", "r")  # NLTK's POS_LIST: the order of ``wordnet().synsets(word)``


@functools.lru_cache(maxsize=200_000)
def synset_rows(word: str, pos: str | None = None) -> tuple[int, ...]:
    """The rows of the synsets of ``word``, in the order of :func:`.wordnet_records.synsets` (NLTK's)."""
    return rows_in(table(), word, pos)


def rows_in(t: WordNetTable, word: str, pos: str | None = None) -> tuple[int, ...]:
    """:func:`synset_rows` in the table ``t``."""
    rows = t._rows
    word = word.lower()
    index = records._reader()._lemma_pos_offset_map
    return tuple(
        rows[(_FILE_CODE[p], offset)]
        for p in ((pos,) if pos else _POS_ORDER)
        for form in morphy_forms(word, p)
        for offset in index[form].get(p, [])
    )


@functools.lru_cache(maxsize=200_000)
def wordnet_neighbours(word: str) -> tuple[str, ...]:
    """:func:`neighbours_in` the table of the WordNet in use (stored for the index words)."""
    word = word.lower()
    t = table()
    found = t.neighbours(word)
    return found if found is not None else neighbours_in(t, word)


def clear() -> None:
    """Forget the loaded table and the words' rows and neighbours (``resources.clear_caches``)."""
    table.cache_clear()
    synset_rows.cache_clear()
    wordnet_neighbours.cache_clear()


def remove_stale(keep: Path) -> None:
    """Delete the tables of other keys beside ``keep`` (other WordNet files or code): a process still
    using one has it in memory; one that needs it again builds it again."""
    for path in keep.parent.glob("table-*.npz"):
        if path != keep:
            with contextlib.suppress(OSError):
                path.unlink()
