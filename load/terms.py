"""Tokenizing a commit's events for the search index apart from the catalog, on a
thread of its own.

An import writes each commit in a loader thread while the reading thread reads and
transforms the next one (``agentlake.run``). Tokenizing was the largest of a commit's
statements, and it needs nothing from the catalog: a :class:`BatchTokenizer` runs the
very same SQL (``sql/queries/search_tokenize.sql``) on an in-memory DuckDB connection of
its own, over every row of the commit, keyed by the row's position, while the loader
writes the commit before and then the commit's new events. The commit then joins those
postings to the rows that turned out new. Same functions, same extension, same text: the
same postings as tokenizing in the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from .catalog import load_fts, run_script
from .load import row_positions, tokenize_script

__all__ = ["BatchTerms", "BatchTokenizer"]


@dataclass(frozen=True, slots=True)
class BatchTerms:
    """Postings (doc = row position in the commit's events, term_no, tf, dl) of one
    commit, its terms (term_no, term), and whether they are Porter stems (the catalog
    uses them only when its own rule is the same)."""

    postings: pa.Table
    vocabulary: pa.Table
    stemming: bool


class BatchTokenizer:
    """Tokenizes commits on a private in-memory connection with one DuckDB thread: it
    shares the two cores with reading and loading, and two threads made a benchmark
    import slower. ``memory_limit`` bounds it like the catalog connection; a commit that
    does not fit is left to the catalog (:meth:`terms` returns ``None``)."""

    def __init__(self, memory_limit: str | None = None) -> None:
        self._con = duckdb.connect()
        self._con.execute("SET threads = 1")
        self._con.execute("SET temp_directory = ''")  # never spill into the working directory
        if memory_limit:
            self._con.execute("SET memory_limit = ?", [memory_limit])
        self._stemming = load_fts(self._con)
        self._script = tokenize_script(stemming=self._stemming)

    def terms(self, events: pa.Table) -> BatchTerms | None:
        """The postings of ``events`` (a commit's ``batch_events``), or ``None`` when
        they do not fit the memory limit."""
        rows = pa.table(
            {
                "doc": row_positions(events.num_rows),
                "text": events.column("text"),
                "tool_input": events.column("tool_input"),
            }
        )
        self._con.register("index_input", rows)
        try:
            run_script(self._con, self._script, {})
            postings = self._con.execute("SELECT * FROM new_postings").to_arrow_table()
            vocabulary = self._con.execute("SELECT * FROM new_vocabulary").to_arrow_table()
        except duckdb.OutOfMemoryException:
            return None
        finally:
            self._con.unregister("index_input")
            for table in ("new_postings", "new_vocabulary", "index_tokens", "index_words"):
                self._con.execute(f"DROP TABLE IF EXISTS {table}")
        return BatchTerms(postings, vocabulary, self._stemming)

    def close(self) -> None:
        """Close the private connection."""
        self._con.close()
