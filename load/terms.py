"""The search index's tokenizer: an event's words, counted, as postings.

The rule: the event's text and its tool input (JSON text), both already redacted, cut
to their first :data:`~agentlake.load.load.INDEXED_BYTES` characters, lowercased and
split at every character other than a-z and 0-9; words of 2 to 40 characters that are
not :data:`~agentlake.load.load.STOP_WORDS`, stemmed with Porter when the fts extension
loads (else the words themselves; search applies the same rule to queries). ``tf``
counts a term in its event, ``dl`` all its kept words.

:func:`postings` applies it with polars, which finds and counts words in about half the
time DuckDB's ``regexp_split`` and ``unnest`` took, and stems only the distinct words of
a slice, with the fts extension's ``stem`` on a DuckDB connection. Lowercasing is where
the two engines differ: of all code points only U+0130 (``İ``) lowercases differently
where it matters (DuckDB: ``i``; polars, by Unicode's full mapping: ``i`` and a
combining dot, which splits the word), and it is mapped to DuckDB's ``i`` first, so the
postings are those DuckDB's ``lower`` and ``regexp_split_to_array`` give, which is how
catalogs were indexed before (tests hold the two equal, over every code point and random
text).

An import writes each commit in a loader thread while the reading thread reads and
transforms the next one (``agentlake.run``). Tokenizing needs nothing from the catalog,
so a :class:`BatchTokenizer` makes every row's postings on a thread of its own, keyed by
the row's position, while the loader writes the commit before and then the commit's new
events; the commit joins them to the rows that turned out new. Everything else the
catalog indexes (a commit without those postings, rewritten events, ``--reindex``) is
tokenized by the same function on the catalog's connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import duckdb
import polars as pl
import pyarrow as pa

from .catalog import load_fts
from .load import INDEXED_BYTES, STOP_WORDS

__all__ = ["BatchTerms", "BatchTokenizer", "postings"]

# Text tokenized at once: a slice's words and their counts stay a few tens of MiB, and a
# commit's rows cannot make more at once whatever their size.
SLICE_CHARS: Final = 4 << 20
# Code points whose DuckDB lowercase (a-z, 0-9 kept) differs from polars': DuckDB's.
_LOWER_AS_DUCKDB: Final = {"\u0130": "i"}
_SCHEMA: Final = pa.schema(
    [("doc", pa.int64()), ("term", pa.string()), ("tf", pa.int32()), ("dl", pa.int32())]
)


@dataclass(frozen=True, slots=True)
class BatchTerms:
    """Postings (doc = row position in the commit's events, term, tf, dl) of one commit,
    and whether their terms are Porter stems (the catalog uses them only when its own
    rule is the same)."""

    postings: pa.Table
    stemming: bool


def _words(rows: pl.LazyFrame) -> pl.LazyFrame:
    """(doc, token, tf): the kept words of each row of ``rows`` (doc, text, tool_input)
    and how often each occurs in it."""
    # Each part is cut before they are joined (and the join cut again, which gives the
    # same text): a 4 MiB tool output is never copied whole.
    parts = [pl.col(name).str.slice(0, INDEXED_BYTES) for name in ("text", "tool_input")]
    text = pl.concat_str(parts, separator=" ", ignore_nulls=True).str.slice(0, INDEXED_BYTES)
    for upper, lower in _LOWER_AS_DUCKDB.items():
        text = text.str.replace_all(upper, lower, literal=True)
    token = pl.col("token")
    return (
        rows.select("doc", text.str.to_lowercase().str.extract_all("[a-z0-9]+").alias("token"))
        .explode("token")
        .filter(token.str.len_bytes().is_between(2, 40) & ~token.is_in(STOP_WORDS))
        .group_by("doc", "token")
        .len("tf")
    )


def postings(events: pa.Table, stem: duckdb.DuckDBPyConnection | None) -> pa.Table:
    """The postings (doc, term, tf, dl) of ``events`` (text, tool_input), ``doc`` being
    the row's position; words are stemmed by ``stem``'s ``stem()`` (a connection with
    the fts extension loaded), or kept as they are when it is ``None``. Rows are
    tokenized in slices of about :data:`SLICE_CHARS` characters."""
    frame = pl.from_arrow(events.select(["text", "tool_input"]))
    assert isinstance(frame, pl.DataFrame)
    size = pl.min_horizontal(
        pl.col("text").str.len_chars().fill_null(0)
        + pl.col("tool_input").str.len_chars().fill_null(0),
        INDEXED_BYTES,
    )
    frame = frame.with_row_index("doc")
    # Consecutive rows holding about SLICE_CHARS of indexed text, as zero-copy slices of
    # the frame (copying them out would copy every row's text, however long).
    lengths = frame.select((size.cum_sum() // SLICE_CHARS).unique_counts()).to_series()
    parts: list[pl.DataFrame] = []
    start = 0
    for length in lengths:
        words = _words(frame.slice(start, length).lazy()).collect()
        start += length
        if stem is not None and words.height:
            stem.register("words", words.select(pl.col("token").unique()).to_arrow())
            try:
                stems = stem.execute("SELECT token, stem(token, 'porter') AS term FROM words").pl()
            finally:
                stem.unregister("words")
            words = words.join(stems, on="token").group_by("doc", "term").agg(pl.col("tf").sum())
        else:
            words = words.rename({"token": "term"})
        parts.append(words.with_columns(pl.col("tf").sum().over("doc").alias("dl")))
    if not parts:
        return _SCHEMA.empty_table()
    return (
        pl.concat(parts)
        .select(pl.col("doc").cast(pl.Int64), "term", pl.col("tf", "dl").cast(pl.Int32))
        .to_arrow()
        .cast(_SCHEMA)
    )


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
            made = postings(events, self._con if self._stemming else None)
        except duckdb.OutOfMemoryException:
            return None
        return BatchTerms(made, self._stemming)

    def close(self) -> None:
        """Close the private connection."""
        self._con.close()
