"""OpenCode's database, ``opencode.db`` (v1.2 and later; ``opencode-<channel>.db`` for
other release channels), opened read-only by the framework: tables ``session`` (columns),
``message`` and ``part`` (the record as JSON in ``data``, ids in columns), mapped through
:mod:`.opencode_records` like the legacy tree (provider-formats-more §4).

Read incrementally (:mod:`..stores`): rows are updated in place while a session runs, so
the watermark is the latest ``time_updated`` and a session whose rows' latest update or
count changed is mapped again whole; its rows already imported merge by identity.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, SourceContext, StoreMarks
from ..rows import RowSink
from ..sources import SourceFile
from .cursor_fields import instant
from .opencode_records import UNKNOWN_MESSAGE, MessageMeta, emit_message, emit_part, emit_session

_SESSION_COLUMNS: Final = {
    "project_id": "projectID", "parent_id": "parentID", "directory": "directory",
    "title": "title", "version": "version",
}  # fmt: skip


def _json(value: Any) -> Any:
    if not isinstance(value, str | bytes):
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def _rows(con: sqlite3.Connection, table: str, only: str | None = None) -> Iterator[dict[str, Any]]:
    """Every row of ``table`` as {lower-case column: value}, streamed; with ``only`` (a
    JSON array of session ids), those of these sessions."""
    where = ""
    if only is not None:
        key = "id" if table == "session" else "session_id"
        where = f" WHERE {key} IN (SELECT value FROM json_each(?))"
    cursor = con.execute(f'SELECT * FROM "{table}"{where}', () if only is None else (only,))
    names = [str(d[0]).lower() for d in cursor.description]
    for row in cursor:
        yield dict(zip(names, row, strict=True))


def _session_info(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``session`` row in the shape of a tree session record."""
    info: dict[str, Any] = {"id": row.get("id")}
    for column, field in _SESSION_COLUMNS.items():
        if row.get(column) is not None:
            info[field] = row[column]
    info["time"] = {
        "created": row.get("time_created"),
        "updated": row.get("time_updated"),
        "archived": row.get("time_archived"),
    }
    model = _json(row.get("model"))
    if type(model) is dict:
        info["model"] = model
    return info


# The tables a session's fingerprint covers, with the column naming the session.
_MARKED: Final = (("session", "id"), ("message", "session_id"), ("part", "session_id"))


def _tables(con: sqlite3.Connection) -> set[str]:
    names = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {str(name).lower() for (name,) in names}


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]).lower() for r in con.execute("SELECT * FROM pragma_table_info(?)", (table,))}


class OpenCodeDatabaseAdapter:
    """Reads ``opencode.db`` (opened read-only by the framework): sessions, then messages,
    then parts. Every table and column is optional; a row whose record is not the
    expected shape is skipped (a database has no per-row receipts) and counted."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The database holds many sessions; its context names none."""
        return SourceContext(source, "")

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Emit every session, message and part; returns the rows read."""
        return self._map(con, sink, None)

    def map_sessions(
        self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink, sessions: list[str]
    ) -> int:
        """Like :meth:`map_database`, for ``sessions`` only (each of them whole)."""
        return self._map(con, sink, orjson.dumps(sessions).decode())

    def marks(self, con: sqlite3.Connection) -> StoreMarks | None:
        """Rows are updated in place (a part's state, a message's tokens), so the
        watermark is the latest ``time_updated`` and no row anchors it; a session's
        fingerprint is its own row's and, per table, its rows' latest update and count.
        ``None`` (read whole every time) for a store without those columns."""
        tables = _tables(con)
        if not {"session", "message", "part"} <= tables or any(
            not {"session_id", "time_updated"} <= _columns(con, t) for t in ("message", "part")
        ):
            return None
        if "time_updated" not in _columns(con, "session"):
            return None
        marks: dict[str, list[str]] = {}
        high = 0
        for i, (table, key) in enumerate(_MARKED):
            query = f"SELECT {key}, max(time_updated), count(*) FROM {table} GROUP BY {key}"
            for sid, updated, n in con.execute(query):
                marks.setdefault(str(sid), ["", "", ""])[i] = f"{updated}:{n}"
                if type(updated) is int and updated > high:
                    high = updated
        return StoreMarks(high, None, {sid: "|".join(m) for sid, m in marks.items()})

    def anchor_at(self, con: sqlite3.Connection, high: int) -> str | None:
        """No row anchors a watermark of update times."""
        return None

    def _map(self, con: sqlite3.Connection, sink: RowSink, only: str | None) -> int:
        tables = _tables(con)
        if (
            "session_message" in tables
            and con.execute("SELECT 1 FROM session_message LIMIT 1").fetchone()
        ):
            raise FormatDrift(
                "opencode.db holds OpenCode 2.x event-sourced messages (session_message), "
                "a format this adapter does not know"
            )
        records = 0
        sessions = (
            [_session_info(r) for r in _rows(con, "session", only)] if "session" in tables else []
        )
        for info in sessions:
            _emit_session_row(sink, info)  # drift raises before anything is kept
        records += len(sessions)
        metas: dict[str, tuple[str, MessageMeta]] = {}
        if "message" in tables:
            for row in _rows(con, "message", only):
                records += 1
                info, sid = _json(row.get("data")), row.get("session_id")
                if type(info) is not dict or type(sid) is not str or not sid:
                    continue
                info = {**info, "id": row.get("id"), "sessionID": sid}
                try:
                    metas[str(info["id"])] = (sid, emit_message(sink, sid, info, "db"))
                except InvalidRecord:
                    continue
        if "part" in tables:
            for row in _rows(con, "part", only):
                records += 1
                part, mid = _json(row.get("data")), row.get("message_id")
                if type(part) is not dict or type(mid) is not str:
                    continue
                sid, meta = metas.get(mid, (row.get("session_id"), UNKNOWN_MESSAGE))
                if type(sid) is not str or not sid:
                    continue
                if meta is UNKNOWN_MESSAGE:  # a part of a message missing from the table
                    meta = MessageMeta(None, None, instant(row.get("time_created")))
                part = {**part, "id": row.get("id"), "messageID": mid, "sessionID": sid}
                try:
                    emit_part(sink, sid, mid, part, meta, "db")
                except InvalidRecord:
                    continue
        return records


def _emit_session_row(sink: RowSink, info: dict[str, Any]) -> None:
    """A database session row's metadata; a row of impossible types is skipped, an
    unknown major version refuses the database (:class:`FormatDrift`)."""
    try:
        emit_session(sink, info)
    except InvalidRecord:
        return


DATABASE_ADAPTER: Final = OpenCodeDatabaseAdapter()
