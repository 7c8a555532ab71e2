"""The payloads of Codex rollout records, one function per payload type: response
items (messages, reasoning, tool calls and their results) and event messages (prompts
and replies, token counts, rate limits, thread names, aborted turns, errors).

Each takes ``(payload, record, offset, context, sink)``; :func:`map_item` and
:func:`map_event` dispatch through :data:`ITEMS` and :data:`EVENTS`. The rules they keep
are those of :mod:`.codex`'s docstring; the running state lives in ``ctx.memo``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..adapter import InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..values import json_text
from .codex_fields import (
    json_or_text,
    nonempty_str,
    rate_windows,
    text_digest,
    tool_output,
    usage_counts,
)

Obj = dict[str, Any]
PayloadHandler = Callable[[Obj, Obj, int, SourceContext, RowSink], RecordOutcome]

#: The model a call is attributed to when the rollout names none (as ccusage does).
DEFAULT_MODEL: Final = "gpt-5"

# User-role text Codex injects itself (context, instructions, notifications): imported
# as system events, never as prompts.
_CONTEXT_PREFIXES: Final = (
    "<environment_context",
    "<user_instructions",
    "# AGENTS.md instructions",
    "<permissions instructions",
    "<collaboration_mode",
    "<recommended_plugins",
    "<app-context",
    "<skills_instructions",
    "<subagent_notification",
    "<turn_aborted",
    "<user_shell_command",
    "<session_context",
)

# response_item payloads with nothing to import (snapshots, opaque compaction blobs).
_IGNORED_ITEMS: Final = frozenset({"ghost_snapshot", "compaction", "compaction_summary", "other"})

# event_msg payloads with nothing to import: UI mirrors of response items (the
# response_item copy is imported), progress and lifecycle notices, settings.
_IGNORED_EVENTS: Final = frozenset(
    {
        "task_started",
        "task_complete",
        "turn_started",
        "turn_complete",
        "turn.completed",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "agent_message_delta",
        "agent_reasoning_delta",
        "exec_command_begin",
        "exec_command_output_delta",
        "exec_command_end",
        "exec_approval_request",
        "apply_patch_approval_request",
        "patch_apply_begin",
        "patch_apply_end",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "mcp_list_tools_response",
        "web_search_begin",
        "web_search_end",
        "view_image_tool_call",
        "image_generation_begin",
        "image_generation_end",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "context_compacted",
        "entered_review_mode",
        "exited_review_mode",
        "turn_diff",
        "plan_update",
        "background_event",
        "stream_error",
        "warning",
        "deprecation_notice",
        "session_configured",
        "shutdown_complete",
        "get_history_entry_response",
        "list_custom_prompts_response",
        "undo_started",
        "undo_completed",
        "thread_settings_applied",
        "thread_goal_updated",
        "item_started",
        "item_completed",
        "sub_agent_activity",
        "guardian_assessment",
        "token_usage",
        "raw_response_item",
    }
)
_IGNORED_EVENT_PREFIXES: Final = ("collab_",)


InputEncoding = Literal["json", "json-as-written", "wrapped"]


@dataclass(frozen=True, slots=True)
class ToolCallShape:
    """Where one tool-call payload type keeps the tool's name, the call id and the input."""

    tool_name: str | None  # ``None``: the payload's own ``name``
    id_fields: tuple[str, ...]  # the call id is the first of these that is set
    input_field: str
    #: ``json``: the value as JSON; ``json-as-written``: a string already holding JSON is
    #: kept as written; ``wrapped``: a string becomes ``{input_field: value}``.
    encoding: InputEncoding = "json"

    def tool_input(self, value: Any) -> str | None:
        """The call's ``tool_input`` JSON text, ``None`` when the payload has none."""
        if self.encoding == "json-as-written":
            return json_or_text(value)
        if self.encoding == "wrapped":
            return json_text({self.input_field: value}) if isinstance(value, str) else None
        return None if value is None else json_text(value)


