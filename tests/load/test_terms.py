"""Tokenizing a commit's events before the commit: the postings a catalog would make,
keyed by row position; too big a commit, or another stemming rule, is left to the
catalog."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from agentlake.demo import generate_claude_home
from agentlake.extract.extract import ExtractLimits
from agentlake.load.catalog import open_for_write, run_script
from agentlake.load.load import CatalogWriter, tokenize_script
from agentlake.load.terms import BatchTerms, BatchTokenizer
from tests.pipeline.helpers import import_with, snapshot

EVENTS = pa.table(
    {
        "text": pa.array(
            [
                "The cache loader retries; the CACHE is warm.",
                None,
                "Café naïve: tokens split at non-ASCII, 42 x y2k",
                "",
                "caching cached caches " + "word " * 70_000,  # past the indexed 256 KiB
            ],
            pa.string(),
        ),
        "tool_input": pa.array(
            ['{"command": "pytest -q"}', '{"file_path": "/src/cache.py"}', None, None, None],
            pa.string(),
        ),
    }
)


def _postings(terms: BatchTerms) -> list[tuple[int, str, int, int]]:
    """The postings with their terms spelled out, in (doc, term) order."""
    vocabulary = terms.vocabulary.to_pydict()
    spelled = dict(zip(vocabulary["term_no"], vocabulary["term"], strict=True))
    assert len(set(spelled.values())) == len(spelled)  # one number per term
    rows = [(r["doc"], spelled[r["term_no"]], r["tf"], r["dl"]) for r in terms.postings.to_pylist()]
    return sorted(rows)


def _tokenized(events: pa.Table) -> BatchTerms:
    tokenizer = BatchTokenizer()
    try:
        terms = tokenizer.terms(events)
    finally:
        tokenizer.close()
    assert terms is not None
    return terms


def test_postings_are_keyed_by_row_and_count_terms_and_lengths() -> None:
    terms = _tokenized(EVENTS)
    got = _postings(terms)
    assert {doc for doc, *_ in got} == {0, 1, 2, 4}  # row 3 has no word to index

    def stem(word: str) -> str:
        stems = {"cache": "cach", "is": "i", "retries": "retri", "tokens": "token"}
        return stems.get(word, word) if terms.stemming else word

    # "the" is a stop word and "q" too short; both cases of "cache" count, and so do the
    # tool input's words; dl counts every kept word.
    words = ["cache", "command", "is", "loader", "pytest", "retries", "warm"]
    assert [(t, tf, dl) for doc, t, tf, dl in got if doc == 0] == sorted(
        (stem(w), 2 if w == "cache" else 1, 8) for w in words
    )
    # non-ASCII letters split words; one-character words are dropped
    words = ["caf", "na", "ve", "tokens", "split", "at", "non", "ascii", "42", "y2k"]
    assert [t for doc, t, *_ in got if doc == 2] == sorted(stem(w) for w in words)
    long_doc = [(t, tf, dl) for doc, t, tf, dl in got if doc == 4]
    word = [tf for t, tf, _ in long_doc if t == "word"]
    assert word and word[0] < 70_000  # cut at 256 KiB of text
    assert sum(tf for _, tf, _ in long_doc) == long_doc[0][2]


def test_too_big_a_commit_is_left_to_the_catalog() -> None:
    tokenizer = BatchTokenizer("16MiB")
    words = " ".join(f"w{i}" for i in range(200_000))
    huge = pa.table({"text": pa.array([words] * 8), "tool_input": pa.nulls(8, pa.string())})
    try:
        assert tokenizer.terms(huge) is None
        assert tokenizer.terms(EVENTS.slice(0, 1)) is not None  # the connection goes on
    finally:
        tokenizer.close()


def test_the_catalog_makes_the_same_postings(tmp_path: Path) -> None:
    """The catalog connection, given the same rows, tokenizes them alike (the rule the
    commit relies on when it joins pre-made postings instead)."""
    terms = _tokenized(EVENTS)
    with open_for_write(tmp_path / "c.duckdb") as con:
        writer = CatalogWriter(con, "default")
        assert writer.stemming == terms.stemming
        rows = EVENTS.append_column("doc", pa.array(range(EVENTS.num_rows), pa.int64()))
        con.register("index_input", rows)
        run_script(con, tokenize_script(stemming=writer.stemming), {})
        catalog = con.execute("SELECT * FROM new_postings").to_arrow_table()
        vocabulary = con.execute("SELECT * FROM new_vocabulary").to_arrow_table()
    assert _postings(BatchTerms(catalog, vocabulary, writer.stemming)) == _postings(terms)


def test_postings_of_another_stemming_rule_are_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Postings made by another rule than the catalog's (the extension loaded on one
    connection only) are ignored: the commit tokenizes its events itself."""
    home = tmp_path / "home"
    generate_claude_home(home)
    import_with(home, tmp_path / "clean.duckdb", ExtractLimits(batch_lines=200))
    original = BatchTokenizer.terms

    def other_rule(self: BatchTokenizer, events: pa.Table) -> BatchTerms | None:
        made = original(self, events)
        assert made is not None
        words = made.vocabulary.num_rows
        junk = made.vocabulary.set_column(1, "term", pa.array([f"junk{i}" for i in range(words)]))
        return BatchTerms(made.postings, junk, not made.stemming)

    monkeypatch.setattr(BatchTokenizer, "terms", other_rule)
    import_with(home, tmp_path / "other.duckdb", ExtractLimits(batch_lines=200))
    tables = ("search_postings", "search_terms")
    assert snapshot(tmp_path / "other.duckdb", tables) == snapshot(
        tmp_path / "clean.duckdb", tables
    )


def test_commits_whose_postings_did_not_fit_are_tokenized_by_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every other commit's tokenizing runs out of memory (``terms`` gives ``None``):
    those commits tokenize in the catalog, and the index is the one of a clean import."""
    home = tmp_path / "home"
    generate_claude_home(home)
    import_with(home, tmp_path / "clean.duckdb", ExtractLimits(batch_lines=200))
    original = BatchTokenizer.terms
    calls: list[bool] = []

    def every_other(self: BatchTokenizer, events: pa.Table) -> BatchTerms | None:
        calls.append(len(calls) % 2 == 0)
        return original(self, events) if calls[-1] else None

    monkeypatch.setattr(BatchTokenizer, "terms", every_other)
    import_with(home, tmp_path / "half.duckdb", ExtractLimits(batch_lines=200))
    assert len(calls) > 2
    tables = ("search_postings", "search_terms", "search_docs")
    assert snapshot(tmp_path / "half.duckdb", tables) == snapshot(tmp_path / "clean.duckdb", tables)
