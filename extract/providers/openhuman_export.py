"""``openhuman-enriched-jsonl``: AIWG's wrapper of OpenHuman sessions (provider-formats-more
§6), an export read from files the user names (``import --file``); OpenHuman itself does
not write it.

Every line is ``{schemaVersion: 1, recordType, …}`` (one version per file: a line of
another version, or a first line of an unknown major, refuses the file as drift):

* ``session_raw`` (``session_id``, ``event_id``, ``thread_id``, ``type`` required;
  ``role``, ``content`` (a string or ``[{type: "text", text}]``), ``timestamp`` (epoch ms
  or ISO), ``metadata{provider, model, profile, nestedAgentId, parentAgentId}``,
  ``input_tokens``, ``cached_input_tokens``, ``output_tokens``, ``tool{name, status,
  output?, error?}``, ``attachment{id, name, state}``, ``compacted``, ``interrupted``):
  ``type`` ``message`` → by role as in the native transcript (:mod:`.openhuman`);
  ``tool`` → a tool result (``is_error`` when its status is ``failed``/``error``);
  ``attachment`` → a system line naming the file and whether it is present or expired;
  ``compaction`` → a summary; ``interruption``, ``session_end`` and any other type → a
  system line. A nested agent's events (``metadata.nestedAgentId``) are side-chain.
* ``thread_state`` (``thread_id``; ``title``, ``state``, ``deleted_at``): the thread's
  title becomes the title of its sessions (joined on ``thread_id``, in either order).
* ``turn_state`` (``thread_id``, ``request_id``, ``state``): a turn's lifecycle, which
  the catalog has no place for: read and ignored.

Identity: the session is ``session_id`` (AIWG names it after OpenHuman's file stem, so
a session imported natively and exported is one session); a ``message`` event has the
native transcript's content id (role, content digest, ordinal), so its two copies are
one event; other events are ``event_id``. A repeated ``event_id`` is a DUPLICATE_ID.

Tokens: AIWG documents ``input_tokens``/``cached_input_tokens``/``output_tokens`` as
cumulative per session [?] (its example spreads them over events): each counter's
largest value in the session is kept and written as the session's one usage row of
session granularity (the native ``_meta`` row's identity, so the two never add up),
with the same split as the native ``_meta``.
"""

from __future__ import annotations

from typing import Any, Final

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
from ..values import json_text, token_count
from .cursor_fields import instant
from .openhuman import KNOWN_MAJORS, ROLES, SESSION_TOTAL, message_id

FORMAT: Final = "openhuman-enriched-jsonl"
RECORD_TYPES: Final = frozenset({"session_raw", "thread_state", "turn_state"})
_REQUIRED: Final = ("session_id", "event_id", "thread_id", "type")
_FAILED: Final = frozenset({"failed", "error", "errored"})
_TOKENS: Final = ("input_tokens", "cached_input_tokens", "output_tokens")
_OTHER: Final[dict[str, BlockType]] = {"compaction": "summary"}


def owns(rel: RelParts) -> bool:
    """Never: exports are named by the user, not discovered."""
    return False


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is in this format: its first line is an
    object with a ``schemaVersion`` and one of the wrapper's ``recordType``s."""
    first = head.split(b"\n", 1)[0]
    if b'"recordType"' not in first:
        return False
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(value, dict)
        and value.get("recordType") in RECORD_TYPES
        and "schemaVersion" in value
    )


def _text(content: Any) -> str | None:
    """A string, or the texts of a list of ``{type: "text", text}`` parts joined."""
    if content is None or type(content) is str:
        return content
    if type(content) is list:
        parts = [p if type(p) is str else p.get("text") for p in content if type(p) in (str, dict)]
        return "\n".join(p for p in parts if type(p) is str)
    raise InvalidRecord("'content' is neither a string nor a list of parts")


def _str(rec: dict[str, Any], key: str) -> str:
    value = rec.get(key)
    if type(value) is not str or not value:
        raise InvalidRecord(f"'{key}' is missing or not a non-empty string")
    return value


