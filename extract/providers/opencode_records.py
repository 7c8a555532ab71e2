"""OpenCode records as rows: sessions, messages and parts (provider-formats-more §4).

Both stores hold the same records — the legacy ``storage/`` JSON tree one file per
record, ``opencode.db`` one row per record with the record as JSON in ``data`` — so both
adapters of :mod:`.opencode` hand them here, and a session read from either store gets
the same ids: an event is (session, part or message id, block index), a call is
(message id, step-finish part id) and sorts by the time the id encodes.

Token rule (the multi-step trap): an assistant message that runs several model calls
(steps) writes each call's tokens to a ``step-finish`` part, but *overwrites*
``message.tokens`` with the latest step's. So every ``step-finish`` part is one call
(message id, part id), and ``message.tokens`` is only a stand-in for messages without
steps: its row (message id, no request id) is marked ``is_sidechain``, and the usage
merge (sql/queries/merge_usage.sql) drops a message id's sidechain copies as soon as any
non-sidechain copy of that message id exists, in this batch or in the catalog. Each call
is therefore counted once whichever file or store is read first, and re-reading a file
replaces its own rows only. Among copies of one call (the tree and the database, a copy
still in progress) the ``rank`` decides: a completed message over one in progress, the
database over the legacy tree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from ..adapter import FormatDrift, InvalidRecord
from ..rows import RowSink
from ..schema import BlockType
from ..values import json_text, token_count
from .cursor_fields import instant

Origin = Literal["export", "tree", "db"]
#: The part types OpenCode writes (``MessageV2.Part``); any other is rejected.
PartType = Literal[
    "text", "reasoning", "tool", "file", "step-start", "step-finish", "snapshot", "patch",
    "agent", "subtask", "retry", "compaction",
]  # fmt: skip
PART_TYPES: Final[tuple[str, ...]] = get_args(PartType)
#: Rank of a copy by where it was read: OpenCode migrates the tree into the database and
#: writes only the database from then on, so the database copy is the newer one; an
#: export is a snapshot the stores may have outgrown.
_ORIGIN_RANK: Final[Mapping[Origin, int]] = {"export": 0, "tree": 1, "db": 2}
_COMPLETED_RANK: Final = 10

#: Majors of the OpenCode version a session records (``version``) this adapter knows.
KNOWN_VERSION_MAJORS: Final = frozenset({0, 1})
_MAJOR: Final = re.compile(r"^\s*v?(\d{1,6})\.")
#: OpenCode ids: a prefix, 12 hex digits of (ms × 4096 + counter) mod 2^48, then random.
_ID_ORDER: Final = re.compile(r"^[a-z]{2,8}_([0-9a-f]{12})")
#: OpenCode's placeholder titles before a title is generated.
_PLACEHOLDER_TITLE: Final = re.compile(r"^(New session|Child session) - \d{4}-\d\d-\d\dT")
_ROLES: Final = frozenset({"user", "assistant"})
_TITLE_RANK: Final = 2
_PLACEHOLDER_RANK: Final = 1


@dataclass(frozen=True, slots=True)
class MessageMeta:
    """What a part needs of its message: role, model, creation time and whether it is a
    compaction summary (its text is the summary)."""

    role: str | None
    model: str | None
    created: str | None
    summary: bool = False
    created_ms: int | None = None  # ``created`` as written (epoch ms), when it is a number


UNKNOWN_MESSAGE: Final = MessageMeta(None, None, None)


#: The 48 bits of an id hold (ms × 4096 + counter) modulo 2^48: the time modulo 2^36 ms.
_ID_WRAP_MS: Final = 1 << 36


def id_instant(native_id: str, anchor_ms: int) -> str | None:
    """The creation time an OpenCode id encodes, as ISO text: the latest time at or
    before ``anchor_ms`` (a time known to follow the id's creation, e.g. its file's
    modification) that the id's 36 bits of milliseconds allow (they wrap every ~795 days);
    ``None`` for ids of another shape."""
    match = _ID_ORDER.match(native_id)
    if not match:
        return None
    ms = anchor_ms - ((anchor_ms - (int(match[1], 16) >> 12)) % _ID_WRAP_MS)
    return instant(ms)


#: How long after its message's creation a part's id may date it (longer: not trusted).
_PART_SPAN_MS: Final = 2 * 86_400_000


def part_instant(part_id: str, meta: MessageMeta) -> str | None:
    """When a part was created: the time its id encodes, the first such time at or after
    its message's creation (a part is created after its message), if that falls within
    :data:`_PART_SPAN_MS` of it; else the message's creation time."""
    floor = meta.created_ms
    match = _ID_ORDER.match(part_id)
    if floor is None or not match:
        return meta.created
    after = ((int(match[1], 16) >> 12) - floor) % _ID_WRAP_MS
    return instant(floor + after) if after <= _PART_SPAN_MS else meta.created


