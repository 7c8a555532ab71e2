"""Incremental reads of SQLite stores, by a watermark kept with the checkpoint.

The first read of a store maps it whole and keeps its :class:`StoreMarks` in the adapter
memo. Later reads, in the same read transaction as the mapping, compare the marks now
with the kept ones: a watermark that went backwards (an older copy restored, rows deleted
at its end) refuses the store as truncated, and a row at the kept watermark that is not
the one imported (another store put at the same path) as rewritten; both repeat until
``--restart-drifted``. Otherwise only the sessions whose fingerprint changed are mapped.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final

from agentlake.errors import SourceErrorCode

from .adapter import IncrementalDatabaseAdapter, SourceContext, StoreMarks
from .rows import RowSink

# The memo key of the marks (the adapter memo is the checkpoint's ``adapter_state``).
MARKS_KEY: Final = "store"


class StoreWentBack(Exception):
    """The store is not a continuation of the one imported: ``code`` and why."""

    def __init__(self, code: SourceErrorCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code


def read_store(
    adapter: IncrementalDatabaseAdapter,
    con: sqlite3.Connection,
    ctx: SourceContext,
    sink: RowSink,
) -> int:
    """Map what changed in the store since the marks in ``ctx.memo`` (everything when
    there are none) and leave the new marks there; returns the rows read. Raises
    :class:`StoreWentBack`."""
    kept = _kept(ctx.memo.get(MARKS_KEY))
    now = adapter.marks(con)
    if kept is None:
        read = adapter.map_database(con, ctx, sink)
    else:
        _check_continuity(adapter, con, kept, now)
        assert now is not None
        changed = sorted(s for s, mark in now.sessions.items() if kept.sessions.get(s) != mark)
        read = adapter.map_sessions(con, ctx, sink, changed) if changed else 0
    ctx.memo[MARKS_KEY] = (
        None if now is None else {"high": now.high, "anchor": now.anchor, "sessions": now.sessions}
    )
    return read


def _check_continuity(
    adapter: IncrementalDatabaseAdapter,
    con: sqlite3.Connection,
    kept: StoreMarks,
    now: StoreMarks | None,
) -> None:
    if now is None or now.high < kept.high:
        where = "holds none of its tables" if now is None else f"is at {now.high}"
        raise StoreWentBack(
            "SOURCE_TRUNCATED",
            f"the store went backwards: its watermark {where}, below the {kept.high} "
            "already imported (an older copy, or rows deleted)",
        )
    if kept.anchor is not None and adapter.anchor_at(con, kept.high) != kept.anchor:
        raise StoreWentBack(
            "SOURCE_REWRITTEN",
            f"the row at the imported watermark {kept.high} is not the one imported "
            "(another store at the same path)",
        )


def _kept(value: Any) -> StoreMarks | None:
    """The marks a memo kept, if it kept well-formed ones."""
    if not isinstance(value, dict):
        return None
    high, anchor, sessions = value.get("high"), value.get("anchor"), value.get("sessions")
    if type(high) is not int or not isinstance(sessions, dict):
        return None
    return StoreMarks(high, anchor if isinstance(anchor, str) else None, sessions)
