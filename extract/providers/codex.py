"""OpenAI Codex CLI: rollouts under ``$CODEX_HOME/sessions`` and ``archived_sessions``,
plus the ``state_5.sqlite`` thread index.

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
import sqlite3
import zlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..schema import WINDOW_KINDS, WindowKind
from ..sources import RelParts, Root, SourceFile, open_regular
from ..values import json_text, token_count

#: 1.1 adds rate-limit snapshots and the thread index's token figure. Every event and
#: call is the same as 1.0's, so a 1.0 checkpoint stays valid (a minor version: no drift).
ADAPTER_VERSION: Final = "1.1"
PROVIDER: Final = "codex"

#: Major versions of ``cli_version`` whose rollout format this adapter knows. Every
#: release so far is 0.x; 1.x is expected to keep the envelope. Anything else is drift.
KNOWN_CLI_MAJORS: Final = frozenset({0, 1})

#: The model a call is attributed to when the rollout names none (as ccusage does).
DEFAULT_MODEL: Final = "gpt-5"

#: How much of a rollout's head is read to find its session id (DESIGN §2).
HEADER_BYTES: Final = 64 * 1024

STATE_DB_NAME: Final = "state_5.sqlite"

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

_USAGE_KEYS: Final = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)
_SEMVER: Final = re.compile(r"^(\d+)\.\d+")
_FILE_UUID: Final = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)
_HEADER_ID: Final = re.compile(rb'^\s*\{.{0,200}?"payload"\s*:\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
_LEGACY_HEADER_ID: Final = re.compile(rb'^\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
_EXIT_CODE: Final = re.compile(r"(?:process exited with code|exit code:?)\s*(-?\d+)", re.IGNORECASE)
_EXIT_SCAN: Final = 512

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


def owns_state_index(rel: RelParts) -> bool:
    """Only ``state_5.sqlite`` at the top of the Codex home."""
    return rel == (STATE_DB_NAME,)


# --------------------------------------------------------------------------- helpers


def _counts(usage: dict[str, Any]) -> list[int]:
    return [token_count(usage.get(k)) for k in _USAGE_KEYS]


def _json_text(value: Any) -> str | None:
    """JSON text for ``tool_input``: a string that already is JSON is kept as written,
    any other string becomes a JSON string."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            orjson.loads(value)
        except orjson.JSONDecodeError:
            return json_text(value)
        return value
    return json_text(value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    """A JSON number as a float (``None`` for anything else, booleans included)."""
    if type(value) is int or (type(value) is float and value == value and abs(value) < 1e300):
        return float(value)
    return None


def _whole(value: Any) -> int | None:
    """A JSON number as a whole number (floats truncated), else ``None``."""
    number = _number(value)
    return int(number) if number is not None and abs(number) < 1 << 62 else None


def _rate_windows(
    limits: dict[str, Any],
) -> list[tuple[WindowKind, float, int | None, int | None, int | None]]:
    """The windows of one ``rate_limits`` object as (kind, used percent, length in
    minutes, reset in epoch seconds, reset in seconds from now), in every shape Codex
    wrote: ``{"primary": {"used_percent", "window_minutes", "resets_at" | "reset_at" |
    "resets_in_seconds"}}`` or the older flat ``primary_used_percent``,
    ``primary_window_minutes`` (``primary_reset_after_seconds``). A window without a
    used percentage is left out; a length of 0 is unknown."""
    windows: list[tuple[WindowKind, float, int | None, int | None, int | None]] = []
    for kind in WINDOW_KINDS:
        window = limits.get(kind)
        if isinstance(window, dict):
            used = _number(window.get("used_percent"))
            minutes = _whole(window.get("window_minutes"))
            at = _whole(window.get("resets_at", window.get("reset_at")))
            after = _whole(window.get("resets_in_seconds"))
        elif f"{kind}_used_percent" in limits:
            used = _number(limits.get(f"{kind}_used_percent"))
            minutes = _whole(limits.get(f"{kind}_window_minutes"))
            at = None
            after = _whole(
                limits.get(f"{kind}_reset_after_seconds", limits.get(f"{kind}_resets_in_seconds"))
            )
        else:
            continue
        if used is None:
            continue
        windows.append((kind, used, minutes or None, at if at and at > 0 else None, after))
    return windows


def _digest(text: str) -> str:
    return f"{zlib.crc32(text.encode()):08x}"


def _iso_ms(ms: int) -> str | None:
    try:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _epoch_ms(iso: str) -> int | None:
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _uuid7_ms(value: Any) -> int | None:
    """The creation time (ms) of a UUIDv7 string, else ``None``."""
    if not isinstance(value, str) or len(value) != 36 or value[14] != "7":
        return None
    try:
        return int(value[:8] + value[9:13], 16)
    except ValueError:
        return None


def _parent_of(payload: dict[str, Any]) -> str | None:
    """The thread a fork or subagent rollout was started from, if it names one."""
    for key in ("forked_from_id", "parent_thread_id"):
        parent = _str(payload.get(key))
        if parent:
            return parent
    source = payload.get("source")
    if isinstance(source, dict):
        sub = source.get("subagent")
        spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
        if isinstance(spawn, dict):
            return _str(spawn.get("parent_thread_id"))
    return None


def tool_output(output: Any) -> tuple[str | None, bool | None]:
    """Text and error status of a tool call's output, in every shape Codex wrote.

    Status comes from ``{"output":..,"metadata":{"exit_code":N}}`` JSON, from a
    ``Process exited with code N`` / ``Exit code: N`` header, or from ``success``;
    ``None`` when the output does not say.
    """
    if isinstance(output, str):
        if output.startswith("{") and '"metadata"' in output:
            try:
                parsed = orjson.loads(output)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
                code = parsed["metadata"].get("exit_code")
                inner = parsed.get("output")
                text = inner if isinstance(inner, str) else output
                return text, (code != 0) if type(code) is int else None
        match = _EXIT_CODE.search(output, 0, _EXIT_SCAN)
        return output, (int(match.group(1)) != 0) if match else None
    if isinstance(output, list):
        texts = []
        for item in output:
            if isinstance(item, dict):
                value = item.get("text")
                if isinstance(value, str):
                    texts.append(value)
                elif item.get("type") in ("input_image", "image"):
                    texts.append("[image]")
        joined = "\n".join(texts) if texts else None
        if joined is None:
            return None, None
        return tool_output(joined)
    if isinstance(output, dict):
        success = output.get("success")
        for key in ("text", "content", "output"):
            inner = output.get(key)
            if isinstance(inner, str | list):
                found, status = tool_output(inner)
                return found, (not success) if isinstance(success, bool) else status
        return json_text(output), (not success) if isinstance(success, bool) else None
    return (None, None) if output is None else (json_text(output), None)


def _session_id_from_header(path: Path) -> str | None:
    """``session_meta.payload.id`` (or a pre-envelope header's ``id``) from the first
    :data:`HEADER_BYTES` of a rollout; a header line longer than that is searched for
    its leading id (Codex writes ``id`` first)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(HEADER_BYTES)
    except OSError:
        return None
    end = head.find(b"\n")
    if end >= 0:
        try:
            first = orjson.loads(head[:end])
        except orjson.JSONDecodeError:
            first = None
        if isinstance(first, dict):
            payload = first.get("payload")
            if first.get("type") == "session_meta" and isinstance(payload, dict):
                return _str(payload.get("id"))
            if "type" not in first and "payload" not in first:
                return _str(first.get("id"))
            return None
    for pattern in (_HEADER_ID, _LEGACY_HEADER_ID):
        match = pattern.match(head)
        if match:
            try:
                return match.group(1).decode()
            except UnicodeDecodeError:
                return None
    return None


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
            "function_call": self._function_call,
            "custom_tool_call": self._custom_tool_call,
            "function_call_output": self._tool_result,
            "custom_tool_call_output": self._tool_result,
            "local_shell_call": self._local_shell_call,
            "web_search_call": self._web_search_call,
            "tool_search_call": self._tool_search_call,
            "tool_search_output": self._tool_result,
            "image_generation_call": self._image_generation_call,
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
        sid = _session_id_from_header(source.path)
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
            started = _uuid7_ms(payload.get("turn_id"))
            if started is None and ptype == "task_started":
                at = payload.get("started_at")
                if type(at) is int:
                    started = at * 1000 + 999
                elif isinstance(at, str):
                    started = _epoch_ms(at)
            if started is not None and started >= fork_ms:
                del memo["replay"], memo["fork_ms"]
                return False
        # Replayed history imports nothing; its totals and model only set the baseline.
        if kind == "event_msg" and ptype == "token_count":
            info = payload.get("info")
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if isinstance(total, dict):
                memo["prev"] = _counts(total)
        elif kind == "turn_context":
            model = _str(payload.get("model"))
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
        started = _str(p.get("timestamp")) or ts
        git = p.get("git")
        parent = _parent_of(p)
        if parent is not None and parent != ctx.session_id:
            ctx.parent_session_id = parent
            fork_at = ts or started
            fork_ms = _epoch_ms(fork_at) if fork_at else None
            if fork_at and fork_ms is not None:
                memo["replay"], memo["fork_ms"] = fork_at[:19], fork_ms
        else:
            parent = None
        cwd = _str(p.get("cwd"))
        if cwd:
            memo["cwd"] = 1
        sink.session(
            ctx.session_id,
            parent_session_id=parent,
            project_path=cwd,
            cli_version=version,
            git_branch=_str(git.get("branch")) if isinstance(git, dict) else None,
            started_at=started,
            archived=True if ctx.source.root.name == "archived_sessions" else None,
        )
        return "mapped"

    def _turn_context(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        p = self._payload(rec)
        memo = ctx.memo
        model = _str(p.get("model"))
        outcome: RecordOutcome = "ignored"
        if model and model != memo.get("model"):
            memo["model"] = model
            sink.session(ctx.session_id, model=model)
            outcome = "mapped"
        if "cwd" not in memo:
            cwd = _str(p.get("cwd"))
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
        ptype: Any = p.get("type")
        handler = self._items.get(ptype)
        if handler is not None:
            return handler(p, rec, offset, ctx, sink)
        return "ignored" if ptype in _IGNORED_ITEMS else "unknown"

    def _event_msg(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        p = self._payload(rec)
        ptype: Any = p.get("type")
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
            ts = _str(rec.get("timestamp"))
            if ts:
                memo["t0"] = ts
            git = rec.get("git")
            sink.session(
                ctx.session_id,
                started_at=ts,
                git_branch=_str(git.get("branch")) if isinstance(git, dict) else None,
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
        digest = _digest(text)
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
    def _tool_use(
        self,
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
        name: Any,
        call_id: Any,
        tool_input: str | None,
    ) -> RecordOutcome:
        memo = ctx.memo
        sink.event(
            ctx.session_id, f"@{offset}", 0, self._ts(rec, memo), "tool_use", "assistant",
            None, offset, model=memo.get("model"),
            tool_name=name if isinstance(name, str) else None,
            tool_call_id=call_id if isinstance(call_id, str) else None,
            tool_input=tool_input,
        )  # fmt: skip
        return "mapped"

    def _function_call(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        return self._tool_use(
            rec, offset, ctx, sink, p.get("name"), p.get("call_id"), _json_text(p.get("arguments"))
        )

    def _custom_tool_call(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        raw = p.get("input")
        return self._tool_use(
            rec, offset, ctx, sink, p.get("name"), p.get("call_id"),
            None if raw is None else json_text(raw),
        )  # fmt: skip

    def _local_shell_call(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        action = p.get("action")
        return self._tool_use(
            rec, offset, ctx, sink, "local_shell", p.get("call_id") or p.get("id"),
            None if action is None else json_text(action),
        )  # fmt: skip

    def _web_search_call(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        action = p.get("action")
        return self._tool_use(
            rec, offset, ctx, sink, "web_search", p.get("call_id") or p.get("id"),
            None if action is None else json_text(action),
        )  # fmt: skip

    def _tool_search_call(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        return self._tool_use(
            rec, offset, ctx, sink, "tool_search", p.get("call_id") or p.get("id"),
            _json_text(p.get("arguments")),
        )  # fmt: skip

    def _image_generation_call(
        self,
        p: dict[str, Any],
        rec: dict[str, Any],
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> RecordOutcome:
        prompt = p.get("revised_prompt")
        return self._tool_use(
            rec, offset, ctx, sink, "image_generation", p.get("call_id") or p.get("id"),
            json_text({"revised_prompt": prompt}) if isinstance(prompt, str) else None,
        )  # fmt: skip

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
            cumulative = _counts(total)
            previous: list[int] | None = memo.get("prev")
            if cumulative == previous:
                return nothing  # re-emitted: the cumulative total did not move
            memo["prev"] = cumulative
            if isinstance(last, dict):
                counts = _counts(last)
            elif previous is None:
                counts = cumulative
            else:
                counts = [max(c - b, 0) for c, b in zip(cumulative, previous, strict=True)]
            native = "t" + "/".join(map(str, cumulative))
        elif isinstance(last, dict):
            counts = _counts(last)
            native = f"l{ts}/" + "/".join(map(str, counts))
        else:
            return nothing
        inp, cached, out, reasoning = counts[0], counts[1], counts[2], counts[3]
        if not (inp or cached or out or reasoning):
            return nothing
        cached = min(cached, inp)
        model = (
            _str(p.get("model")) or _str(info.get("model")) or memo.get("model") or DEFAULT_MODEL
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
        windows = _rate_windows(limits)
        ts = self._ts(rec, ctx.memo)
        limit_id, plan = _str(limits.get("limit_id")), _str(limits.get("plan_type"))
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
        name = _str(p.get("thread_name"))
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


# --------------------------------------------------------------------------- state index

# threads columns read when present (provider-formats §3); any of them may be missing
# in an older schema generation.
_THREAD_COLUMNS: Final = (
    "title",
    "preview",
    "model",
    "cwd",
    "created_at",
    "updated_at",
    "created_at_ms",
    "updated_at_ms",
    "archived",
    "tokens_used",
)


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in con.execute(f"PRAGMA table_xinfo({table})")}


def _index_time(ms: Any, seconds: Any) -> str | None:
    if type(ms) is int and ms > 0:
        return _iso_ms(ms)
    if type(seconds) is int and seconds > 0:
        return _iso_ms(seconds * 1000)
    return None


class StateIndexAdapter:
    """Enriches sessions from Codex's thread index ``state_5.sqlite`` (table
    ``threads``, and ``thread_spawn_edges`` for subagent parents)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The database is not a session: its rows name their threads."""
        return SourceContext(source, source.path.stem)

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Emit one session row per thread with the fields the schema has: title,
        preview, model, cwd, created/updated times, the archived flag and the thread's
        token total (``tokens_used``; 0, the column's default, says nothing). A missing
        table or column yields fewer fields (or none), never an error."""
        present = _columns(con, "threads")
        if "id" not in present:
            return 0
        parents: dict[str, str] = {}
        if {"parent_thread_id", "child_thread_id"} <= _columns(con, "thread_spawn_edges"):
            parents = {
                str(child): str(parent)
                for parent, child in con.execute(
                    "SELECT parent_thread_id, child_thread_id FROM thread_spawn_edges"
                )
                if isinstance(parent, str) and isinstance(child, str)
            }
        select = ", ".join(c if c in present else f"NULL AS {c}" for c in _THREAD_COLUMNS)
        rows = 0
        for row in con.execute(f"SELECT id, {select} FROM threads ORDER BY id"):
            tid, title, preview, model, cwd, c_s, u_s, c_ms, u_ms, archived, tokens = row
            if not isinstance(tid, str) or not tid:
                continue
            rows += 1
            sink.session(
                tid,
                title=_str(title),
                title_rank=2,
                preview=_str(preview),
                model=_str(model),
                project_path=_str(cwd),
                started_at=_index_time(c_ms, c_s),
                updated_at=_index_time(u_ms, u_s),
                archived=bool(archived) if type(archived) is int else None,
                parent_session_id=parents.get(tid),
                index_tokens=tokens if type(tokens) is int and tokens > 0 else None,
            )
        return rows
