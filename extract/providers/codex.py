"""OpenAI Codex CLI: rollouts under ``$CODEX_HOME/sessions`` and ``archived_sessions``
(this module: discovery and the record envelope; the payloads in
:mod:`.codex_payloads`, field readers in :mod:`.codex_fields`), plus the
``state_5.sqlite`` thread index (:mod:`.codex_index`).

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
from pathlib import Path
from typing import Any, Final

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile
from .codex_fields import (
    epoch_ms,
    nonempty_str,
    parent_of,
    session_id_from_header,
    usage_counts,
    uuid7_ms,
)
from .codex_fields import tool_output as tool_output  # the adapter's reading of tool outputs
from .codex_index import owns_state_index as owns_state_index  # discovery, with owns_rollout
from .codex_payloads import ITEMS, PayloadHandler, map_event, map_item, message, record_time

#: 1.1 adds rate-limit snapshots and the thread index's token figure. Every event and
#: call is the same as 1.0's, so a 1.0 checkpoint stays valid (a minor version: no drift).
ADAPTER_VERSION: Final = "1.1"
PROVIDER: Final = "codex"

#: Major versions of ``cli_version`` whose rollout format this adapter knows. Every
#: release so far is 0.x; 1.x is expected to keep the envelope. Anything else is drift.
KNOWN_CLI_MAJORS: Final = frozenset({0, 1})

# Top-level record types with nothing to import.
_IGNORED_TOP: Final = frozenset({"world_state", "inter_agent_communication_metadata"})

_SEMVER: Final = re.compile(r"^(\d+)\.\d+")
_FILE_UUID: Final = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)

Handler = Callable[[dict[str, Any], int, SourceContext, RowSink], RecordOutcome]


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
        # Pre-envelope rollouts write response items at the top level.
        for item_type, handler in ITEMS.items():
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
        ts = record_time(rec, memo)
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
        ts = record_time(rec, ctx.memo)
        sink.event(ctx.session_id, f"@{offset}", 0, ts, "summary", "system", message, offset)
        return "mapped"

    def _response_item(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        return map_item(self._payload(rec), rec, offset, ctx, sink)

    def _event_msg(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        return map_event(self._payload(rec), rec, offset, ctx, sink)

    def _legacy_item(self, handler: PayloadHandler) -> Handler:
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
            return message(item, {"timestamp": stamp}, offset, ctx, sink)
        return "unknown"
