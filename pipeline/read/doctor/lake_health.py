"""The DuckLake part of ``agentlake doctor``: the metadata server, the data path, the
snapshots (how far the workspace's last import is behind the lake's newest commit) and
the writers holding leases."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

import duckdb

from agentlake.load.lake import ALIAS, LakeCatalog, data_path

LakeState = Literal["ok", "compact", "unwritable"]
# Live data files per table past which compaction is advised: each commit leaves a few
# small files, and every query opens the files of the tables it reads.
FILES_PER_TABLE: Final = 64
_METADATA: Final = f"__ducklake_metadata_{ALIAS}"


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """A writer holding a workspace's lease."""

    workspace: str
    host: str
    pid: int
    renewed_at: datetime


@dataclass(frozen=True, slots=True)
class LakeCheck:
    """A lake's health as one workspace sees it."""

    metadata: str  # "postgres" or "sqlite": where the catalog server keeps it
    data_path: str | None
    data_path_writable: bool | None  # None: not a local folder (an object store)
    snapshot: int
    snapshot_at: datetime | None
    snapshots: int
    data_files: int
    tables: int
    # Lake commits since the workspace's newest import ended: what other workspaces
    # (and maintenance) committed after it.
    commits_since_import: int | None
    leases: tuple[LeaseHolder, ...]

    @property
    def state(self) -> LakeState:
        """``unwritable`` (the data path), ``compact`` (many small files) or ``ok``."""
        if self.data_path_writable is False:
            return "unwritable"
        if self.data_files > FILES_PER_TABLE * max(self.tables, 1):
            return "compact"
        return "ok"

    @property
    def message(self) -> str:
        """One line on the lake."""
        line = (
            f"{self.metadata} metadata reachable; snapshot {self.snapshot}, "
            f"{self.snapshots:,} kept, {self.data_files:,} data files"
        )
        if self.commits_since_import is not None:
            line += f"; {self.commits_since_import:,} commits since this workspace's last import"
        if self.state == "unwritable":
            line += f"; the data path {self.data_path} is not writable"
        return line

    @property
    def remedy(self) -> str | None:
        """What to do about it."""
        if self.state == "unwritable":
            return "make the data path writable for this user (imports write Parquet there)"
        if self.state == "compact":
            return "run 'agentlake lake compact' to merge the small files"
        return None

    def to_json(self) -> dict[str, Any]:
        """The ``catalog.lake`` member of ``doctor --json``."""
        return {
            "state": self.state,
            "metadata": self.metadata,
            "data_path": self.data_path,
            "data_path_writable": self.data_path_writable,
            "snapshot": self.snapshot,
            "snapshot_at": self.snapshot_at,
            "snapshots": self.snapshots,
            "data_files": self.data_files,
            "commits_since_import": self.commits_since_import,
            "leases": [
                {"workspace": h.workspace, "host": h.host, "pid": h.pid, "renewed_at": h.renewed_at}
                for h in self.leases
            ],
            "message": self.message,
            "remedy": self.remedy,
        }


def lake_check(con: duckdb.DuckDBPyConnection, lake: LakeCatalog, workspace: str) -> LakeCheck:
    """Check the lake ``con`` reads (connected: its metadata server answered)."""
    folder = data_path(con)
    writable = None
    if folder is not None and "://" not in folder:
        path = Path(folder)
        writable = os.access(path, os.W_OK) if path.exists() else os.access(path.parent, os.W_OK)
    snapshot, at = _one(
        con, f"SELECT snapshot_id, snapshot_time::TIMESTAMP FROM {_METADATA}.ducklake_snapshot "
        "ORDER BY snapshot_id DESC LIMIT 1"
    ) or (0, None)  # fmt: skip
    (snapshots,) = _one(con, f"SELECT count(*) FROM {_METADATA}.ducklake_snapshot") or (0,)
    files, tables = _one(
        con,
        f"SELECT count(*), count(DISTINCT table_id) FROM {_METADATA}.ducklake_data_file "
        "WHERE end_snapshot IS NULL",
    ) or (0, 0)
    ended = _one(
        con, "SELECT max(ended_at)::TIMESTAMP FROM imports WHERE workspace = ?", [workspace]
    )
    since = None
    if ended and ended[0] is not None:
        (since,) = _one(
            con,
            f"SELECT count(*) FROM {_METADATA}.ducklake_snapshot "
            "WHERE snapshot_time::TIMESTAMP > ?",
            [ended[0]],
        ) or (0,)
    leases = tuple(
        LeaseHolder(str(w), str(h), int(p), r.replace(tzinfo=UTC))
        for w, h, p, r in con.execute(
            "SELECT workspace, host, pid, renewed_at::TIMESTAMP FROM writer_leases "
            "ORDER BY workspace"
        ).fetchall()
    )
    return LakeCheck(
        lake.kind, folder, writable, int(snapshot), at.replace(tzinfo=UTC) if at else None,
        int(snapshots), int(files), int(tables), None if since is None else int(since), leases,
    )  # fmt: skip


def _one(
    con: duckdb.DuckDBPyConnection, query: str, params: list[object] | None = None
) -> tuple[Any, ...] | None:
    return con.execute(query, params or []).fetchone()
