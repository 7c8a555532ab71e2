"""The generic session interchange, ``aiwg.session-interchange`` 1.x: a JSONL file any
exporter can write for an agent without an adapter of its own. Read only from files the
user names (``import --file``); it has no native store to discover.

Line 1 is the header (``type: "aiwg.session-interchange"``, ``schemaVersion`` X.Y.Z of
major 1, ``product``, ``productVersion``, ``sourceId``, ``exportedAt`` with a UTC offset,
``consistency``, ``lifecycle``, ``workspace{id, name?, repository?, branch?}``,
``provenance{exporter, exporterVersion, sourceClass}``, ``extensions{}``); a file whose
first line is not such a header is refused whole (``SOURCE_CORRUPT``), one of another
major version as drift. Every later line is an event: ``type: "event"``, ``sessionId``,
``eventId`` (unique in the file), ``sequence`` (an integer ≥ 0, unique per session),
``kind``, ``text``, ``lifecycle``, optional ``role``, ``occurredAt`` (with an offset) and
``extensions{}``.

* Sessions are named ``<sourceId>/<sessionId>``: two exporters' ``s1`` stay apart, and
  the same export imported twice (or re-exported under its source id) is one session.
* Kinds: ``message`` is prose by ``role`` (user: a prompt, assistant: a response,
  system: a system line); ``reasoning``/``thinking``; ``tool-call``/``tool_call``/
  ``tool-use`` (the tool's name is ``extensions.toolName``, else the text;
  ``extensions.toolCallId``; ``extensions.input`` as the tool input); ``tool-result``/
  ``tool_result`` (``extensions.toolCallId``, ``extensions.isError``); ``summary``;
  any other kind is kept as a system line with its text.
* Tokens, by agreement (the format defines none): ``extensions.usage`` = ``{"model",
  "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens",
  "reasoningTokens"}`` on an event makes it one model call, identified by its event id.
* A repeated ``eventId``, or a repeated ``sequence`` within a session, is rejected as
  ``DUPLICATE_ID`` (the first copy stands); a time without a UTC offset as an invalid
  record (it names no instant). A last line without its newline stays pending, as for
  every JSONL source, until the exporter finishes it.
"""

from __future__ import annotations

import re
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
from . import generic_agentlake

ADAPTER_VERSION: Final = "1.0"
FORMAT: Final = "aiwg.session-interchange"
KNOWN_MAJORS: Final = frozenset({1})

_SEMVER: Final = re.compile(r"^(\d+)\.\d+\.\d+")
# RFC 3339 with a time and an explicit offset: anything else names no instant.
_INSTANT: Final = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d:?\d\d)$")
_TOOL_CALL: Final = frozenset({"tool-call", "tool_call", "tool-use", "tool_use"})
_TOOL_RESULT: Final = frozenset({"tool-result", "tool_result"})
_REASONING: Final = frozenset({"reasoning", "thinking"})
_PROSE: Final[dict[str, BlockType]] = {"user": "text", "assistant": "text", "system": "system"}
_HEADER_KEYS: Final = ("schemaVersion", "product", "sourceId", "exportedAt")


