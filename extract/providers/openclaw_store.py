"""OpenClaw's per-agent SQLite store (the newer era):
``<state>/agents/<agentId>/agent/openclaw-agent.sqlite``, table
``transcript_events(session_id, seq, event_json, created_at /* ms */)``.

Each ``event_json`` is one record of the JSONL era, mapped by the same
:class:`.openclaw_records.RecordMapper`, session by session in ``seq`` order (provider-
formats-more §5). ``openclaw doctor --fix`` migrates JSONL transcripts into the store and
leaves both copies on disk [?]: a session found in both is one session (its id is the
table's ``session_id``, the transcript file's stem) and each of its records one event and
one call, because both copies are keyed by (session, record ``id``).

The database is opened read-only by the framework and re-read whole when it changes; the
catalog keeps the first copy of each event and call. A row that is not a JSON object, or
a record with impossible field types, is skipped (a database row has no byte span to
reject; it is still counted as read); a record of an unknown type is skipped likewise.
An unknown major session format refuses the store (FormatDrift).
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final

import orjson

from ..adapter import InvalidRecord, SourceContext
from ..rows import RowSink
from ..sources import RelParts, SourceFile, rel_parts
from .cursor_fields import instant
from .openclaw_records import RecordMapper

STORE_NAME: Final = "openclaw-agent.sqlite"
_EVENTS: Final = (
    "SELECT session_id, seq, event_json, created_at FROM transcript_events ORDER BY session_id, seq"
)


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
        found = con.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'transcript_events'"
        ).fetchone()
        if found is None:
            return 0
        mapper = self._mapper.map
        rows = 0
        current: str | None = None
        state: dict[str, Any] = {}
        for session_id, seq, event_json, created_at in con.execute(_EVENTS):
            rows += 1
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
        return rows


def _record(value: Any) -> dict[str, Any] | None:
    """An ``event_json`` value parsed, if it is a JSON object."""
    if type(value) not in (str, bytes):
        return None
    try:
        record = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None