#: response_item payload type → how its tool call reads.
TOOL_CALLS: Final[Mapping[str, ToolCallShape]] = {
    "function_call": ToolCallShape(None, ("call_id",), "arguments", "json-as-written"),
    "custom_tool_call": ToolCallShape(None, ("call_id",), "input"),
    "local_shell_call": ToolCallShape("local_shell", ("call_id", "id"), "action"),
    "web_search_call": ToolCallShape("web_search", ("call_id", "id"), "action"),
    "tool_search_call": ToolCallShape(
        "tool_search", ("call_id", "id"), "arguments", "json-as-written"
    ),
    "image_generation_call": ToolCallShape(
        "image_generation", ("call_id", "id"), "revised_prompt", "wrapped"
    ),
}


# ------------------------------------------------------------------- messages


def _paired(memo: dict[str, Any], key: str, side: str, text: str) -> bool:
    """Whether this message is the second copy of a dual-written one (``side`` is
    ``e`` for event_msg, ``r`` for response_item); otherwise remember it."""
    digest = text_digest(text)
    pending = memo.get(key)
    if pending is not None and pending[0] != side and pending[1:] == digest:
        del memo[key]
        return True
    memo[key] = side + digest
    return False


def message(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    """A message item: a prompt, a reply, or injected context and instructions (system
    events); the second copy of a dual-written prompt or reply is ignored."""
    role = p.get("role")
    content = p.get("content")
    images = 0
    if isinstance(content, str):
        text: str | None = content
    elif isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict):
                value = part.get("text")
                if isinstance(value, str):
                    texts.append(value)
                elif part.get("type") in ("input_image", "image"):
                    images += 1
        text = texts[0] if len(texts) == 1 else ("\n".join(texts) if texts else None)
    elif content is None:
        text = None
    else:
        raise InvalidRecord("'content' is neither text nor a list")
    memo = ctx.memo
    sid = ctx.session_id
    ts = record_time(rec, memo)
    if role == "user":
        if text is not None and text.startswith(_CONTEXT_PREFIXES):
            sink.event(sid, f"@{offset}", 0, ts, "system", "user", text, offset)
            return "mapped"
        if _paired(memo, "pu", "r", text or ""):
            return "ignored"
        _prompt(sid, text, images, ts, offset, sink)
    elif role == "assistant":
        if _paired(memo, "pa", "r", text or ""):
            return "ignored"
        sink.event(
            sid, f"@{offset}", 0, ts, "text", "assistant", text, offset, model=memo.get("model")
        )
    else:  # developer / system instructions
        sink.event(
            sid, f"@{offset}", 0, ts, "system", role if isinstance(role, str) else None,
            text, offset,
        )  # fmt: skip
    return "mapped"


def _prompt(
    sid: str, text: str | None, images: int, ts: str | None, offset: int, sink: RowSink
) -> None:
    native = f"@{offset}"
    if text is not None or not images:
        sink.event(sid, native, 0, ts, "text", "user", text, offset)
    for i in range(images):
        sink.event(sid, native, i + 1, ts, "image", "user", "[image]", offset)


def _user_message(
    p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink
) -> RecordOutcome:
    text = p.get("message")
    if text is not None and not isinstance(text, str):
        raise InvalidRecord("'message' is not a string")
    memo = ctx.memo
    ts = record_time(rec, memo)
    if text and text.startswith(_CONTEXT_PREFIXES):
        sink.event(ctx.session_id, f"@{offset}", 0, ts, "system", "user", text, offset)
        return "mapped"
    if _paired(memo, "pu", "e", text or ""):
        return "ignored"
    images = p.get("images")
    count = len(images) if isinstance(images, list) else 0
    _prompt(ctx.session_id, text or None, count, ts, offset, sink)
    return "mapped"


def _agent_message(
    p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink
) -> RecordOutcome:
    text = p.get("message")
    if text is not None and not isinstance(text, str):
        raise InvalidRecord("'message' is not a string")
    memo = ctx.memo
    if _paired(memo, "pa", "e", text or ""):
        return "ignored"
    sink.event(
        ctx.session_id, f"@{offset}", 0, record_time(rec, memo), "text", "assistant", text,
        offset, model=memo.get("model"),
    )  # fmt: skip
    return "mapped"


