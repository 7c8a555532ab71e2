"""GitHub Copilot: the Copilot CLI's session store, VS Code's persisted chat sessions and
exported chats.

Field-level format: provider-formats-more §1. Three formats, each with its own adapter
(where their files are: :mod:`.copilot_discovery`):

* ``copilot-cli-events`` (byte-offset) — ``${COPILOT_HOME:-~/.copilot}/session-state/``:
  ``<session-uuid>/events.jsonl`` (current layout) and the older flat ``<session-id>.jsonl``.
  One event envelope per line: ``{type, data, id, timestamp, parentId}``. A file's
  session is its directory name (or stem), replaced by ``session.start.data.sessionId``
  when that is the file's first record. The ``workspace.yaml`` beside ``events.jsonl``
  is not read (agentlake has no YAML parser): cwd and branch come from the ``context`` of
  ``session.start``/``session.resume``; the CLI's session ``summary`` is not imported.
* ``copilot-vscode-chat`` (document) — VS Code's ``chatSessions/<id>.json``: mapped by
  :mod:`.copilot_vscode`.
* ``copilot-chat-json-export`` (document, named with ``import --file``) — VS Code's
  "Export Chat" JSON, a persisted session copied out, or AIWG's shape of it: mapped by
  :mod:`.copilot_export`.

Event mapping (CLI): ``user.message`` → user text; ``assistant.message`` → its
``reasoningText`` (thinking), ``content`` (assistant text) and one ``tool_use`` per
``toolRequests`` item; ``assistant.reasoning`` → thinking; ``tool.execution_start`` →
``tool_use`` (the same event as the request's: a tool call's events are keyed by its
``toolCallId``, so whichever copy comes first stays); ``tool.execution_complete`` →
``tool_result`` (``result.content``, ``is_error = not success``); ``system.message``,
``system.notification``, ``session.info``, ``session.error``, ``session.truncation``,
``abort``, ``hook.*`` and ``subagent.*`` → system events; ``session.start``/``resume``/
``model_change``/``auto_mode_resolved`` and ``assistant.turn_start`` → session fields and
the current model. Sub-agents run inline: their events carry ``parentToolCallId`` and are
marked ``is_sidechain``; they have no session of their own.

Token rule: the CLI persists per call only ``assistant.message.data.outputTokens``; the
full counts are in ``session.shutdown.data.modelMetrics.<model>.usage``, cumulative per
(session, model). Each shutdown snapshot becomes ONE usage row per model, identified by
(session, ``session-total:<model>``) and ranked by its byte offset, so a later snapshot
of a resumed session replaces the earlier one (never summed); only a snapshot smaller
than the one before (older builds restarted their totals on resume) starts a row of its
own. ``input = inputTokens −
cacheReadTokens − cacheWriteTokens`` (``inputTokens`` includes both), ``reasoning`` is
already inside ``output``. The per-message ``outputTokens`` are not stored as calls:
they are inside the shutdown totals, and adding them would count output twice.

Format drift: ``session.start.data.version`` (absent in some builds) must have a major
version in :data:`.copilot_fields.KNOWN_FORMAT_MAJORS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from ..adapter import InvalidRecord, RecordOutcome, SourceContext, StateLimitExceeded
from ..rows import RowSink
from ..sources import SourceFile, rel_parts
from ..values import token_count
from .copilot_fields import (
    check_version,
    nonempty,
    pricing_model,
    result_text,
    shutdown_totals,
    text_or_none,
    tool_input,
)

PROVIDER_ID: Final = "copilot"
ADAPTER_VERSION: Final = "1.1"
CLI_FORMAT: Final = "copilot-cli-events"
VSCODE_FORMAT: Final = "copilot-vscode-chat"
EXPORT_FORMAT: Final = "copilot-chat-json-export"

_TRUSTED_FOLDER: Final = re.compile(r"^Folder (.+) has been added to trusted folders\.$")

# Records with nothing to import: turn boundaries and credit counters (AIU, no tokens).
IGNORED_TYPES: Final = frozenset(
    {"assistant.turn_end", "session.usage_checkpoint", "assistant.turn_start"}
)


Handler = Callable[[dict[str, Any], dict[str, Any], int, SourceContext, RowSink], RecordOutcome]


# --------------------------------------------------------------------------- adapter


class CopilotCliAdapter:
    """Maps Copilot CLI ``events.jsonl`` lines (see the module docstring).

    ``ctx.memo`` keys: ``sid`` (the session id, fixed at the first record), ``model``
    (the current model: the latest of ``selectedModel``, ``newModel``, ``chosenModel``
    and a turn's ``model``), ``cwd`` (1 once a project path was emitted), ``calls`` (the
    tool call ids emitted whose other copy has not come yet, at most
    ``ctx.max_open_ids``), ``totals`` (per model: the segment and
    the counts of its latest shutdown snapshot).
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {
            "session.start": self._start,
            "session.resume": self._resume,
            "session.model_change": self._model_change,
            "session.auto_mode_resolved": self._auto_mode,
            "session.shutdown": self._shutdown,
            "user.message": self._user,
            "assistant.message": self._assistant,
            "assistant.reasoning": self._reasoning,
            "tool.execution_start": self._tool_start,
            "tool.execution_complete": self._tool_complete,
            "system.message": self._system_text,
            "system.notification": self._system_text,
            "session.info": self._info,
            "session.error": self._error,
            "session.truncation": self._truncation,
            "abort": self._abort,
            "hook.start": self._hook,
            "hook.end": self._hook,
            "subagent.started": self._subagent,
            "subagent.completed": self._subagent,
        }

    def locate(self, source: SourceFile) -> SourceContext:
        """Session id from the path: the directory of ``events.jsonl``, else the stem."""
        parts = rel_parts(source)
        return SourceContext(source, parts[0] if len(parts) == 2 else source.path.stem)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one event line; raises :class:`InvalidRecord` when ``data`` is not an
        object and :class:`FormatDrift` for an unknown ``session.start`` version."""
        memo = ctx.memo
        kind = record.get("type")
        if "sid" not in memo:
            memo.update(sid=ctx.session_id, model=None, cwd=0)
            if kind == "session.start" and type(record.get("data")) is dict:
                sid = nonempty(record["data"].get("sessionId"))
                if sid is not None:
                    memo["sid"] = sid
        ctx.session_id = memo["sid"]
        if type(kind) is not str:
            return "unknown"
        handler = self._handlers.get(kind)
        if handler is None:
            if kind not in IGNORED_TYPES:
                return "unknown"
            self._turn(record, memo)
            return "ignored"
        data = record.get("data")
        if type(data) is not dict:
            raise InvalidRecord(f"'data' of a {kind} record is not an object")
        return handler(record, data, offset, ctx, sink)

    # -- envelope ------------------------------------------------------------------
    @staticmethod
    def _turn(record: dict[str, Any], memo: dict[str, Any]) -> None:
        """A turn boundary names the model of the turn."""
        data = record.get("data")
        if type(data) is dict and (model := nonempty(data.get("model"))) is not None:
            memo["model"] = model

    @staticmethod
    def _native(record: dict[str, Any], offset: int) -> str:
        return nonempty(record.get("id")) or f"@{offset}"

    @staticmethod
    def _ts(record: dict[str, Any]) -> str | None:
        return text_or_none(record.get("timestamp"))

    def _emit_system(
        self,
        record: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
        text: str | None,
        *,
        is_error: bool | None = None,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
    ) -> RecordOutcome:
        data = record["data"]
        sink.event(
            ctx.session_id,
            self._native(record, offset),
            0,
            self._ts(record),
            "system",
            "system",
            text,
            offset,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            is_error=is_error,
            is_sidechain=data.get("parentToolCallId") is not None,
        )
        return "mapped"

    # -- session fields ------------------------------------------------------------
    def _context(self, data: dict[str, Any], ctx: SourceContext, sink: RowSink) -> None:
        """Session fields of a start or resume: the project path is the first one known
        (a resumed session keeps its project), the branch and version the latest."""
        context = data.get("context")
        if context is not None and type(context) is not dict:
            raise InvalidRecord("'data.context' is not an object")
        context = context or {}
        cwd = nonempty(context.get("cwd")) or nonempty(context.get("gitRoot"))
        model = nonempty(data.get("selectedModel"))
        if model is not None:
            ctx.memo["model"] = model
        if ctx.memo["cwd"]:
            cwd = None
        elif cwd is not None:
            ctx.memo["cwd"] = 1
        sink.session(
            ctx.session_id,
            project_path=cwd,
            git_branch=nonempty(context.get("branch")),
            cli_version=nonempty(data.get("copilotVersion")),
            model=model,
        )

    def _start(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        check_version(data.get("version"))
        self._context(data, ctx, sink)
        sink.session(ctx.session_id, started_at=nonempty(data.get("startTime")))
        return "mapped"

    def _resume(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        self._context(data, ctx, sink)
        return "mapped"

    def _model_change(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        model = nonempty(data.get("newModel"))
        if model is not None:
            ctx.memo["model"] = model
            sink.session(ctx.session_id, model=model)
        return "mapped"

    def _auto_mode(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        return self._model_change(record, {"newModel": data.get("chosenModel")}, offset, ctx, sink)

    # -- tokens --------------------------------------------------------------------
    def _shutdown(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        rows = shutdown_totals(data.get("modelMetrics"))
        sid, ts = ctx.session_id, self._ts(record)
        for name, uncached, write, read, output, reasoning in rows:
            # One row per (session, model): the same identity at every snapshot, ranked
            # by position, so the file's last snapshot is the one counted. The identity
            # is a native id, not a message id: message ids are global across sessions,
            # native ids are scoped to their session.
            native = self._segment(ctx.memo, name, [uncached, write, read, output])
            sink.usage(
                sid, None, None, native, ts, pricing_model(name),
                uncached, write, 0, read, output, reasoning, False, offset, rank=offset,
                per_session=True,
            )  # fmt: skip
        current = nonempty(data.get("currentModel"))
        sink.session(sid, model=current, updated_at=ts)
        return "mapped"

    @staticmethod
    def _segment(memo: dict[str, Any], name: str, totals: list[int]) -> str:
        """The identity of a model's shutdown totals. Totals that are cumulative never
        shrink; a smaller count than the previous snapshot's means the CLI started its
        totals again (older builds did on each resume), so the earlier totals are a
        finished segment that keeps its row and the new ones get a row of their own."""
        seen: dict[str, list[int]] = memo.setdefault("totals", {})
        prior = seen.get(name)
        segment = 0 if prior is None else prior[0]
        if prior is not None and any(now < was for now, was in zip(totals, prior[1:], strict=True)):
            segment += 1
        seen[name] = [segment, *totals]
        return f"session-total:{name}" + (f"#{segment}" if segment else "")

    # -- conversation --------------------------------------------------------------
    def _user(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        content = data.get("content")
        if content is not None and type(content) is not str:
            raise InvalidRecord("'data.content' of a user message is not text")
        side = data.get("parentToolCallId") is not None or data.get("parentAgentTaskId") is not None
        sink.event(
            ctx.session_id, self._native(record, offset), 0, self._ts(record), "text", "user",
            content, offset, is_sidechain=side,
        )  # fmt: skip
        return "mapped"

    def _assistant(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        content, reasoning = data.get("content"), data.get("reasoningText")
        requests = data.get("toolRequests")
        if content is not None and type(content) is not str:
            raise InvalidRecord("'data.content' of an assistant message is not text")
        if requests is not None and type(requests) is not list:
            raise InvalidRecord("'data.toolRequests' is not a list")
        model = nonempty(data.get("model")) or ctx.memo["model"]
        if requests:
            _check_open(ctx, [r.get("toolCallId") for r in requests if type(r) is dict])
        sid, native, ts = ctx.session_id, self._native(record, offset), self._ts(record)
        side = data.get("parentToolCallId") is not None
        # Block 0 is the reasoning, 1 the reply; each tool call is its own event (below).
        if type(reasoning) is str and reasoning:
            sink.event(sid, native, 0, ts, "thinking", "assistant", reasoning, offset,
                       model=model, is_sidechain=side)  # fmt: skip
        if content:
            sink.event(sid, native, 1, ts, "text", "assistant", content, offset,
                       model=model, is_sidechain=side)  # fmt: skip
        for i, request in enumerate(requests or ()):
            if type(request) is dict:
                self._tool_use(request, "name", native, i + 2, ts, offset, model, side, ctx, sink)
        return "mapped"

    def _tool_use(
        self,
        call: dict[str, Any],
        name_key: str,
        native: str,
        block: int,
        ts: str | None,
        offset: int,
        model: str | None,
        side: bool,
        ctx: SourceContext,
        sink: RowSink,
    ) -> None:
        """One tool call. The request in an assistant message and its
        ``tool.execution_start`` are the same call: whichever comes first is emitted, the
        other skipped (the id is remembered in the memo until the other copy comes)."""
        call_id = nonempty(call.get("toolCallId"))
        if call_id is not None:
            _check_open(ctx, [call_id])
            seen: dict[str, int] = ctx.memo.setdefault("calls", {})
            if call_id in seen:
                del seen[call_id]  # both copies seen: the call is no longer open
                return
            seen[call_id] = 1
        sink.event(
            ctx.session_id,
            native,
            block,
            ts,
            "tool_use",
            "assistant",
            None,
            offset,
            model=model,
            tool_name=text_or_none(call.get(name_key)),
            tool_call_id=call_id,
            tool_input=tool_input(call.get("arguments")),
            is_sidechain=side,
        )

    def _reasoning(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        content = data.get("content")
        if content is not None and type(content) is not str:
            raise InvalidRecord("'data.content' of a reasoning record is not text")
        sink.event(
            ctx.session_id, self._native(record, offset), 0, self._ts(record), "thinking",
            "assistant", content, offset, model=ctx.memo["model"],
            is_sidechain=data.get("parentToolCallId") is not None,
        )  # fmt: skip
        return "mapped"

    def _tool_start(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        model = nonempty(data.get("model")) or ctx.memo["model"]
        side = data.get("parentToolCallId") is not None
        self._tool_use(data, "toolName", self._native(record, offset), 0, self._ts(record),
                       offset, model, side, ctx, sink)  # fmt: skip
        return "mapped"

    def _tool_complete(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        success = data.get("success")
        if success is not None and type(success) is not bool:
            raise InvalidRecord("'data.success' is not a boolean")
        result = data.get("result")
        text = result_text(result)
        error = data.get("error")
        if text is None and type(error) is dict:
            text = text_or_none(error.get("message"))
        elif text is None:
            text = text_or_none(error)
        sink.event(
            ctx.session_id, self._native(record, offset), 0, self._ts(record), "tool_result",
            "tool", text, offset, model=nonempty(data.get("model")) or ctx.memo["model"],
            tool_call_id=nonempty(data.get("toolCallId")),
            is_error=None if success is None else not success,
            is_sidechain=data.get("parentToolCallId") is not None,
        )  # fmt: skip
        return "mapped"

    # -- system lines --------------------------------------------------------------
    def _system_text(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        return self._emit_system(record, offset, ctx, sink, text_or_none(data.get("content")))

    def _info(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        message = text_or_none(data.get("message"))
        # Builds before session.start carried a context name the project only here.
        if message and not ctx.memo["cwd"] and (found := _TRUSTED_FOLDER.match(message)):
            ctx.memo["cwd"] = 1
            sink.session(ctx.session_id, project_path=found[1])
        return self._emit_system(record, offset, ctx, sink, message)

    def _error(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        return self._emit_system(record, offset, ctx, sink, text_or_none(data.get("message")),
                                 is_error=True)  # fmt: skip

    def _truncation(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        removed = data.get("tokensRemovedDuringTruncation", data.get("droppedTokens"))
        count = token_count(removed)
        text = f"context truncated: {count} tokens removed" if count else "context truncated"
        return self._emit_system(record, offset, ctx, sink, text)

    def _abort(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        return self._emit_system(
            record, offset, ctx, sink, text_or_none(data.get("reason")) or "abort"
        )

    def _hook(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        hook = text_or_none(data.get("hookType")) or "hook"
        ended = record["type"] == "hook.end"
        success = data.get("success")
        return self._emit_system(
            record, offset, ctx, sink, f"{hook} hook {'ended' if ended else 'started'}",
            is_error=(not success) if ended and type(success) is bool else None,
            tool_name=hook,
        )  # fmt: skip

    def _subagent(
        self, record: dict[str, Any], data: dict[str, Any], offset: int, ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:  # fmt: skip
        name = (
            text_or_none(data.get("agentDisplayName"))
            or text_or_none(data.get("agentName"))
            or "sub-agent"
        )
        if record["type"] == "subagent.started":
            description = text_or_none(data.get("agentDescription"))
            text = f"{name} started: {description}" if description else f"{name} started"
        else:
            text = f"{name} completed"
        return self._emit_system(
            record, offset, ctx, sink, text, tool_name=text_or_none(data.get("agentName")),
            tool_call_id=nonempty(data.get("toolCallId")),
        )  # fmt: skip


def _check_open(ctx: SourceContext, ids: list[Any]) -> None:
    """Refuse the source (before any row of the record) when remembering the new ids of
    ``ids`` would hold more than ``ctx.max_open_ids`` calls whose other copy has not
    come: forgetting one would emit that call twice."""
    seen: dict[str, int] = ctx.memo.get("calls") or {}
    if len(seen) + len(ids) <= ctx.max_open_ids:
        return
    new = {i for i in ids if type(i) is str and i and i not in seen}
    if len(seen) + len(new) > ctx.max_open_ids:
        raise StateLimitExceeded(
            f"more than {ctx.max_open_ids:,} tool calls wait for their other copy, the cap "
            "of the state that pairs them"
        )
