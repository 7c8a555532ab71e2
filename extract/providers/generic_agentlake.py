"""agentlake's own exports (``agentlake export jsonl``) read back by the generic
interchange adapter into the rows they were exported from.

An export is an interchange file whose header names ``product: "agentlake"`` and
``extensions.agentlake.format`` 1. Each line's ``extensions.agentlake`` carries what
the catalog row held: its provider and session id (the interchange ``sessionId`` is
``provider:session_id``), and, per kind:

* ``agentlake.session``: the session's metadata (parent, project path, title and its
  rank, branch, CLI version, model, preview, archived, thread-index tokens, start and
  last update, lifecycle);
* an event (any other kind): its catalog kind, role, seq, model, tool fields, sidechain
  flag, native id and whether its text was null; the text is the line's ``text`` and
  the time its ``occurredAt``;
* ``agentlake.usage``: one model call: call, message, request and native ids, model,
  every token field (``cacheWrite1hTokens`` too), merge rank, per-session and sidechain
  flags.

The rows keep the provider, event id, seq and call id they had
(:class:`~agentlake.extract.rows.GivenIdentity`), so re-importing an export, into a new
catalog or the one it came from, gives the same rows and never doubles one.
"""

from __future__ import annotations

from typing import Any, Final

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome
from ..rows import GivenIdentity, RowSink
from ..schema import BlockType
from ..values import token_count

PRODUCT: Final = "agentlake"
KNOWN_FORMATS: Final = frozenset({1})
SESSION_KIND: Final = "agentlake.session"
USAGE_KIND: Final = "agentlake.usage"
# The catalog's event kinds (DESIGN §3) as the raw block types that classify back to them.
_BLOCKS: Final[dict[str, BlockType]] = {
    "prompt": "text",
    "response": "text",
    "reasoning": "thinking",
    "tool_call": "tool_use",
    "tool_result": "tool_result",
    "summary": "summary",
    "system": "system",
}


def is_export(header: dict[str, Any]) -> bool:
    """Whether an interchange header is an agentlake export's (a newer format of ours
    is drift: its rows would be read wrong)."""
    ext = header.get("extensions")
    ours = ext.get(PRODUCT) if isinstance(ext, dict) else None
    if header.get("product") != PRODUCT or not isinstance(ours, dict):
        return False
    fmt = ours.get("format")
    if fmt not in KNOWN_FORMATS:
        raise FormatDrift(f"agentlake export format {str(fmt)[:20]} is unknown to this version")
    return True


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def map_line(
    rec: dict[str, Any], ours: dict[str, Any], when: str | None, offset: int, sink: RowSink
) -> RecordOutcome:
    """Emit the row one line of an export describes (its ``extensions.agentlake`` is
    ``ours``); ``when`` is its ``occurredAt``."""
    provider, sid = _text(ours.get("provider")), _text(ours.get("sessionId"))
    if not provider or not sid:
        raise InvalidRecord("an agentlake line needs its provider and sessionId")
    kind = rec.get("kind")
    if kind == SESSION_KIND:
        _session(ours, provider, sid, sink)
    elif kind == USAGE_KIND:
        _call(ours, provider, sid, when, offset, sink)
    elif ours.get("kind") in _BLOCKS:
        _event(rec, ours, provider, sid, when, offset, sink)
    else:
        return "unknown"
    return "mapped"


def _session(ours: dict[str, Any], provider: str, sid: str, sink: RowSink) -> None:
    lifecycle = _text(ours.get("lifecycle"))
    sink.session(
        sid,
        given_provider=provider,
        parent_session_id=_text(ours.get("parentSessionId")),
        project_path=_text(ours.get("projectPath")),
        title=_text(ours.get("title")),
        title_rank=_int(ours.get("titleRank")),
        git_branch=_text(ours.get("gitBranch")),
        cli_version=_text(ours.get("cliVersion")),
        model=_text(ours.get("model")),
        preview=_text(ours.get("preview")),
        archived=_flag(ours.get("archived")),
        index_tokens=_int(ours.get("indexTokens")),
        started_at=_text(ours.get("startedAt")),
        updated_at=_text(ours.get("updatedAt")),
        hidden=lifecycle is not None and lifecycle != "active",
    )


def _event(rec: dict[str, Any], ours: dict[str, Any], provider: str, sid: str,
           when: str | None, offset: int, sink: RowSink) -> None:  # fmt: skip
    seq = _int(ours.get("seq"))
    if seq is None:
        raise InvalidRecord("an agentlake event needs its seq")
    text = rec["text"] if ours.get("hasText", True) is not False else None
    sink.event(
        sid,
        _text(ours.get("nativeId")) or "",
        0,
        when,
        _BLOCKS[ours["kind"]],
        _text(ours.get("role")),
        text,
        offset,
        model=_text(ours.get("model")),
        tool_name=_text(ours.get("toolName")),
        tool_call_id=_text(ours.get("toolCallId")),
        tool_input=_text(ours.get("toolInput")),
        is_error=_flag(ours.get("isError")),
        is_sidechain=_flag(ours.get("sidechain")) or False,
        given=GivenIdentity(provider, rec["eventId"], seq),
    )


def _call(ours: dict[str, Any], provider: str, sid: str, when: str | None, offset: int,
          sink: RowSink) -> None:  # fmt: skip
    call_id = _text(ours.get("callId"))
    if not call_id:
        raise InvalidRecord("an agentlake call needs its callId")
    sink.usage(
        sid,
        _text(ours.get("messageId")),
        _text(ours.get("requestId")),
        _text(ours.get("nativeId")) or call_id,
        when,
        _text(ours.get("model")),
        token_count(ours.get("inputTokens")),
        token_count(ours.get("cacheWriteTokens")),
        token_count(ours.get("cacheWrite1hTokens")),
        token_count(ours.get("cacheReadTokens")),
        token_count(ours.get("outputTokens")),
        token_count(ours.get("reasoningTokens")),
        _flag(ours.get("sidechain")) or False,
        offset,
        rank=_int(ours.get("mergeRank")),
        per_session=_flag(ours.get("perSession")) or False,
        given=GivenIdentity(provider, call_id),
    )
