"""The load runner: one DuckDB transaction per commit, data and checkpoints together.

:class:`CatalogWriter` is the only code that writes the catalog during an import. A
commit holds one or more :class:`Piece` s (consecutive batches of one or more sources);
their rows and every touched source's checkpoint land in the same transaction. Set work
(identity anti-joins, global usage dedup, session aggregate merges) is SQL in
``sql/queries``; Python only binds Arrow tables and parameters.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import duckdb
import orjson
import pyarrow as pa

from agentlake import sql
from agentlake.extract.jsonl import Reject
from agentlake.extract.sources import SourceFile

from .catalog import load_fts, run_script, split_script, statement_body, statements
from .checkpoint import Continuity, SourceStatus
from .transaction import transaction

if TYPE_CHECKING:
    from agentlake.transform.transform import CatalogRows

    from .terms import BatchTerms, BatchTokenizer


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What one commit changed for one source."""

    new_events: int
    new_usage: int
    rejects: int


@dataclass(frozen=True, slots=True)
class SourceState:
    """The checkpoint fields a commit writes for its source."""

    source: SourceFile
    committed_offset: int
    prefix_digest: str | None
    generation: int
    adapter_version: str
    policy_version: int
    continuity: Continuity
    status: SourceStatus = "ok"
    refusal: str | None = None
    adapter_state: str | None = None  # the adapter's memo at committed_offset, as JSON


@dataclass(frozen=True, slots=True)
class Piece:
    """One batch of one source, ready to commit: the checkpoint after it, its rejects and
    how many records it covered (its rows travel, merged with other pieces', beside it)."""

    state: SourceState
    rejects: list[Reject]
    records: int
    restart: bool = False


COMPACT_MIN_TAIL = 200_000  # postings; smaller tails are cheap to scan
# Text tokenized at once when the index is rebuilt: tokens of 16 MiB of text and their
# aggregation fit DuckDB's share of a 1 GiB ceiling with room to spare.
REINDEX_SLICE_BYTES = 16 << 20
# Indexes on the largest tables that a bulk import drops and builds again at its end
# (CatalogWriter.drop_bulk_indexes says why): name -> what it indexes.
BULK_INDEXES: dict[str, str] = {
    "events_by_id": "events (event_id)",  # sql/009_event_lookup.sql
    "search_docs_by_doc": "search_docs (doc)",  # sql/010_search_docs.sql
}


def _now() -> datetime:
    return datetime.now(UTC)


FaultPoint = Literal["commit", "after-data", "index"]
#: An import receipt's status: ``running`` until the run ends (``abandoned`` when a later
#: run finds it still running), then how it ended.
ImportStatus = Literal["running", "ok", "partial", "refused", "failed", "interrupted", "abandoned"]
FaultHook = Callable[[FaultPoint], None]


