"""The search index's one tokenizer: how an event's text becomes terms, and how a
query's words do.

The rule: an event's text and its tool input (JSON text), both already redacted, cut
to their first :data:`agentlake.sql.INDEXED_CHARS` characters, split into runs of ASCII
letters and digits (U+0130 ``İ`` and U+212A, the Kelvin sign, read as ``i`` and ``k``:
the only code points whose lowercase is such a letter), lowercased; words of 2 to 40
characters that are not stop words, stemmed with Porter by the fts extension's
``stem()`` when it loads (else the words themselves). ``tf`` counts a term in its event,
``dl`` all its kept words. :func:`postings` applies it to events with polars (the
index's side); :func:`query_words` and :func:`term_sql` apply it to a query's text (the
search side). No other code splits or stems text for the index.

:func:`postings` finds the words as written and lowercases only the distinct ones,
stems only the distinct words of a slice, and counts the postings over integers.
polars and pyarrow load with the first events to tokenize: a search, which only needs
:func:`query_words`, never loads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import duckdb

from agentlake import sql

from .catalog import load_fts

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

# Text tokenized at once: a slice's words and their counts stay a few tens of MiB, and
# the events given cannot make more at once however long they are.
SLICE_CHARS: Final = 4 << 20
# The code points beyond ASCII whose lowercase is a letter or digit the rule keeps.
_LOWER_TO_ASCII: Final = {"\u0130": "i", "\u212a": "k"}
WORD_PATTERN: Final = "[A-Za-z0-9]+"
_WORD: Final = re.compile(WORD_PATTERN)
_FOLD: Final = str.maketrans(_LOWER_TO_ASCII)

__all__ = ["BatchTerms", "BatchTokenizer", "postings", "query_words", "term_sql"]


def query_words(text: str) -> list[str]:
    """The words of ``text`` as the index finds them, lowercased, in order (of any
    length, stop words included: a query word the index cannot hold matches nothing)."""
    return [word.lower() for word in _WORD.findall(text.translate(_FOLD))]


def term_sql(word: str, *, stemming: bool) -> str:
    """The SQL expression of the term of ``word`` (an SQL expression of a lowercased
    word): its Porter stem when ``stemming``, else the word itself."""
    return f"stem({word}, 'porter')" if stemming else word


@dataclass(frozen=True, slots=True)
class BatchTerms:
    """Postings (doc = row position in the events tokenized, term_no, tf, dl), their
    terms (term_no, term), and whether they are Porter stems."""

    postings: pa.Table
    vocabulary: pa.Table
    stemming: bool


def _words(rows: pl.LazyFrame, *, fold: bool) -> pl.LazyFrame:
    """(doc, token): the words of 2 to 40 characters of each row of ``rows`` (doc, text,
    tool_input) as written, one row per occurrence, in row order; stop words are still
    among them (they are told apart once lowercased, on the distinct words). ``fold``:
    the rows hold a code point of :data:`_LOWER_TO_ASCII`, which is mapped first."""
    import polars as pl

    # Each part is cut before they are joined (and the join cut again, which gives the
    # same text): a 4 MiB tool output is never copied whole.
    cap = sql.INDEXED_CHARS
    parts = [pl.col(name).str.slice(0, cap) for name in ("text", "tool_input")]
    text = pl.concat_str(parts, separator=" ", ignore_nulls=True).str.slice(0, cap)
    for upper, lower in _LOWER_TO_ASCII.items() if fold else ():
        text = text.str.replace_all(upper, lower, literal=True)
    # Lowercasing a slice's text had cost a fourth as much as finding its words; its
    # distinct words are a few thousand.
    token = pl.col("token")
    return (
        rows.select("doc", text.str.extract_all(WORD_PATTERN).alias("token"))
        .explode("token")
        .filter(token.str.len_bytes().is_between(2, 40))
    )


def postings(events: pa.Table, stem: duckdb.DuckDBPyConnection | None) -> tuple[pa.Table, pa.Table]:
    """The postings (doc, term_no, tf, dl) of ``events`` (text, tool_input), ``doc``
    being the row's position, and their vocabulary (term_no, term), numbered in the
    terms' order; words are stemmed by ``stem``'s ``stem()`` (a connection with the fts
    extension loaded), or kept as they are when it is ``None``. Rows are tokenized in
    slices of about :data:`SLICE_CHARS` characters.

    Strings are hashed once a slice: its words are dictionary-encoded, its distinct
    words lowercased and stemmed, and each occurrence's term (its number among the
    slice's terms) counted over integers, as runs of the sorted key (doc, term) packed
    in one 64-bit number; the slices' terms are then encoded together and numbered once
    for all the events."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc

    postings_schema = pa.schema(
        [("doc", pa.int64()), ("term_no", pa.int32()), ("tf", pa.int32()), ("dl", pa.int32())]
    )
    vocabulary_schema = pa.schema([("term_no", pa.int32()), ("term", pa.string())])
    # Consecutive rows holding about SLICE_CHARS of indexed text, each taken into polars
    # on its own (the events' text is never copied whole) and counted before the next:
    # a slice keeps only its terms and its postings over their numbers, (doc, term, tf),
    # since a row's words all fall in one slice.
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
        fold = _holds_any(part, _LOWER_TO_ASCII)
        words = _words(part.with_row_index("doc", offset=start).lazy(), fold=fold).collect()
        start += length
        if words.height:
            # polars' strings as Arrow views, without a copy
            tokens = words.get_column("token").to_arrow(compat_level=pl.CompatLevel.newest())
            encoded = pc.dictionary_encode(tokens)
            terms, term_of_word = _terms(encoded.dictionary, stem)
            if len(terms):
                occurrences = term_of_word.gather(pl.Series(encoded.indices))
                slices.append((terms, _counted(words.get_column("doc"), occurrences, len(terms))))
    if not slices:
        return postings_schema.empty_table(), vocabulary_schema.empty_table()
    # Every distinct term of the events once: the slices' terms encoded together give
    # one dictionary and, slice by slice, each term's number in it; a term's number is
    # its rank in that dictionary's order, from one.
    unified = pc.dictionary_encode(pa.chunked_array([terms for terms, _ in slices]))
    dictionary = pl.Series("term", unified.chunk(0).dictionary, pl.String)
    term_no = dictionary.rank("ordinal").cast(pl.Int32)
    made = []
    for (_, counted), numbers in zip(slices, unified.chunks, strict=True):
        numbered = term_no.gather(pl.Series(numbers.indices))  # slice term -> term_no
        terms_of = numbered.gather(counted.get_column("term")).alias("term_no")
        made.append(counted.select("doc", terms_of, "tf"))
    postings = pl.concat(made).with_columns(pl.col("tf").sum().over("doc").alias("dl"))
    vocabulary = pl.DataFrame({"term_no": term_no, "term": dictionary}).sort("term_no")
    return postings.to_arrow().cast(postings_schema), vocabulary.to_arrow().cast(vocabulary_schema)


