"""The WordNet table (every synset built once, kept in the cache) answers as the parser it is built
from; it is read back, rebuilt when damaged, kept in memory without a writable cache, built once by
processes starting together; a vector file's vocabulary facts, read back, give the same neighbours;
the faster replacement rules and text helpers give the answers of their plain forms."""

from __future__ import annotations

import importlib
import io
import multiprocessing
import os
import random
import re

import numpy as np
import pytest
from attack_samples import mc_examples

from robust_mrc.attacks import resources as R
from robust_mrc.attacks.resources import wordnet_records as records
from robust_mrc.attacks.resources import wordnet_table as T

WORDS = (
    "dog person music teacher city water money school story friend mother child house tree car run give make went took "
    "children mice better best happy beautiful big quick little old new quickly galore elect sun paris january alive dead "
    "open close hot cold good bad eat ate bank light fair kind mean bastard bitch china knife finger computer zzzzqx the"
).split()


def test_rows_answer_as_the_parser(wordnet_ok):
    t = T.table()
    rows = {r for w in WORDS for r in T.synset_rows(w)} | set(range(0, len(t), 211))
    for row in sorted(rows):
        syn = records.synset("a" if t.pos[row] == "s" else t.pos[row], t.offset[row])
        assert (syn.pos, syn.offset, syn.lemmas) == (t.pos[row], t.offset[row], t.lemmas[row])
        assert t.offensive(row) == records.offensive(syn)
        for symbol, _ in syn.pointers:
            assert t.related(row, symbol) == tuple(t.row(s.pos, s.offset) for s in records.related(syn, symbol)), (row, symbol)
        for lemma in syn.lemmas:
            assert t.antonyms(row, lemma) == records.lemma_related(syn, lemma, "!")
        if t.pos[row] == "n":
            assert set(t.ancestors(row)) == T.ancestor_walk(t, [row])
    index_words = sorted(w for w in R.wordnet()._lemma_pos_offset_map if w.isalpha())
    for word in [*index_words[::97], *WORDS]:  # the stored neighbour lists: the rule's, for the index words only
        assert t.neighbours(word) == (T.neighbours_in(t, word) if word in index_words else None), word
    for word in WORDS:
        assert [(t.pos[r], t.offset[r]) for r in T.synset_rows(word)] == [(s.pos, s.offset) for s in records.synsets(word)]
        assert [(t.pos[r], t.offset[r]) for r in T.synset_rows(word, "v")] == [(s.pos, s.offset) for s in records.synsets(word, "v")]
        # the IS-A walk from all of a word's senses is the union of each sense's (what the table keeps)
        nouns = T.synset_rows(word, "n")
        assert T.ancestor_walk(t, nouns) == {a for r in nouns for a in t.ancestors(r)}


def _arrays(path) -> dict:
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files if k != "key"}