class CatalogWriter:
    """Writes one import run into an open read-write catalog connection.

    ``faults`` (tests only) is called at named points and may raise there: ``commit``
    before a batch's transaction begins, ``after-data`` once its rows are written but
    before it commits, ``index`` inside search-index maintenance (the postings of a batch,
    and compaction)."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, workspace: str, *, faults: FaultHook | None = None
    ) -> None:
        self.con = con
        self.workspace = workspace
        self._fault: FaultHook = faults or (lambda point: None)
        self._stemming: bool | None = None
        # Whether the workspace held sessions when this import began: only those can
        # have values of an earlier import to keep in `session_versions`.
        self._earlier_sessions = True
        con.execute(
            "CREATE TEMP TABLE IF NOT EXISTS forgotten_events (event_id VARCHAR);"
            "CREATE TEMP TABLE IF NOT EXISTS forgotten_calls (provider VARCHAR, call_key VARCHAR)"
        )

    @property
    def stemming(self) -> bool:
        """Whether index terms are Porter stems: when the fts extension (which provides
        stem()) loads, else the lowercase words themselves; search applies the same
        rule. Loaded on first use: a run with nothing new to index never loads it."""
        if self._stemming is None:
            self._stemming = load_fts(self.con)
        return self._stemming

    @property
    def _index_add(self) -> str:
        """The index-maintenance SQL that tokenizes the new events itself."""
        return search_index_script(stemming=self.stemming)

    # -- receipts -------------------------------------------------------------------
    def begin_import(self) -> int:
        """Open a receipt (status ``running``); receipts left ``running`` by a killed
        run become ``abandoned``. Returns the new import id."""
        con = self.con
        with transaction(con):
            con.execute(
                "UPDATE imports SET status = 'abandoned' WHERE workspace = ? AND status = 'running'",
                [self.workspace],
            )
            row = con.execute("SELECT coalesce(max(import_id), 0) + 1 FROM imports").fetchone()
            assert row is not None
            import_id = int(row[0])
            con.execute(
                "INSERT INTO imports (import_id, workspace, started_at, status) "
                "VALUES (?, ?, ?, 'running')",
                [import_id, self.workspace, _now()],
            )
            held = con.execute(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE workspace = ?)", [self.workspace]
            ).fetchone()
            self._earlier_sessions = bool(held and held[0])
        return import_id

    def _session_script(self, name: str) -> str:
        """The named script that changes sessions, without its statements that keep
        earlier imports' values in ``session_versions`` when the workspace held no
        session as this import began: every session then belongs to this import, and
        those statements, which look for older ones in the whole ``sessions`` table at
        each commit, could find none."""
        script = sql.query(name)
        return script if self._earlier_sessions else without_snapshots(script)

    def finish_import(
        self, import_id: int, status: ImportStatus, counts: dict[str, int], detail: dict[str, Any]
    ) -> None:
        """Close the receipt with its final counts."""
        columns = ", ".join(f"{name} = ${name}" for name in counts)
        self.con.execute(
            f"UPDATE imports SET ended_at = $ended, status = $status, detail = $detail, {columns} "
            "WHERE workspace = $workspace AND import_id = $import_id",
            {
                **counts,
                "ended": _now(),
                "status": status,
                "detail": orjson.dumps(detail).decode(),
                "workspace": self.workspace,
                "import_id": import_id,
            },
        )

    # -- commits --------------------------------------------------------------------
    def commit(
        self,
        import_id: int,
        pieces: list[Piece],
        data: list[CatalogRows],
        terms: Callable[[], BatchTerms | None] | None = None,
    ) -> dict[str, CommitResult]:
        """Append ``data`` (the rows of ``pieces``) and move each piece's source
        checkpoint, all in one transaction. Returns what was new, per source id.
        ``terms`` gives the postings of :func:`batch_events` ``(data)`` tokenized apart
        (see :mod:`agentlake.load.terms`); it is called only once everything else of
        the commit is written, so tokenizing elsewhere overlaps all of that. Without
        postings, or with postings stemmed by another rule, the commit tokenizes its
        new events itself."""
        self._fault("commit")
        con = self.con
        params = {"workspace": self.workspace, "import_id": import_id}
        tables: dict[str, pa.Table] = {
            "batch_rejects": _rejects_table(pieces),
            "batch_sources": _sources_table(pieces, self.workspace, import_id),
        }
        if data:
            events = batch_events(data)
            if terms is not None:
                events = events.append_column("batch_row", row_positions(events.num_rows))
            tables["batch_events"] = events
            tables["batch_usage"] = pa.concat_tables([r.usage for r in data])
            tables["batch_sessions"] = pa.concat_tables([r.sessions for r in data])
            retractions = pa.concat_tables([r.retractions for r in data])
            if retractions.num_rows:
                tables["batch_retractions"] = retractions
            amended = pa.concat_tables([r.amended for r in data])
            if amended.num_rows:
                tables["batch_amended"] = amended
            limits = pa.concat_tables([r.rate_limits for r in data])
            if limits.num_rows:
                tables["batch_rate_limits"] = limits
        new_events: dict[str, int] = {}
        new_usage: dict[str, int] = {}
        forgot = any(piece.restart for piece in pieces)
        count_events, count_calls, *let_go = statements(
            sql.inline(sql.query("count_new_rows"), {"forgot": forgot})
        )
        with transaction(con, **tables):
            for piece in pieces:
                if piece.restart:
                    self._forget_source(piece.state.source.source_id)
            if "batch_retractions" in tables:
                retract = _with_sessions(
                    sql.query("apply_retractions"), tables["batch_retractions"]
                )
                run_script(con, retract, params)
                run_script(con, sql.query("search_index_remove"), params)
                run_script(con, self._session_script("recompute_sessions"), params)
            if "batch_amended" in tables:
                run_script(con, sql.query("amend_events"), params)
                run_script(con, sql.query("search_index_remove"), params)
                run_script(con, self._index_add, params)
            if data:
                known = self._known_sessions(tables["batch_events"], tables["batch_sessions"])
                run_script(con, insert_new_events_script(known), params)
                new_events = _counts(con, count_events)
                upsert = self._session_script("upsert_sessions")
                run_script(con, upsert if known else without_conflict_clause(upsert), params)
                if tables["batch_usage"].num_rows:
                    run_script(con, self._session_script("merge_usage"), params)
                    new_usage = _counts(con, count_calls)
                if "batch_rate_limits" in tables:
                    limits_sql = _with_sessions(
                        sql.query("insert_rate_limits"), tables["batch_rate_limits"]
                    )
                    run_script(con, limits_sql, params)
            if forgot:
                con.execute(";\n".join(let_go))
            if tables["batch_rejects"].num_rows:
                con.execute(
                    'INSERT INTO rejects SELECT $workspace, source_id, "offset", length, reason, detail, '
                    "$import_id FROM batch_rejects",
                    params,
                )
            con.execute(sql.query("upsert_sources"))
            if data:
                # The index last: the postings made apart are waited for only once
                # everything else of the commit is written.
                # With every event of the batch new (always so when the catalog held
                # none of its sessions), the index reads the batch's rows themselves.
                every_event_new = sum(new_events.values()) == tables["batch_events"].num_rows
                self._index_new_events(terms, params, every_event_new=every_event_new)
                if not known:
                    con.execute("DROP VIEW new_events")
            self._fault("after-data")
        results: dict[str, CommitResult] = {}
        for piece in pieces:
            sid = piece.state.source.source_id
            prior = results.get(sid)
            results[sid] = CommitResult(
                new_events.get(sid, 0),
                new_usage.get(sid, 0),
                len(piece.rejects) + (prior.rejects if prior else 0),
            )
        return results

    def _index_new_events(
        self,
        terms: Callable[[], BatchTerms | None] | None,
        params: dict[str, Any],
        *,
        every_event_new: bool,
    ) -> None:
        """Index the commit's new events (``new_events``; ``every_event_new`` when they
        are the whole batch): with the postings ``terms`` gives, unless there are none
        or they were made by another stemming rule than the catalog's; else by
        tokenizing the new events here."""
        con = self.con
        made = terms() if terms is not None else None
        if made is not None and made.stemming != self.stemming:
            made = None
        if made is not None:
            con.register("batch_terms", made.postings)
            con.register("batch_vocabulary", made.vocabulary)
        try:
            index = search_index_script(
                stemming=self.stemming, tokenized=made is not None, every_event_new=every_event_new
            )
            run_script(con, index, params)
        finally:
            if made is not None:
                con.unregister("batch_terms")
                con.unregister("batch_vocabulary")
        self._fault("index")

    def _known_sessions(self, events: pa.Table, sessions: pa.Table) -> list[str]:
        """The ids of the sessions of a batch's ``events`` and ``sessions`` that the
        catalog holds (in any provider), sorted."""
        ids = _session_ids(events, sessions)
        if not ids:
            return []
        lookup = (
            "SELECT DISTINCT session_id FROM sessions "
            f"WHERE workspace = $workspace AND session_id IN ({sql.literals(ids)})"
        )
        rows = self.con.execute(lookup, {"workspace": self.workspace}).fetchall()
        return sorted(str(s) for (s,) in rows)

    def _forget_source(self, source_id: str) -> None:
        """Remove a source's rows before re-reading it whole (a new generation, or a
        changed document) and recompute the sessions it touched."""
        params = {"workspace": self.workspace, "source_id": source_id}
        run_script(self.con, sql.query("forget_source"), params)
        run_script(self.con, sql.query("search_index_remove"), {"workspace": self.workspace})
        run_script(self.con, sql.query("recompute_sessions"), {"workspace": self.workspace})

    # -- publish --------------------------------------------------------------------
    def rebuild_search_index(self) -> float:
        """Index every event of the workspace again from scratch (repairs an index that
        lost or kept rows it should not have); one transaction. Returns the seconds.

        The events are read and tokenized in slices of about :data:`REINDEX_SLICE_BYTES`
        of text, in event id order (the order one pass would number them in), by the
        import's tokenizer (:class:`agentlake.load.terms.BatchTokenizer`, held equal to
        the catalog's rule; a slice it cannot fit is tokenized by the rule itself). The
        rule in SQL over a million events had taken four times as long, and the memory
        of two gigabytes. Nothing of a slice is registered on the connection: an Arrow
        table registered in a transaction stays referenced until it commits, and so
        does a temporary table replaced in it, so the slices' postings are appended to
        a staging table (written into the file) and read through views."""
        from .terms import BatchTokenizer

        started = time.perf_counter()
        con = self.con
        row = con.execute("SELECT current_setting('memory_limit')").fetchone()
        tokenizer = BatchTokenizer(str(row[0]) if row else None)
        tokenized = search_index_script(
            stemming=self.stemming, tokenized=True, every_event_new=True
        )
        try:
            with transaction(con):
                self._clear_search_index()
                for number in range(self._reindex_slices()):
                    self._reindex_slice(number, tokenizer, tokenized)
                for name in ("new_events", "batch_terms", "batch_vocabulary"):
                    con.execute(f"DROP VIEW IF EXISTS {name}")
                for name in ("reindex_slices", "reindex_postings", "reindex_vocabulary"):
                    con.execute(f"DROP TABLE IF EXISTS {name}")
        finally:
            tokenizer.close()
        # The deleted postings' versions stay in memory until a checkpoint: sorting
        # the new ones beside a million events' worth of them ran out of the ceiling.
        con.execute("CHECKPOINT")
        self.compact_search_index(min_tail=0)
        return time.perf_counter() - started

    def _clear_search_index(self) -> None:
        """Delete the workspace's search index (in the caller's transaction)."""
        con, params = self.con, {"workspace": self.workspace}
        # Postings carry no workspace: their terms' numbers say it.
        con.execute(
            "DELETE FROM search_postings WHERE term_id IN "
            "(SELECT term_id FROM search_terms WHERE workspace = $workspace)",
            params,
        )
        for table in ("search_docs", "search_terms", "search_state"):
            con.execute(f"DELETE FROM {table} WHERE workspace = $workspace", params)

    def _reindex_slices(self) -> int:
        """Number the workspace's indexed events by slice of about
        :data:`REINDEX_SLICE_BYTES` of text (temp table ``reindex_slices``, in event id
        order), make the staging tables, and return how many slices there are."""
        con, params = self.con, {"workspace": self.workspace}
        # Sizes first: a window over the events' own columns holds their text.
        con.execute(
            "CREATE TEMP TABLE reindex_sizes AS "
            "SELECT event_id, least(strlen(coalesce(text, '')) "
            "+ strlen(coalesce(CAST(tool_input AS VARCHAR), '')), $cap) AS bytes FROM events "
            "WHERE workspace = $workspace AND (text IS NOT NULL OR tool_input IS NOT NULL)",
            {**params, "cap": sql.INDEXED_CHARS},
        )
        con.execute(
            "CREATE TEMP TABLE reindex_slices AS SELECT slice, event_id, "
            "row_number() OVER (PARTITION BY slice ORDER BY event_id) - 1 AS batch_row FROM "
            "(SELECT event_id, sum(bytes) OVER (ORDER BY event_id) // $slice AS slice "
            "FROM reindex_sizes)",
            {"slice": REINDEX_SLICE_BYTES},
        )
        con.execute("DROP TABLE reindex_sizes")
        con.execute(
            "CREATE TABLE reindex_postings "
            "(slice BIGINT, doc BIGINT, term_no INTEGER, tf INTEGER, dl INTEGER)"
        )
        con.execute("CREATE TABLE reindex_vocabulary (slice BIGINT, term_no INTEGER, term VARCHAR)")
        row = con.execute("SELECT max(slice) FROM reindex_slices").fetchone()
        return 0 if row is None or row[0] is None else int(row[0]) + 1

    def _reindex_slice(self, number: int, tokenizer: BatchTokenizer, tokenized: str) -> None:
        """Index slice ``number`` of :meth:`_reindex_slices` (``tokenized``: the index
        script that reads the tokenizer's postings)."""
        con, params = self.con, {"workspace": self.workspace}
        # The slice's events, each with its position in event id order (batch_row); read
        # without sorting their text (their order is restored on the Arrow side).
        con.execute(
            "CREATE OR REPLACE TEMP VIEW new_events AS "
            "SELECT e.event_id, e.text, e.tool_input, s.batch_row FROM events e "
            f"JOIN (SELECT event_id, batch_row FROM reindex_slices WHERE slice = {number}) s "
            f"USING (event_id) WHERE e.workspace = {sql.constant(self.workspace)}"
        )
        events = (
            con.execute(
                "SELECT batch_row, text, CAST(tool_input AS VARCHAR) AS tool_input FROM new_events"
            )
            .to_arrow_table()
            .sort_by("batch_row")
        )
        made = tokenizer.terms(events)
        del events
        if made is None or made.stemming != self.stemming:
            run_script(con, self._index_add, params)
            return
        # Every event of a slice has text (reindex_slices holds only those), and the
        # tokenized script reads no more of it than that: its events are read from the
        # slice alone, without joining the events' text again.
        con.execute(
            "CREATE OR REPLACE TEMP VIEW new_events AS "
            "SELECT event_id, batch_row, '' AS text, NULL AS tool_input "
            f"FROM reindex_slices WHERE slice = {number}"
        )
        for table, staging in (
            (made.postings, "reindex_postings"),
            (made.vocabulary, "reindex_vocabulary"),
        ):
            column = pa.repeat(pa.scalar(number, pa.int64()), table.num_rows)
            con.from_arrow(table.add_column(0, "slice", column)).insert_into(staging)
        con.execute(
            "CREATE OR REPLACE TEMP VIEW batch_terms AS SELECT doc, term_no, tf, dl "
            f"FROM reindex_postings WHERE slice = {number}"
        )
        con.execute(
            "CREATE OR REPLACE TEMP VIEW batch_vocabulary AS SELECT term_no, term "
            f"FROM reindex_vocabulary WHERE slice = {number}"
        )
        run_script(con, tokenized, params)

    # -- indexes dropped for a bulk import ----------------------------------------------
    def drop_bulk_indexes(self) -> None:
        """Drop the :data:`BULK_INDEXES` before a bulk import. DuckDB writes an index
        whole at every checkpoint, and an import checkpoints about once per commit: with
        a few hundred thousand events each of these indexes made every commit's
        checkpoint a quarter of a second slower, which adds up quadratically over a bulk
        import. Building them once at the end (:meth:`ensure_bulk_indexes`) costs about
        2 µs per row. Queries stay correct without them, only slower."""
        with transaction(self.con):
            for name in BULK_INDEXES:
                self.con.execute(f"DROP INDEX IF EXISTS {name}")

    def ensure_bulk_indexes(self) -> float | None:
        """Build those of the :data:`BULK_INDEXES` that are missing (dropped for a bulk
        import, possibly by a run that was killed). Returns the seconds taken, or
        ``None`` when all were there."""
        present = {
            str(name)
            for (name,) in self.con.execute(
                "SELECT index_name FROM duckdb_indexes() WHERE index_name IN "
                f"({sql.literals(BULK_INDEXES)})"
            ).fetchall()
        }
        missing = [name for name in BULK_INDEXES if name not in present]
        if not missing:
            return None
        started = time.perf_counter()
        with transaction(self.con):
            for name in missing:
                self.con.execute(f"CREATE INDEX {name} ON {BULK_INDEXES[name]}")
        return time.perf_counter() - started

    def compact_search_index(self, *, min_tail: int = COMPACT_MIN_TAIL) -> float | None:
        """Fold the unsorted tail of the search postings into their sorted part when it
        has grown past a quarter of them (and ``min_tail``): amortized O(1) per posting.
        Returns the seconds taken, or ``None`` when nothing needed doing."""
        row = self.con.execute(
            "SELECT sum(postings), sum(sorted_postings) FROM search_state"
        ).fetchone()
        postings, done = (int(row[0] or 0), int(row[1] or 0)) if row else (0, 0)
        tail = postings - done
        if tail <= 0 or tail < min_tail or (min_tail and tail * 4 < postings):
            return None
        started = time.perf_counter()
        with transaction(self.con):
            run_script(self.con, sql.query("search_index_compact"), {})
            self._fault("index")
        return time.perf_counter() - started


def batch_events(data: list[CatalogRows]) -> pa.Table:
    """The events of a commit's ``data``, in the order the commit inserts them."""
    return pa.concat_tables([r.events for r in data])


def row_positions(rows: int) -> pa.Array:
    """0 … ``rows`` - 1: the key by which a commit's events and their postings made
    before the commit (:mod:`agentlake.load.terms`) meet."""
    return pa.array(range(rows), pa.int64())


def tokenize_script(*, stemming: bool) -> str:
    """The SQL that turns ``index_input`` into ``new_postings`` and ``new_vocabulary``
    (sql/queries/search_tokenize.sql), stemming words with Porter when ``stemming``."""
    text = (
        sql.query("search_tokenize")
        .replace("/* indexed chars */", str(sql.INDEXED_CHARS))
        .replace("/* stop words */", sql.literals(sql.STOP_WORDS))
    )
    return text if stemming else text.replace("stem(token, 'porter')", "token")


def search_index_script(
    *, stemming: bool, tokenized: bool = False, every_event_new: bool = False
) -> str:
    """The index-maintenance SQL for the events in ``new_events``: tokenizing them
    itself, or (``tokenized``) taking their postings from ``batch_terms``, the batch's
    rows tokenized before the commit and keyed by ``batch_row``, and their terms from
    ``batch_vocabulary``: joined to the rows that turned out new, or read as they are
    when ``every_event_new`` (every event of the batch is in ``new_events``)."""
    text = sql.query("search_index_add")
    if tokenized and every_event_new:
        parts = {
            "new_docs columns": "batch_row",
            "new_postings": "",
            "posting key": "batch_row",
            "postings": "batch_terms",
            "vocabulary": "batch_vocabulary",
            "numbered postings": "(SELECT d.doc, t.term_no, t.tf, t.dl FROM batch_terms t "
            "JOIN new_docs d ON d.batch_row = t.doc)",
        }
    elif tokenized:
        parts = {
            "new_docs columns": "batch_row",
            "new_postings": "CREATE OR REPLACE TEMP TABLE new_postings AS\n"
            "SELECT d.doc, t.term_no, t.tf, t.dl FROM batch_terms t "
            "JOIN new_docs d ON t.doc = d.batch_row;",
            "vocabulary": "batch_vocabulary",
        }
    else:
        tokenize = (
            "CREATE OR REPLACE TEMP VIEW index_input AS "
            "SELECT doc, text, tool_input FROM new_docs;\n"
            + tokenize_script(stemming=stemming).rstrip().removesuffix(";")
        )
        parts = {"new_docs columns": "text, tool_input", "new_postings": tokenize + ";"}
    parts = {"posting key": "doc", "postings": "new_postings", "vocabulary": "new_vocabulary",
             "numbered postings": "new_postings", **parts}  # fmt: skip
    for name, part in parts.items():
        text = text.replace(f"/* {name} */", part)
    return text


def insert_new_events_script(known: list[str]) -> str:
    """sql/queries/insert_new_events.sql testing only the ``known`` sessions (those of
    the batch the catalog holds): a new event's session gets its row in ``sessions``
    in the commit that inserts the event, so a session without one has no event in the
    catalog.

    When the catalog holds none of them (the usual case in a bulk import) every event of
    the batch is new, and ``new_events`` is a view of ``batch_events`` instead of a copy
    of its rows, text and all (the commit drops the view once done with it: the other
    scripts that make ``new_events`` make a table)."""
    script = sql.query("insert_new_events")
    if known:
        return script.replace("/* sessions */", sql.literals(known))
    parts = split_script(script)
    assert "CREATE OR REPLACE TEMP TABLE new_events" in parts[0]
    return ";\n".join(
        [
            "DROP TABLE IF EXISTS new_events",
            "CREATE TEMP VIEW new_events AS SELECT * FROM batch_events",
            *parts[1:],
        ]
    )


def without_conflict_clause(script: str) -> str:
    """``script`` with its ``INSERT ... ON CONFLICT`` statements cut before the
    clause: for a batch none of whose sessions the catalog holds, every session row is
    new, and a plain insert skips the conflict handling, a large part of the upsert's
    cost. A row that did conflict would fail the commit on the primary key, never merge
    silently."""
    cut = []
    for statement in split_script(script):
        at = statement.find("\nON CONFLICT")
        cut.append(statement if at < 0 else statement[:at])
    return ";\n".join(cut)


def without_snapshots(script: str) -> str:
    """``script`` without its ``INSERT INTO session_versions`` statements."""
    return ";\n".join(
        statement
        for statement in split_script(script)
        if not statement_body(statement).lstrip().startswith("INSERT INTO session_versions")
    )


def _session_ids(*tables: pa.Table) -> list[str]:
    """The distinct session ids of ``tables``, sorted."""
    ids: set[str] = set()
    for table in tables:
        ids.update(table.column("session_id").unique().drop_null().to_pylist())
    return sorted(ids)


def _with_sessions(script: str, rows: pa.Table) -> str:
    """``script`` with ``/* sessions */`` replaced by the distinct session ids of
    ``rows`` as SQL constants."""
    return script.replace("/* sessions */", sql.literals(_session_ids(rows)))


def _counts(con: duckdb.DuckDBPyConnection, query: str) -> dict[str, int]:
    return {str(k): int(v) for k, v in con.execute(query).fetchall()}


def _rejects_table(pieces: list[Piece]) -> pa.Table:
    rejects = [(p.state.source.source_id, r) for p in pieces for r in p.rejects]
    return pa.table(
        {
            "source_id": pa.array([sid for sid, _ in rejects], pa.string()),
            "offset": pa.array([r.offset for _, r in rejects], pa.int64()),
            "length": pa.array([r.length for _, r in rejects], pa.int64()),
            "reason": pa.array([r.reason for _, r in rejects], pa.string()),
            "detail": pa.array([r.detail for _, r in rejects], pa.string()),
        }
    )


_SOURCES_SCHEMA = pa.schema(
    [
        ("source_id", pa.string()),
        ("workspace", pa.string()),
        ("provider", pa.string()),
        ("path", pa.string()),
        ("device", pa.uint64()),
        ("inode", pa.uint64()),
        ("size_bytes", pa.int64()),
        ("mtime_ns", pa.int64()),
        ("position_kind", pa.string()),
        ("committed_offset", pa.int64()),
        ("prefix_digest", pa.string()),
        ("generation", pa.int32()),
        ("adapter_version", pa.string()),
        ("policy_version", pa.int32()),
        ("continuity", pa.string()),
        ("status", pa.string()),
        ("refusal", pa.string()),
        ("records", pa.int64()),
        ("rejected", pa.int64()),
        ("last_import_id", pa.int64()),
        ("adapter_state", pa.string()),
    ]
)


def _sources_table(pieces: list[Piece], workspace: str, import_id: int) -> pa.Table:
    """One row per source: its last piece's checkpoint, records and rejects summed."""
    last: dict[str, Piece] = {}
    records: dict[str, int] = {}
    rejected: dict[str, int] = {}
    for p in pieces:
        sid = p.state.source.source_id
        last[sid] = p
        records[sid] = records.get(sid, 0) + p.records
        rejected[sid] = rejected.get(sid, 0) + len(p.rejects)
    rows: list[dict[str, Any]] = []
    for sid, p in last.items():
        st, src = p.state, p.state.source
        rows.append(
            {
                "source_id": sid,
                "workspace": workspace,
                "provider": src.provider,
                "path": str(src.path),
                "device": src.device,
                "inode": src.inode,
                "size_bytes": src.size,
                "mtime_ns": src.mtime_ns,
                "position_kind": src.position_kind,
                "committed_offset": st.committed_offset,
                "prefix_digest": st.prefix_digest,
                "generation": st.generation,
                "adapter_version": st.adapter_version,
                "policy_version": st.policy_version,
                "continuity": st.continuity,
                "status": st.status,
                "refusal": st.refusal,
                "records": records[sid],
                "rejected": rejected[sid],
                "last_import_id": import_id,
                "adapter_state": st.adapter_state,
            }
        )
    return pa.Table.from_pylist(rows, schema=_SOURCES_SCHEMA)
