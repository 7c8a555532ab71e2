"""The load runner: one DuckDB transaction per batch, data and checkpoint together.

:class:`CatalogWriter` is the only code that writes the catalog during an import.
Set work (identity anti-joins, global usage dedup, session aggregate merges) is SQL in
``sql/queries``; Python only binds Arrow tables and parameters.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from agentlake import sql
from agentlake.extract.jsonl import Reject
from agentlake.extract.sources import SourceFile
from agentlake.transform.transform import CatalogRows

from .catalog import load_fts, run_script
from .checkpoint import Checkpoint


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What one committed batch changed."""

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
    continuity: str
    status: str = "ok"
    refusal: str | None = None


_UPSERT_SOURCE = """
INSERT INTO sources AS s (source_id, workspace, provider, path, device, inode, size_bytes, mtime_ns,
    position_kind, committed_offset, prefix_digest, generation, adapter_version, policy_version,
    continuity, status, refusal, records, rejected, last_import_id)
VALUES ($source_id, $workspace, $provider, $path, $device, $inode, $size, $mtime, $kind, $offset,
    $digest, $generation, $adapter_version, $policy_version, $continuity, $status, $refusal,
    $records, $rejected, $import_id)
ON CONFLICT (workspace, source_id) DO UPDATE SET
    path = excluded.path, device = excluded.device, inode = excluded.inode,
    size_bytes = excluded.size_bytes, mtime_ns = excluded.mtime_ns,
    committed_offset = excluded.committed_offset, prefix_digest = excluded.prefix_digest,
    generation = excluded.generation, adapter_version = excluded.adapter_version,
    policy_version = excluded.policy_version, continuity = excluded.continuity,
    status = excluded.status, refusal = excluded.refusal,
    records = CASE WHEN excluded.generation = s.generation THEN s.records ELSE 0 END + excluded.records,
    rejected = CASE WHEN excluded.generation = s.generation THEN s.rejected ELSE 0 END + excluded.rejected,
    last_import_id = excluded.last_import_id
"""


def _now() -> datetime:
    return datetime.now(UTC)