def test_read_back_rebuilt_when_damaged_kept_in_memory_when_unwritable(wordnet_ok, monkeypatch):
    from robust_mrc.data import writers

    T.table()
    path, key = T.table_path(), T.table_key()
    stored = path.read_bytes()
    arrays = _arrays(path)
    builds = []

    def build():
        builds.append(1)
        return arrays

    monkeypatch.setattr(T, "build_arrays", build)
    try:
        T.clear()
        assert len(T.table()) == len(arrays["offset"]) and not builds  # read back, not built
        for damage in (stored[: len(stored) // 2], b"not a table", T._encode(arrays, "another key")):
            path.write_bytes(damage)
            T.clear()
            assert T.table().key == key and len(builds) == 1
            assert T._read(path, key) is not None  # stored again, whole
            builds.clear()
        path.unlink()

        def read_only(target, data):
            raise writers.OutputWriteError(target, OSError(30, "read-only file system"))

        monkeypatch.setattr(writers, "atomic_write_bytes", read_only)
        T.clear()
        assert len(T.table()) == len(arrays["offset"]) and builds and not path.exists()  # in memory only
    finally:
        path.write_bytes(stored)
        T.clear()


def test_the_key_follows_the_wordnet_files(wordnet_ok):
    key = T.table_key()
    data = R.prepare_nltk_wordnet() / "data.adv"
    st = data.stat()
    try:
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert T.table_key() != key
    finally:
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert T.table_key() == key


def _load_table(cache: str, barrier, results) -> None:
    os.environ["ROBUST_MRC_CACHE"] = cache
    R.clear_caches()
    barrier.wait()
    try:
        t = T.table()
        results.put(("ok", len(t), t.lemmas[T.synset_rows("dog")[0]]))
    except Exception as exc:  # reported to the test, which fails with it
        results.put(("error", repr(exc), ()))


@pytest.mark.slow
def test_built_once_by_processes_starting_together(tmp_path, wordnet_ok):
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    barrier, results = ctx.Barrier(3), ctx.Queue()
    procs = [ctx.Process(target=_load_table, args=(str(tmp_path), barrier, results)) for _ in range(3)]
    for p in procs:
        p.start()
    out = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert {r[0] for r in out} == {"ok"} and len({(r[1], r[2]) for r in out}) == 1, out
    assert [p.name for p in (tmp_path / "wordnet").glob("table-*.npz")] and not list((tmp_path / "wordnet").glob(".*.tmp"))


# ------------------------------------------------------------------ a vector file's vocabulary facts


def test_vocabulary_facts_read_back_give_the_same_neighbours(tmp_path, monkeypatch, wordnet_ok):
    """The facts of a vocabulary (offensive or not, WordNet forms, stems) are worked out once and
    read back by the next instance; the forms and stems they hand over are those the functions give."""
    from robust_mrc.attacks.resources import stemmer, vectors

    wordnet_module = importlib.import_module("robust_mrc.attacks.resources.wordnet")  # R.wordnet is the function
    rnd = random.Random(2)
    words = sorted({*WORDS, "bitches", "children", "happier", "teachers", "dogs"} - {"the"})
    path = tmp_path / "v.txt"
    path.write_text("".join(f"{w} {' '.join(f'{rnd.uniform(-1, 1):.4f}' for _ in range(8))}\n" for w in words))
    monkeypatch.setenv("ROBUST_MRC_CACHE", str(tmp_path / "cache"))
    answers = {w: vectors.VectorNeighbours(path).neighbours(w, 25) for w in words}
    assert not any(R.offensive_word(c) for near in answers.values() for c in near)
    assert any(R.offensive_word(w) for w in words)  # there was something to drop
    facts = list((tmp_path / "cache" / "vectors").glob("*.words-*.npz"))
    assert len(facts) == 1
    try:
        wordnet_module.forget_known()
        stemmer.forget()
        with monkeypatch.context() as m:
            m.setattr(vectors, "offensive_word", lambda w: pytest.fail("facts worked out again"))
            again = vectors.VectorNeighbours(path)
            assert {w: again.neighbours(w, 25) for w in words} == answers
        assert all(wordnet_module._KNOWN_FORMS[(w, p)] == tuple(R.wordnet()._morphy(w, p)) for w in words for p in "nvar")
        offensive = {w for w in words if any(map(T.table().offensive, T.synset_rows(w)))}
        assert {w for w in words if wordnet_module._KNOWN_OFFENSIVE[w]} == offensive
        assert all(stemmer._KNOWN[w] == stemmer._stemmer().stem(w) for w in words)
        facts[0].write_bytes(b"damaged")
        assert {w: vectors.VectorNeighbours(path).neighbours(w, 25) for w in words} == answers
        assert np.load(facts[0])["allowed"].shape == (len(words),)  # rebuilt
    finally:
        wordnet_module.forget_known()
        stemmer.forget()


# ------------------------------------------------------------------ the faster rules give the plain answers


def test_other_names_are_the_plain_rules(wordnet_ok):
    from robust_mrc.attacks import replacements as rp

    rnd = random.Random(3)
    for kind in ("female", "male", "given", "surname"):
        for low in [
            "tom",
            "thomas",
            "mary",
            "molly",
            "smith",
            "smithson",
            "dog",
            "ann",
            "annie",
            "grey",
            *rnd.sample(R.names_of_kind(kind), 20),
        ]:
            expected = tuple(
                n for n in R.names_of_kind(kind) if not rp.same_word(n, low) and not R.same_name(n, low) and not rp.spelling_variant(n, low)
            )
            assert rp._other_names(kind, low) == expected, (kind, low)


def _plain_sentence_spans(text: str) -> list[tuple[int, int]]:
    """sentence_spans written with character loops (its form before the regular expressions)."""
    from robust_mrc.attacks.editing import _SENT_END_RE

    spans, start = [], 0
    for m in _SENT_END_RE.finditer(text):
        end = m.end()
        before = re.search(r"(\w+)\.$", text[max(0, m.start() - 12) : m.start() + 1])
        if m.group().startswith(".") and before and (before.group(1).lower() in R.ABBREVIATIONS or len(before.group(1)) == 1):
            continue
        if text[start:end].strip():
            spans.append((start, end))
        start = end
        while start < len(text) and text[start].isspace():
            start += 1
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        out.append((s, e))
    return out


def test_sentence_spans_are_the_character_loops():
    from robust_mrc.attacks.editing import sentence_boundaries, sentence_spans

    rnd = random.Random(4)
    alphabet = list("ab .!?\n\t\u00a0\u2003\"')]\u201dMrs.J ") + ["\x1c", "\r", "\u2029"]
    texts = [ex.passage for ex in mc_examples()] + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30))) for _ in range(20_000)]
    for text in texts:
        expected = _plain_sentence_spans(text)
        assert sentence_spans(text) == expected, repr(text)
        assert sentence_boundaries(text) == (sorted({s for s, _ in expected} | {len(text.rstrip())}) if expected else [0])


def test_retrieval_ranks_by_stem_jaccard(wordnet_ok):
    """dg_retrieval's ranking (shared stems counted through the inverted index) is the stem Jaccard
    ranking of every pool question, ties by entry."""
    from robust_mrc.attacks.editing import stems
    from robust_mrc.attacks.mc import distractors
    from robust_mrc.attacks.pools import passage_key, pool_for
    from robust_mrc.data.synthetic import make_synthetic_mc
    from robust_mrc.data.text import jaccard, normalize

    examples = make_synthetic_mc(40, seed=1) + mc_examples()
    pool = pool_for(None, examples)
    for ex in examples:
        mine = stems(ex.question)
        qstems = [frozenset(stems(e.question)) for e in pool.entries]
        ranked = sorted((i for i, q in enumerate(qstems) if q & mine), key=lambda i: (-jaccard(mine, qstems[i]), i))
        beam, seen = [], {normalize(o) for o in ex.options}
        for i in ranked:
            e = pool.entries[i]
            if e.passage == passage_key(ex.passage) or e.source_id == ex.id or not normalize(e.option) or normalize(e.option) in seen:
                continue
            seen.add(normalize(e.option))
            beam.append(e.option)
            if len(beam) >= 50:
                break
        assert distractors.retrieve_distractors(ex, pool) == distractors.select_diverse(beam, 3), ex.id


def test_table_and_rules_need_no_pickle(wordnet_ok):
    """The stored table is plain arrays (read with allow_pickle=False) holding the key it is named by."""
    T.table()
    with np.load(io.BytesIO(T.table_path().read_bytes()), allow_pickle=False) as npz:
        assert npz["key"].tobytes().decode() == T.table_key() and npz["pos"].dtype == np.uint8
