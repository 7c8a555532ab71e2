"""Hermes records as rows, shared by its three formats (``state.db``, the session JSON
logs and ``hermes sessions export`` lines): one message → events, one session row →
session fields and its cumulative token totals (provider-formats-more §3).

Message identity (the invariant that makes one session read from several of these
sources one session, its rows not doubled): the JSON logs carry no message ids, so a
message is named by what every copy shares — its tool call id (a tool result's
``tool_call_id``, an assistant turn's first ``tool_calls[].id``), else its role and a
digest of its content — plus ``#n``, the count of earlier messages of the session with
the same name, in transcript order. Where messages carry times (``state.db``, exports),
a message with the same name and time as an earlier one of its session is that message
again (in-place compaction re-inserts the kept context as new ``active=1`` rows with
identical content and time): it takes the earlier copy's id. [?] A message said twice
word for word, the first copy dropped by a compaction, may be named apart in a JSON log
written after that compaction.

Block layout of a message (fixed, so every source gives a block the same index):
0 ``reasoning``, 1 ``reasoning_content``, 2 ``reasoning_details`` texts, 3
``codex_reasoning_items`` texts (each only when its text differs from the earlier
ones), 4 the content's text, 50+i its image parts, 100+i ``tool_calls[i]``.
"""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from ..adapter import InvalidRecord
from ..rows import RowSink
from ..values import json_text, token_count

# Hermes' roles; ``session_meta`` ends a JSON log's messages and is no message. Any
# other role is kept, as a system line with its role.
_PROSE: Final = frozenset({"user", "assistant"})
SESSION_META: Final = "session_meta"
SYSTEM_PROMPT_ID: Final = "system-prompt"
SESSION_TOTAL: Final = "session-total"
# The cumulative counters of ``sessions`` (and of an exported session line).
COUNTERS: Final = (
    "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens",
    "reasoning_tokens",
)  # fmt: skip
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def instant(value: Any) -> str | None:
    """A Hermes time as ISO text: Unix seconds (REAL; a number ≥ 1e10 is milliseconds,
    AIWG's rule), or ISO text kept as written (without a zone it names no instant and
    the transform stage leaves it null [?])."""
    if type(value) is str:
        return value if len(value) >= 19 and value[4] == "-" else None
    if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
        return None
    seconds = value / 1000 if value >= 1e10 else float(value)
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def loads(value: Any) -> Any:
    """A JSON-text column (``tool_calls``, ``model_config``…) parsed; a value already
    parsed (JSON logs, exports) as it is; ``None`` for text that is not JSON."""
    if type(value) is str:
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def text_of(value: Any) -> str | None:
    """A non-empty string, else ``None``."""
    return value if type(value) is str and value else None


class SessionMessages:
    """Names the messages of one session in transcript order (module docstring)."""

    __slots__ = ("_by_time", "_seen")

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._by_time: dict[tuple[str, float], str] = {}

    def name(self, message: dict[str, Any], content: Any, calls: Any, ts: float | None) -> str:
        """The native id of ``message`` (its parsed content and tool calls given)."""
        key = _content_key(message, content, calls)
        if ts is not None and (known := self._by_time.get((key, ts))) is not None:
            return known
        n = self._seen.get(key, 0)
        self._seen[key] = n + 1
        native = f"{key}#{n}"
        if ts is not None:
            self._by_time[(key, ts)] = native
        return native


def _content_key(message: dict[str, Any], content: Any, calls: Any) -> str:
    role = message.get("role")
    call_id = text_of(message.get("tool_call_id"))
    if call_id is not None:
        return f"tool:{call_id}"
    if calls:
        first = calls[0].get("id") if isinstance(calls[0], dict) else None
        if text_of(first):
            return f"call:{first}"
    text = content if type(content) is str else json_text(content) if content else ""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{role}:{digest}"


