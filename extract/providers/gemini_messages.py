"""Gemini CLI message records as rows: the events and the model call of one message, and
their emission to the row sink. Pure functions; the adapters in :mod:`.gemini` decide
which copy of a message survives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..adapter import InvalidRecord
from ..rows import RowSink
from ..schema import BlockType
from ..values import json_text, token_count

_ERROR_STATUSES: Final = frozenset({"error", "failed", "fail", "cancelled", "canceled"})
_OK_STATUSES: Final = frozenset({"success", "ok", "completed"})
_SYSTEM_TYPES: Final = frozenset({"info", "error", "warning"})

Row = tuple[
    int,  # block index inside the message
    BlockType,
    str,  # role
    str | None,  # text
    str | None,  # ts
    str | None,  # model
    str | None,  # tool name
    str | None,  # tool call id
    str | None,  # tool input (JSON text)
    bool | None,  # is_error
]
"""One event of a message, before it is emitted."""

Usage = tuple[str | None, str | None, int, int, int, int]
"""One call of a message: (ts, model, input, cache_read, output, reasoning)."""


def str_or_none(value: Any) -> str | None:
    """``value`` if it is a ``str``, else ``None``."""
    return value if type(value) is str else None


def _parts_text(content: Any) -> str | None:
    """The text of a ``PartListUnion``: a string, or the ``text`` parts of a list joined
    by newlines (thought parts skipped, files and images as placeholders)."""
    if type(content) is str:
        return content or None
    if content is None:
        return None
    if type(content) is dict:
        content = [content]
    elif type(content) is not list:
        raise InvalidRecord("'content' is neither text nor a list of parts")
    texts: list[str] = []
    for part in content:
        if type(part) is str:
            texts.append(part)
        elif type(part) is dict:
            text = part.get("text")
            if type(text) is str:
                if part.get("thought") is not True and text:
                    texts.append(text)
            elif "inlineData" in part or "fileData" in part:
                blob = part.get("inlineData") or part.get("fileData")
                mime = blob.get("mimeType") if isinstance(blob, dict) else None
                image = isinstance(mime, str) and mime.startswith("image/")
                texts.append("[image]" if image else "[file]")
    return "\n".join(texts) if texts else None


def _thought_text(thought: dict[str, Any]) -> str | None:
    subject, description = (
        str_or_none(thought.get("subject")),
        str_or_none(thought.get("description")),
    )
    if subject and description:
        return f"{subject}\n\n{description}"
    return subject or description


def _result_text(result: Any) -> str | None:
    """A tool's output: ``functionResponse.response.output`` (else its ``error``, else
    the response as JSON) of each result part, and plain text parts, joined."""
    if result is None:
        return None
    if type(result) is str:
        return result
    parts = result if type(result) is list else [result]
    texts: list[str] = []
    for part in parts:
        if type(part) is str:
            texts.append(part)
            continue
        if type(part) is not dict:
            continue
        call = part.get("functionResponse")
        if type(call) is dict:
            response = call.get("response")
            if type(response) is dict:
                output = response.get("output", response.get("error"))
                texts.append(output if type(output) is str else json_text(response))
            elif response is not None:
                texts.append(response if type(response) is str else json_text(response))
        elif type(part.get("text")) is str:
            texts.append(part["text"])
    return "\n".join(texts) if texts else None


def message_rows(msg: dict[str, Any]) -> tuple[list[Row], Usage | None, bool]:
    """The events and the call of one message record, and whether its type is known.

    Block indices: a ``gemini`` message puts its thoughts at ``0..T-1``, its text at
    ``T`` and tool call ``k`` at ``T+1+2k`` (the call) and ``T+2+2k`` (its result), so a
    copy that only adds tokens, tool calls or results keeps the earlier rows' ids.
    Raises :class:`InvalidRecord` before producing anything when a field has an
    impossible type.
    """
    mtype = msg.get("type")
    if isinstance(mtype, list | dict):
        raise InvalidRecord("'type' is not a string")
    ts = str_or_none(msg.get("timestamp"))
    if mtype == "user":
        text = _parts_text(msg.get("content"))
        rows: list[Row] = (
            [(0, "text", "user", text, ts, None, None, None, None, None)] if text else []
        )
        return rows, None, True
    if mtype == "gemini":
        return _gemini_rows(msg, ts)
    if mtype in _SYSTEM_TYPES:
        text = _parts_text(msg.get("content"))
        is_error = True if mtype == "error" else None
        return [(0, "system", "system", text, ts, None, None, None, None, is_error)], None, True
    return [], None, False


def _gemini_rows(msg: dict[str, Any], ts: str | None) -> tuple[list[Row], Usage | None, bool]:
    thoughts = msg.get("thoughts")
    calls = msg.get("toolCalls")
    tokens = msg.get("tokens")
    if thoughts is not None and type(thoughts) is not list:
        raise InvalidRecord("'thoughts' is not a list")
    if calls is not None and type(calls) is not list:
        raise InvalidRecord("'toolCalls' is not a list")
    if tokens is not None and type(tokens) is not dict:
        raise InvalidRecord("'tokens' is not an object")
    text = _parts_text(msg.get("content"))
    model = str_or_none(msg.get("model"))
    rows: list[Row] = []
    index = 0
    for thought in thoughts or ():
        if type(thought) is dict and (thought_text := _thought_text(thought)):
            tts = str_or_none(thought.get("timestamp")) or ts
            rows.append(
                (index, "thinking", "assistant", thought_text, tts, model,
                 None, None, None, None)
            )  # fmt: skip
        index += 1
    if text:
        rows.append((index, "text", "assistant", text, ts, model, None, None, None, None))
    index += 1
    for call in calls or ():
        if type(call) is dict:
            name, call_id = str_or_none(call.get("name")), str_or_none(call.get("id"))
            args = call.get("args")
            # The call is asked for at the message's time (stable across the copies that
            # update its status); its own timestamp is when its result was recorded.
            rows.append(
                (index, "tool_use", "assistant", None, ts, model, name, call_id,
                 None if args is None else json_text(args), None)
            )  # fmt: skip
            result, status = call.get("result"), call.get("status")
            if isinstance(status, list | dict):
                raise InvalidRecord("a tool call's 'status' is not a string")
            if result is not None or status in _ERROR_STATUSES:
                cts = str_or_none(call.get("timestamp")) or ts
                output = _result_text(result)
                if output is None:
                    output = str_or_none(call.get("resultDisplay"))
                is_error = (
                    True
                    if status in _ERROR_STATUSES
                    else (False if status in _OK_STATUSES else None)
                )
                rows.append(
                    (index + 1, "tool_result", "tool", output, cts, None, name, call_id,
                     None, is_error)
                )  # fmt: skip
        index += 2
    usage: Usage | None = None
    if tokens is not None:
        cached = token_count(tokens.get("cached"))
        thinking = token_count(tokens.get("thoughts"))
        usage = (
            ts,
            model,
            max(token_count(tokens.get("input")) - cached, 0) + token_count(tokens.get("tool")),
            cached,
            token_count(tokens.get("output")) + thinking,
            thinking,
        )
    return rows, usage, True


def emit_rows(
    sink: RowSink,
    sid: str,
    mid: str,
    rows: Sequence[Row],
    usage: Usage | None,
    offset: int,
    rank: int,
) -> None:
    """Write one message's events, and its call (ranked ``rank``) if it has one, to ``sink``."""
    event = sink.event
    for index, btype, role, text, ts, model, tool, call_id, tool_input, is_error in rows:
        event(
            sid, mid, index, ts, btype, role, text, offset, model=model, tool_name=tool,
            tool_call_id=call_id, tool_input=tool_input, is_error=is_error,
        )  # fmt: skip
    if usage is not None:
        ts, model, inp, cache_read, output, reasoning = usage
        sink.usage(
            sid, None, None, mid, ts, model, inp, 0, 0, cache_read, output, reasoning, False,
            offset, rank=rank,
        )  # fmt: skip