def order(native_id: str) -> int:
    """The position an OpenCode id encodes (monotonic in creation time within a process
    run; 0 for ids of another shape). Events and calls sort by it (``source_offset``; 48
    bits, so ``seq = offset × 1000 + block`` stays within int64)."""
    match = _ID_ORDER.match(native_id)
    return int(match[1], 16) if match else 0


def _str(record: Mapping[str, Any], key: str) -> str | None:
    """A string field, ``None`` when absent or null; any other type is impossible."""
    value = record.get(key)
    if value is None or type(value) is str:
        return value
    raise InvalidRecord(f"{key!r} is not a string")


def _dict(record: Mapping[str, Any], key: str) -> dict[str, Any]:
    """An object field, empty when absent or null; any other type is impossible."""
    value = record.get(key)
    if value is None:
        return {}
    if type(value) is dict:
        return value
    raise InvalidRecord(f"{key!r} is not an object")


def record_id(record: Any, what: str) -> str:
    """The ``id`` of a record that must be an object with a non-empty string id."""
    if type(record) is not dict:
        raise InvalidRecord(f"not an OpenCode {what} record (not an object)")
    rid = record.get("id")
    if type(rid) is not str or not rid:
        raise InvalidRecord(f"not an OpenCode {what} record (no string 'id')")
    return rid


def check_version(value: Any) -> None:
    """Refuse a session written by an OpenCode of an unknown major version. Versions that
    are not numbered (development builds such as ``local``) are accepted."""
    if value is None:
        return
    if type(value) is not str:
        raise InvalidRecord("'version' is not a string")
    match = _MAJOR.match(value)
    if match and int(match[1]) not in KNOWN_VERSION_MAJORS:
        raise FormatDrift(
            f"OpenCode session version {value[:40]!r} has an unknown major version "
            f"(known: {', '.join(map(str, sorted(KNOWN_VERSION_MAJORS)))})"
        )


def _model_of(info: Mapping[str, Any]) -> str | None:
    """``modelID`` of an assistant message, or ``model.modelID`` (user messages and some
    revisions); the provider id is not part of the name (pricing matches bare names)."""
    model = info.get("modelID")
    if type(model) is str and model:
        return model
    nested = info.get("model")
    if type(nested) is dict and type(nested.get("modelID")) is str and nested["modelID"]:
        return str(nested["modelID"])
    return None


# --------------------------------------------------------------------------- sessions


def emit_session(sink: RowSink, info: Mapping[str, Any]) -> str:
    """Session metadata of a session record (``Session.Info``); returns its id."""
    sid = record_id(info, "session")
    check_version(info.get("version"))
    times = _dict(info, "time")
    title = _str(info, "title")
    model = info.get("model")
    sink.session(
        sid,
        parent_session_id=_str(info, "parentID") or None,
        project_path=_str(info, "directory") or None,
        title=title or None,
        title_rank=(_PLACEHOLDER_RANK if _PLACEHOLDER_TITLE.match(title) else _TITLE_RANK)
        if title
        else None,
        cli_version=_str(info, "version"),
        model=_model_of(model) if type(model) is dict else None,
        started_at=instant(times.get("created")),
        updated_at=instant(times.get("updated")),
        archived=True if times.get("archived") else None,
    )
    return sid


# --------------------------------------------------------------------------- messages


def message_meta(info: Mapping[str, Any]) -> MessageMeta:
    """The fields of a message record its parts need (no validation: a part reads its
    message only to describe itself)."""
    role = info.get("role")
    times = info.get("time")
    created = times.get("created") if type(times) is dict else None
    ms = None
    if isinstance(created, int | float) and type(created) is not bool and 0 < created < 2**53:
        ms = int(created)  # NaN fails the comparison
    return MessageMeta(
        role if type(role) is str else None,
        _model_of(info),
        instant(created),
        role == "assistant" and info.get("summary") is True,
        ms,
    )


