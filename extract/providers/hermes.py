"""Nous Research Hermes Agent (provider-formats-more §3). Three formats:

* ``hermes-state`` (sqlite) — ``<home>/state.db`` and each named profile's
  ``<home>/profiles/<name>/state.db``: ``sessions`` (one row per session with its
  CUMULATIVE token counters), ``messages`` (OpenAI chat shape, times in Unix seconds)
  and, where present, ``session_model_usage`` (per-model attribution; its columns are
  not documented [?]: rows with ``session_id``, ``model`` and the same counter names are
  read, summed per session and model since v22 adds per-task rows). Read incrementally
  (:mod:`..stores`): the watermark is the largest message id; a session with new messages
  or changed rows is mapped again whole.
* ``hermes-session-json`` (document) — ``<home>/sessions/session_<id>.json`` (and a
  profile's): one session with ``messages[]`` ending in a ``session_meta`` marker and
  no token fields; their relation to ``state.db`` is unverified [?].
* ``hermes-export-jsonl`` (export, byte-offset) — ``hermes sessions export``: one
  session row with its ``messages`` per line. AIWG requires ``schemaVersion`` of major
  23; whether Hermes writes it is unverified [?], so a line without it is read and
  only a present, different major is drift.

``<home>`` is each entry of ``HERMES_HOME`` (a comma list, as ccusage reads it), else
``~/.hermes``. Ids are Hermes' own (``sessions.id``, the JSON log's ``session_id``, the
export's ``id``), and messages are named by :mod:`.hermes_messages`' rule, so a session
in several databases, JSON logs and exports is one session whose rows are not doubled.
A home's files are walked before its subfolders, so ``state.db`` (whose messages carry
times) is read before the JSON logs (whose messages have none) and its copy is kept.

Mapping: ``user`` → prompt, ``assistant`` → reasoning (``reasoning``,
``reasoning_content``, ``reasoning_details``, ``codex_reasoning_items``), reply and one
tool call per ``tool_calls[]`` entry, ``tool`` → tool result (``tool_call_id``,
``tool_name``; ``finish_reason: "error"`` marks an error), ``system`` (and any other
role) → system line; ``sessions.system_prompt`` → one system event of the session.
Sessions: ``title``, ``model``, ``cwd`` (else ``model_config.cwd``), ``git_branch``,
``archived``, ``started_at``/``ended_at`` (JSON logs: ``session_start``/``last_updated``,
ISO, zone-less ones naming no instant), parent = ``parent_session_id`` (compression
split or delegation), else ``model_config._delegate_from``; a delegate sub-agent's
(``source = 'subagent'``) events and totals are marked ``is_sidechain``.
Tokens: :func:`.hermes_messages.emit_totals` (per session and model, latest snapshot
wins); ``messages.token_count`` is a message's size, not billing, and is not read.
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import (
    DuplicateRecord,
    FormatDrift,
    InvalidRecord,
    NotThisFormat,
    RecordOutcome,
    SourceContext,
    StoreMarks,
    one_snapshot,
)
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile, rel_parts
from ..values import token_count
from .hermes_messages import (
    COUNTERS,
    SYSTEM_PROMPT_ID,
    SessionMessages,
    check_message,
    delegate_parent,
    emit_message,
    emit_session,
    emit_totals,
    instant,
    text_of,
)

PROVIDER_ID: Final = "hermes"
ADAPTER_VERSION: Final = "1.0"
STATE_FORMAT: Final = "hermes-state"
LOG_FORMAT: Final = "hermes-session-json"
EXPORT_FORMAT: Final = "hermes-export-jsonl"
ENV: Final = "HERMES_HOME"
#: ``state.db`` schema versions are additive migrations (23 documented, up to 30 seen);
#: one far above them is a store this adapter cannot vouch for.
MAX_STATE_SCHEMA: Final = 39
EXPORT_MAJOR: Final = 23

_LOG_NAME: Final = re.compile(r"^session_(.+)\.json$")
_MAJOR: Final = re.compile(r"^\s*(\d+)")
# Columns of ``messages`` the mapping reads (whichever of them the store has).
_MESSAGE_COLUMNS: Final = (
    "session_id", "id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
    "timestamp", "finish_reason", "reasoning", "reasoning_content", "reasoning_details",
    "codex_reasoning_items",
)  # fmt: skip


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """Each absolute entry of ``HERMES_HOME`` (comma list), else ``~/.hermes`` and
    Windows' ``%LOCALAPPDATA%/hermes`` (as ``<home>/AppData/Local/hermes``, so
    ``--home`` applies); walked to ``profiles/<p>/sessions/<file>`` (depth 4)."""
    configured = [p.strip() for p in env.get(ENV, "").split(",") if p.strip()]
    absolute = [Path(p) for p in configured if Path(p).is_absolute()]
    if absolute:
        return [Root(PROVIDER_ID, p, ENV, max_depth=4) for p in absolute]
    warning = f"{ENV}={env[ENV]!r} holds no absolute path and was ignored" if configured else None
    return [
        Root(PROVIDER_ID, home / ".hermes", "default", max_depth=4, warning=warning),
        Root(PROVIDER_ID, home / "AppData" / "Local" / "hermes", "default", max_depth=4),
    ]


def _home_part(rel: RelParts) -> RelParts:
    """``rel`` below its Hermes home: the root's own, or a named profile's."""
    if len(rel) >= 3 and rel[0] == "profiles":
        return rel[2:]
    return rel


def owns_state(rel: RelParts) -> bool:
    """``state.db`` of the home or of a profile (never its ``-wal``/``-shm``)."""
    return _home_part(rel) == ("state.db",)


def owns_log(rel: RelParts) -> bool:
    """``sessions/session_<id>.json`` of the home or of a profile."""
    part = _home_part(rel)
    return len(part) == 2 and part[0] == "sessions" and _LOG_NAME.match(part[1]) is not None


def owns_export(rel: RelParts) -> bool:
    """Never: exports are files the user names."""
    return False


def _check_export_version(value: Any) -> None:
    """FormatDrift for a present ``schemaVersion`` whose major is not 23."""
    if value is None:
        return
    match = _MAJOR.match(str(value)) if type(value) in (int, float, str) else None
    if match is None:
        raise InvalidRecord("'schemaVersion' is not a version")
    if int(match.group(1)) != EXPORT_MAJOR:
        raise FormatDrift(f"Hermes export schemaVersion {str(value)[:20]} is not of major 23")


_SNIFF_KEYS: Final = (b'"source"', b'"started_at"')
# A cut line must open with the session's id (the first column of ``sessions``),
# optionally after ``schemaVersion``: a nested "id" of another format's line is no match.
_CUT_LINE: Final = re.compile(rb'^\s*\{\s*(?:"schemaVersion"\s*:\s*[^,{}]+,\s*)?"id"\s*:\s*"')


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a Hermes export: its first line is a
    session object (``id``, ``source``, ``started_at``, a ``messages`` list). A line cut
    short by the 64 KiB head (sessions are long) must open with the session's ``id``
    and show the other keys, messages coming after the session's columns."""
    first, newline, _ = head.partition(b"\n")
    if not first.lstrip().startswith(b"{"):
        return False
    if newline:
        try:
            value = orjson.loads(first)
        except orjson.JSONDecodeError:
            return False
        return (
            isinstance(value, dict)
            and type(value.get("id")) is str
            and type(value.get("source")) is str
            and isinstance(value.get("messages"), list)
            and "started_at" in value
        )
    return (
        _CUT_LINE.match(first) is not None
        and all(k in first for k in _SNIFF_KEYS)
        and re.search(rb'"messages"\s*:\s*\[', first) is not None
    )