def _content(value: Any) -> Any:
    """A message's content: text, a list of parts, or ``None``. Text holding a JSON list
    of typed parts (a multimodal message stored in a TEXT column [?]) is that list."""
    if type(value) is str:
        if value.startswith('[{"type"'):
            parts = loads(value)
            if isinstance(parts, list):
                return parts
        return value
    if value is None or isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]
    raise InvalidRecord("message 'content' is neither text nor a list of parts")


def _tool_input(arguments: Any) -> str | None:
    """Tool arguments as JSON text: the arguments string parsed when it is JSON."""
    if arguments is None:
        return None
    if type(arguments) is str:
        parsed = loads(arguments)
        return json_text(parsed if parsed is not None or arguments == "null" else arguments)
    return json_text(arguments)


def _item_texts(value: Any) -> str | None:
    """The ``text``/``summary`` strings of reasoning items (``reasoning_details``,
    ``codex_reasoning_items``), joined; encrypted items carry none."""
    items = loads(value)
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return None
    texts: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        for key in ("text", "summary", "content"):
            found = item.get(key)
            if type(found) is str and found:
                texts.append(found)
            elif isinstance(found, list):  # Codex summaries: [{type, text}]
                texts.extend(
                    p["text"] for p in found if isinstance(p, dict) and text_of(p.get("text"))
                )
    return "\n".join(texts) or None


def check_message(message: dict[str, Any]) -> tuple[str, Any, list[Any] | None]:
    """(role, content, tool calls) of a message, parsed; raises :class:`InvalidRecord`
    for impossible field types, before anything of the message is emitted."""
    role = message.get("role")
    if type(role) is not str or not role:
        raise InvalidRecord("a message without a role")
    content = _content(message.get("content"))
    raw_calls = message.get("tool_calls")
    calls = loads(raw_calls)
    if (calls is not None or raw_calls not in (None, "", "null")) and not isinstance(calls, list):
        raise InvalidRecord("'tool_calls' is not a list")
    if calls and not all(isinstance(c, dict) for c in calls):
        raise InvalidRecord("a tool call is not an object")
    return role, content, calls


def emit_message(
    message: dict[str, Any],
    sid: str,
    names: SessionMessages,
    model: str | None,
    sidechain: bool,
    offset: int,
    sink: RowSink,
) -> bool:
    """Emit the events of one message of session ``sid``; ``False`` for the JSON logs'
    ``session_meta`` marker (nothing to import). Raises :class:`InvalidRecord` for a
    message with impossible field types."""
    role, content, calls = check_message(message)
    if role == SESSION_META:
        return False
    stamp = message.get("timestamp")
    raw_ts = float(stamp) if isinstance(stamp, int | float) else None
    native = names.name(message, content, calls, raw_ts)
    ts = instant(stamp)
    event = sink.event
    if role == "tool":
        failed = True if message.get("finish_reason") == "error" else None
        event(sid, native, 0, ts, "tool_result", role, _plain(content), offset,
              tool_name=text_of(message.get("tool_name")),
              tool_call_id=text_of(message.get("tool_call_id")), is_error=failed,
              is_sidechain=sidechain)  # fmt: skip
        return True
    prose = role in _PROSE
    at_model = model if role == "assistant" else None
    if role == "assistant":
        seen: list[str] = []
        for block, text in enumerate((
            text_of(message.get("reasoning")),
            text_of(message.get("reasoning_content")),
            _item_texts(message.get("reasoning_details")),
            _item_texts(message.get("codex_reasoning_items")),
        )):  # fmt: skip
            if text is not None and text not in seen:
                seen.append(text)
                event(sid, native, block, ts, "thinking", role, text, offset, model=at_model,
                      is_sidechain=sidechain)  # fmt: skip
    text = _plain(content)
    if text:
        event(sid, native, 4, ts, "text" if prose else "system", role, text, offset,
              model=at_model, is_sidechain=sidechain)  # fmt: skip
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") in ("image_url", "image", "input_image"):
                event(sid, native, 50 + i, ts, "image", role, "[image]", offset,
                      is_sidechain=sidechain)  # fmt: skip
    for i, call in enumerate(calls or ()):
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        event(sid, native, 100 + i, ts, "tool_use", role, None, offset, model=at_model,
              tool_name=text_of(function.get("name")) or text_of(call.get("name")),
              tool_call_id=text_of(call.get("id")) or text_of(call.get("call_id")),
              tool_input=_tool_input(function.get("arguments", call.get("arguments"))),
              is_sidechain=sidechain)  # fmt: skip
    return True