def owns(rel: RelParts) -> bool:
    """Never: interchange files are named by the user, not discovered."""
    return False


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is an interchange file: its first line is
    a JSON object of type ``aiwg.session-interchange``."""
    first = head.split(b"\n", 1)[0]
    if FORMAT.encode() not in first:
        return False
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and value.get("type") == FORMAT


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class GenericAdapter:
    """Maps interchange lines to events, calls and sessions."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The file names its sessions in its lines; the context's own id is the file's."""
        return SourceContext(source, source.path.stem)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """The header (the first record) or one event."""
        memo = ctx.memo
        if "source" not in memo:
            self._header(record, memo)
            return "mapped"
        kind = record.get("type")
        if kind == FORMAT:
            raise InvalidRecord("a second interchange header")
        if kind != "event":
            return "unknown"
        return self._event(record, offset, ctx, sink)

    @staticmethod
    def _header(rec: dict[str, Any], memo: dict[str, Any]) -> None:
        if rec.get("type") != FORMAT:
            raise NotThisFormat(f"its first line is not an {FORMAT} header")
        missing = [k for k in _HEADER_KEYS if not isinstance(rec.get(k), str) or not rec[k]]
        if missing:
            raise NotThisFormat(f"the header lacks {', '.join(missing)}")
        match = _SEMVER.match(rec["schemaVersion"])
        if match is None:
            raise NotThisFormat(f"schemaVersion {rec['schemaVersion'][:40]!r} is not X.Y.Z")
        if int(match.group(1)) not in KNOWN_MAJORS:
            raise FormatDrift(f"{FORMAT} schema {rec['schemaVersion'][:40]} has an unknown major")
        if not _INSTANT.match(rec["exportedAt"]):
            raise NotThisFormat("exportedAt has no UTC offset (an ambiguous time)")
        workspace = rec.get("workspace")
        workspace = workspace if isinstance(workspace, dict) else {}
        memo["source"] = rec["sourceId"]
        memo["project"] = (
            _string(workspace.get("repository"))
            or _string(workspace.get("name"))
            or _string(workspace.get("id"))
        )
        memo["branch"] = _string(workspace.get("branch"))
        memo["version"] = _string(rec.get("productVersion"))
        memo["agentlake"] = generic_agentlake.is_export(rec)
        # Every event id read, every session's sequences and the sessions seen (dicts:
        # the memo is saved as JSON with each checkpoint, and lookups stay O(1)).
        memo["ids"], memo["seqs"], memo["sessions"] = {}, {}, {}

    def _event(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        memo = ctx.memo
        native, session, sequence = rec.get("eventId"), rec.get("sessionId"), rec.get("sequence")
        if not isinstance(native, str) or not native or not isinstance(session, str) or not session:
            raise InvalidRecord("an event needs a non-empty eventId and sessionId")
        if type(sequence) is not int or sequence < 0:
            raise InvalidRecord("'sequence' is not an integer ≥ 0")
        text = rec.get("text")
        if not isinstance(text, str):
            raise InvalidRecord("'text' is not a string")
        when = rec.get("occurredAt")
        if when is not None and (not isinstance(when, str) or not _INSTANT.match(when)):
            raise InvalidRecord("'occurredAt' is not a time with a UTC offset (ambiguous)")
        ext = rec.get("extensions")
        ext = ext if isinstance(ext, dict) else {}
        ours = ext.get("agentlake")
        if memo.get("agentlake") and isinstance(ours, dict):
            # An agentlake export's rows carry their catalog identity: a repeated line is
            # the same row again and adds nothing, so the file's ids need not be
            # remembered (a million of them, saved with every checkpoint, would not fit).
            return generic_agentlake.map_line(rec, ours, when, offset, sink)
        ids, seqs, seq = memo["ids"], memo["seqs"].setdefault(session, {}), str(sequence)
        if native in ids:
            raise DuplicateRecord(f"event id {native[:80]!r} was given before")
        if seq in seqs:
            raise DuplicateRecord(f"sequence {seq} of session {session[:80]!r} was given before")
        ids[native] = seqs[seq] = 1
        sid = f"{memo['source']}/{session}"
        if sid not in memo["sessions"]:
            memo["sessions"][sid] = 1
            sink.session(sid, project_path=memo["project"], git_branch=memo["branch"],
                         cli_version=memo["version"])  # fmt: skip
        usage = ext.get("usage")
        model = _string(usage.get("model")) if isinstance(usage, dict) else None
        self._emit(rec, text, ext, sid, native, when, model, offset, sink)
        if isinstance(usage, dict):
            # No message id: event ids are unique within a file, not across exports, so
            # the call is identified by its session and event id.
            sink.usage(
                sid, None, None, native, when, model,
                token_count(usage.get("inputTokens")),
                token_count(usage.get("cacheWriteTokens")), 0,
                token_count(usage.get("cacheReadTokens")),
                token_count(usage.get("outputTokens")),
                token_count(usage.get("reasoningTokens")),
                False, offset,
            )  # fmt: skip
        return "mapped"

    @staticmethod
    def _emit(rec: dict[str, Any], text: str, ext: dict[str, Any], sid: str, native: str,
              when: str | None, model: str | None, offset: int, sink: RowSink) -> None:  # fmt: skip
        kind = _string(rec.get("kind"))  # a free string; any other value is an unknown kind
        role = _string(rec.get("role"))
        call_id = _string(ext.get("toolCallId"))
        if kind in _TOOL_CALL:
            name = _string(ext.get("toolName")) or text or None
            tool_input = json_text(ext["input"]) if "input" in ext else None
            sink.event(sid, native, 0, when, "tool_use", role or "assistant", None, offset,
                       model=model, tool_name=name, tool_call_id=call_id,
                       tool_input=tool_input)  # fmt: skip
        elif kind in _TOOL_RESULT:
            error = ext.get("isError")
            sink.event(sid, native, 0, when, "tool_result", role or "tool", text, offset,
                       tool_call_id=call_id, is_error=error if isinstance(error, bool) else None)  # fmt: skip
        elif kind in _REASONING:
            sink.event(sid, native, 0, when, "thinking", role or "assistant", text, offset,
                       model=model)  # fmt: skip
        elif kind == "summary":
            sink.event(sid, native, 0, when, "summary", role or "system", text, offset)
        elif kind == "message" and role in _PROSE:
            sink.event(sid, native, 0, when, _PROSE[role], role, text, offset, model=model)
        else:  # an unknown kind (or a message without a known role): kept, as a system line
            sink.event(sid, native, 0, when, "system", role, text, offset)
