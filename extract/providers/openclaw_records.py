"""OpenClaw session records (session format version 3, shared with the pi coding agent) to
rows: one mapping for a JSONL line and for a ``transcript_events.event_json`` value.

Field-level format: provider-formats-more §5 (and provider-formats §7 for the pi shapes
OpenClaw inherits: ``compaction``, ``branch_summary``, ``session_info``, ``label``, the
``bashExecution``/``custom``/``*Summary`` message roles; marked [?] there, mapped
tolerantly here).

Invariants:

* Identity comes from the records' own ids: an event is (session, record ``id``, block
  index) and a model call is (session, record ``id``), so the same record read from a
  live file, a ``.deleted.``/``.reset.`` history or the SQLite store is one event and one
  call. A record without an ``id`` (pre-v2 lines) is keyed by its whole content for its
  events, and its call by ccusage's content key (session, time, model, token counts,
  cost), so a repeated line counts once.
* Token rule (ccusage's OpenClaw parser): one call per assistant ``message`` with a
  ``usage`` object; ``input = usage.input`` (non-cached), ``cache_read = cacheRead``,
  ``cache_write = cacheWrite``, ``output = output``, ``reasoning = 0`` (not reported
  apart). When ``totalTokens`` exceeds the sum of the parts and ``output`` is 0, the
  difference is the output (ccusage's fallback); otherwise the excess is left out (the
  catalog's total is the sum of the parts; ccusage keeps it as an unpriced extra). A call
  whose tokens are all 0 is not a call. The model is the message's ``modelId``/``model``,
  else the latest ``model_change`` (or ``custom`` ``model-snapshot``) of the session.
* ``state`` is the per-session scratch space (the JSONL source's memo, or one dict per
  session of a database): current model, provider and last time seen. A call whose
  message and record carry no time is dated by the last time seen in its session
  (ccusage uses the file's mtime, which no re-import would reproduce).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome
from ..rows import RowSink
from ..schema import BlockType
from ..values import json_text, token_count
from .cursor_fields import instant

#: Session format majors this adapter knows: 1 (linear, no ids), 2 (tree), 3 (current).
KNOWN_SESSION_VERSIONS: Final = frozenset({1, 2, 3})

# Message roles whose content is the model's context but nobody's prose.
_SUMMARY_ROLES: Final = frozenset({"branchSummary", "compactionSummary"})

Handler = Callable[[dict[str, Any], str, int, dict[str, Any], RowSink], RecordOutcome]


def _str(value: Any) -> str | None:
    return value if type(value) is str and value else None


def _time(value: Any) -> str | None:
    """A record time: ISO text as written, or epoch milliseconds → ISO text (UTC)."""
    if type(value) is str:
        return value or None
    return instant(value) if type(value) in (int, float) else None


def _native_id(record: dict[str, Any]) -> str:
    """The record's ``id``; a record without one (pre-v2 lines) is keyed by its whole
    content, so a repeated line, or the same line in another copy of the session, is one
    event wherever it sits."""
    rid = record.get("id")
    if type(rid) is str and rid:
        return rid
    return "c:" + hashlib.blake2b(orjson.dumps(record, option=orjson.OPT_SORT_KEYS),
                                  digest_size=10).hexdigest()  # fmt: skip


def session_id_of(name: str) -> str | None:
    """The session id a transcript file name carries: what precedes ``.jsonl`` in
    ``<id>.jsonl``, ``<id>.jsonl.deleted.<ts>`` and ``<id>.jsonl.reset.<ts>``."""
    return name.split(".jsonl", 1)[0] or None


def _parent_id(path: str) -> str | None:
    """The session id of a fork's ``parentSession`` file path (a pi file name
    ``<time>_<uuid>.jsonl`` carries the id after the ``_``)."""
    stem = session_id_of(path.replace("\\", "/").rsplit("/", 1)[-1])
    if stem is not None and "_" in stem and stem[:4].isdigit():
        stem = stem.rsplit("_", 1)[1]
    return stem


def _check_version(version: Any) -> None:
    """Refuse an unknown major session format (FormatDrift); absent means version 1."""
    if version is None:
        return
    if type(version) is int:
        major = version
    elif type(version) is float and version.is_integer():
        major = int(version)
    elif type(version) is str and version.split(".", 1)[0].isdigit():
        major = int(version.split(".", 1)[0])
    else:
        raise InvalidRecord("session 'version' is neither a number nor a version string")
    if major not in KNOWN_SESSION_VERSIONS:
        raise FormatDrift(f"OpenClaw session format version {version} is not known")


def _blocks_text(content: list[Any]) -> str | None:
    """Text and image parts of a tool result or custom message, as one text."""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and type(block.get("text")) is str:
            parts.append(block["text"])
        elif block.get("type") == "image":
            parts.append(f"[image {_str(block.get('mimeType')) or ''}]".replace(" ]", "]"))
    return "\n".join(parts) if parts else None


def _content_text(content: Any) -> str | None:
    if content is None or type(content) is str:
        return content
    if isinstance(content, list):
        return _blocks_text(content)
    raise InvalidRecord("'content' is neither text nor a list of blocks")


def call_tokens(usage: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """``(input, cache_write, cache_read, output)`` of one ``usage`` object by the token
    rule above, or ``None`` when all are 0 (not a call). Raises InvalidRecord for a count
    out of range."""
    inp, out = token_count(usage.get("input")), token_count(usage.get("output"))
    read, write = token_count(usage.get("cacheRead")), token_count(usage.get("cacheWrite"))
    missing = token_count(usage.get("totalTokens")) - (inp + out + read + write)
    if missing > 0 and out == 0:
        out = missing
    if inp + out + read + write == 0:
        return None
    return inp, write, read, out


class RecordMapper:
    """Maps one OpenClaw record of a session to events, calls and session fields."""

    def __init__(self) -> None:
        self._types: dict[str, Handler] = {
            "session": self._session,
            "message": self._message,
            "model_change": self._model_change,
            "thinking_level_change": self._thinking_level,
            "custom": self._custom,
            "custom_message": self._custom_message,
            "compaction": self._summary,
            "branch_summary": self._summary,
            "session_info": self._session_info,
            "label": self._ignored,  # a bookmark on another entry
        }

    def map(
        self, record: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        """Map one record of session ``sid`` (at ``offset``, the line's byte offset or the
        row's sequence number); raises InvalidRecord / FormatDrift."""
        rtype = record.get("type")
        handler = self._types.get(rtype) if type(rtype) is str else None
        if handler is None:
            return "unknown"
        ts = _time(record.get("timestamp"))
        if ts is not None:
            state["ts"] = ts
        return handler(record, sid, offset, state, sink)

    def _ignored(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        return "ignored"

    # -- session header and settings ----------------------------------------------
    def _session(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        _check_version(rec.get("version"))
        parent = rec.get("parentSession")  # pi forks: the parent's file path [?]
        parent_id = _parent_id(parent) if type(parent) is str and parent else None
        model = _str(rec.get("modelId")) or _str(rec.get("model"))
        if model is not None:
            state["model"] = model
        cwd = rec.get("cwd")
        sink.session(
            sid,
            project_path=cwd if _str(cwd) else None,
            parent_session_id=parent_id if parent_id != sid else None,
            started_at=_time(rec.get("timestamp")),
            model=model,
        )
        return "mapped"

    def _set_model(self, source: dict[str, Any], sid: str, state: dict[str, Any],
                   sink: RowSink) -> str | None:  # fmt: skip
        model = _str(source.get("modelId")) or _str(source.get("model"))
        provider = _str(source.get("provider"))
        if model is not None:
            state["model"] = model
            sink.session(sid, model=model)
        if provider is not None:
            state["provider"] = provider
        return model

    def _model_change(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        model = self._set_model(rec, sid, state, sink)
        named = "/".join(p for p in (_str(rec.get("provider")), model) if p)
        text = f"model: {named}" if named else None
        sink.event(sid, _native_id(rec), 0, _time(rec.get("timestamp")), "system",
                   "system", text, offset, model=model)  # fmt: skip
        return "mapped"

    def _thinking_level(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        level = rec.get("thinkingLevel")
        if level is not None and type(level) is not str:
            raise InvalidRecord("'thinkingLevel' is not a string")
        sink.event(sid, _native_id(rec), 0, _time(rec.get("timestamp")), "system",
                   "system", f"thinking level: {level}" if level else None, offset)  # fmt: skip
        return "mapped"

    def _custom(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        if rec.get("customType") != "model-snapshot":
            return "ignored"  # extension state (``ui_state``…), not conversation
        data = rec.get("data")
        self._set_model(data if isinstance(data, dict) else rec, sid, state, sink)
        return "mapped"

    def _session_info(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        name = rec.get("name")
        if name is not None and type(name) is not str:
            raise InvalidRecord("session_info 'name' is not a string")
        if name and name.strip():
            sink.session(sid, title=name, title_rank=3)  # set by the person (/name)
        return "mapped"

    # -- conversation ---------------------------------------------------------------
    def _summary(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        summary = rec.get("summary")
        if type(summary) is not str:
            raise InvalidRecord(f"{rec.get('type')} 'summary' is not a string")
        sink.event(sid, _native_id(rec), 0, _time(rec.get("timestamp")), "summary",
                   "system", summary, offset)  # fmt: skip
        return "mapped"

    def _custom_message(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        text = _content_text(rec.get("content"))
        sink.event(sid, _native_id(rec), 0, _time(rec.get("timestamp")), "system",
                   "system", text, offset)  # fmt: skip
        return "mapped"

    def _message(
        self, rec: dict[str, Any], sid: str, offset: int, state: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            raise InvalidRecord("'message' is not an object")
        role = msg.get("role")
        if type(role) is not str:
            raise InvalidRecord("'message.role' is not a string")
        native = _native_id(rec)
        ts = _time(rec.get("timestamp")) or _time(msg.get("timestamp"))
        if role == "assistant":
            model = _str(msg.get("modelId")) or _str(msg.get("model")) or state.get("model")
            if model is not None and model != state.get("answered_by"):
                state["answered_by"] = model  # the session's model: its latest reply's
                sink.session(sid, model=model)
            self._assistant(msg, sid, native, ts, model, offset, sink)
            usage = msg.get("usage")
            if isinstance(usage, dict):
                self._usage(rec, msg, usage, sid, model, offset, state, sink)
        elif role == "toolResult":
            self._tool_result(msg, sid, native, ts, offset, sink)
        elif role == "bashExecution":
            self._bash(msg, sid, native, ts, offset, sink)
        else:
            # user prose; custom (v3 extension messages), system, summaries and any role
            # not seen yet are kept as system/summary lines rather than lost.
            btype: BlockType = (
                "text" if role == "user" else "summary" if role in _SUMMARY_ROLES else "system"
            )
            content = msg.get("content", msg.get("summary"))
            self._prose(content, role, btype, sid, native, ts, offset, sink)
        return "mapped"

    def _prose(self, content: Any, role: str, btype: BlockType, sid: str, native: str,
               ts: str | None, offset: int, sink: RowSink) -> None:  # fmt: skip
        if content is None or type(content) is str:
            if content:
                sink.event(sid, native, 0, ts, btype, role, content, offset)
            return
        if not isinstance(content, list):
            raise InvalidRecord("'message.content' is neither text nor a list")
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "image":
                mime = _str(block.get("mimeType"))
                sink.event(sid, native, i, ts, "image", role,
                           f"[image {mime}]" if mime else "[image]", offset)  # fmt: skip
            elif type(block.get("text")) is str:
                sink.event(sid, native, i, ts, btype, role, block["text"], offset)

    def _assistant(self, msg: dict[str, Any], sid: str, native: str, ts: str | None,
                   model: str | None, offset: int, sink: RowSink) -> None:  # fmt: skip
        content = msg.get("content")
        if content is not None and not isinstance(content, list):
            if type(content) is not str:
                raise InvalidRecord("'message.content' is neither text nor a list")
            content = [{"type": "text", "text": content}]
        blocks = content or []
        for i, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                sink.event(sid, native, i, ts, "text", "assistant",
                           text if type(text) is str else None, offset, model=model)  # fmt: skip
            elif kind == "thinking":
                thought = block.get("thinking")
                sink.event(sid, native, i, ts, "thinking", "assistant",
                           thought if type(thought) is str else None, offset,
                           model=model)  # fmt: skip
            elif kind == "toolCall":
                args = block.get("arguments")
                sink.event(sid, native, i, ts, "tool_use", "assistant", None, offset,
                           model=model, tool_name=_str(block.get("name")),
                           tool_call_id=_str(block.get("id")),
                           tool_input=None if args is None else json_text(args))  # fmt: skip
            elif kind == "image":
                mime = _str(block.get("mimeType"))
                sink.event(sid, native, i, ts, "image", "assistant",
                           f"[image {mime}]" if mime else "[image]", offset,
                           model=model)  # fmt: skip
        error = msg.get("errorMessage")
        if type(error) is str and error:  # a failed or aborted call: its reason
            sink.event(sid, native, len(blocks), ts, "system", "assistant", error, offset,
                       model=model, is_error=True)  # fmt: skip

    def _tool_result(self, msg: dict[str, Any], sid: str, native: str, ts: str | None,
                     offset: int, sink: RowSink) -> None:  # fmt: skip
        is_error = msg.get("isError")
        sink.event(sid, native, 0, ts, "tool_result", "toolResult",
                   _content_text(msg.get("content")), offset,
                   tool_name=_str(msg.get("toolName")), tool_call_id=_str(msg.get("toolCallId")),
                   is_error=is_error if type(is_error) is bool else None)  # fmt: skip

    def _bash(self, msg: dict[str, Any], sid: str, native: str, ts: str | None, offset: int,
              sink: RowSink) -> None:  # fmt: skip
        """A shell command the person ran (``!cmd``): a call and its output."""
        command, output, code = msg.get("command"), msg.get("output"), msg.get("exitCode")
        if type(command) is not str or (output is not None and type(output) is not str):
            raise InvalidRecord("bashExecution 'command'/'output' are not strings")
        call_id = f"{native}:bash"
        sink.event(sid, native, 0, ts, "tool_use", "user", None, offset, tool_name="bash",
                   tool_call_id=call_id, tool_input=json_text({"command": command}))  # fmt: skip
        failed = (type(code) is int and code != 0) or msg.get("cancelled") is True
        sink.event(sid, native, 1, ts, "tool_result", "user", output, offset, tool_name="bash",
                   tool_call_id=call_id, is_error=failed)  # fmt: skip

    def _usage(self, rec: dict[str, Any], msg: dict[str, Any], usage: dict[str, Any],
               sid: str, model: str | None, offset: int, state: dict[str, Any],
               sink: RowSink) -> None:  # fmt: skip
        """One model call (see the module docstring for the rule)."""
        tokens = call_tokens(usage)
        if tokens is None:
            return
        inp, write, read, out = tokens
        # ccusage dates a call by the message's own time first, then the line's.
        ts = _time(msg.get("timestamp")) or _time(rec.get("timestamp")) or state.get("ts")
        rid = rec.get("id")
        if type(rid) is str and rid:
            native = rid
        else:
            cost = usage.get("cost")
            total = cost.get("total") if isinstance(cost, dict) else None
            key = f"{ts}\0{model}\0{inp}\0{out}\0{write}\0{read}\0{total}"
            native = "c:" + hashlib.blake2b(key.encode(), digest_size=10).hexdigest()
        sink.usage(sid, None, None, native, ts, model, inp, write, 0, read, out, 0, False, offset)
