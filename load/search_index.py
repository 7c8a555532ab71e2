"""The search index over events (DESIGN §1), written by the publish step
(:mod:`agentlake.load.publish`) after the load commits.

:class:`SearchIndex` is the index's one interface (add, remove, query);
:class:`DuckDBSearchIndex` keeps it in the catalog's own tables (``search_docs``,
``search_terms``, ``search_postings``, ``search_state``), tokenized by
:mod:`agentlake.load.terms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol

import duckdb

from agentlake import sql
from agentlake.errors import CatalogUnusable

from .catalog import load_fts, run_script
from .lake import is_lake
from .terms import BatchTerms, BatchTokenizer, term_sql

if TYPE_CHECKING:
    # Loaded by what indexes events (they come as Arrow tables); a search never does.
    import pyarrow as pa

# The tables a slice's rows are staged in: an Arrow table registered in a transaction
# stays referenced until it commits, so slices are appended through relations into
# tables (written into the file) and read through views, then dropped with the slice.
_STAGING: Final = {
    "search_staging_events": "(slice BIGINT, event_id VARCHAR, batch_row BIGINT)",
    "search_staging_terms": "(slice BIGINT, doc BIGINT, term_no INTEGER, tf INTEGER, dl INTEGER)",
    "search_staging_vocabulary": "(slice BIGINT, term_no INTEGER, term VARCHAR)",
}
_VIEWS: Final = {
    "index_events": "SELECT event_id, batch_row FROM search_staging_events",
    "index_terms": "SELECT doc, term_no, tf, dl FROM search_staging_terms",
    "index_vocabulary": "SELECT term_no, term FROM search_staging_vocabulary",
}


class QueryTerm(NamedTuple):
    """An indexed term: its spelling, document frequency and number in the postings."""

    term: str
    df: int
    term_id: int


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """The term of each query word, and those terms the index holds."""

    terms: dict[str, str]
    known: dict[str, QueryTerm]


@dataclass(frozen=True, slots=True)
class Prepared:
    """Events tokenized, ready to index: the parts in the order they are added (more
    than one when their words did not fit the tokenizer's memory at once), and how many
    events were given."""

    parts: tuple[tuple[pa.Table, BatchTerms], ...]
    given: int


class SearchIndex(Protocol):
    """What search and the publish step need of a full-text index over events."""

    def add(self, events: pa.Table) -> int:
        """Index ``events`` (event_id, text, tool_input), none of which the index holds;
        returns how many were given."""
        ...

    def remove(self, event_ids: Sequence[str]) -> None:
        """Drop every posting of the events ``event_ids`` (those it holds)."""
        ...

    def query(self, words: Sequence[str]) -> QueryTerms:
        """The term of each of ``words`` (lowercased query words, agentlake.load.terms'
        rule) and the ones the index holds, with their document frequencies."""
        ...


class DuckDBSearchIndex:
    """The :class:`SearchIndex` kept in the catalog's tables, for one workspace, in the
    caller's transactions. ``memory_limit`` bounds the tokenizer's connection; events
    whose words do not fit are tokenized half at a time. ``stemming``: whether terms are
    Porter stems, when the caller knows (else found on first use)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        workspace: str,
        *,
        memory_limit: str | None = None,
        stemming: bool | None = None,
    ) -> None:
        self.con, self.workspace = con, workspace
        self._memory_limit = memory_limit
        self._tokenizer: BatchTokenizer | None = None
        self._stemming = stemming
        self._slice = 0
        self._staged = False
        # A lake's tables are Parquet files and catalog entries: its staging is TEMP.
        self._temp = "TEMP " if is_lake(con) else ""

    @property
    def stemming(self) -> bool:
        """Whether terms are Porter stems (the fts extension loads on the catalog's
        connection); loaded on first use."""
        if self._stemming is None:
            self._stemming = load_fts(self.con)
        return self._stemming

    def add(self, events: pa.Table) -> int:
        """See :meth:`SearchIndex.add`."""
        return self.add_prepared(self.prepare(events))

    def prepare(self, events: pa.Table) -> Prepared:
        """Tokenize ``events`` for :meth:`add_prepared`, touching only the tokenizer's
        own connection (so it may run in another thread than the catalog's writes, once
        :attr:`stemming` is known)."""
        import pyarrow.compute as pc

        with_text = pc.or_(pc.is_valid(events["text"]), pc.is_valid(events["tool_input"]))
        rows = events.filter(with_text)
        parts: list[tuple[pa.Table, BatchTerms]] = []
        if rows.num_rows:
            self._tokenize(rows, parts)
        return Prepared(tuple(parts), int(events.num_rows))

    def add_prepared(self, prepared: Prepared) -> int:
        """Index what :meth:`prepare` made, in the caller's transaction; returns how many
        events were given."""
        for events, made in prepared.parts:
            self._write(events, made)
        return prepared.given

    def _tokenize(self, events: pa.Table, parts: list[tuple[pa.Table, BatchTerms]]) -> None:
        if self._tokenizer is None:
            self._tokenizer = BatchTokenizer(self._memory_limit)
        made = self._tokenizer.terms(events.select(["text", "tool_input"]))
        if made is None:
            if events.num_rows == 1:
                raise duckdb.OutOfMemoryException(
                    "one event's words do not fit the memory limit; raise --memory-limit"
                )
            # Halves in event id order: the events are numbered as one add would.
            events = events.sort_by("event_id")
            half = events.num_rows // 2
            self._tokenize(events.slice(0, half), parts)
            self._tokenize(events.slice(half), parts)
            return
        if made.stemming != self.stemming:
            raise CatalogUnusable(
                "the fts extension loads on one connection but not another; "
                "reinstall agentlake so that stemming is the same everywhere"
            )
        parts.append((events, made))

    def _write(self, events: pa.Table, made: BatchTerms) -> None:
        import pyarrow as pa

        con = self.con
        self._stage()
        self._slice += 1
        number = pa.scalar(self._slice, pa.int64())
        ids = pa.table(
            {
                "slice": pa.repeat(number, events.num_rows),
                "event_id": events["event_id"],
                "batch_row": pa.array(range(events.num_rows), pa.int64()),
            }
        )
        con.from_arrow(ids).insert_into("search_staging_events")
        for table, staging in (
            (made.postings, "search_staging_terms"),
            (made.vocabulary, "search_staging_vocabulary"),
        ):
            column = pa.repeat(number, table.num_rows)
            con.from_arrow(table.add_column(0, "slice", column)).insert_into(staging)
        for view, select in _VIEWS.items():
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW {view} AS {select} WHERE slice = {self._slice}"
            )
        run_script(con, sql.query("search_index_add"), {"workspace": self.workspace})

    def _stage(self) -> None:
        if not self._staged:
            for table, columns in _STAGING.items():
                self.con.execute(f"CREATE {self._temp}TABLE {table} {columns}")
            self._staged = True

    def rolled_back(self) -> None:
        """The caller's transaction rolled back (a lake commit that conflicted), and
        what it staged with it."""
        self._staged = False

    def unstage(self) -> None:
        """Drop the staging tables of the slices added in the caller's transaction
        (before it commits)."""
        if self._staged:
            for view in _VIEWS:
                self.con.execute(f"DROP VIEW IF EXISTS {view}")
            for table in _STAGING:
                self.con.execute(f"DROP TABLE IF EXISTS {table}")
            self._staged = False

    def remove(self, event_ids: Sequence[str]) -> None:
        """See :meth:`SearchIndex.remove`."""
        import pyarrow as pa

        con = self.con
        con.execute("CREATE OR REPLACE TEMP TABLE gone_events (event_id VARCHAR)")
        con.from_arrow(pa.table({"event_id": pa.array(event_ids, pa.string())})).insert_into(
            "gone_events"
        )
        run_script(con, sql.query("search_index_remove"), {"workspace": self.workspace})

    def query(self, words: Sequence[str]) -> QueryTerms:
        """See :meth:`SearchIndex.query`. One statement of constants: DuckDB folds the
        terms before planning, so the lookup is a list of constants that prunes the
        scan."""
        if not words:
            return QueryTerms({}, {})
        terms = ", ".join(term_sql(sql.constant(w), stemming=self.stemming) for w in words)
        statement = sql.inline(
            f"SELECT [{terms}], (SELECT list((term, df, term_id)) FROM search_terms "
            f"WHERE workspace = $ws AND term IN ({terms}))",
            {"ws": self.workspace},
        )
        row = self.con.execute(statement).fetchone()
        assert row is not None
        spelled, held = row
        known = (QueryTerm(*term) for term in (held or []))
        return QueryTerms(dict(zip(words, spelled, strict=True)), {t.term: t for t in known})

    def clear(self) -> None:
        """Delete the workspace's whole index (in the caller's transaction)."""
        con, params = self.con, {"workspace": self.workspace}
        # Postings carry no workspace: their terms' numbers say it.
        con.execute(
            "DELETE FROM search_postings WHERE term_id IN "
            "(SELECT term_id FROM search_terms WHERE workspace = $workspace)",
            params,
        )
        for table in ("search_docs", "search_terms", "search_state"):
            con.execute(f"DELETE FROM {table} WHERE workspace = $workspace", params)

    def close(self) -> None:
        """Drop what :meth:`add` staged, if the caller has not (:meth:`unstage`), and
        close the tokenizer's connection."""
        self.unstage()
        if self._tokenizer is not None:
            self._tokenizer.close()
            self._tokenizer = None