class CatalogWriter:
    """Writes one import run into an open read-write catalog connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection, workspace: str) -> None:
        self.con = con
        self.workspace = workspace

    # -- receipts -------------------------------------------------------------------
    def begin_import(self) -> int:
        """Open a receipt (status ``running``); receipts left ``running`` by a killed
        run become ``abandoned``. Returns the new import id."""
        con = self.con
        con.execute("BEGIN")
        con.execute(
            "UPDATE imports SET status = 'abandoned' WHERE workspace = ? AND status = 'running'",
            [self.workspace],
        )
        row = con.execute("SELECT coalesce(max(import_id), 0) + 1 FROM imports").fetchone()
        assert row is not None
        import_id = int(row[0])
        con.execute(
            "INSERT INTO imports (import_id, workspace, started_at, status) VALUES (?, ?, ?, 'running')",
            [import_id, self.workspace, _now()],
        )
        con.execute("COMMIT")
        return import_id

    def finish_import(self, import_id: int, status: str, counts: dict[str, int], detail: dict[str, Any]) -> None:
        """Close the receipt with its final counts."""
        columns = ", ".join(f"{name} = ${name}" for name in counts)
        self.con.execute(
            f"UPDATE imports SET ended_at = $ended, status = $status, detail = $detail, {columns} "
            "WHERE workspace = $workspace AND import_id = $import_id",
            {**counts, "ended": _now(), "status": status, "detail": orjson.dumps(detail).decode(),
             "workspace": self.workspace, "import_id": import_id},
        )  # fmt: skip

    # -- batches --------------------------------------------------------------------
    def commit_batch(
        self,
        import_id: int,
        rows: CatalogRows,
        rejects: list[Reject],
        state: SourceState,
        *,
        records: int,
        restart: bool = False,
    ) -> CommitResult:
        """Append one batch and move its source's checkpoint, in one transaction.

        ``restart`` (first batch of a new generation) first removes what earlier
        generations of this source wrote.
        """
        con = self.con
        src = state.source
        params = {"workspace": self.workspace, "source_id": src.source_id, "import_id": import_id,
                  "provider": src.provider}  # fmt: skip
        con.register("batch_events", rows.events)
        con.register("batch_usage", rows.usage)
        con.register("batch_sessions", rows.sessions)
        try:
            con.execute("BEGIN")
            if restart:
                self._forget_source(src.source_id)
            run_script(con, sql.query("insert_new_events"), params)
            new_events = _count(con, "SELECT count(*) FROM new_events")
            run_script(con, sql.query("upsert_sessions"), params)
            before = _count(con, "SELECT count(*) FROM usage WHERE workspace = ?", [self.workspace])
            if rows.usage.num_rows:
                run_script(con, sql.query("merge_usage"), params)
            after = _count(con, "SELECT count(*) FROM usage WHERE workspace = ?", [self.workspace])
            if rejects:
                con.register("batch_rejects", _rejects_table(rejects))
                con.execute(
                    'INSERT INTO rejects SELECT $workspace, $source_id, "offset", length, reason, detail, $import_id '
                    "FROM batch_rejects",
                    {k: params[k] for k in ("workspace", "source_id", "import_id")},
                )
            self._upsert_source(import_id, state, records=records, rejected=len(rejects))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            for name in ("batch_events", "batch_usage", "batch_sessions", "batch_rejects"):
                con.unregister(name)
        return CommitResult(new_events, after - before, len(rejects))

    def save_source(self, import_id: int, state: SourceState) -> None:
        """Record a source's state without data (refused, touched, or new but empty)."""
        self.con.execute("BEGIN")
        self._upsert_source(import_id, state, records=0, rejected=0)
        self.con.execute("COMMIT")

    def _upsert_source(self, import_id: int, state: SourceState, *, records: int, rejected: int) -> None:
        src = state.source
        self.con.execute(
            _UPSERT_SOURCE,
            {
                "source_id": src.source_id, "workspace": self.workspace, "provider": src.provider,
                "path": str(src.path), "device": src.device, "inode": src.inode, "size": src.size,
                "mtime": src.mtime_ns, "kind": src.position_kind, "offset": state.committed_offset,
                "digest": state.prefix_digest, "generation": state.generation,
                "adapter_version": state.adapter_version, "policy_version": state.policy_version,
                "continuity": state.continuity, "status": state.status, "refusal": state.refusal,
                "records": records, "rejected": rejected, "import_id": import_id,
            },
        )  # fmt: skip

    def _forget_source(self, source_id: str) -> None:
        """Remove a source's rows before re-reading it as a new generation, and
        recompute the aggregates of the sessions it touched."""
        con, ws = self.con, self.workspace
        con.execute(
            "CREATE OR REPLACE TEMP TABLE touched AS SELECT DISTINCT provider, session_id "
            "FROM events WHERE workspace = ? AND source_id = ?",
            [ws, source_id],
        )
        for table in ("events", "usage", "rejects"):
            con.execute(f"DELETE FROM {table} WHERE workspace = ? AND source_id = ?", [ws, source_id])
        con.execute(
            """UPDATE sessions s SET started_at = a.started_at, updated_at = a.updated_at,
                   prompts = coalesce(a.prompts, 0), events = coalesce(a.events, 0),
                   tool_calls = coalesce(a.tool_calls, 0)
               FROM touched t LEFT JOIN (
                   SELECT provider, session_id, min(ts) AS started_at, max(ts) AS updated_at,
                          count(*) FILTER (kind = 'prompt') AS prompts, count(*) AS events,
                          count(*) FILTER (kind = 'tool_call') AS tool_calls
                   FROM events WHERE workspace = $1 GROUP BY ALL) a USING (provider, session_id)
               WHERE s.workspace = $1 AND s.provider = t.provider AND s.session_id = t.session_id""".replace("$1", "?"),
            [ws, ws],
        )

    # -- publish --------------------------------------------------------------------
    def rebuild_search_index(self) -> float | None:
        """Rebuild the full-text index over ``events.text``; returns seconds taken, or
        ``None`` when the fts extension is unavailable."""
        if not load_fts(self.con):
            return None
        started = time.perf_counter()
        self.con.execute(
            "PRAGMA create_fts_index('events', 'event_id', 'text', stemmer = 'porter', "
            "stopwords = 'english', strip_accents = 1, lower = 1, overwrite = 1)"
        )
        return time.perf_counter() - started


def _count(con: duckdb.DuckDBPyConnection, query: str, params: list[Any] | None = None) -> int:
    row = con.execute(query, params or []).fetchone()
    return int(row[0]) if row else 0


def _rejects_table(rejects: list[Reject]) -> pa.Table:
    return pa.table(
        {
            "offset": pa.array([r.offset for r in rejects], pa.int64()),
            "length": pa.array([r.length for r in rejects], pa.int64()),
            "reason": pa.array([r.reason for r in rejects], pa.string()),
            "detail": pa.array([r.detail for r in rejects], pa.string()),
        }
    )
