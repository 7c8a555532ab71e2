"""Claude Code transcripts: ``~/.claude/projects/<encoded-cwd>/<session>.jsonl``.

Field-level format: provider-formats §2. Each assistant content block is written on its
own line with a repeated ``message.id``/``requestId``/``usage``; every line becomes events
for its blocks and (if it carries usage) one usage candidate. Dedup of candidates happens
later, globally (DESIGN §4).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, SourceFile
from ..values import json_text, token_count

ADAPTER_VERSION: Final = "1.0"
KNOWN_FORMAT_MAJORS: Final = frozenset({0, 1, 2})

# Record types that carry nothing to import (their content is elsewhere or is UI state).
IGNORED_TYPES: Final = frozenset(
    {
        "file-history-snapshot",
        "last-prompt",
        "queue-operation",
        "progress",
        "result",
        "permission-mode",
        "mode",
        "agent-name",
        "agent-setting",
        "pr-link",
        "attachment",
        "bridge-session",
        "worktree-state",
        "frame-link",
        "tag",
        "agent-color",
    }
)

# User text that is machinery, not something the person typed.
_SYSTEM_PREFIXES: Final = (
    "<local-command-caveat>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<system-reminder>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<command-name>",
    "<command-message>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-memory-input>",
    "<teammate-message",
    "<task-notification>",
)

_SEMVER: Final = re.compile(r"^\d+\.\d+\.\d+")
_NULL_DROPS_TOP: Final = (
    "cwd",
    "version",
    "sessionId",
    "requestId",
    "costUSD",
    "isApiErrorMessage",
)
_NULL_DROPS_USAGE: Final = ("speed", "cache_read_input_tokens", "cache_creation_input_tokens")
# ``None in map(d.get, keys, _ABSENT)``: whether any of ``keys`` is present and null,
# tested in C (a generator per line cost more than the rest of the test).
_ABSENT: Final = ("",) * max(len(_NULL_DROPS_TOP), len(_NULL_DROPS_USAGE))


def owns(rel: RelParts) -> bool:
    """Every ``*.jsonl`` under the projects root, at any depth."""
    return len(rel) >= 2 and rel[-1].endswith(".jsonl") and rel[-1] != ".jsonl"


def _result_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text")
            if isinstance(b, dict) and isinstance(b.get("text"), str)
            else ("[image]" if isinstance(b, dict) and b.get("type") == "image" else None)
            for b in content
        ]
        texts = [p for p in parts if p]
        return "\n".join(texts) if texts else None
    return None if content is None else json_text(content)


def _prose_type(text: str) -> BlockType:
    return "system" if text.startswith(_SYSTEM_PREFIXES) else "text"


class ClaudeAdapter:
    """Maps Claude Code transcript lines to events and usage candidates."""

    def __init__(self) -> None:
        self._handlers: dict[
            str, Callable[[dict[str, Any], int, SourceContext, RowSink], RecordOutcome]
        ] = {
            "user": self._message,
            "assistant": self._message,
            "system": self._system,
            "summary": self._summary,
            "ai-title": self._title,
            "custom-title": self._title,
        }

    # -- identity ------------------------------------------------------------------
    def locate(self, source: SourceFile) -> SourceContext:
        """Session id from the path: the file stem; a subagent file is its own session
        (``agent-<id>``) whose parent is the session directory it sits in; a file nested
        in a session directory (``<session>/chat.jsonl``) belongs to that directory."""
        rel = source.path.relative_to(source.root)
        stem = rel.stem
        parts = rel.parts
        if "subagents" in parts[:-1]:
            parent = parts[parts.index("subagents") - 1]
            return SourceContext(source, stem, parent)
        if len(parts) > 2:  # <project>/<session-dir>/.../<file>.jsonl
            return SourceContext(source, parts[1])
        # 2.0.x wrote subagents as <project>/agent-<id>.jsonl: parent comes from the lines.
        return SourceContext(source, stem)

    # -- records -------------------------------------------------------------------
    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one transcript line (see the module docstring)."""
        kind = record.get("type")
        if kind is None and isinstance(record.get("message"), dict):
            kind = record["message"].get("role")  # usage-only lines of early builds
        if not isinstance(kind, str):
            return "unknown"
        self._envelope(record, ctx, sink)
        handler = self._handlers.get(kind)
        if handler is not None:
            return handler(record, offset, ctx, sink)
        if kind == "progress":
            self._progress_usage(record, offset, ctx, sink)
        return "ignored" if kind in IGNORED_TYPES else "unknown"

    def _envelope(self, rec: dict[str, Any], ctx: SourceContext, sink: RowSink) -> None:
        """Session metadata and the format-version check, emitted only on change."""
        memo = ctx.memo
        version = rec.get("version")
        if version is not None and version != memo.get("version"):
            if not isinstance(version, str):
                raise InvalidRecord("'version' is not a string")
            match = _SEMVER.match(version)
            if match and int(version.split(".", 1)[0]) not in KNOWN_FORMAT_MAJORS:
                raise FormatDrift(f"Claude Code version {version} has an unknown major version")
            memo["version"] = version
            sink.session(ctx.session_id, cli_version=version)
        cwd, branch = rec.get("cwd"), rec.get("gitBranch")
        if cwd != memo.get("cwd") and isinstance(cwd, str) and cwd:
            memo["cwd"] = cwd
            sink.session(ctx.session_id, project_path=cwd)
        if branch != memo.get("branch") and isinstance(branch, str) and branch:
            memo["branch"] = branch
            sink.session(ctx.session_id, git_branch=branch)
        if "parent" not in memo:
            memo["parent"] = True
            parent = ctx.parent_session_id
            sid = rec.get("sessionId")
            if parent is None and isinstance(sid, str) and sid and sid != ctx.session_id:
                parent = ctx.parent_session_id = sid  # 2.0.x top-level agent-<id>.jsonl
            if parent is not None:
                sink.session(ctx.session_id, parent_session_id=parent)

    def _message(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            raise InvalidRecord("'message' is not an object")
        role = msg.get("role") if isinstance(msg.get("role"), str) else rec.get("type")
        native = rec.get("uuid")
        native_id = native if isinstance(native, str) and native else f"@{offset}"
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        side = rec.get("isSidechain") is True
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        sid = ctx.session_id
        content = msg.get("content")
        if isinstance(content, str):
            if rec.get("isCompactSummary") is True:
                btype: BlockType = "summary"
            elif rec.get("isMeta") is True:
                btype = "system"
            else:
                btype = _prose_type(content) if role == "user" else "text"
            sink.event(
                sid, native_id, 0, ts, btype, role, content, offset, model=model, is_sidechain=side
            )
        elif isinstance(content, list):
            meta = rec.get("isMeta") is True or rec.get("isCompactSummary") is True
            for i, block in enumerate(content):
                if isinstance(block, dict):
                    self._block(
                        block, i, rec, role, meta, native_id, ts, model, side, offset, ctx, sink
                    )
        elif content is not None:
            raise InvalidRecord("'message.content' is neither text nor a list")
        usage = msg.get("usage")
        if isinstance(usage, dict):
            self._usage(rec, msg, usage, ts, side, native_id, offset, ctx, sink)
        return "mapped"

    def _block(
        self,
        block: dict[str, Any],
        i: int,
        rec: dict[str, Any],
        role: str | None,
        meta: bool,
        native_id: str,
        ts: str | None,
        model: str | None,
        side: bool,
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> None:
        sid = ctx.session_id
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            text = text if isinstance(text, str) else None
            kind: BlockType = (
                "system" if meta else ("summary" if rec.get("isCompactSummary") is True else "text")
            )
            if role == "user" and kind == "text" and text:
                kind = _prose_type(text)
            sink.event(
                sid, native_id, i, ts, kind, role, text, offset, model=model, is_sidechain=side
            )
        elif btype in ("thinking", "redacted_thinking"):
            thought = block.get("thinking")
            sink.event(
                sid,
                native_id,
                i,
                ts,
                "thinking",
                role,
                thought if isinstance(thought, str) else None,
                offset,
                model=model,
                is_sidechain=side,
            )
        elif btype in ("tool_use", "server_tool_use"):
            name, call_id = block.get("name"), block.get("id")
            sink.event(
                sid,
                native_id,
                i,
                ts,
                "tool_use",
                role,
                None,
                offset,
                model=model,
                tool_name=name if isinstance(name, str) else None,
                tool_call_id=call_id if isinstance(call_id, str) else None,
                tool_input=json_text(block.get("input")),
                is_sidechain=side,
            )
        elif btype == "tool_result" or (isinstance(btype, str) and btype.endswith("_tool_result")):
            call_id = block.get("tool_use_id")
            is_error = block.get("is_error")
            if is_error is None and isinstance(rec.get("toolUseResult"), dict):
                is_error = rec["toolUseResult"].get("is_error")
            sink.event(
                sid,
                native_id,
                i,
                ts,
                "tool_result",
                role,
                _result_text(block.get("content")),
                offset,
                tool_call_id=call_id if isinstance(call_id, str) else None,
                is_error=is_error if isinstance(is_error, bool) else None,
                is_sidechain=side,
            )
        elif btype in ("image", "document"):
            sink.event(
                sid, native_id, i, ts, "image", role, f"[{btype}]", offset, is_sidechain=side
            )

    def _usage(
        self,
        rec: dict[str, Any],
        msg: dict[str, Any],
        usage: dict[str, Any],
        ts: str | None,
        side: bool,
        native_id: str,
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
        request_id: Any = None,
    ) -> None:
        """One usage candidate, unless the line fails the reference validation
        (token-accounting §4.3): nulls in identity fields, empty ids, non-semver
        versions and missing input/output counts are not countable calls."""
        if request_id is None:
            request_id = rec.get("requestId")
        if None in map(rec.get, _NULL_DROPS_TOP, _ABSENT):
            return
        if msg.get("id", "") is None or msg.get("model", "") is None:
            return
        if None in map(usage.get, _NULL_DROPS_USAGE, _ABSENT):
            return
        if "input_tokens" not in usage or "output_tokens" not in usage:
            return
        version = rec.get("version")
        if isinstance(version, str) and not _SEMVER.match(version):
            return
        message_id, model = msg.get("id"), msg.get("model")
        if "" in (rec.get("sessionId"), request_id, message_id, model):
            return
        split = usage.get("cache_creation")
        if isinstance(split, dict):
            write_1h = token_count(split.get("ephemeral_1h_input_tokens"))
            write = token_count(split.get("ephemeral_5m_input_tokens")) + write_1h
        else:
            write_1h, write = 0, token_count(usage.get("cache_creation_input_tokens"))
        sink.usage(
            ctx.session_id,
            message_id if isinstance(message_id, str) else None,
            request_id if isinstance(request_id, str) else None,
            native_id,
            ts,
            model if isinstance(model, str) else None,
            token_count(usage.get("input_tokens")),
            write,
            write_1h,
            token_count(usage.get("cache_read_input_tokens")),
            token_count(usage.get("output_tokens")),
            0,
            side,
            offset,
        )

    def _progress_usage(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> None:
        """Older builds wrapped a subagent's assistant message in a progress line."""
        data = rec.get("data")
        inner = data.get("message") if isinstance(data, dict) else None
        msg = inner.get("message") if isinstance(inner, dict) else None
        if not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
            return
        assert isinstance(inner, dict)
        ts = inner.get("timestamp") if isinstance(inner.get("timestamp"), str) else None
        side = inner.get("isSidechain") is True
        uuid = inner.get("uuid")
        native_id = uuid if isinstance(uuid, str) and uuid else f"@{offset}"
        self._usage(
            rec,
            msg,
            msg["usage"],
            ts,
            side,
            native_id,
            offset,
            ctx,
            sink,
            request_id=inner.get("requestId"),
        )

    def _system(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        content = rec.get("content")
        subtype = rec.get("subtype")
        text = (
            content if isinstance(content, str) else (subtype if isinstance(subtype, str) else None)
        )
        native = rec.get("uuid")
        native_id = native if isinstance(native, str) and native else f"@{offset}"
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        sink.event(
            ctx.session_id,
            native_id,
            0,
            ts,
            "system",
            "system",
            text,
            offset,
            is_sidechain=rec.get("isSidechain") is True,
        )
        return "mapped"

    def _summary(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        summary = rec.get("summary")
        if not isinstance(summary, str):
            raise InvalidRecord("'summary' is not a string")
        leaf = rec.get("leafUuid")
        native_id = f"summary:{leaf}" if isinstance(leaf, str) and leaf else f"@{offset}"
        sink.event(ctx.session_id, native_id, 0, None, "summary", "system", summary, offset)
        sink.session(ctx.session_id, title=summary, title_rank=1)
        return "mapped"

    def _title(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        user_set = rec.get("type") == "custom-title"
        title = rec.get("customTitle" if user_set else "aiTitle", rec.get("title"))
        if not isinstance(title, str):
            raise InvalidRecord("title is not a string")
        sink.session(ctx.session_id, title=title, title_rank=3 if user_set else 2)
        return "mapped"