def _last_activity(row: dict[str, Any], last_message: float | None) -> str | None:
    """When a session's counters were last seen growing: its end, its last message,
    else its start (the day its totals are reported on)."""
    times = [
        float(t) for t in (row.get("ended_at"), last_message, row.get("started_at"))
        if isinstance(t, int | float) and not isinstance(t, bool)
    ]  # fmt: skip
    return instant(max(times)) if times else None


def _session_rows(
    row: dict[str, Any], sid: str, models: dict[str, dict[str, int]] | None,
    last_message: float | None, sink: RowSink, *, started: Any, updated: Any, offset: int = 0,
) -> None:  # fmt: skip
    """A session's fields, system prompt and token totals (per model when the store
    attributes them, else the session's counters under its model). Raises
    :class:`InvalidRecord` for an impossible counter, before anything is emitted."""
    for key in COUNTERS:
        token_count(row.get(key))
    emit_session(row, sid, sink, started=started, updated=updated)
    _, sidechain = delegate_parent(row)
    prompt = text_of(row.get("system_prompt"))
    if prompt is not None:
        sink.event(sid, SYSTEM_PROMPT_ID, 0, instant(started), "system", "system", prompt, offset,
                   is_sidechain=sidechain)  # fmt: skip
    ts = _last_activity(row, last_message)
    if models:
        for model, counters in models.items():
            emit_totals(counters, sid, model or None, ts, sidechain, offset, sink)
    else:
        emit_totals(row, sid, text_of(row.get("model")), ts, sidechain, offset, sink)