def _plain(content: Any) -> str | None:
    """A content's text: the string, or the text parts of a list joined."""
    if type(content) is str:
        return content or None
    if not isinstance(content, list):
        return None
    texts = [
        p["text"]
        for p in content
        if isinstance(p, dict) and type(p.get("text")) is str and p["text"]
    ]
    return "\n".join(texts) or None


def delegate_parent(row: dict[str, Any]) -> tuple[str | None, bool]:
    """(parent session, whether the session is a delegated sub-agent): ``source =
    'subagent'`` or ``model_config._delegate_from`` marks a delegate; the parent is
    ``parent_session_id`` (a compression split or a delegation), else
    ``_delegate_from``, else AIWG's ``compressed_from_session_id``."""
    config = loads(row.get("model_config"))
    delegated_from = text_of(config.get("_delegate_from")) if isinstance(config, dict) else None
    parent = (
        text_of(row.get("parent_session_id"))
        or delegated_from
        or text_of(row.get("compressed_from_session_id"))
    )
    return parent, row.get("source") == "subagent" or delegated_from is not None


def project_of(row: dict[str, Any]) -> str | None:
    """The session's working directory: ``cwd``, else ``model_config.cwd``."""
    cwd = text_of(row.get("cwd"))
    if cwd is None:
        config = loads(row.get("model_config"))
        cwd = text_of(config.get("cwd")) if isinstance(config, dict) else None
    return cwd


def emit_session(
    row: dict[str, Any], sid: str, sink: RowSink, *, started: Any, updated: Any
) -> None:
    """Session fields of a ``sessions`` row (or a JSON log, an export line)."""
    parent, _ = delegate_parent(row)
    archived = row.get("archived")
    sink.session(
        sid,
        parent_session_id=parent,
        project_path=project_of(row),
        title=text_of(row.get("title")),
        title_rank=2,  # generated by Hermes or set with /title: not told apart
        git_branch=text_of(row.get("git_branch")),
        model=text_of(row.get("model")),
        archived=bool(archived) if type(archived) in (bool, int) else None,
        started_at=instant(started),
        updated_at=instant(updated),
    )


def emit_totals(
    counters: dict[str, Any], sid: str, model: str | None, ts: str | None,
    sidechain: bool, offset: int, sink: RowSink,
) -> None:  # fmt: skip
    """One session-granularity usage row of a session's (or one model's) CUMULATIVE
    counters: identity ``session-total:<model>`` without a message id, ranked by the
    snapshot's total (it only grows), so the latest snapshot of any copy wins and none
    is summed. ``input``/``cache_write``/``cache_read`` as written; ``output =
    output_tokens + reasoning_tokens``, ``reasoning = reasoning_tokens`` (ccusage adds
    ``reasoning_tokens`` to the total: Hermes keeps it apart from ``output_tokens`` [?]).
    Nothing for a snapshot of no tokens."""
    inp, write, read, out, thinking = (token_count(counters.get(k)) for k in COUNTERS)
    total = inp + write + read + out + thinking
    if total == 0:
        return
    sink.usage(
        sid, None, None, f"{SESSION_TOTAL}:{model or ''}", ts, model,
        inp, write, 0, read, out + thinking, thinking, sidechain, offset,
        rank=total, per_session=True,
    )  # fmt: skip
