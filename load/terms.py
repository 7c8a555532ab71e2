"""Tokenizing a commit's events for the search index apart from the catalog, on a
thread of its own.

An import writes each commit in a loader thread while the reading thread reads and
transforms the next one (``agentlake.run``). Tokenizing was the largest of a commit's
statements, and it needs nothing from the catalog: a :class:`BatchTokenizer` applies
the catalog's rule (``sql/queries/search_tokenize.sql``) to every row of the commit,
keyed by the row's position, while the loader writes the commit before and then the
commit's new events. The commit then joins those postings to the rows that turned out
new.

:func:`postings` applies the rule with polars, which finds and counts the words in
about half the time DuckDB's ``regexp_split_to_array`` and ``unnest`` take, stems
only the distinct words of a commit, with the fts extension's ``stem`` on a DuckDB
connection (the catalog's function), and counts the postings over integers. Lowercasing is where the two engines differ: of all
code points only U+0130 (``İ``) lowercases differently where it matters (DuckDB: ``i``;
polars, by Unicode's full mapping: ``i`` and a combining dot, which splits the word),
and it is mapped to DuckDB's ``i`` first. Tests hold the two equal, posting for
posting, over every code point and random text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from agentlake import sql

from .catalog import load_fts

# Text tokenized at once: a slice's words and their counts stay a few tens of MiB, and a
# commit's rows cannot make more at once however long they are.
SLICE_CHARS: Final = 4 << 20
# Code points whose DuckDB lowercase (a-z, 0-9 kept) differs from polars': DuckDB's.
_LOWER_AS_DUCKDB: Final = {"\u0130": "i"}
_POSTINGS: Final = pa.schema(
    [("doc", pa.int64()), ("term_no", pa.int32()), ("tf", pa.int32()), ("dl", pa.int32())]
)
_VOCABULARY: Final = pa.schema([("term_no", pa.int32()), ("term", pa.string())])

__all__ = ["BatchTerms", "BatchTokenizer"]


@dataclass(frozen=True, slots=True)
class BatchTerms:
    """Postings (doc = row position in the commit's events, term_no, tf, dl) of one
    commit, its terms (term_no, term), and whether they are Porter stems (the catalog
    uses them only when its own rule is the same)."""

    postings: pa.Table
    vocabulary: pa.Table
    stemming: bool


def _words(rows: pl.LazyFrame) -> pl.LazyFrame:
    """(doc, token): the kept words of each row of ``rows`` (doc, text, tool_input), one
    row per occurrence, in row order."""
    # Each part is cut before they are joined (and the join cut again, which gives the
    # same text): a 4 MiB tool output is never copied whole.
    cap = sql.INDEXED_CHARS
    parts = [pl.col(name).str.slice(0, cap) for name in ("text", "tool_input")]
    text = pl.concat_str(parts, separator=" ", ignore_nulls=True).str.slice(0, cap)
    for upper, lower in _LOWER_AS_DUCKDB.items():
        text = text.str.replace_all(upper, lower, literal=True)
    token = pl.col("token")
    return (
        rows.select("doc", text.str.to_lowercase().str.extract_all("[a-z0-9]+").alias("token"))
        .explode("token")
        .filter(token.str.len_bytes().is_between(2, 40) & ~token.is_in(sql.STOP_WORDS))
    )


def postings(events: pa.Table, stem: duckdb.DuckDBPyConnection | None) -> tuple[pa.Table, pa.Table]:
    """The postings (doc, term_no, tf, dl) of ``events`` (text, tool_input), ``doc``
    being the row's position, and their vocabulary (term_no, term), numbered in the
    terms' order; words are stemmed by ``stem``'s ``stem()`` (a connection with the fts
    extension loaded), or kept as they are when it is ``None``. Rows are tokenized in
    slices of about :data:`SLICE_CHARS` characters.

    Strings are hashed once a slice: its words are dictionary-encoded and counted over
    integers, as runs of the sorted key (doc, word number) packed in one 64-bit number;
    the slices' dictionaries are encoded together, each distinct word of the commit is
    stemmed and numbered once, and a slice's counts are summed per (doc, term number). Grouping the pairs by their strings,
    joining them to their stems and terms, and ordering them took 2.4 times as long
    (200,000 events of the benchmark home in commits of 10,000, one thread: 3.7-4.1 s
    against 1.6 s)."""
    # Consecutive rows holding about SLICE_CHARS of indexed text, each taken into polars
    # on its own (a commit's text is never copied whole) and counted before the next:
    # a slice keeps only its dictionary and its postings over the dictionary's numbers,
    # (doc, word, tf), since a row's words all fall in one slice. Holding every word of
    # a commit until all were found had taken about five times its text: the
    # tokenizer's share of an import's peak memory.
    rows = events.select(["text", "tool_input"])
    size = (_chars(rows.column("text")) + _chars(rows.column("tool_input"))).clip(
        upper_bound=sql.INDEXED_CHARS
    )
    lengths = (size.cum_sum() // SLICE_CHARS).unique_counts()
    slices: list[tuple[pa.Array, pl.DataFrame]] = []
    start = 0
    for length in lengths:
        part = pl.from_arrow(rows.slice(start, length))
        assert isinstance(part, pl.DataFrame)
        words = _words(part.with_row_index("doc", offset=start).lazy()).collect()
        start += length
        if words.height:
            encoded = pc.dictionary_encode(words.get_column("token").to_arrow())
            slices.append((encoded.dictionary, _counted(words.get_column("doc"), encoded)))
    if not slices:
        return _POSTINGS.empty_table(), _VOCABULARY.empty_table()
    # Every distinct word of the commit once: the slices' dictionaries encoded together
    # give one dictionary and, slice by slice, each word's number in it. Each distinct
    # word's stem, and its term number: the stem's rank among the terms.
    unified = pc.dictionary_encode(pa.chunked_array([d for d, _ in slices]))
    terms = pl.DataFrame({"term": _stems(unified.chunk(0).dictionary, stem)})
    terms = terms.with_columns(pl.col("term").rank("dense").alias("term_no"))
    vocabulary = terms.unique("term_no").sort("term_no").select("term_no", "term")
    span = vocabulary.height + 1
    term_no = terms.get_column("term_no").cast(pl.UInt64)
    made = []
    for (_, counted), words in zip(slices, unified.chunks, strict=True):
        # each word of the slice's dictionary -> its term number; words of one stem in
        # one row then add up to one posting
        slice_terms = term_no.gather(pl.Series(words.indices))
        key = counted.get_column("doc").cast(pl.UInt64) * span + slice_terms.gather(
            counted.get_column("word")
        )
        made.append(
            pl.DataFrame({"key": key, "tf": counted.get_column("tf")})
            .sort("key")
            .group_by("key", maintain_order=True)
            .agg(pl.col("tf").sum())
        )
    postings = pl.concat(made).select(
        (pl.col("key") // span).cast(pl.Int64).alias("doc"),
        (pl.col("key") % span).cast(pl.Int32).alias("term_no"),
        pl.col("tf").cast(pl.Int32),
    )
    postings = postings.with_columns(pl.col("tf").sum().over("doc").alias("dl"))
    return postings.to_arrow().cast(_POSTINGS), vocabulary.to_arrow().cast(_VOCABULARY)


def _counted(doc: pl.Series, encoded: pa.DictionaryArray) -> pl.DataFrame:
    """(doc, word, tf): how many times each word (its number in ``encoded``'s
    dictionary) occurs in each doc, from one row per occurrence (``doc``, ``encoded``),
    counted as runs of the sorted key (doc, word) packed in one 64-bit integer."""
    width = len(encoded.dictionary)
    key = doc.cast(pl.UInt64) * width + pl.Series(encoded.indices).cast(pl.UInt64)
    return (
        key.sort()
        .rle()
        .struct.unnest()
        .select(
            (pl.col("value") // width).alias("doc"),
            (pl.col("value") % width).cast(pl.UInt32).alias("word"),
            pl.col("len").alias("tf"),
        )
    )


def _chars(column: pa.ChunkedArray) -> pl.Series:
    """The length in characters of each value of a string ``column`` (0 for null)."""
    return pl.Series(pc.utf8_length(column)).fill_null(0).cast(pl.Int64)


def _stems(words: pa.Array, stem: duckdb.DuckDBPyConnection | None) -> pa.Array:
    """The Porter stem of each of ``words`` by ``stem``'s ``stem()``, in order (a
    projection keeps its input's order in DuckDB), or the words themselves when
    ``stem`` is ``None``."""
    if stem is None:
        return words
    stem.register("words", pa.table({"token": words}))
    try:
        stems = stem.execute("SELECT stem(token, 'porter') AS term FROM words").to_arrow_table()
    finally:
        stem.unregister("words")
    return stems.column("term").combine_chunks()


class BatchTokenizer:
    """Tokenizes commits (:func:`postings`) with a private in-memory DuckDB connection
    for stemming, on one DuckDB thread: it shares the two cores with reading and
    loading. ``memory_limit`` bounds that connection like the catalog's; a commit whose
    words do not fit is left to the catalog (:meth:`terms` returns ``None``)."""

    def __init__(self, memory_limit: str | None = None) -> None:
        self._con = duckdb.connect()
        self._con.execute("SET threads = 1")
        self._con.execute("SET temp_directory = ''")  # never spill into the working directory
        if memory_limit:
            self._con.execute("SET memory_limit = ?", [memory_limit])
        self._stemming = load_fts(self._con)

    def terms(self, events: pa.Table) -> BatchTerms | None:
        """The postings of ``events`` (a commit's ``batch_events``), or ``None`` when
        they do not fit the memory limit."""
        try:
            made, vocabulary = postings(events, self._con if self._stemming else None)
        except duckdb.OutOfMemoryException:
            return None
        return BatchTerms(made, vocabulary, self._stemming)

    def close(self) -> None:
        """Close the private connection."""
        self._con.close()
