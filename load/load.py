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

from .catalog import run_script, split_script, statement_body, statements
from .checkpoint import Continuity, SourceStatus
from .lake import is_lake
from .lease import committed
from .transaction import transaction
from .withhold import withheld_counts, withhold

if TYPE_CHECKING:
    from agentlake.transform.transform import CatalogRows


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What one commit changed for one source."""

    new_events: int
    new_usage: int
    rejects: int
    # Rows read but not written because their session was purged (purge_revocations).
    withheld: int = 0


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


# Indexes on the largest tables that a bulk import drops and builds again at its end
# (CatalogWriter.drop_bulk_indexes says why): name -> what it indexes.
BULK_INDEXES: dict[str, str] = {
    "events_by_id": "events (event_id)",  # sql/009_event_lookup.sql
    "search_docs_by_doc": "search_docs (doc)",  # sql/010_search_docs.sql
}


def _now() -> datetime:
    return datetime.now(UTC)


FaultPoint = Literal["commit", "after-data", "index", "embed"]
#: An import receipt's status: ``running`` until the run ends (``abandoned`` when a later
#: run finds it still running), then how it ended.
ImportStatus = Literal["running", "ok", "partial", "refused", "failed", "interrupted", "abandoned"]
FaultHook = Callable[[FaultPoint], None]


class CatalogWriter:
    """Writes one import run into an open read-write catalog connection.

    ``faults`` (tests only) is called at named points and may raise there: ``commit``
    before a batch's transaction begins, ``after-data`` once its rows are written but
    before it commits; ``index`` is the publish step's (agentlake.load.publish).

    Rows of a purged session (``purge_revocations``) are withheld: never written, counted
    per source (:class:`CommitResult`), and the sources they came from added to the
    revocation, as is the revocation of a new session whose parent is purged. With
    ``allow_purged`` nothing is withheld and the revocation of every session a commit
    writes is dropped, with an audit row (``release``) naming ``actor``.

    A commit never touches the search index: it records the events it withdraws
    (``search_withdrawn``) for the publish step, which runs after the commits."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        workspace: str,
        *,
        faults: FaultHook | None = None,
        allow_purged: bool = False,
        actor: str = "",
    ) -> None:
        self.con = con
        self.workspace = workspace
        self.allow_purged = allow_purged
        self.actor = actor  # who runs the import: named in the audit rows it writes
        self.lake = is_lake(con)  # a lake has no indexes, and its commits may conflict
        # (provider, session id) -> the operation id of its purge: the revoked sessions,
        # read as the import begins (only a commit of this import, under the writer
        # lock, adds to them meanwhile).
        self._revoked: dict[tuple[str, str], str] = {}
        self._hidden = False  # whether the workspace has hidden sessions (begin_import)
        self._fault: FaultHook = faults or (lambda point: None)
        # Whether the workspace held sessions when this import began: only those can
        # have values of an earlier import to keep in `session_versions`.
        self._earlier_sessions = True
        con.execute(
            "CREATE TEMP TABLE IF NOT EXISTS forgotten_events (event_id VARCHAR);"
            "CREATE TEMP TABLE IF NOT EXISTS forgotten_calls (provider VARCHAR, call_key VARCHAR)"
        )

    # -- receipts -------------------------------------------------------------------
    def begin_import(self) -> int:
        """Open a receipt (status ``running``); receipts left ``running`` by a killed
        run become ``abandoned``. Returns the new import id."""
        con = self.con

        def body() -> int:
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
            # Lifecycle changes take the writer lock: constant for the whole import.
            hidden = con.execute(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE workspace = ? "
                "AND lifecycle <> 'active')",
                [self.workspace],
            ).fetchone()
            self._hidden = bool(hidden and hidden[0])
            revoked = con.execute(
                "SELECT provider, session_id, operation_id FROM purge_revocations "
                "WHERE workspace = ?",
                [self.workspace],
            ).fetchall()
            self._revoked = {(str(p), str(s)): str(o) for p, s, o in revoked}
            return import_id

        return committed(con, body)

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
        statement = (
            f"UPDATE imports SET ended_at = $ended, status = $status, detail = $detail, {columns} "
            "WHERE workspace = $workspace AND import_id = $import_id"
        )
        params = {
            **counts,
            "ended": _now(),
            "status": status,
            "detail": orjson.dumps(detail).decode(),
            "workspace": self.workspace,
            "import_id": import_id,
        }
        committed(self.con, lambda: self.con.execute(statement, params))

    # -- commits --------------------------------------------------------------------
    def commit(
        self,
        import_id: int,
        pieces: list[Piece],
        data: list[CatalogRows],
    ) -> dict[str, CommitResult]:
        """Append ``data`` (the rows of ``pieces``) and move each piece's source
        checkpoint, all in one transaction, with a withdrawal row for every event the
        commit deletes or rewrites. Returns what was new, per source id."""
        self._fault("commit")
        con = self.con
        params = {"workspace": self.workspace, "import_id": import_id}
        tables: dict[str, pa.Table] = {
            "batch_rejects": _rejects_table(pieces),
            "batch_sources": _sources_table(pieces, self.workspace, import_id),
        }
        withheld: dict[str, int] = {}
        if data and self._revoked and not self.allow_purged:
            data, withheld_rows = withhold(data, self._revoked)
            if withheld_rows.num_rows:
                tables["batch_withheld"] = withheld_rows
                withheld = withheld_counts(withheld_rows)
        if data:
            tables["batch_events"] = batch_events(data)
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
        forgot = any(piece.restart for piece in pieces)
        count_events, count_calls, *let_go = statements(
            sql.inline(sql.query("count_new_rows"), {"forgot": forgot})
        )

        def write() -> tuple[dict[str, int], dict[str, int]]:
            # One attempt: on a lake it runs again, on the state the other writer left,
            # when its COMMIT conflicts with another writer's.
            new_events: dict[str, int] = {}
            new_usage: dict[str, int] = {}
            for piece in pieces:
                if piece.restart:
                    self._forget_source(piece.state.source.source_id)
            retracted = tables.get("batch_retractions")
            held = self._held_sessions(retracted) if retracted is not None else []
            if held:
                retract = sql.query("apply_retractions").replace(
                    "/* sessions */", sql.literals(held)
                )
                run_script(con, retract, params)
                run_script(con, sql.query("search_withdraw"), params)
                run_script(con, self._session_script("recompute_sessions"), params)
            if "batch_amended" in tables:
                run_script(con, sql.query("amend_events"), params)
                run_script(con, sql.query("search_withdraw"), params)
            if data:
                known = self._known_sessions(tables["batch_events"], tables["batch_sessions"])
                run_script(con, insert_new_events_script(known), params)
                new_events = _counts(con, count_events)
                upsert = self._session_script("upsert_sessions")
                if self._hidden:  # a new sub-agent of a hidden session is hidden with it
                    upsert = "\n".join(
                        (sql.query("hidden_fresh"), upsert, sql.query("hidden_inherit"))
                    )
                run_script(con, upsert if known else without_conflict_clause(upsert), params)
                if tables["batch_usage"].num_rows:
                    run_script(con, self._session_script("merge_usage"), params)
                    new_usage = _counts(con, count_calls)
                if "batch_rate_limits" in tables:
                    limits_sql = _with_sessions(
                        sql.query("insert_rate_limits"), tables["batch_rate_limits"]
                    )
                    run_script(con, limits_sql, params)
            if "batch_withheld" in tables:
                run_script(con, sql.query("purge_withhold"), params)
            if data and self.allow_purged:
                run_script(con, sql.query("purge_allow"), {**params, "actor": self.actor})
            if forgot:
                con.execute(";\n".join(let_go))
            if tables["batch_rejects"].num_rows:
                con.execute(
                    'INSERT INTO rejects SELECT $workspace, source_id, "offset", length, reason, detail, '
                    "$import_id FROM batch_rejects",
                    params,
                )
            run_script(con, sql.query("upsert_sources"), {})
            if data and not known:
                con.execute("DROP VIEW new_events")
            self._fault("after-data")
            return new_events, new_usage

        new_events, new_usage = committed(con, write, **tables)
        results: dict[str, CommitResult] = {}
        for piece in pieces:
            sid = piece.state.source.source_id
            prior = results.get(sid)
            results[sid] = CommitResult(
                new_events.get(sid, 0),
                new_usage.get(sid, 0),
                len(piece.rejects) + (prior.rejects if prior else 0),
                withheld.get(sid, 0),
            )
        if "batch_withheld" in tables:
            for row in (
                tables["batch_withheld"]
                .select(["provider", "session_id", "operation_id"])
                .to_pylist()
            ):
                self._revoked[(row["provider"], row["session_id"])] = row["operation_id"]
        return results

    def _held_sessions(self, retractions: pa.Table) -> list[str]:
        """The ids of the sessions ``retractions`` withdraws from that the catalog holds
        rows of, sorted. Withdrawing from any other session changes nothing (in a first
        import a rewind's rows are all in its own batch, dropped before the commit), so
        only these are probed: the statements that withdraw and recompute scan every
        event and call of the workspace. An event's session has its row in ``sessions``
        from the commit that inserts it; calls are looked up themselves."""
        ids = _session_ids(retractions)
        if not ids:
            return []
        listed = sql.literals(ids)
        lookup = (
            "SELECT session_id FROM sessions "
            f"WHERE workspace = $workspace AND session_id IN ({listed}) "
            "UNION SELECT session_id FROM usage "
            f"WHERE workspace = $workspace AND session_id IN ({listed})"
        )
        rows = self.con.execute(lookup, {"workspace": self.workspace}).fetchall()
        return sorted(str(s) for (s,) in rows)

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
        run_script(self.con, sql.query("search_withdraw"), {"workspace": self.workspace})
        run_script(self.con, sql.query("recompute_sessions"), {"workspace": self.workspace})

    # -- indexes dropped for a bulk import ----------------------------------------------
    def drop_bulk_indexes(self) -> None:
        """Drop the :data:`BULK_INDEXES` before a bulk import. DuckDB writes an index
        whole at every checkpoint, and an import checkpoints about once per commit: with
        a few hundred thousand events each of these indexes made every commit's
        checkpoint a quarter of a second slower, which adds up quadratically over a bulk
        import. Building them once at the end (:meth:`ensure_bulk_indexes`) costs about
        2 µs per row. Queries stay correct without them, only slower. A lake has none."""
        if self.lake:
            return
        with transaction(self.con):
            for name in BULK_INDEXES:
                self.con.execute(f"DROP INDEX IF EXISTS {name}")

    def ensure_bulk_indexes(self) -> float | None:
        """Build those of the :data:`BULK_INDEXES` that are missing (dropped for a bulk
        import, possibly by a run that was killed). Returns the seconds taken, or
        ``None`` when all were there (always on a lake, which has none)."""
        if self.lake:
            return None
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


def batch_events(data: list[CatalogRows]) -> pa.Table:
    """The events of a commit's ``data``, in the order the commit inserts them."""
    return pa.concat_tables([r.events for r in data])


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