class EnrichedExportAdapter:
    """Maps the lines of an ``openhuman-enriched-jsonl`` export (see the module doc)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The lines name their sessions; the context's own id is the file's."""
        return SourceContext(source, source.path.stem)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """One wrapper line."""
        memo = ctx.memo
        kind, version = record.get("recordType"), record.get("schemaVersion")
        if "version" not in memo:
            if kind not in RECORD_TYPES or type(version) is not int:
                raise NotThisFormat("its first line is not an OpenHuman wrapper record")
            if version not in KNOWN_MAJORS:
                raise FormatDrift(f"{FORMAT} schemaVersion {version} is unknown")
            memo.update(version=version, ids={}, threads={}, sessions={})
        if type(version) is not int:
            raise InvalidRecord("'schemaVersion' is not an integer")
        if version != memo["version"]:
            raise FormatDrift(f"schemaVersion {version} in a file of version {memo['version']}")
        if kind == "session_raw":
            self._event(record, offset, ctx, sink)
            return "mapped"
        if kind == "thread_state":
            self._thread(record, memo, sink)
            return "mapped"
        if kind == "turn_state":
            _str(record, "thread_id"), _str(record, "request_id"), _str(record, "state")
            return "ignored"
        return "unknown"

    @staticmethod
    def _thread(rec: dict[str, Any], memo: dict[str, Any], sink: RowSink) -> None:
        thread = memo["threads"].setdefault(_str(rec, "thread_id"), {"sessions": {}})
        title = rec.get("title")
        if title is not None and type(title) is not str:
            raise InvalidRecord("'title' is not a string")
        if title:
            thread["title"] = title
            for sid in thread["sessions"]:
                sink.session(sid, title=title, title_rank=2)

    def _event(self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink) -> None:
        memo = ctx.memo
        sid, native, thread_id, etype = (_str(rec, k) for k in _REQUIRED)
        if native in memo["ids"]:
            raise DuplicateRecord(f"event id {native[:80]!r} was given before")
        meta = rec.get("metadata")
        meta = meta if type(meta) is dict else {}
        model = meta.get("model") if type(meta.get("model")) is str else None
        role = rec.get("role")
        if role is not None and type(role) is not str:
            raise InvalidRecord("'role' is not a string")
        text = _text(rec.get("content"))
        memo["ids"][native] = 1
        session = memo["sessions"].get(sid)
        if session is None:
            session = memo["sessions"][sid] = {"seen": {}, "tokens": [0, 0, 0]}
            thread = memo["threads"].setdefault(thread_id, {"sessions": {}})
            thread["sessions"][sid] = 1
            sink.session(sid, title=thread.get("title"), title_rank=2)
        ts = instant(rec.get("timestamp"))
        side = type(meta.get("nestedAgentId")) is str
        if model is not None:
            sink.session(sid, model=model)
        if etype == "message" and role in ROLES and text is not None:
            native = message_id(role, text, session["seen"])
            block = ROLES[role]
            sink.event(sid, native, 0, ts, block, role, text, offset,
                       model=None if block == "tool_result" else model, is_sidechain=side)  # fmt: skip
        elif etype == "tool":
            self._tool(rec, sid, native, ts, role, text, side, offset, sink)
        elif etype == "attachment":
            att = rec.get("attachment")
            if type(att) is not dict:
                raise InvalidRecord("'attachment' is not an object")
            name = att.get("name") or att.get("id") or "attachment"
            state = att.get("state") or "present"
            sink.event(sid, native, 0, ts, "system", role, f"attachment {name} ({state})",
                       offset, is_sidechain=side)  # fmt: skip
        else:
            block = _OTHER.get(etype, "system")
            sink.event(sid, native, 0, ts, block, role, text or etype, offset,
                       is_sidechain=side)  # fmt: skip
        self._tokens(rec, sid, session, ts, model, offset, sink)

    @staticmethod
    def _tool(rec: dict[str, Any], sid: str, native: str, ts: str | None, role: str | None,
              text: str | None, side: bool, offset: int, sink: RowSink) -> None:  # fmt: skip
        tool = rec.get("tool")
        if type(tool) is not dict:
            raise InvalidRecord("'tool' is not an object")
        name, status = tool.get("name"), tool.get("status")
        output = tool.get("output", tool.get("error", text))
        if output is not None and type(output) is not str:
            output = json_text(output)
        sink.event(sid, native, 0, ts, "tool_result", role or "tool", output, offset,
                   tool_name=name if type(name) is str else None,
                   is_error=status in _FAILED if type(status) is str else None,
                   is_sidechain=side)  # fmt: skip

    @staticmethod
    def _tokens(rec: dict[str, Any], sid: str, session: dict[str, Any], ts: str | None,
                model: str | None, offset: int, sink: RowSink) -> None:  # fmt: skip
        if not any(k in rec for k in _TOKENS):
            return
        kept = session["tokens"]
        grew = False
        for i, key in enumerate(_TOKENS):
            value = token_count(rec.get(key))
            if value > kept[i]:
                kept[i], grew = value, True
        if not grew:
            return
        inp, cached, out = kept
        sink.usage(
            sid, None, None, SESSION_TOTAL, ts, model, max(inp - cached, 0), 0, 0, cached, out,
            0, False, offset, rank=max(inp, cached) + out, per_session=True,
        )  # fmt: skip
