"""AIWG's ``openclaw-consistent-snapshot-jsonl`` export (provider-formats-more §5): one
JSON document per line, each a snapshot of some OpenClaw sessions
``{schemaVersion: 16, eventVersion: 3, snapshotConsistency, gateway?, incognito?,
projection?, sessions: [{id, sessionKey, events: [...]}], providerDeletedAt?}``. No
OpenClaw tool writes it (AIWG projects a SQLite backup); files are named by the user
(``import --file``), never discovered.

Invariants:

* A line is one unit: it is checked whole before any row of it is emitted, so a bad
  session or event rejects the line (INVALID_RECORD; a session or event id given twice
  in one line: DUPLICATE_ID) and nothing of it is half imported.
* Identity is the agent's own: a session is its ``id`` (OpenClaw's session id, the
  native transcript's file stem and ``transcript_events.session_id``), an event is
  (session, event ``id``, part index) and a call is (session, event ``id``), as the
  native reader keys (session, record ``id``, block index). A session read natively and
  from a snapshot is one session; its calls count once, and a single-part message (the
  shape a snapshot event flattens to) is one event. A later snapshot of a session only
  adds what the earlier did not hold.
* Tokens: ``usage{}`` of any event is one call by the native rule
  (:func:`.openclaw_records.call_tokens`: input, cacheWrite, cacheRead, output, else
  totalTokens minus the parts); the model is ``model.id`` (else ``modelId``/``name``).
* Refused lines (rejected as INVALID_RECORD with the reason, nothing of them imported):
  ``incognito: true`` (OpenClaw keeps incognito sessions inaccessible); a ``remote``
  gateway whose ``hostId`` is not its ``expectedHostId`` (a degraded, unauthorized
  copy); a canonical snapshot without ``snapshotConsistency: "sqlite-backup"`` (a copy
  of a live WAL database taken without SQLite's backup API may be inconsistent).
* Degraded projections (``projection.kind`` ``bounded-history``, ``html``,
  ``trajectory``: AIWG's ``lossless: false`` classes) are imported as far as they go,
  and each of their sessions says so in its header event (below).
* Each session gets one header event (``system``, native id ``snapshot``): its key,
  agent, conversation, state and, for a lossy projection or a history gap, what is
  missing. The catalog has no agent column; this is where the agent is named.
* A first line that is not a snapshot refuses the file (NotThisFormat); an unknown
  major of ``schemaVersion`` (16) or ``eventVersion`` (3) is FormatDrift.

Not mapped (no catalog column): ``identityKey``, ``stateVersion`` (named in the header),
``idempotencyKey``, ``tool.status`` beyond errors, ``opaque`` of a known event type.
Event types other than AIWG's (``message``, ``tool``, ``media``, ``lifecycle``,
``trajectory``) and ``reasoning``/``thinking`` [?] are kept as system lines.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, get_args

import orjson

from ..adapter import (
    DuplicateRecord,
    FormatDrift,
    InvalidRecord,
    NotThisFormat,
    RecordOutcome,
    SourceContext,
)
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, SourceFile
from ..values import json_text, token_count, version_major
from .cursor_fields import instant
from .openclaw_records import call_tokens

FORMAT: Final = "openclaw-consistent-snapshot-jsonl"
SCHEMA_MAJOR: Final = 16
EVENT_MAJOR: Final = 3
HEADER_ID: Final = "snapshot"  # the native id of a session's header event

ProjectionKind = Literal["canonical", "bounded-history", "html", "trajectory"]
LineageKind = Literal["reset", "fork", "rewind", "compaction"]
_PROJECTIONS: Final[frozenset[str]] = frozenset(get_args(ProjectionKind))
_LINEAGES: Final[frozenset[str]] = frozenset(get_args(LineageKind))
_FAILED: Final = frozenset({"failed", "error", "errored", "cancelled", "aborted", "denied"})

# A first line (possibly cut by the sniffing window) opening a snapshot document.
_HEAD: Final = re.compile(rb'^\s*\{\s*"schemaVersion"\s*:\s*"?\d+[",.\s}]')


def owns_nothing(rel: RelParts) -> bool:
    """Never: snapshots are files the user names."""
    return False


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a snapshot export: its first line is an
    object opening with a numeric ``schemaVersion`` (of any major: a drifted file is
    still this format's, refused as drift) that names ``eventVersion`` and a
    ``sessions`` list (AIWG writes the keys in this order); a line cut short by the
    window must show both keys."""
    first, newline, _ = head.partition(b"\n")
    if not newline:
        return (
            _HEAD.match(first) is not None
            and b'"eventVersion"' in first
            and (b'"sessions":[' in first or b'"sessions": [' in first)
        )
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return (
        type(value) is dict
        and _HEAD.match(first) is not None
        and "eventVersion" in value
        and type(value.get("sessions")) is list
    )


