# Over 500 lines: one adapter class whose record handlers share one running memo (readers: codex_fields).
"""OpenAI Codex CLI: rollouts under ``$CODEX_HOME/sessions`` and ``archived_sessions``
(this module), plus the ``state_5.sqlite`` thread index (:mod:`.codex_index`).

Field-level format: provider-formats §3. A rollout is JSONL whose records are envelopes
``{"timestamp", "type", "payload"}`` (``session_meta``, ``turn_context``,
``response_item``, ``event_msg``, ``compacted``); rollouts written before the envelope
(2025) start with a bare ``{"id", "timestamp", "instructions"}`` header followed by
top-level ``{"type": "message" | "reasoning" | "function_call" | ...}`` items.

Rules this adapter keeps (DESIGN §4, token-accounting §4.5):

* **Identity.** The session id is ``session_meta.payload.id`` read from the first
  64 KiB (else the thread uuid in the file name), never the path, so a rollout present
  in both ``sessions/`` and ``archived_sessions/`` maps to the same events and calls.
* **Dual-written messages.** Codex writes each prompt and each reply twice
  (``event_msg`` and ``response_item``, in either order). Whichever copy comes first is
  imported; the other, recognized by the same text, is ignored.
* **Tokens.** Each ``event_msg``/``token_count`` with a non-null ``info`` is a call:
  ``last_token_usage``, else the delta of the cumulative ``total_token_usage``; an event
  whose cumulative total equals the previous one is a re-emit and counts nothing.
  ``input = input_tokens − cached`` (cached clamped to input), ``cache_read = cached``,
  ``output = output_tokens``, ``reasoning = reasoning_output_tokens``; the model is the
  event's own, else the latest ``turn_context`` model, else ``gpt-5``. A call's identity
  is its cumulative total (or, without one, its timestamp and counts) within the
  session, so re-imports and archived copies collapse to one call.
* **Forks and subagents** (``forked_from_id``, ``parent_thread_id`` or
  ``source.subagent.thread_spawn``) start by replaying the parent's history, stamped
  with the fork's creation second. That replay ends at the first record stamped after
  that second, or at the fork's own turn (a ``turn_context``/``task_started`` whose
  UUIDv7 ``turn_id`` or ``started_at`` is not earlier than the fork). Replayed records
  import nothing: their ``token_count`` totals only advance the baseline.
* **Rate limits.** A ``token_count`` (whether or not it carries ``info``) or an
  ``account/rateLimits/updated`` event with ``rate_limits`` is a snapshot of the plan's
  limits: one row per window (``primary``, ``secondary``) with its used percentage, its
  length, its reset (``resets_at``/``reset_at`` epoch seconds, or ``resets_in_seconds``
  after the record) and the ``plan_type``/``limit_id`` newer builds add. Builds before
  the windows were objects wrote flat ``primary_used_percent``/``…_window_minutes``
  fields. A replayed parent's snapshots are not the fork's and import nothing.
* **Thread index.** ``state_5.sqlite`` enriches sessions (title, preview, model, cwd,
  times, archived flag, spawn parent) and gives ``threads.tokens_used`` as the
  session's ``index_tokens``: a figure of the whole thread, never a call.
* **Format drift.** ``session_meta.payload.cli_version`` with a major version outside
  :data:`KNOWN_CLI_MAJORS` raises :class:`FormatDrift` (the source is refused).

Running state (previous cumulative total, current model, fork replay window, pending
dual-written message) lives in ``SourceContext.memo``, so an append read in a later run
continues exactly where the committed prefix stopped. The memo holds no transcript text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile
from ..values import json_text
from .codex_fields import (
    epoch_ms,
    json_or_text,
    nonempty_str,
    parent_of,
    rate_windows,
    session_id_from_header,
    text_digest,
    usage_counts,
    uuid7_ms,
)
from .codex_fields import tool_output as tool_output  # the adapter's reading of tool outputs
from .codex_index import owns_state_index as owns_state_index  # discovery, with owns_rollout

#: 1.1 adds rate-limit snapshots and the thread index's token figure. Every event and
#: call is the same as 1.0's, so a 1.0 checkpoint stays valid (a minor version: no drift).
ADAPTER_VERSION: Final = "1.1"
PROVIDER: Final = "codex"

#: Major versions of ``cli_version`` whose rollout format this adapter knows. Every
#: release so far is 0.x; 1.x is expected to keep the envelope. Anything else is drift.
KNOWN_CLI_MAJORS: Final = frozenset({0, 1})

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

# Top-level record types with nothing to import.
_IGNORED_TOP: Final = frozenset({"world_state", "inter_agent_communication_metadata"})

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

_SEMVER: Final = re.compile(r"^(\d+)\.\d+")
_FILE_UUID: Final = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)

Handler = Callable[[dict[str, Any], int, SourceContext, RowSink], RecordOutcome]
ItemHandler = Callable[[dict[str, Any], dict[str, Any], int, SourceContext, RowSink], RecordOutcome]


# --------------------------------------------------------------------------- discovery


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``$CODEX_HOME`` when it is an absolute path, else ``~/.codex``: its ``sessions/``
    and ``archived_sessions/`` (rollouts) and the home itself (``state_5.sqlite``).

    A relative ``CODEX_HOME`` is ignored (Codex resolves it against an unknowable
    working directory); the default roots are returned and their ``origin`` names the
    ignored value.
    """
    configured = env.get("CODEX_HOME", "").strip()
    if configured and Path(configured).is_absolute():
        base, origin = Path(configured), "CODEX_HOME"
    else:
        base = home / ".codex"
        origin = (
            f"default (relative CODEX_HOME {configured!r} ignored)" if configured else "default"
        )
    warning = (
        f"CODEX_HOME={configured!r} is relative and was ignored; set it to an absolute path"
        if configured and origin != "CODEX_HOME"
        else None
    )
    return [
        Root(PROVIDER, base / "sessions", origin, formats=("codex-rollout",), warning=warning),
        Root(PROVIDER, base / "archived_sessions", origin, formats=("codex-rollout",)),
        Root(PROVIDER, base, origin, formats=("codex-state",), max_depth=1),
    ]