# --------------------------------------------------------------------------- state.db


class StateDbAdapter:
    """Reads one ``state.db`` (opened read-only by the framework)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The database holds many sessions; its context names its profile."""
        rel = rel_parts(source)
        return SourceContext(source, f"profile:{rel[1]}" if len(rel) == 3 else "profile:")

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Emit every session, message and token total; returns the rows read. All of
        the queries run in ONE read transaction, so they see one snapshot of the WAL
        database even while Hermes writes to it. A row with impossible field types is
        skipped (a database row has no byte span to reject); a missing table or column
        yields nothing for it."""
        # Text that is not UTF-8 is read with replacement characters: one bad row must
        # not make the whole store unreadable.
        con.text_factory = _lenient_text
        with one_snapshot(con):
            return self._read(con, sink)

    def map_sessions(
        self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink, sessions: list[str]
    ) -> int:
        """Like :meth:`map_database`, for ``sessions`` only (each of them whole)."""
        con.text_factory = _lenient_text
        with one_snapshot(con):
            return self._read(con, sink, orjson.dumps(sessions).decode())

    def marks(self, con: sqlite3.Connection) -> StoreMarks | None:
        """The largest message id is the watermark (ids are AUTOINCREMENT); a session's
        fingerprint is its largest message id, message and active counts, and a digest
        of its ``sessions`` and ``session_model_usage`` rows (counters grow in place)."""
        con.text_factory = _lenient_text
        tables = _tables(con)
        if "messages" not in tables or "id" not in _columns(con, "messages"):
            return None
        rows: dict[str, int] = {}
        for table, key in (("sessions", "id"), ("session_model_usage", "session_id")):
            if table in tables and key in _columns(con, table):
                for row in _dicts(con, f"SELECT * FROM {table} ORDER BY rowid"):
                    sid = str(row[key])
                    rows[sid] = zlib.crc32(repr(tuple(row.values())).encode(), rows.get(sid, 0))
        active = "total(active)" if "active" in _columns(con, "messages") else "0"
        marks = {
            str(sid): f"{high}:{n}:{int(on)}:{rows.pop(str(sid), 0):08x}"
            for sid, high, n, on in con.execute(
                f"SELECT session_id, max(id), count(*), {active} FROM messages GROUP BY session_id"
            )
        }
        marks.update((sid, f"::{digest:08x}") for sid, digest in rows.items())
        high = con.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        return StoreMarks(int(high), self.anchor_at(con, int(high)), marks)

    def anchor_at(self, con: sqlite3.Connection, high: int) -> str | None:
        """The session and time of message ``high``."""
        row = con.execute(
            "SELECT session_id || '/' || coalesce(timestamp, '') FROM messages WHERE id = ?",
            (high,),
        ).fetchone()
        return None if row is None else str(row[0])

    def _read(self, con: sqlite3.Connection, sink: RowSink, only: str | None = None) -> int:
        """Every session, or those of the JSON array ``only``."""
        tables = _tables(con)
        if "schema_version" in tables:
            versions = [
                v for row in con.execute("SELECT * FROM schema_version") for v in row
                if type(v) is int
            ]  # fmt: skip
            if versions and max(versions) > MAX_STATE_SCHEMA:
                raise FormatDrift(
                    f"Hermes state.db schema {max(versions)} is newer than this adapter "
                    f"knows (<= {MAX_STATE_SCHEMA})"
                )
        records = 0
        sessions: dict[str, dict[str, Any]] = {}
        if "sessions" in tables:
            for row in _dicts(con, "SELECT * FROM sessions" + _only("id", only), only):
                records += 1
                if text_of(row.get("id")) is not None:
                    sessions[row["id"]] = row
        models: dict[str, dict[str, dict[str, int]]] = {}
        if "session_model_usage" in tables:
            records += _model_usage(con, models, only)
        last: dict[str, float] = {}
        if "messages" in tables:
            records += _messages(con, sessions, last, sink, only)
        for sid, row in sessions.items():
            try:
                _session_rows(row, sid, models.get(sid), last.get(sid), sink,
                              started=row.get("started_at"), updated=row.get("ended_at"))  # fmt: skip
            except InvalidRecord:
                continue
        return records


def _lenient_text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def _tables(con: sqlite3.Connection) -> set[str]:
    return {str(n) for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _only(column: str, only: str | None) -> str:
    """The WHERE clause keeping the sessions of the JSON array bound as its parameter."""
    return "" if only is None else f" WHERE {column} IN (SELECT value FROM json_each(?))"


def _dicts(con: sqlite3.Connection, sql: str, only: str | None = None) -> Iterator[dict[str, Any]]:
    cursor = con.execute(sql, () if only is None else (only,))
    names = [str(d[0]) for d in cursor.description]
    for row in cursor:
        yield dict(zip(names, row, strict=True))


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in con.execute("SELECT * FROM pragma_table_info(?)", (table,))}


def _model_usage(
    con: sqlite3.Connection, models: dict[str, dict[str, dict[str, int]]], only: str | None
) -> int:
    """Sum ``session_model_usage`` rows per (session, model) [?]."""
    rows = 0
    query = "SELECT * FROM session_model_usage" + _only("session_id", only)
    for row in _dicts(con, query, only):
        rows += 1
        sid, model = row.get("session_id"), row.get("model")
        if not isinstance(sid, str) or not sid or (model is not None and type(model) is not str):
            continue
        try:
            counts = {k: token_count(row.get(k)) for k in COUNTERS}
        except InvalidRecord:
            continue
        counts = {k: v for k, v in counts.items() if v}
        if not counts:
            continue
        total = models.setdefault(sid, {}).setdefault(model or "", dict.fromkeys(COUNTERS, 0))
        for key, value in counts.items():
            total[key] += value
    return rows


def _messages(
    con: sqlite3.Connection, sessions: dict[str, dict[str, Any]], last: dict[str, float],
    sink: RowSink, only: str | None,
) -> int:  # fmt: skip
    """Every message row, session by session in row order (archived ``active = 0``
    rows too: they are history no other copy may hold; their compaction copies merge
    with them by :class:`.hermes_messages.SessionMessages`)."""
    have = _columns(con, "messages")
    if not {"session_id", "id", "role"} <= have:
        return 0
    columns = ", ".join(c for c in _MESSAGE_COLUMNS if c in have)  # names from a fixed list
    rows = 0
    current: str | None = None
    names = SessionMessages()
    model: str | None = None
    sidechain = False
    query = f"SELECT {columns} FROM messages{_only('session_id', only)} ORDER BY session_id, id"
    for message in _dicts(con, query, only):
        rows += 1
        sid = message["session_id"]
        if type(sid) is not str or not sid:
            continue
        if sid != current:
            current, names = sid, SessionMessages()
            session = sessions.get(sid, {})
            model = text_of(session.get("model"))
            sidechain = delegate_parent(session)[1]
            if sid not in sessions:
                sink.session(sid)
        stamp = message.get("timestamp")
        try:
            emit_message(message, sid, names, model, sidechain, 0, sink)
        except InvalidRecord:
            continue
        if isinstance(stamp, int | float) and stamp > last.get(sid, 0):
            last[sid] = float(stamp)
    return rows


# --------------------------------------------------------------------------- JSON logs


class SessionLogAdapter:
    """Maps one ``sessions/session_<id>.json`` document."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The session its name gives (``session_<id>.json``)."""
        name = rel_parts(source)[-1]
        match = _LOG_NAME.match(name)
        return SourceContext(source, match.group(1) if match else name)

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """The session and its messages; returns how many messages it held. Raises
        :class:`InvalidRecord` for a document that is not a session log."""
        if type(document) is not dict or not isinstance(document.get("messages"), list):
            raise InvalidRecord("not a Hermes session log (no messages list)")
        sid = document.get("session_id", ctx.session_id)
        if type(sid) is not str or not sid:
            raise InvalidRecord("'session_id' is not a string")
        row = dict(document)
        row["source"] = document.get("platform")
        messages = document["messages"]
        model = text_of(document.get("model"))
        sidechain = delegate_parent(row)[1]
        names = SessionMessages()
        for message in messages:
            if type(message) is not dict:
                raise InvalidRecord("a message is not an object")
            emit_message(message, sid, names, model, sidechain, 0, sink)
        started, updated = document.get("session_start"), document.get("last_updated")
        for value in (started, updated):
            if value is not None and type(value) is not str:
                raise InvalidRecord("session times are not ISO text")
        # No token fields: nothing for emit_totals (the counters are absent).
        _session_rows(row, sid, None, None, sink, started=started, updated=updated)
        return len(messages)