def _call_tokens(tokens: Any) -> tuple[int, int, int, int, int] | None:
    """(input, cache_write, cache_read, output, reasoning) of a ``tokens`` object, or
    ``None`` when it counts nothing. OpenCode stores ``input`` without the cache. Revisions
    that also store ``total`` store ``output`` without the reasoning (``total`` then
    exceeds input + cache + output) and billed output is output + reasoning; older ones
    (no ``total``) store the model's output, reasoning included [?: read in the source of
    several revisions; the reference marks it uncertain]."""
    if tokens is None:
        return None
    if type(tokens) is not dict:
        raise InvalidRecord("'tokens' is not an object")
    cache = _dict(tokens, "cache")
    inp, out, reasoning = (token_count(tokens.get(k)) for k in ("input", "output", "reasoning"))
    read, write = token_count(cache.get("read")), token_count(cache.get("write"))
    total = tokens.get("total")
    if reasoning and type(total) in (int, float) and total != inp + read + write + out:
        out += reasoning
    if not (inp or out or read or write):
        return None
    return inp, write, read, out, reasoning


def _emit_call(
    sink: RowSink, sid: str, mid: str, request: str | None, ts: str | None,
    model: str | None, tokens: tuple[int, int, int, int, int], stand_in: bool, rank: int,
) -> None:  # fmt: skip
    inp, write, read, out, reasoning = tokens
    native = request or mid
    sink.usage(
        sid, mid, request, native, ts, model, inp, write, 0, read, out, reasoning, stand_in,
        order(native), rank=rank,
    )  # fmt: skip


def emit_message(sink: RowSink, sid: str, info: Mapping[str, Any], origin: Origin) -> MessageMeta:
    """Events and stand-in call of one message record (``MessageV2.Info``): a user's
    custom system prompt (system), the generated summary of a user turn (summary), an
    assistant's error (system, ``is_error``), and ``message.tokens`` as the stand-in
    call described in the module docstring. Returns the message's meta."""
    mid = record_id(info, "message")
    role = info.get("role")
    if type(role) is not str or role not in _ROLES:
        raise InvalidRecord("message 'role' is neither 'user' nor 'assistant'")
    times = _dict(info, "time")
    meta = message_meta(info)
    ts, model, at = meta.created, meta.model, order(mid)
    sink.session(sid)
    system = info.get("system")
    if type(system) is str and system:
        sink.event(sid, mid, 0, ts, "system", role, system, at, model=model)
    summary = info.get("summary")
    if type(summary) is dict:  # a user turn's generated title and body (diffs omitted)
        body = _str(summary, "body") or _str(summary, "title")
        if body:
            sink.event(sid, mid, 1, ts, "summary", role, body, at, model=model)
    error = _dict(info, "error")
    if error:
        data = error.get("data")
        detail = data.get("message") if type(data) is dict else None
        name = error.get("name") if type(error.get("name")) is str else "error"
        text = f"{name}: {detail}" if type(detail) is str and detail else str(name)
        sink.event(sid, mid, 2, ts, "system", role, text, at, model=model, is_error=True)
    tokens = _call_tokens(info.get("tokens"))
    if tokens is not None and role == "assistant":
        done = bool(times.get("completed")) or info.get("finish") is not None
        rank = _ORIGIN_RANK[origin] + (_COMPLETED_RANK if done else 0)
        _emit_call(sink, sid, mid, None, ts, model, tokens, True, rank)
    return meta


# --------------------------------------------------------------------------- parts

_LIFECYCLE: Final = frozenset({"step-start", "snapshot"})


def _start(part: Mapping[str, Any], fallback: str | None) -> str | None:
    times = part.get("time")
    if type(times) is dict:
        return instant(times.get("start")) or fallback
    return fallback


def _file_text(part: Mapping[str, Any]) -> str:
    """The placeholder of an attached file: its name and type, and where it came from
    unless the content is inlined (a ``data:`` URI)."""
    name = _str(part, "filename") or ""
    mime = _str(part, "mime") or ""
    url = _str(part, "url") or ""
    where = "" if not url or url.startswith("data:") else f" {url[:500]}"
    return f"[file {name} {mime}{where}]".replace("  ", " ")


