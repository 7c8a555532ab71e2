"""Tokenizing a commit's events before the commit: the postings a catalog would make
(the same rule, applied with polars), keyed by row position; a commit whose stemming
runs out of memory, or postings of another stemming rule, are left to the catalog."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlake import sql
from agentlake.extract.extract import ExtractLimits
from agentlake.load import terms as terms_module
from agentlake.load.catalog import load_fts, open_for_write, run_script
from agentlake.load.load import CatalogWriter, tokenize_script
from agentlake.load.terms import BatchTerms, BatchTokenizer
from agentlake.sql import STOP_WORDS
from fixtures.synth import generate_claude_home
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


def _catalog_rule(events: pa.Table, *, stemming: bool) -> list[tuple[int, str, int, int]]:
    """The postings the catalog's SQL makes of ``events`` (doc = row position)."""
    con = duckdb.connect()
    try:
        if stemming:
            assert load_fts(con)
        rows = events.append_column("doc", pa.array(range(events.num_rows), pa.int64()))
        con.register("index_input", rows)
        run_script(con, tokenize_script(stemming=stemming), {})
        made = con.execute("SELECT * FROM new_postings").to_arrow_table()
        vocabulary = con.execute("SELECT * FROM new_vocabulary").to_arrow_table()
    finally:
        con.close()
    return _postings(BatchTerms(made, vocabulary, stemming))


def _polars_rule(events: pa.Table, *, stemming: bool) -> list[tuple[int, str, int, int]]:
    con = duckdb.connect()
    try:
        if stemming:
            assert load_fts(con)
        made, vocabulary = terms_module.postings(events, con if stemming else None)
    finally:
        con.close()
    return _postings(BatchTerms(made, vocabulary, stemming))


def _rules() -> list[bool]:
    """The stemming rules this machine can apply (Porter needs the fts extension)."""
    con = duckdb.connect()
    try:
        return [False, True] if load_fts(con) else [False]
    finally:
        con.close()


def _texts(
    values: Sequence[str | None], tool_inputs: Sequence[str | None] | None = None
) -> pa.Table:
    return pa.table(
        {
            "text": pa.array(values, pa.string()),
            "tool_input": pa.array(tool_inputs or [None] * len(values), pa.string()),
        }
    )


def test_the_stop_words_and_the_cut_are_the_catalogs() -> None:
    script = tokenize_script(stemming=True)
    listed = re.search(r"token NOT IN \(([^)]*)\)", script)
    assert listed is not None
    assert tuple(re.findall(r"'(\w+)'", listed.group(1))) == STOP_WORDS
    assert f"{sql.INDEXED_CHARS})" in script
    assert "/*" not in script.split("CREATE", 1)[1]  # every placeholder filled


@pytest.mark.parametrize("stemming", _rules())
def test_every_code_point_lowercases_and_splits_as_in_the_catalog(stemming: bool) -> None:
    """Each code point, between ASCII letters and after capitals: a code point whose
    lowercase is a letter or digit in one engine but not the other would join or split
    words differently (U+0130 does, and is mapped)."""
    points = [c for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    texts = [
        " ".join(f"AB{chr(c)}CD x{chr(c)}Y {chr(c)}{chr(c)}" for c in points[i : i + 2048])
        for i in range(0, len(points), 2048)
    ]
    events = _texts(texts)
    assert _polars_rule(events, stemming=stemming) == _catalog_rule(events, stemming=stemming)


_ALPHABET = st.sampled_from(
    [*'abcXYZ019 _-./"\n\t{}:', "\u0130", "\u212a", "ß", "Σ", "ς", "é", "\u0301", "日本", "🙂"]
)
_TEXT = st.one_of(st.none(), st.lists(_ALPHABET, max_size=60).map("".join))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=12), st.sampled_from(_rules()))
def test_random_text_gives_the_catalogs_postings(
    rows: list[tuple[str | None, str | None]], stemming: bool
) -> None:
    events = _texts([t for t, _ in rows], [i for _, i in rows])
    assert _polars_rule(events, stemming=stemming) == _catalog_rule(events, stemming=stemming)


@pytest.mark.parametrize("stemming", _rules())
def test_rows_are_tokenized_in_slices_alike(
    stemming: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are tokenized a slice of text at a time (a commit's words never all at once);
    slicing changes no posting, also with rows longer than a slice or past 256 KiB."""
    whole = _polars_rule(EVENTS, stemming=stemming)
    assert whole == _catalog_rule(EVENTS, stemming=stemming)
    monkeypatch.setattr(terms_module, "SLICE_CHARS", 20)
    assert _polars_rule(EVENTS, stemming=stemming) == whole


def test_terms_are_numbered_in_their_order_from_one() -> None:
    made, vocabulary = terms_module.postings(EVENTS, None)
    terms = vocabulary.column("term").to_pylist()
    assert terms == sorted(terms) and len(set(terms)) == len(terms)
    assert vocabulary.column("term_no").to_pylist() == list(range(1, len(terms) + 1))
    assert set(made.column("term_no").to_pylist()) == set(range(1, len(terms) + 1))
    empty, none = terms_module.postings(_texts([None, "", "a"]), None)
    assert empty.num_rows == none.num_rows == 0


def test_a_commit_whose_stemming_runs_out_of_memory_is_left_to_the_catalog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokenizer = BatchTokenizer("16MiB")
    original = terms_module.postings

    def out_of_memory(
        events: pa.Table, stem: duckdb.DuckDBPyConnection | None
    ) -> tuple[pa.Table, pa.Table]:
        if events.num_rows > 1:
            raise duckdb.OutOfMemoryException("could not allocate")
        return original(events, stem)

    monkeypatch.setattr(terms_module, "postings", out_of_memory)
    try:
        assert tokenizer.terms(EVENTS) is None
        assert tokenizer.terms(EVENTS.slice(0, 1)) is not None  # the tokenizer goes on
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


def test_a_batch_of_new_events_is_indexed_as_the_general_path_indexes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit whose events are all new takes its postings straight from the rows
    tokenized apart; the general path, which first takes the new events' postings into
    a table of their own, gives the same index, numbers included, also across commits
    that continue sessions."""
    home = tmp_path / "home"
    generate_claude_home(home)
    import_with(home, tmp_path / "new.duckdb", ExtractLimits(batch_lines=200))
    original = CatalogWriter._index_new_events
    paths: list[bool] = []

    def general(
        self: CatalogWriter,
        terms: Callable[[], BatchTerms | None] | None,
        params: dict[str, Any],
        *,
        every_event_new: bool,
    ) -> None:
        paths.append(every_event_new)
        original(self, terms, params, every_event_new=False)

    monkeypatch.setattr(CatalogWriter, "_index_new_events", general)
    import_with(home, tmp_path / "general.duckdb", ExtractLimits(batch_lines=200))
    assert len(paths) > 2 and all(paths)  # every batch of this import is new
    tables = ("search_postings", "search_terms", "search_docs", "search_state")
    assert snapshot(tmp_path / "general.duckdb", tables) == snapshot(
        tmp_path / "new.duckdb", tables
    )