# --------------------------------------------------------------------------- exports


class ExportAdapter:
    """Maps ``hermes sessions export`` lines: one session with its messages per line."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The file names its sessions in its lines; the context's own id is the file's."""
        return SourceContext(source, source.path.stem)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """One exported session. The first line must be one (else the file is not an
        export); a session id given before is a duplicate."""
        memo = ctx.memo
        first = "ids" not in memo
        sid = record.get("id")
        if first and (type(sid) is not str or not isinstance(record.get("messages"), list)):
            raise NotThisFormat("its first line is not a Hermes session with messages")
        _check_export_version(record.get("schemaVersion"))
        memo.setdefault("ids", {})
        if type(sid) is not str or not sid:
            raise InvalidRecord("an exported session needs a string 'id'")
        messages = record.get("messages")
        if not isinstance(messages, list):
            raise InvalidRecord("'messages' is not a list")
        for key in ("started_at", "ended_at"):
            if record.get(key) is not None and type(record[key]) not in (int, float):
                raise InvalidRecord(f"'{key}' is not a number")
        if sid in memo["ids"]:
            raise DuplicateRecord(f"session {sid[:80]!r} was exported before in this file")
        for message in messages:  # a bad message rejects the line before any row of it
            if type(message) is not dict or message.get("id") is None:
                raise InvalidRecord("an exported message needs an object with an 'id'")
            check_message(message)
        for key in COUNTERS:
            token_count(record.get(key))
        names = SessionMessages()
        model = text_of(record.get("model"))
        sidechain = delegate_parent(record)[1]
        last: float | None = None
        for message in messages:
            emit_message(message, sid, names, model, sidechain, offset, sink)
            stamp = message.get("timestamp")
            if isinstance(stamp, int | float) and not isinstance(stamp, bool):
                seconds = stamp / 1000 if stamp >= 1e10 else stamp
                last = seconds if last is None else max(last, seconds)
        memo["ids"][sid] = 1
        _session_rows(record, sid, None, last, sink, started=record.get("started_at"),
                      updated=record.get("ended_at"), offset=offset)  # fmt: skip
        return "mapped"