def _check_versions(record: dict[str, Any]) -> None:
    for key, major in (("schemaVersion", SCHEMA_MAJOR), ("eventVersion", EVENT_MAJOR)):
        value = record.get(key)
        found = version_major(value)
        if found is None:
            raise InvalidRecord(f"'{key}' is not a version")
        if found != major:
            raise FormatDrift(f"OpenClaw snapshot {key} {str(value)[:20]} is not of major {major}")


def _opt(obj: dict[str, Any], key: str, types: tuple[type, ...], what: str) -> Any:
    """``obj[key]`` when absent, null or exactly of one of ``types`` (a bool is no
    number); InvalidRecord otherwise."""
    value = obj.get(key)
    if value is not None and type(value) not in types:
        raise InvalidRecord(f"{what} '{key}' has an impossible type")
    return value


_NUM: Final = (int, float)
_TIME: Final = (int, float, str)


def _refusal(record: dict[str, Any]) -> str | None:
    """Why a snapshot line is not imported, if it is not."""
    if record.get("incognito") is True:
        return "incognito snapshot: OpenClaw keeps incognito sessions inaccessible"
    gateway = _opt(record, "gateway", (dict,), "snapshot")
    if gateway is not None:
        mode = gateway.get("mode")
        if mode not in ("local", "remote"):
            raise InvalidRecord("'gateway.mode' is neither 'local' nor 'remote'")
        host, expected = gateway.get("hostId"), gateway.get("expectedHostId")
        if mode == "remote" and (type(host) is not str or host != expected):
            return (f"remote gateway host {str(host)[:60]!r} is not the expected "
                    f"{str(expected)[:60]!r}: a degraded snapshot, refused")  # fmt: skip
    if _projection(record)[0] == "canonical" and record.get("snapshotConsistency") != (
        "sqlite-backup"
    ):
        return ("not a consistent snapshot (no snapshotConsistency 'sqlite-backup'): a copy "
                "of the live database may be torn")  # fmt: skip
    return None