def emit_part(
    sink: RowSink, sid: str, mid: str, part: Mapping[str, Any], meta: MessageMeta,
    origin: Origin,
) -> None:  # fmt: skip
    """Events (and the call of a ``step-finish``) of one part record (``MessageV2.Part``).
    Raises :class:`InvalidRecord` for a part of an unknown type or impossible fields."""
    pid = record_id(part, "part")
    ptype = part.get("type")
    if type(ptype) is not str:
        raise InvalidRecord("part without a string 'type'")
    role, model, at = meta.role, meta.model, order(pid)
    created = part_instant(pid, meta)
    ts = _start(part, created)
    event = sink.event
    sink.session(sid)
    if ptype == "text":
        text = _str(part, "text")
        if text:
            btype: BlockType = (
                "system" if part.get("synthetic") is True
                else "summary" if meta.summary else "text"
            )  # fmt: skip
            event(sid, pid, 0, ts, btype, role, text, at, model=model)
    elif ptype == "reasoning":
        text = _str(part, "text")
        if text:
            event(sid, pid, 0, ts, "thinking", role, text, at, model=model)
    elif ptype == "tool":
        _emit_tool(sink, sid, pid, part, role, model, ts, at)
    elif ptype == "file":
        event(sid, pid, 0, ts, "image", role, _file_text(part), at, model=model)
    elif ptype in _LIFECYCLE:
        event(sid, pid, 0, ts, "system", role, None, at, model=model)
    elif ptype == "step-finish":
        reason = _str(part, "reason")
        text = f"step-finish: {reason}" if reason else "step-finish"
        event(sid, pid, 0, ts, "system", role, text, at, model=model)
        tokens = _call_tokens(part.get("tokens"))
        if tokens is not None:
            _emit_call(sink, sid, mid, pid, created, model, tokens, False,
                       _ORIGIN_RANK[origin])  # fmt: skip
    elif ptype == "patch":
        files = part.get("files")
        names = [f for f in files if type(f) is str] if type(files) is list else []
        event(sid, pid, 0, ts, "system", role, "patch: " + ", ".join(names), at, model=model)
    elif ptype == "agent":
        event(sid, pid, 0, ts, "system", role, f"agent: {_str(part, 'name') or ''}", at)
    elif ptype == "subtask":
        text = "\n".join(t for t in (_str(part, "description"), _str(part, "prompt")) if t)
        agent = _str(part, "agent")
        event(sid, pid, 0, ts, "system", role, f"subtask @{agent}: {text}" if agent else text, at)
    elif ptype == "retry":
        error = _dict(part, "error")
        data = error.get("data")
        detail = data.get("message") if type(data) is dict else None
        attempt = part.get("attempt")
        text = f"retry {attempt}: {detail}" if type(detail) is str else f"retry {attempt}"
        created = _dict(part, "time").get("created")
        event(sid, pid, 0, instant(created) or ts, "system", role, text, at, is_error=True)
    elif ptype == "compaction":
        text = "compaction" + (" (auto)" if part.get("auto") is True else "")
        text += " (overflow)" if part.get("overflow") is True else ""
        event(sid, pid, 0, ts, "system", role, text, at)
    else:
        raise InvalidRecord(f"unknown OpenCode part type {ptype[:40]!r}")


def _emit_tool(
    sink: RowSink, sid: str, pid: str, part: Mapping[str, Any], role: str | None,
    model: str | None, ts: str | None, at: int,
) -> None:  # fmt: skip
    """A tool part: the call (block 0), its result once the state is final (block 1) and
    the files it attached (blocks 2…). Statuses other than OpenCode's four are read by
    what they hold (an ``output`` or an ``error``)."""
    tool, call_id = _str(part, "tool"), _str(part, "callID")
    state = _dict(part, "state")
    status = state.get("status")
    times = _dict(state, "time")
    called = instant(times.get("start")) or ts
    raw_input = state.get("input")
    tool_input = None if raw_input is None else json_text(raw_input)
    sink.event(
        sid, pid, 0, called, "tool_use", role, None, at, model=model, tool_name=tool,
        tool_call_id=call_id, tool_input=tool_input,
    )  # fmt: skip
    ended = instant(times.get("end")) or called
    if status == "error" or (
        status not in ("completed", "pending", "running") and "error" in state
    ):
        error = state.get("error")
        text = error if type(error) is str else None if error is None else json_text(error)
        sink.event(sid, pid, 1, ended, "tool_result", role, text, at, model=model,
                   tool_name=tool, tool_call_id=call_id, is_error=True)  # fmt: skip
    elif status == "completed" or (status not in ("pending", "running") and "output" in state):
        output = state.get("output")
        text = output if type(output) is str else None if output is None else json_text(output)
        sink.event(sid, pid, 1, ended, "tool_result", role, text, at, model=model,
                   tool_name=tool, tool_call_id=call_id, is_error=False)  # fmt: skip
        attachments = state.get("attachments")
        if type(attachments) is list:
            for index, file in enumerate(attachments, 2):
                if type(file) is dict:
                    sink.event(sid, pid, index, ended, "image", role, _file_text(file), at,
                               tool_name=tool, tool_call_id=call_id)  # fmt: skip