def owns_rollout(rel: RelParts) -> bool:
    """``rollout-*.jsonl`` directly in a root (``archived_sessions/`` is flat) or in its
    ``YYYY/MM/DD/`` folders (``sessions/``)."""
    name = rel[-1]
    if not (name.startswith("rollout-") and name.endswith(".jsonl")):
        return False
    parts = rel
    if len(parts) == 1:
        return True
    if len(parts) != 4:
        return False
    year, month, day = parts[0], parts[1], parts[2]
    return len(year) == 4 and len(month) == 2 and len(day) == 2 and (year + month + day).isdigit()


# --------------------------------------------------------------------------- rollouts


class RolloutAdapter:
    """Maps Codex rollout records to events, usage candidates and session metadata."""

    def __init__(self) -> None:
        self._top: dict[str, Handler] = {
            "response_item": self._response_item,
            "event_msg": self._event_msg,
            "session_meta": self._session_meta,
            "turn_context": self._turn_context,
            "compacted": self._compacted,
        }
        self._items: dict[str, ItemHandler] = {
            "message": self._message,
            "reasoning": self._reasoning,
            **dict.fromkeys(TOOL_CALLS, self._tool_call),
            "function_call_output": self._tool_result,
            "custom_tool_call_output": self._tool_result,
            "tool_search_output": self._tool_result,
            "agent_message": self._agent_message_item,
        }
        self._events: dict[str, ItemHandler] = {
            "token_count": self._token_count,
            "account/rateLimits/updated": self._rate_limits_updated,
            "user_message": self._user_message,
            "agent_message": self._agent_message,
            "thread_name_updated": self._thread_name,
            "turn_aborted": self._turn_aborted,
            "error": self._error,
        }
        # Pre-envelope rollouts write response items at the top level.
        for item_type, handler in self._items.items():
            self._top.setdefault(item_type, self._legacy_item(handler))

    # -- identity ------------------------------------------------------------------
    def locate(self, source: SourceFile) -> SourceContext:
        """Session id from the rollout's header (first 64 KiB), else the thread uuid in
        its file name, else its stem; the parent comes from ``session_meta``."""
        sid = session_id_from_header(source.path)
        if sid is None:
            match = _FILE_UUID.search(source.path.name)
            sid = match.group(1).lower() if match else source.path.stem
        return SourceContext(source, sid)

    # -- records -------------------------------------------------------------------
    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one rollout record (see the module docstring)."""
        if "replay" in ctx.memo and self._replayed(record, ctx.memo):
            return "ignored"
        kind = record.get("type")
        if type(kind) is str:
            handler = self._top.get(kind)
            if handler is not None:
                return handler(record, offset, ctx, sink)
            return "ignored" if kind in _IGNORED_TOP else "unknown"
        if kind is None:
            return self._untyped(record, offset, ctx, sink)
        return "unknown"

    @staticmethod
    def _ts(rec: dict[str, Any], memo: dict[str, Any]) -> str | None:
        ts = rec.get("timestamp")
        return ts if type(ts) is str else memo.get("t0")

    @staticmethod
    def _payload(rec: dict[str, Any]) -> dict[str, Any]:
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            raise InvalidRecord("'payload' is not an object")
        return payload

    @staticmethod
    def _payload_type(payload: dict[str, Any]) -> Any:
        """The payload's ``type``: an array or object there makes the record invalid;
        any other value that is not a known name makes it unknown."""
        ptype = payload.get("type")
        if isinstance(ptype, list | dict):
            raise InvalidRecord("'payload.type' is not a string")
        return ptype

    # -- fork replay ---------------------------------------------------------------
    def _replayed(self, rec: dict[str, Any], memo: dict[str, Any]) -> bool:
        """Whether ``rec`` is still part of a fork's replayed parent history; ends the
        replay (and returns ``False``) at the first record of the fork's own."""
        ts = rec.get("timestamp")
        if type(ts) is str and ts[:19] > memo["replay"]:
            del memo["replay"], memo["fork_ms"]
            return False
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            return True
        kind, ptype = rec.get("type"), payload.get("type")
        fork_ms: int = memo["fork_ms"]
        if kind == "turn_context" or (kind == "event_msg" and ptype == "task_started"):
            started = uuid7_ms(payload.get("turn_id"))
            if started is None and ptype == "task_started":
                at = payload.get("started_at")
                if type(at) is int:
                    started = at * 1000 + 999
                elif isinstance(at, str):
                    started = epoch_ms(at)
            if started is not None and started >= fork_ms:
                del memo["replay"], memo["fork_ms"]
                return False
        # Replayed history imports nothing; its totals and model only set the baseline.
        if kind == "event_msg" and ptype == "token_count":
            info = payload.get("info")
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if isinstance(total, dict):
                memo["prev"] = usage_counts(total)
        elif kind == "turn_context":
            model = nonempty_str(payload.get("model"))
            if model:
                memo["model"] = model
        return True

    # -- envelope records ----------------------------------------------------------
    def _session_meta(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        p = self._payload(rec)
        memo = ctx.memo
        if "meta" in memo:  # a fork's replayed parent header, or a repeated one
            return "ignored"
        version = p.get("cli_version")
        if version is not None:
            if not isinstance(version, str):
                raise InvalidRecord("'cli_version' is not a string")
            match = _SEMVER.match(version)
            if match and int(match.group(1)) not in KNOWN_CLI_MAJORS:
                raise FormatDrift(f"Codex CLI {version} has an unknown major version")
        memo["meta"] = 1
        ts = self._ts(rec, memo)
        started = nonempty_str(p.get("timestamp")) or ts
        git = p.get("git")
        parent = parent_of(p)
        if parent is not None and parent != ctx.session_id:
            ctx.parent_session_id = parent
            fork_at = ts or started
            fork_ms = epoch_ms(fork_at) if fork_at else None
            if fork_at and fork_ms is not None:
                memo["replay"], memo["fork_ms"] = fork_at[:19], fork_ms
        else:
            parent = None
        cwd = nonempty_str(p.get("cwd"))
        if cwd:
            memo["cwd"] = 1
        sink.session(
            ctx.session_id,
            parent_session_id=parent,
            project_path=cwd,
            cli_version=version,
            git_branch=nonempty_str(git.get("branch")) if isinstance(git, dict) else None,
            started_at=started,
            archived=True if ctx.source.root.name == "archived_sessions" else None,
        )
        return "mapped"

    def _turn_context(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        p = self._payload(rec)
        memo = ctx.memo
        model = nonempty_str(p.get("model"))
        outcome: RecordOutcome = "ignored"
        if model and model != memo.get("model"):
            memo["model"] = model
            sink.session(ctx.session_id, model=model)
            outcome = "mapped"
        if "cwd" not in memo:
            cwd = nonempty_str(p.get("cwd"))
            if cwd:
                memo["cwd"] = 1
                sink.session(ctx.session_id, project_path=cwd)
                outcome = "mapped"
        return outcome

    def _compacted(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        message = self._payload(rec).get("message")
        if not isinstance(message, str) or not message:
            return "ignored"  # newer builds keep only an opaque replacement history
        ts = self._ts(rec, ctx.memo)
        sink.event(ctx.session_id, f"@{offset}", 0, ts, "summary", "system", message, offset)
        return "mapped"

    def _response_item(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        p = self._payload(rec)
        ptype = self._payload_type(p)
        handler = self._items.get(ptype)
        if handler is not None:
            return handler(p, rec, offset, ctx, sink)
        return "ignored" if ptype in _IGNORED_ITEMS else "unknown"

    def _event_msg(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        p = self._payload(rec)
        ptype = self._payload_type(p)
        handler = self._events.get(ptype)
        if handler is not None:
            return handler(p, rec, offset, ctx, sink)
        if ptype in _IGNORED_EVENTS or (
            isinstance(ptype, str) and ptype.startswith(_IGNORED_EVENT_PREFIXES)
        ):
            return "ignored"
        return "unknown"

    def _legacy_item(self, handler: ItemHandler) -> Handler:
        def mapped(
            rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
        ) -> RecordOutcome:
            return handler(rec, rec, offset, ctx, sink)

        return mapped

    def _untyped(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Pre-envelope lines: the ``{"id", "timestamp", "instructions"}`` header,
        ``{"record_type": "state"}`` markers, and role-only messages."""
        memo = ctx.memo
        if "record_type" in rec:
            return "ignored"
        if "id" in rec and "payload" not in rec and ("instructions" in rec or "timestamp" in rec):
            if "meta" in memo:
                return "ignored"
            memo["meta"] = 1
            ts = nonempty_str(rec.get("timestamp"))
            if ts:
                memo["t0"] = ts
            git = rec.get("git")
            sink.session(
                ctx.session_id,
                started_at=ts,
                git_branch=nonempty_str(git.get("branch")) if isinstance(git, dict) else None,
                archived=True if ctx.source.root.name == "archived_sessions" else None,
            )
            return "mapped"
        role = rec.get("role")
        if isinstance(role, str):
            content = rec.get("content", rec.get("message"))
            item = {"type": "message", "role": role, "content": content}
            stamp = rec.get("timestamp", rec.get("created_at"))
            return self._message(item, {"timestamp": stamp}, offset, ctx, sink)
        return "unknown"

    # -- messages ------------------------------------------------------------------
    @staticmethod
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

    def _message(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
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
        ts = self._ts(rec, memo)
        if role == "user":
            if text is not None and text.startswith(_CONTEXT_PREFIXES):
                sink.event(sid, f"@{offset}", 0, ts, "system", "user", text, offset)
                return "mapped"
            if self._paired(memo, "pu", "r", text or ""):
                return "ignored"
            self._prompt(sid, text, images, ts, offset, sink)
        elif role == "assistant":
            if self._paired(memo, "pa", "r", text or ""):
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

    @staticmethod
    def _prompt(
        sid: str, text: str | None, images: int, ts: str | None, offset: int, sink: RowSink
    ) -> None:
        native = f"@{offset}"
        if text is not None or not images:
            sink.event(sid, native, 0, ts, "text", "user", text, offset)
        for i in range(images):
            sink.event(sid, native, i + 1, ts, "image", "user", "[image]", offset)

    def _user_message(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        text = p.get("message")
        if text is not None and not isinstance(text, str):
            raise InvalidRecord("'message' is not a string")
        memo = ctx.memo
        ts = self._ts(rec, memo)
        if text and text.startswith(_CONTEXT_PREFIXES):
            sink.event(ctx.session_id, f"@{offset}", 0, ts, "system", "user", text, offset)
            return "mapped"
        if self._paired(memo, "pu", "e", text or ""):
            return "ignored"
        images = p.get("images")
        count = len(images) if isinstance(images, list) else 0
        self._prompt(ctx.session_id, text or None, count, ts, offset, sink)
        return "mapped"

    def _agent_message(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        text = p.get("message")
        if text is not None and not isinstance(text, str):
            raise InvalidRecord("'message' is not a string")
        memo = ctx.memo
        if self._paired(memo, "pa", "e", text or ""):
            return "ignored"
        sink.event(
            ctx.session_id, f"@{offset}", 0, self._ts(rec, memo), "text", "assistant", text,
            offset, model=memo.get("model"),
        )  # fmt: skip
        return "mapped"

    def _agent_message_item(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        """A message between agents of one multi-agent run (author → recipient)."""
        content = p.get("content")
        texts = [
            part["text"]
            for part in (content if isinstance(content, list) else ())
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        sink.event(
            ctx.session_id, f"@{offset}", 0, self._ts(rec, ctx.memo), "text", "agent",
            "\n".join(texts) if texts else None, offset,
        )  # fmt: skip
        return "mapped"

    def _reasoning(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
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
            ctx.session_id, f"@{offset}", 0, self._ts(rec, memo), "thinking", "assistant",
            "\n\n".join(texts), offset, model=memo.get("model"),
        )  # fmt: skip
        return "mapped"

    # -- tools ---------------------------------------------------------------------
    def _tool_call(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
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
            ctx.session_id, f"@{offset}", 0, self._ts(rec, memo), "tool_use", "assistant",
            None, offset, model=memo.get("model"),
            tool_name=name if isinstance(name, str) else None,
            tool_call_id=call_id if isinstance(call_id, str) else None,
            tool_input=shape.tool_input(p.get(shape.input_field)),
        )  # fmt: skip
        return "mapped"

    def _tool_result(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        text, is_error = tool_output(p.get("output"))
        if is_error is None and p.get("status") == "failed":
            is_error = True
        call_id = p.get("call_id")
        sink.event(
            ctx.session_id, f"@{offset}", 0, self._ts(rec, ctx.memo), "tool_result", "tool",
            text, offset, tool_call_id=call_id if isinstance(call_id, str) else None,
            is_error=is_error,
        )  # fmt: skip
        return "mapped"

    # -- events --------------------------------------------------------------------
    def _token_count(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        info = p.get("info")
        if info is not None and not isinstance(info, dict):
            raise InvalidRecord("'info' is not an object")
        # A snapshot of the plan's limits rides on most token counts, with or without a
        # call (early in a session, and on re-emits).
        limits = self._rate_limits(p, rec, offset, ctx, sink)
        nothing: RecordOutcome = "mapped" if limits else "ignored"
        if info is None:
            return nothing
        memo = ctx.memo
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        ts = self._ts(rec, memo)
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

    def _rate_limits(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> bool:
        """Emit the windows of the payload's ``rate_limits`` snapshot, if it has one
        (anything but an object is no snapshot); whether it had any."""
        limits = p.get("rate_limits")
        if not isinstance(limits, dict):
            return False
        windows = rate_windows(limits)
        ts = self._ts(rec, ctx.memo)
        limit_id, plan = nonempty_str(limits.get("limit_id")), nonempty_str(limits.get("plan_type"))
        for kind, used, minutes, at, after in windows:
            sink.rate_limit(
                ctx.session_id, ts, kind, used, offset, limit_id=limit_id,
                window_minutes=minutes, resets_at=at, resets_in=after, plan_type=plan,
            )  # fmt: skip
        return bool(windows)

    def _rate_limits_updated(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        return "mapped" if self._rate_limits(p, rec, offset, ctx, sink) else "ignored"

    def _thread_name(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        name = nonempty_str(p.get("thread_name"))
        if name is None:
            return "ignored"
        sink.session(ctx.session_id, title=name, title_rank=3)
        return "mapped"

    def _turn_aborted(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        reason = p.get("reason")
        text = f"[turn aborted: {reason}]" if isinstance(reason, str) else "[turn aborted]"
        sink.event(
            ctx.session_id, f"@{offset}", 0, self._ts(rec, ctx.memo), "system", "system", text,
            offset,
        )  # fmt: skip
        return "mapped"

    def _error(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        message = p.get("message")
        sink.event(
            ctx.session_id, f"@{offset}", 0, self._ts(rec, ctx.memo), "system", "system",
            message if isinstance(message, str) else None, offset, is_error=True,
        )  # fmt: skip
        return "mapped"