def _agent_message_item(
    p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink
) -> RecordOutcome:
    """A message between agents of one multi-agent run (author → recipient)."""
    content = p.get("content")
    texts = [
        part["text"]
        for part in (content if isinstance(content, list) else ())
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    sink.event(
        ctx.session_id, f"@{offset}", 0, record_time(rec, ctx.memo), "text", "agent",
        "\n".join(texts) if texts else None, offset,
    )  # fmt: skip
    return "mapped"


def _reasoning(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    texts: list[str] = []
    for key in ("summary", "content"):
        parts = p.get(key)
        if isinstance(parts, list):
            texts += [
                part["text"]
                for part in parts
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            ]
        if texts:
            break
    if not texts:
        return "ignored"  # encrypted only: nothing readable to import
    memo = ctx.memo
    sink.event(
        ctx.session_id, f"@{offset}", 0, record_time(rec, memo), "thinking", "assistant",
        "\n\n".join(texts), offset, model=memo.get("model"),
    )  # fmt: skip
    return "mapped"


# ---------------------------------------------------------------------- tools


def _tool_call(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    """A tool call of any of the payload types in :data:`TOOL_CALLS`."""
    shape = TOOL_CALLS[p["type"]]
    name = p.get("name") if shape.tool_name is None else shape.tool_name
    call_id: Any = None
    for key in shape.id_fields:  # the first one set (the last one's value otherwise)
        call_id = p.get(key)
        if call_id:
            break
    memo = ctx.memo
    sink.event(
        ctx.session_id, f"@{offset}", 0, record_time(rec, memo), "tool_use", "assistant",
        None, offset, model=memo.get("model"),
        tool_name=name if isinstance(name, str) else None,
        tool_call_id=call_id if isinstance(call_id, str) else None,
        tool_input=shape.tool_input(p.get(shape.input_field)),
    )  # fmt: skip
    return "mapped"


def _tool_result(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    text, is_error = tool_output(p.get("output"))
    if is_error is None and p.get("status") == "failed":
        is_error = True
    call_id = p.get("call_id")
    sink.event(
        ctx.session_id, f"@{offset}", 0, record_time(rec, ctx.memo), "tool_result", "tool",
        text, offset, tool_call_id=call_id if isinstance(call_id, str) else None,
        is_error=is_error,
    )  # fmt: skip
    return "mapped"


# --------------------------------------------------------------------- events


def _token_count(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    info = p.get("info")
    if info is not None and not isinstance(info, dict):
        raise InvalidRecord("'info' is not an object")
    # A snapshot of the plan's limits rides on most token counts, with or without a
    # call (early in a session, and on re-emits).
    limits = _rate_limits(p, rec, offset, ctx, sink)
    nothing: RecordOutcome = "mapped" if limits else "ignored"
    if info is None:
        return nothing
    memo = ctx.memo
    total, last = info.get("total_token_usage"), info.get("last_token_usage")
    ts = record_time(rec, memo)
    if isinstance(total, dict):
        cumulative = usage_counts(total)
        previous: list[int] | None = memo.get("prev")
        if cumulative == previous:
            return nothing  # re-emitted: the cumulative total did not move
        memo["prev"] = cumulative
        if isinstance(last, dict):
            counts = usage_counts(last)
        elif previous is None:
            counts = cumulative
        else:
            counts = [max(c - b, 0) for c, b in zip(cumulative, previous, strict=True)]
        native = "t" + "/".join(map(str, cumulative))
    elif isinstance(last, dict):
        counts = usage_counts(last)
        native = f"l{ts}/" + "/".join(map(str, counts))
    else:
        return nothing
    inp, cached, out, reasoning = counts[0], counts[1], counts[2], counts[3]
    if not (inp or cached or out or reasoning):
        return nothing
    cached = min(cached, inp)
    model = (
        nonempty_str(p.get("model"))
        or nonempty_str(info.get("model"))
        or memo.get("model")
        or DEFAULT_MODEL
    )
    sink.usage(
        ctx.session_id, None, None, native, ts, model, inp - cached, 0, 0, cached, out,
        reasoning, False, offset,
    )  # fmt: skip
    return "mapped"


def _rate_limits(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> bool:
    """Emit the windows of the payload's ``rate_limits`` snapshot, if it has one
    (anything but an object is no snapshot); whether it had any."""
    limits = p.get("rate_limits")
    if not isinstance(limits, dict):
        return False
    windows = rate_windows(limits)
    ts = record_time(rec, ctx.memo)
    limit_id, plan = nonempty_str(limits.get("limit_id")), nonempty_str(limits.get("plan_type"))
    for kind, used, minutes, at, after in windows:
        sink.rate_limit(
            ctx.session_id, ts, kind, used, offset, limit_id=limit_id,
            window_minutes=minutes, resets_at=at, resets_in=after, plan_type=plan,
        )  # fmt: skip
    return bool(windows)


def _rate_limits_updated(
    p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink
) -> RecordOutcome:
    return "mapped" if _rate_limits(p, rec, offset, ctx, sink) else "ignored"


def _thread_name(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    name = nonempty_str(p.get("thread_name"))
    if name is None:
        return "ignored"
    sink.session(ctx.session_id, title=name, title_rank=3)
    return "mapped"


def _turn_aborted(
    p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink
) -> RecordOutcome:
    reason = p.get("reason")
    text = f"[turn aborted: {reason}]" if isinstance(reason, str) else "[turn aborted]"
    sink.event(
        ctx.session_id, f"@{offset}", 0, record_time(rec, ctx.memo), "system", "system", text,
        offset,
    )  # fmt: skip
    return "mapped"


def _error(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    message = p.get("message")
    sink.event(
        ctx.session_id, f"@{offset}", 0, record_time(rec, ctx.memo), "system", "system",
        message if isinstance(message, str) else None, offset, is_error=True,
    )  # fmt: skip
    return "mapped"


# --------------------------------------------------------------------------- dispatch

#: response_item payload type → its handler (pre-envelope rollouts write the same items
#: at the top level).
ITEMS: Final[Mapping[str, PayloadHandler]] = {
    "message": message,
    "reasoning": _reasoning,
    **dict.fromkeys(TOOL_CALLS, _tool_call),
    "function_call_output": _tool_result,
    "custom_tool_call_output": _tool_result,
    "tool_search_output": _tool_result,
    "agent_message": _agent_message_item,
}

#: event_msg payload type → its handler.
EVENTS: Final[Mapping[str, PayloadHandler]] = {
    "token_count": _token_count,
    "account/rateLimits/updated": _rate_limits_updated,
    "user_message": _user_message,
    "agent_message": _agent_message,
    "thread_name_updated": _thread_name,
    "turn_aborted": _turn_aborted,
    "error": _error,
}


def record_time(rec: Obj, memo: Obj) -> str | None:
    """The record's timestamp, else the pre-envelope header's."""
    ts = rec.get("timestamp")
    return ts if type(ts) is str else memo.get("t0")


def _payload_type(payload: Obj) -> Any:
    """The payload's ``type``: an array or object there makes the record invalid; any
    other value that is not a known name makes it unknown."""
    ptype = payload.get("type")
    if isinstance(ptype, list | dict):
        raise InvalidRecord("'payload.type' is not a string")
    return ptype


def map_item(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    """Map the payload of a ``response_item`` record."""
    ptype = _payload_type(p)
    handler = ITEMS.get(ptype)
    if handler is not None:
        return handler(p, rec, offset, ctx, sink)
    return "ignored" if ptype in _IGNORED_ITEMS else "unknown"


def map_event(p: Obj, rec: Obj, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
    """Map the payload of an ``event_msg`` record."""
    ptype = _payload_type(p)
    handler = EVENTS.get(ptype)
    if handler is not None:
        return handler(p, rec, offset, ctx, sink)
    if ptype in _IGNORED_EVENTS or (
        isinstance(ptype, str) and ptype.startswith(_IGNORED_EVENT_PREFIXES)
    ):
        return "ignored"
    return "unknown"
