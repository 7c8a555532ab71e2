"""OpenClaw's per-agent SQLite store (the newer era):
``<state>/agents/<agentId>/agent/openclaw-agent.sqlite``, table
``transcript_events(session_id, seq, event_json, created_at /* ms */)``.

Each ``event_json`` is one record of the JSONL era, mapped by the same
:class:`.openclaw_records.RecordMapper`, session by session in ``seq`` order (provider-
formats-more §5). ``openclaw doctor --fix`` migrates JSONL transcripts into the store and
leaves both copies on disk [?]: a session found in both is one session (its id is the
table's ``session_id``, the transcript file's stem) and each of its records one event and
one call, because both copies are keyed by (session, record ``id``).

The database is opened read-only by the framework and read incrementally
(:mod:`..stores`): the watermark is the table's largest rowid (rows are only appended), a
session's fingerprint its largest rowid and row count, and a changed session is mapped
again whole; the catalog keeps the first copy of each event and call. A row that is not a JSON object, or
a record with impossible field types, is skipped (a database row has no byte span to
reject; it is still counted as read); a record of an unknown type is skipped likewise.
An unknown major session format refuses the store (FormatDrift).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any, Final

import orjson

from ..adapter import InvalidRecord, SourceContext, StoreMarks
from ..rows import RowSink
from ..sources import RelParts, SourceFile, rel_parts
from .cursor_fields import instant
from .openclaw_records import RecordMapper

STORE_NAME: Final = "openclaw-agent.sqlite"
_EVENTS: Final = (
    "SELECT session_id, seq, event_json, created_at FROM transcript_events {where} "
    "ORDER BY session_id, seq"
)
_ONLY: Final = "WHERE session_id IN (SELECT value FROM json_each(?))"
_MARKS: Final = "SELECT session_id, max(rowid), count(*) FROM transcript_events GROUP BY session_id"
_ANCHOR: Final = "SELECT session_id || '/' || seq FROM transcript_events WHERE rowid = ?"


def owns_store(rel: RelParts) -> bool:
    """``<agent>/agent/openclaw-agent.sqlite`` (never its ``-wal``/``-shm`` files)."""
    return len(rel) == 3 and rel[1] == "agent" and rel[2] == STORE_NAME


class TranscriptStoreAdapter:
    """Maps the ``transcript_events`` rows of one agent's store."""

    def __init__(self) -> None:
        self._mapper = RecordMapper()

    def locate(self, source: SourceFile) -> SourceContext:
        """The store holds many sessions; its context names the agent only."""
        return SourceContext(source, f"agent:{rel_parts(source)[0]}")

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Emit the rows of every session; returns the rows read. A store without the
        ``transcript_events`` table holds no transcripts yet."""
        if not _has_events(con):
            return 0
        return self._map(con.execute(_EVENTS.format(where="")), sink)

    def map_sessions(
        self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink, sessions: list[str]
    ) -> int:
        """Emit the rows of ``sessions`` only."""
        cursor = con.execute(_EVENTS.format(where=_ONLY), (orjson.dumps(sessions).decode(),))
        return self._map(cursor, sink)

    def marks(self, con: sqlite3.Connection) -> StoreMarks | None:
        """The largest rowid; per session its largest rowid and row count."""
        if not _has_events(con):
            return None
        sessions = {str(sid): f"{high}:{n}" for sid, high, n in con.execute(_MARKS)}
        high = max((int(m.split(":", 1)[0]) for m in sessions.values()), default=0)
        return StoreMarks(high, self.anchor_at(con, high), sessions)

    def anchor_at(self, con: sqlite3.Connection, high: int) -> str | None:
        """The (session, seq) of the row at rowid ``high``."""
        row = con.execute(_ANCHOR, (high,)).fetchone()
        return None if row is None else str(row[0])

    def _map(self, rows: Iterable[tuple[Any, ...]], sink: RowSink) -> int:
        mapper = self._mapper.map
        read = 0
        current: str | None = None
        state: dict[str, Any] = {}
        for session_id, seq, event_json, created_at in rows:
            read += 1
            if type(session_id) is not str or not session_id or type(seq) is not int:
                continue
            if session_id != current:  # the model and times are per session
                current, state = session_id, {}
            record = _record(event_json)
            if record is None:
                continue
            if record.get("timestamp") is None and (created := instant(created_at)):
                record["timestamp"] = created  # a record's time is at latest its row's
            try:
                mapper(record, session_id, seq, state, sink)
            except InvalidRecord:
                continue
        return read


def _has_events(con: sqlite3.Connection) -> bool:
    found = con.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'transcript_events'"
    ).fetchone()
    return found is not None


def _record(value: Any) -> dict[str, Any] | None:
    """An ``event_json`` value parsed, if it is a JSON object."""
    if type(value) not in (str, bytes):
        return None
    try:
        record = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None