def _projection(record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    projection = _opt(record, "projection", (dict,), "snapshot") or {}
    kind = projection.get("kind", "canonical")
    if type(kind) is not str or kind not in _PROJECTIONS:
        raise InvalidRecord(f"unknown projection kind {str(kind)[:40]!r}")
    _opt(projection, "complete", (bool,), "projection")
    _opt(projection, "limitation", (str,), "projection")
    _opt(projection, "omittedBefore", _TIME, "projection")
    return kind, projection


def _check_session(session: Any) -> None:
    if type(session) is not dict:
        raise InvalidRecord("a snapshot session is not an object")
    for key in ("id", "sessionKey"):
        if type(session.get(key)) is not str or not session[key]:
            raise InvalidRecord(f"a snapshot session needs a string '{key}'")
    if type(session.get("events")) is not list:
        raise InvalidRecord("a snapshot session needs an 'events' list")
    for key in ("conversationId", "agentId", "identityKey"):
        _opt(session, key, (str,), "session")
    for key in ("startedAt", "updatedAt", "archivedAt"):
        _opt(session, key, _TIME, "session")
    _opt(session, "stateVersion", _NUM, "session")
    for key in ("recovered", "active"):
        _opt(session, key, (bool,), "session")
    window = _opt(session, "window", (dict,), "session")
    if window is not None:
        for key in ("firstSequence", "lastSequence"):
            _opt(window, key, _NUM, "window")
        _opt(window, "historyGap", (bool,), "window")
    seen: set[str] = set()
    for event in session["events"]:
        _check_event(event)
        if event["id"] in seen:
            raise DuplicateRecord(f"event {event['id'][:80]!r} is given twice in one session")
        seen.add(event["id"])


def _check_event(event: Any) -> None:
    if type(event) is not dict:
        raise InvalidRecord("a snapshot event is not an object")
    for key in ("id", "type"):
        if type(event.get(key)) is not str or not event[key]:
            raise InvalidRecord(f"a snapshot event needs a string '{key}'")
    for key in ("parentId", "role", "text", "idempotencyKey"):
        _opt(event, key, (str,), "event")
    _opt(event, "timestamp", _TIME, "event")
    for key in ("model", "media"):
        _opt(event, key, (dict,), "event")
    tool = _opt(event, "tool", (dict,), "event")
    if tool is not None:
        _opt(tool, "name", (str,), "tool")
        _opt(tool, "status", (str,), "tool")
    usage = _opt(event, "usage", (dict,), "event")
    if usage is not None:
        call_tokens(usage)  # a count out of range rejects the line
        token_count(usage.get("totalTokens"))
    lineage = _opt(event, "lineage", (dict,), "event")
    if lineage is not None:
        kind = lineage.get("kind")
        if type(kind) is not str or kind not in _LINEAGES:
            raise InvalidRecord("'lineage.kind' is not reset, fork, rewind or compaction")
        _opt(lineage, "fromSessionId", (str,), "lineage")
        _opt(lineage, "checkpointId", (str,), "lineage")


def _text(value: Any) -> str | None:
    """Text as given, or any other JSON value as compact JSON."""
    if value is None or type(value) is str:
        return value
    return json_text(value)


def _model(event: dict[str, Any]) -> str | None:
    model = event.get("model")
    if model is None:
        return None
    for key in ("id", "modelId", "name"):
        if type(model.get(key)) is str and model[key]:
            return str(model[key])
    return None


def _header(session: dict[str, Any], kind: str, projection: dict[str, Any],
            deleted: Any) -> str:  # fmt: skip
    """The session's header line: what the snapshot says of it that no column holds."""
    parts = [f"OpenClaw session {session['sessionKey']}"]
    if session.get("agentId"):
        parts.append(f"agent {session['agentId']}")
    if session.get("conversationId"):
        parts.append(f"conversation {session['conversationId']}")
    if session.get("stateVersion") is not None:
        parts.append(f"state version {session['stateVersion']}")
    flags = [k for k in ("active", "recovered") if session.get(k) is True]
    if session.get("archivedAt") is not None:
        flags.append("archived")
    if flags:
        parts.append(", ".join(flags))
    if deleted is not None:
        parts.append(f"deleted by OpenClaw at {instant(deleted) or deleted}")
    if kind != "canonical":
        lossy = f"lossy {kind} projection"
        if projection.get("complete") is not True:
            lossy += ", incomplete"
        if projection.get("limitation"):
            lossy += f": {projection['limitation']}"
        if projection.get("omittedBefore") is not None:
            omitted = projection["omittedBefore"]
            lossy += f"; history before {instant(omitted) or omitted} omitted"
        parts.append(lossy)
    window = session.get("window") or {}
    if window.get("historyGap") is True:
        parts.append(f"history gap (sequences {window.get('firstSequence')}"
                     f"–{window.get('lastSequence')} held)")  # fmt: skip
    return "; ".join(parts)


class SnapshotAdapter:
    """Maps snapshot lines: each one or more sessions with their events."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The sessions are named inside the lines; the context's own id is the file's."""
        return SourceContext(source, source.path.stem)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """One snapshot line (see the module docstring for what refuses it)."""
        if "snapshot" not in ctx.memo:
            if not ("schemaVersion" in record and "eventVersion" in record
                    and "sessions" in record):  # fmt: skip
                raise NotThisFormat("its first line is not an OpenClaw snapshot")
            ctx.memo["snapshot"] = 1
        _check_versions(record)
        reason = _refusal(record)
        if reason is not None:
            raise InvalidRecord(reason)
        kind, projection = _projection(record)
        sessions = record.get("sessions")
        if type(sessions) is not list:
            raise InvalidRecord("'sessions' is not a list")
        deleted = _opt(record, "providerDeletedAt", _TIME, "snapshot")
        seen: set[str] = set()
        for session in sessions:
            _check_session(session)
            if session["id"] in seen:
                raise DuplicateRecord(f"session {session['id'][:80]!r} is given twice")
            seen.add(session["id"])
        for session in sessions:  # checked whole: now the rows
            self._session(session, kind, projection, deleted, offset, sink)
        return "mapped" if sessions else "ignored"

    def _session(self, session: dict[str, Any], kind: str, projection: dict[str, Any],
                 deleted: Any, offset: int, sink: RowSink) -> None:  # fmt: skip
        sid: str = session["id"]
        started, updated = instant(session.get("startedAt")), instant(session.get("updatedAt"))
        sink.event(sid, HEADER_ID, 0, started, "system", "system",
                   _header(session, kind, projection, deleted), offset)  # fmt: skip
        last = started
        model: str | None = None
        parent: str | None = None
        for event in session["events"]:
            ts = instant(event.get("timestamp"))
            last = ts or last
            event_model = _model(event)
            if event_model is not None and event.get("role") != "user":
                model = event_model
            lineage = event.get("lineage")
            if lineage is not None and lineage["kind"] == "fork":
                parent = lineage.get("fromSessionId") or parent
            _event(event, sid, ts, event_model or model, offset, sink)
            usage = event.get("usage")
            tokens = call_tokens(usage) if usage is not None else None
            if tokens is not None:
                inp, write, read, out = tokens
                sink.usage(sid, None, None, event["id"], ts or last or updated,
                           event_model or model, inp, write, 0, read, out, 0, False,
                           offset)  # fmt: skip
        sink.session(
            sid,
            started_at=started,
            updated_at=updated,
            archived=True if session.get("archivedAt") is not None else None,
            model=model,
            parent_session_id=parent if parent != sid else None,
        )


def _event(event: dict[str, Any], sid: str, ts: str | None, model: str | None, offset: int,
           sink: RowSink) -> None:  # fmt: skip
    """The rows of one event: by its ``type``, then its role (see the module docstring)."""
    native, etype, role = event["id"], event["type"], event.get("role")
    text = event.get("text")
    tool, media, lineage = event.get("tool"), event.get("media"), event.get("lineage")
    if tool is not None:
        name = tool.get("name")
        status = tool.get("status")
        sink.event(sid, native, 0, ts, "tool_use", role or "assistant", text, offset,
                   model=model, tool_name=name, tool_call_id=native,
                   tool_input=_text(tool.get("input")))  # fmt: skip
        if tool.get("output") is not None or status in _FAILED:
            sink.event(sid, native, 1, ts, "tool_result", "toolResult",
                       _text(tool.get("output")), offset, tool_name=name,
                       tool_call_id=native, is_error=status in _FAILED)  # fmt: skip
        return
    if media is not None:
        mime = media.get("mime") or media.get("mimeType")
        label = " ".join(str(v) for v in (media.get("kind"), mime, media.get("name")) if v)
        image = media.get("kind") == "image" or str(mime or "").startswith("image/")
        sink.event(sid, native, 0, ts, "image" if image else "system", role or "user",
                   f"[{label}]" if label else "[media]", offset)  # fmt: skip
        return
    if lineage is not None:
        sink.event(sid, native, 0, ts, "summary" if text else "system", "system",
                   text or _lineage_text(lineage), offset)  # fmt: skip
        return
    block: BlockType
    if etype in ("reasoning", "thinking"):
        block = "thinking"
    elif etype == "message" and role in ("user", "assistant"):
        block = "text"
    elif role == "toolResult":
        block = "tool_result"
    else:
        block = "system"
    if text is None and block == "system" and event.get("opaque") is not None:
        text = f"{etype}: {json_text(event['opaque'])}"
    sink.event(sid, native, 0, ts, block, role or "system", text, offset,
               model=model if role == "assistant" else None)  # fmt: skip


def _lineage_text(lineage: dict[str, Any]) -> str:
    kind = lineage["kind"]
    words = [kind]
    if lineage.get("fromSessionId"):
        words.append(f"from session {lineage['fromSessionId']}")
    if lineage.get("checkpointId"):
        words.append(f"at checkpoint {lineage['checkpointId']}")
    return " ".join(words)