def _terms(words: pa.Array, stem: duckdb.DuckDBPyConnection | None) -> tuple[pa.Array, pl.Series]:
    """The terms of the distinct ``words`` (as written) and each word's number among
    them (from 0; null for a stop word): the Porter stems (by ``stem``, or the words
    themselves when it is ``None``) of the words lowercased. Only the distinct
    lowercased words that are not stop words are stemmed."""
    import polars as pl
    import pyarrow.compute as pc

    spelled = pl.DataFrame({"lower": pl.Series(words, dtype=pl.String).str.to_lowercase()})
    lowered = spelled.unique("lower").filter(~pl.col("lower").is_in(sql.STOP_WORDS))
    stems = _stems(lowered.get_column("lower").to_arrow(), stem)
    encoded = pc.dictionary_encode(stems)
    lowered = lowered.with_columns(pl.Series("term", encoded.indices, pl.UInt32))
    term = spelled.join(lowered, on="lower", how="left", maintain_order="left")
    return encoded.dictionary, term.get_column("term")


def _counted(doc: pl.Series, term: pl.Series, width: int) -> pl.DataFrame:
    """(doc, term, tf): how many times each term (its number, below ``width``) occurs
    in each doc, from one row per occurrence (``doc``, ``term``; a null term is not
    counted), counted as runs of the sorted key (doc, term) packed in one 64-bit
    integer."""
    import polars as pl

    key = (doc.cast(pl.UInt64) * width + term.cast(pl.UInt64)).drop_nulls()
    return (
        key.sort()
        .rle()
        .struct.unnest()
        .select(
            (pl.col("value") // width).cast(pl.Int64).alias("doc"),
            (pl.col("value") % width).cast(pl.UInt32).alias("term"),
            pl.col("len").cast(pl.Int32).alias("tf"),
        )
    )


def _holds_any(rows: pl.DataFrame, points: Iterable[str]) -> bool:
    """Whether a text or tool input of ``rows`` holds one of the code points ``points``:
    a look costs a tenth of mapping them, which copies every row (a fifth of the time
    the words take to find)."""
    import polars as pl

    found = "[" + "".join(points) + "]"
    return bool(
        rows.select(
            pl.any_horizontal(
                pl.col(name).str.contains(found) for name in ("text", "tool_input")
            ).any()
        ).item()
    )


def _chars(column: pa.ChunkedArray) -> pl.Series:
    """The length in characters of each value of a string ``column`` (0 for null)."""
    import polars as pl
    import pyarrow.compute as pc

    return pl.Series(pc.utf8_length(column)).fill_null(0).cast(pl.Int64)


def _stems(words: pa.Array, stem: duckdb.DuckDBPyConnection | None) -> pa.Array:
    """The Porter stem of each of ``words`` by ``stem``'s ``stem()``, in order (a
    projection keeps its input's order in DuckDB), or the words themselves when
    ``stem`` is ``None``."""
    if stem is None:
        return words
    import pyarrow as pa

    stem.register("words", pa.table({"token": words}))
    try:
        term = term_sql("token", stemming=True)
        stems = stem.execute(f"SELECT {term} AS term FROM words").to_arrow_table()
    finally:
        stem.unregister("words")
    return stems.column("term").combine_chunks()


class BatchTokenizer:
    """Tokenizes events (:func:`postings`) with a private in-memory DuckDB connection
    for stemming, on one DuckDB thread. ``memory_limit`` bounds that connection like
    the catalog's; events whose words do not fit give ``None`` (:meth:`terms`), and the
    caller tokenizes fewer at a time."""

    def __init__(self, memory_limit: str | None = None) -> None:
        self._con = duckdb.connect()
        self._con.execute("SET threads = 1")
        self._con.execute("SET temp_directory = ''")  # never spill into the working directory
        if memory_limit:
            self._con.execute("SET memory_limit = ?", [memory_limit])
        self._stemming = load_fts(self._con)

    def terms(self, events: pa.Table) -> BatchTerms | None:
        """The postings of ``events`` (text, tool_input), or ``None`` when they do not
        fit the memory limit."""
        try:
            made, vocabulary = postings(events, self._con if self._stemming else None)
        except duckdb.OutOfMemoryException:
            return None
        return BatchTerms(made, vocabulary, self._stemming)

    def close(self) -> None:
        """Close the private connection."""
        self._con.close()
