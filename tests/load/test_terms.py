"""The search index's one tokenizer (agentlake.load.terms): the postings of events
keyed by row position, the same rule as a query's words, sliced alike, and events whose
words do not fit the memory limit tokenized a part at a time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlake import sql
from agentlake.extract.extract import ExtractLimits
from agentlake.load import terms as terms_module
from agentlake.load.catalog import load_fts
from agentlake.load.terms import BatchTerms, BatchTokenizer, query_words, term_sql
from agentlake.read.search import parse_query
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


def _reference_rule(events: pa.Table, *, stemming: bool) -> list[tuple[int, str, int, int]]:
    """The rule written out plainly, row by row, from the words a query would find in
    the row's text: the postings the index must make (doc = row position)."""
    rows: list[tuple[int, list[str]]] = []
    for doc, (text, tool_input) in enumerate(
        zip(events["text"].to_pylist(), events["tool_input"].to_pylist(), strict=True)
    ):
        body = " ".join(part for part in (text, tool_input) if part is not None)
        words = query_words(body[: sql.INDEXED_CHARS])
        rows.append((doc, [w for w in words if 2 <= len(w) <= 40 and w not in STOP_WORDS]))
    distinct = sorted({w for _, words in rows for w in words})
    stems = dict(zip(distinct, distinct, strict=True))
    if stemming and distinct:
        con = duckdb.connect()
        try:
            assert load_fts(con)
            listed = ", ".join(term_sql(sql.constant(w), stemming=True) for w in distinct)
            row = con.execute(f"SELECT [{listed}]").fetchone()
            assert row is not None
            stems = dict(zip(distinct, row[0], strict=True))
        finally:
            con.close()
    out = []
    for doc, words in rows:
        counts = Counter(stems[w] for w in words)
        out += [(doc, term, tf, len(words)) for term, tf in counts.items()]
    return sorted(out)


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


def test_there_is_no_other_tokenizer() -> None:
    """The catalog keeps no tokenizer of its own in SQL: the index and the query side
    use this module's rule alone."""
    with pytest.raises(FileNotFoundError):
        sql.query("search_tokenize")


def test_a_query_finds_its_words_by_the_index_rule() -> None:
    """A query's words are the words the index finds in the same text, lowercased:
    U+0130 and the Kelvin sign read as ``i`` and ``k``, every other character splits."""
    assert query_words("İSTANBUL \u212aelvin naïve x_y2K") == [
        "istanbul",
        "kelvin",
        "na",
        "ve",
        "x",
        "y2k",
    ]
    parsed = parse_query('İSTANBUL -\u212aelvin "naïve y2K"')
    assert parsed.words == ["istanbul", "na", "ve", "y2k"]
    assert parsed.excluded == ("kelvin",)
    events = _texts(["İSTANBUL \u212aelvin naïve y2K"])
    assert [t for _, t, _, _ in _polars_rule(events, stemming=False)] == sorted(
        ["istanbul", "kelvin", "na", "ve", "y2k"]
    )


@pytest.mark.parametrize("stemming", _rules())
def test_every_code_point_lowercases_and_splits_as_a_query_does(stemming: bool) -> None:
    """Each code point, between ASCII letters and after capitals: the polars side and
    the query side join and split words alike (U+0130 and U+212A are mapped)."""
    points = [c for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    texts = [
        " ".join(f"AB{chr(c)}CD x{chr(c)}Y {chr(c)}{chr(c)}" for c in points[i : i + 2048])
        for i in range(0, len(points), 2048)
    ]
    events = _texts(texts)
    assert _polars_rule(events, stemming=stemming) == _reference_rule(events, stemming=stemming)


_ALPHABET = st.sampled_from(
    [*'abcXYZ019 _-./"\n\t{}:', "\u0130", "\u212a", "ß", "Σ", "ς", "é", "\u0301", "日本", "🙂"]
)
_TEXT = st.one_of(st.none(), st.lists(_ALPHABET, max_size=60).map("".join))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=12), st.sampled_from(_rules()))
def test_random_text_gives_the_rules_postings(
    rows: list[tuple[str | None, str | None]], stemming: bool
) -> None:
    events = _texts([t for t, _ in rows], [i for _, i in rows])
    assert _polars_rule(events, stemming=stemming) == _reference_rule(events, stemming=stemming)


@pytest.mark.parametrize("stemming", _rules())
def test_rows_are_tokenized_in_slices_alike(
    stemming: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are tokenized a slice of text at a time (their words never all at once);
    slicing changes no posting, also with rows longer than a slice or past 256 KiB."""
    whole = _polars_rule(EVENTS, stemming=stemming)
    assert whole == _reference_rule(EVENTS, stemming=stemming)
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


def test_events_whose_stemming_runs_out_of_memory_give_none(
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


def test_events_that_do_not_fit_are_indexed_a_part_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every tokenizing of more than a few events runs out of memory (``terms`` gives
    ``None``): the index tokenizes them half at a time, and holds the postings of a
    clean import."""
    home = tmp_path / "home"
    generate_claude_home(home)
    import_with(home, tmp_path / "clean.duckdb", ExtractLimits(batch_lines=200))
    original = BatchTokenizer.terms
    refused: list[int] = []

    def small(self: BatchTokenizer, events: pa.Table) -> BatchTerms | None:
        if events.num_rows > 8:
            refused.append(events.num_rows)
            return None
        return original(self, events)

    monkeypatch.setattr(BatchTokenizer, "terms", small)
    import_with(home, tmp_path / "halves.duckdb", ExtractLimits(batch_lines=200))
    assert refused
    tables = ("search_postings", "search_terms", "search_state")
    assert snapshot(tmp_path / "halves.duckdb", tables) == snapshot(
        tmp_path / "clean.duckdb", tables
    )
