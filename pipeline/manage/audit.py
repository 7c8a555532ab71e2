"""The audit trail: one content-free row per mutation (operation, workspace, session,
actor, counts, digest, time), written in the mutation's own transaction, and paged newest
first with a signed keyset cursor bound to the workspace and the operation filter."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import orjson

from agentlake import sql
from agentlake.load.catalog import open_for_read, run_script, statements
from agentlake.load.lake import Catalog
from agentlake.read import cursors

from .authz import Authorization


def record(
    con: duckdb.DuckDBPyConnection,
    auth: Authorization,
    *,
    provider: str | None = None,
    session_id: str | None = None,
    counts: Mapping[str, int] | None = None,
    digest: str | None = None,
) -> int:
    """Write the audit row of ``auth``'s operation on ``con`` (inside the caller's
    transaction, so it lands with the change or not at all); returns its id."""
    insert, numbered = statements(sql.query("audit_insert"))
    params = {
        "workspace": auth.workspace, "operation": auth.operation, "actor": auth.actor,
        "provider": provider, "session_id": session_id, "digest": digest,
        "counts": None if counts is None else orjson.dumps(dict(counts)).decode(),
    }  # fmt: skip
    run_script(con, insert, params)
    row = con.execute(numbered).fetchone()
    assert row is not None
    return int(row[0])


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One audit row."""

    audit_id: int
    operation: str
    actor: str
    provider: str | None
    session_id: str | None
    counts: dict[str, int] | None
    digest: str | None
    at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "audit_id": self.audit_id, "operation": self.operation, "actor": self.actor,
            "provider": self.provider, "session_id": self.session_id, "counts": self.counts,
            "digest": self.digest, "at": self.at,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class AuditPage:
    """A page of a workspace's audit, newest first, and the cursor of the next."""

    workspace: str
    rows: list[AuditRow]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "rows": [r.to_dict() for r in self.rows],
            "next_cursor": self.next_cursor,
        }


def audit_page(
    catalog: Catalog,
    auth: Authorization,
    *,
    operation: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> AuditPage:
    """The audit rows of ``auth.workspace`` (of one ``operation`` if given), newest first,
    ``limit`` at a time; ``cursor`` continues a listing with the same filters."""
    with open_for_read(catalog) as con:
        secret = _secret(con)
        expect = {"kind": "audit", "workspace": auth.workspace, "operation": operation}
        before = None
        if cursor is not None:
            state = cursors.decode(cursor, secret, expect=expect)
            before = int(state["before"])
        found = con.execute(
            sql.query("audit_page"),
            {"workspace": auth.workspace, "before": before, "operation": operation,
             "limit": limit + 1},
        ).fetchall()  # fmt: skip
    rows = [_row(r) for r in found[:limit]]
    next_cursor = None
    if len(found) > limit:
        next_cursor = cursors.encode({**expect, "before": rows[-1].audit_id}, secret)
    return AuditPage(auth.workspace, rows, next_cursor)


def _row(r: tuple[Any, ...]) -> AuditRow:
    counts = orjson.loads(r[5]) if r[5] is not None else None
    return AuditRow(int(r[0]), str(r[1]), str(r[2]), r[3], r[4], counts, r[6], str(r[7]))


def _secret(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT value FROM settings WHERE key = 'cursor_secret'").fetchone()
    assert row is not None, "every migrated catalog has a cursor secret"
    return str(row[0])
