"""Cursor: agent transcripts under ``~/.cursor/projects`` and the ``state.vscdb`` index.

Field-level format: provider-formats §5. Two formats, each with its own adapter:

* ``cursor-transcript`` (byte-offset) —
  ``<slug>/agent-transcripts/<composerId>/<composerId>.jsonl`` and the subagent files
  ``<slug>/agent-transcripts/<composerId>/subagents/<childId>.jsonl``. A file's session is
  its stem (the composer id); a subagent's parent is the composer directory it sits in.
  Lines carry no ids, timestamps, models or token counts: native ids are positional
  (``@<offset>``, stable because the files are append-only), and the only clock is the
  ``<timestamp>`` wrapper of user text, carried forward to later lines (in the adapter
  memo, so an append read in a later run continues with the same clock).
* ``cursor-state`` (sqlite) — ``state.vscdb`` at the top of Cursor's ``globalStorage``:
  composer headers (the ``composerHeaders`` table or the ``ItemTable`` key
  ``composer.composerHeaders``) and ``composerData:<id>`` rows give session titles,
  models, workspace paths and times; every ``bubbleId:<composerId>:<bubbleId>`` row with
  a non-zero ``tokenCount`` is one model call of that composer's session (DESIGN §4),
  identified by (composer id, bubble id) so re-reading the database never double counts.
  Its adapter is in :mod:`.cursor_state`; the field readers both share are in
  :mod:`.cursor_fields`.

Turn status: ``{"type":"turn_ended","status":…}`` becomes a ``system`` event. Events are
immutable once written, so a failed turn (``error``, ``failed``, ``fail``, ``cancelled``,
``canceled``) does not rewrite its tool calls: it adds one ``tool_result`` event with
``is_error`` per tool call of the turn (every ``tool_use`` since the previous
``turn_ended``), linked by the call's positional ``tool_call_id``. The open turn's call
ids live in the memo, so the outcome is the same however the file is split into batches
or runs.

Format drift: Cursor writes no transcript version. ``composerData`` rows carry a schema
counter ``_v`` (3 in 2024 builds, 10 in 2025–2026 builds); a value above
:data:`.cursor_state.MAX_COMPOSER_DATA_V` is a Cursor generation this adapter was never
checked against, and refuses the database (``SCHEMA_DRIFT``). Transcript lines of an unknown
shape are counted ``unknown``, never fatal.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from ..adapter import InvalidRecord, RecordOutcome, SourceContext, StateLimitExceeded
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, Root, SourceFile, rel_parts
from ..values import json_text
from .cursor_fields import common_parent, instant, is_absolute, text_or_none
from .cursor_fields import parse_timestamp as parse_timestamp  # the transcripts' clock
from .cursor_state import owns_state_db as owns_state_db  # discovery, with owns_transcript

ADAPTER_VERSION: Final = "1.0"
TRANSCRIPT_FORMAT: Final = "cursor-transcript"
STATE_FORMAT: Final = "cursor-state"

#: ``turn_ended`` statuses that mark the turn's tool calls as failed.
FAILED_STATUSES: Final = frozenset({"error", "failed", "fail", "cancelled", "canceled"})

#: The slug of a Cursor window without a folder; its copies of a composer lose to others.
EMPTY_WINDOW: Final = "empty-window"

_TS_OPEN: Final = "<timestamp>"
_TS_CLOSE: Final = "</timestamp>"
_QUERY_OPEN: Final = "<user_query>"
_QUERY_CLOSE: Final = "</user_query>"


# --------------------------------------------------------------------------- discovery


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """Cursor's ``globalStorage`` directories (Linux, macOS, Windows; all relative to
    ``home``, so ``--home`` applies to each), then ``~/.cursor/projects``.

    The databases come first so that, within a run, a composer's exact workspace path
    (``workspaceIdentifier.uri.fsPath``) is known before the transcript's inferred one
    (a session keeps its first known project path)."""
    del env  # Cursor has no environment override for these locations
    storage = Path("Cursor") / "User" / "globalStorage"
    return [
        Root("cursor", home / ".config" / storage, "default"),
        Root("cursor", home / "Library" / "Application Support" / storage, "default"),
        Root("cursor", home / "AppData" / "Roaming" / storage, "default"),
        Root("cursor", home / ".cursor" / "projects", "default"),
    ]


def owns_transcript(rel: RelParts) -> bool:
    """``<slug>/agent-transcripts/<id>/<id>.jsonl`` or
    ``<slug>/agent-transcripts/<id>/subagents/<child>.jsonl`` (a flat
    ``agent-transcripts/<id>.jsonl`` is not a Cursor agent transcript)."""
    parts = rel
    if len(parts) == 4:
        return parts[1] == "agent-transcripts" and parts[3] == parts[2] + ".jsonl"
    if len(parts) == 5:
        name = parts[4]
        return (
            parts[1] == "agent-transcripts"
            and parts[3] == "subagents"
            and name.endswith(".jsonl")
            and len(name) > len(".jsonl")
        )
    return False


def superseded(sources: Sequence[SourceFile]) -> dict[str, str]:
    """Copies of a composer's transcript directory to leave out when the same composer
    id appears under several slugs: keep the copy outside ``empty-window``, then the one
    most recently written (parent and subagent files alike), then the first found. Every
    file of a losing copy (its subagents too) is left out."""
    copies: dict[str, dict[tuple[Path, str], list[SourceFile]]] = {}
    for source in sources:
        if source.format != TRANSCRIPT_FORMAT:
            continue
        parts = rel_parts(source)
        copies.setdefault(parts[2], {}).setdefault((source.root, parts[0]), []).append(source)
    left_out: dict[str, str] = {}
    for composer, by_copy in copies.items():
        if len(by_copy) < 2:
            continue
        ranked = sorted(
            by_copy.items(),
            key=lambda item: (
                item[0][1] == EMPTY_WINDOW,
                -max(f.mtime_ns for f in item[1]),
            ),
        )
        (_, winner_slug), winner_files = ranked[0]
        winner_fresh = max(f.mtime_ns for f in winner_files)
        for (_, slug), files in ranked[1:]:
            if slug == EMPTY_WINDOW and winner_slug != EMPTY_WINDOW:
                why = f"it is outside {EMPTY_WINDOW}"
            elif max(f.mtime_ns for f in files) < winner_fresh:
                why = "it was written more recently"
            else:
                why = "it was found first"
            reason = f"composer {composer} is also under '{winner_slug}', preferred because {why}"
            for source in files:
                left_out[source.source_id] = reason
    return left_out


# --------------------------------------------------------------------------- transcripts


class CursorTranscriptAdapter:
    """Maps Cursor agent transcript lines (parent and subagent files) to events.

    Memo keys: ``ts`` (the carried-forward clock), ``open`` (tool call ids of the turn
    not yet ended), ``cwd`` (the project path once decided), ``common``/``varied`` (the
    common parent of absolute ``path``/``paths`` inputs so far), ``linked`` (parent link
    emitted) and ``hinted`` (the file mtime last reported as the sessions' freshness).
    """

    # -- identity ------------------------------------------------------------------
    def locate(self, source: SourceFile) -> SourceContext:
        """The file stem is the session (composer) id; a subagent file's parent is the
        composer directory it sits in."""
        parts = rel_parts(source)
        stem = parts[-1][: -len(".jsonl")]
        if len(parts) == 5:
            return SourceContext(source, stem, parts[2])
        return SourceContext(source, stem)

    # -- records -------------------------------------------------------------------
    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one transcript line: a ``user``/``assistant`` message, or a
        ``turn_ended`` marker; anything else is ``unknown``."""
        memo = ctx.memo
        if ctx.parent_session_id is not None and memo.get("hinted") != ctx.source.mtime_ns:
            self._freshness(ctx, sink)
        role = record.get("role")
        if role == "assistant" or role == "user":
            message = record.get("message")
            if not isinstance(message, dict):
                raise InvalidRecord("'message' is not an object")
            content = message.get("content")
            if role == "user":
                return self._user(content, offset, ctx, sink)
            return self._assistant(content, offset, ctx, sink)
        if record.get("type") == "turn_ended":
            return self._turn_ended(record, offset, ctx, sink)
        return "unknown"

    def _freshness(self, ctx: SourceContext, sink: RowSink) -> None:
        """A subagent file's mtime is its session's freshness and its parent's: the
        parent's ``updated_at`` becomes the latest of its children's writes."""
        memo = ctx.memo
        mtime = ctx.source.mtime_ns
        memo["hinted"] = mtime
        when = instant(mtime // 1_000_000)
        parent = ctx.parent_session_id
        assert parent is not None
        if "linked" not in memo:
            memo["linked"] = True
            sink.session(ctx.session_id, parent_session_id=parent, updated_at=when)
        else:
            sink.session(ctx.session_id, updated_at=when)
        sink.session(parent, updated_at=when)

    def _user(self, content: Any, offset: int, ctx: SourceContext, sink: RowSink) -> RecordOutcome:
        memo = ctx.memo
        sid = ctx.session_id
        native = f"@{offset}"
        side = ctx.parent_session_id is not None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        elif not isinstance(content, list):
            raise InvalidRecord("'message.content' is neither text nor a list")
        for block in content:  # the clock first: it dates every block of the line
            if isinstance(block, dict):
                text = block.get("text")
                if type(text) is str and _TS_OPEN in text:
                    start = text.index(_TS_OPEN) + len(_TS_OPEN)
                    end = text.find(_TS_CLOSE, start)
                    when = parse_timestamp(text[start : end if end >= 0 else len(text)])
                    if when is not None:
                        memo["ts"] = when
        ts = memo.get("ts")
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                if type(text) is not str:
                    continue
                q = text.find(_QUERY_OPEN)
                if q >= 0:
                    end = text.find(_QUERY_CLOSE, q)
                    query = text[q + len(_QUERY_OPEN) : end if end >= 0 else len(text)].strip()
                    sink.event(sid, native, i, ts, "text", "user", query, offset, is_sidechain=side)
                    continue
                if _TS_OPEN in text:  # the wrapper alone is the clock, not what was typed
                    start = text.index(_TS_OPEN)
                    end = text.find(_TS_CLOSE, start)
                    tail = text[end + len(_TS_CLOSE) :] if end >= 0 else ""
                    text = (text[:start] + tail).strip()
                    if not text:
                        continue
                kind: BlockType = "system" if text.lstrip().startswith("<") else "text"
                sink.event(sid, native, i, ts, kind, "user", text, offset, is_sidechain=side)
            elif btype == "image":
                sink.event(
                    sid, native, i, ts, "image", "user", "[image]", offset, is_sidechain=side
                )
        return "mapped"

    def _assistant(
        self, content: Any, offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        memo = ctx.memo
        sid = ctx.session_id
        native = f"@{offset}"
        ts = memo.get("ts")
        side = ctx.parent_session_id is not None
        if isinstance(content, str):
            sink.event(sid, native, 0, ts, "text", "assistant", content, offset, is_sidechain=side)
            return "mapped"
        if not isinstance(content, list):
            raise InvalidRecord("'message.content' is neither text nor a list")
        open_calls = memo.get("open")
        _check_open(len(open_calls) if open_calls else 0, content, ctx.max_open_ids)
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                sink.event(
                    sid, native, i, ts, "text", "assistant", text_or_none(block.get("text")), offset,
                    is_sidechain=side,
                )  # fmt: skip
            elif btype == "tool_use":
                call_id = f"{native}:{i}"
                tool_input = block.get("input")
                sink.event(
                    sid, native, i, ts, "tool_use", "assistant", None, offset,
                    tool_name=text_or_none(block.get("name")), tool_call_id=call_id,
                    tool_input=json_text(tool_input), is_sidechain=side,
                )  # fmt: skip
                if open_calls is None:
                    memo["open"] = open_calls = [call_id]
                else:
                    open_calls.append(call_id)
                if "cwd" not in memo and isinstance(tool_input, dict):
                    self._scan_cwd(tool_input, ctx, sink)
            elif btype == "thinking" or btype == "reasoning":
                thought = block.get("thinking", block.get("text"))
                sink.event(
                    sid, native, i, ts, "thinking", "assistant", text_or_none(thought), offset,
                    is_sidechain=side,
                )  # fmt: skip
            elif btype == "tool_result":
                result = block.get("content")
                is_error = block.get("is_error")
                sink.event(
                    sid, native, i, ts, "tool_result", "tool",
                    result if type(result) is str else (None if result is None else json_text(result)),
                    offset, is_error=is_error if type(is_error) is bool else None,
                    is_sidechain=side,
                )  # fmt: skip
            elif btype == "image":
                sink.event(
                    sid, native, i, ts, "image", "assistant", "[image]", offset, is_sidechain=side
                )
        return "mapped"

    def _scan_cwd(self, tool_input: dict[str, Any], ctx: SourceContext, sink: RowSink) -> None:
        """The first absolute ``working_directory`` decides the project path at once;
        absolute ``path``/``paths`` values narrow a common parent, decided when the
        turn ends (a session keeps its first known project path)."""
        memo = ctx.memo
        wd = tool_input.get("working_directory")
        if type(wd) is str and is_absolute(wd):
            memo["cwd"] = wd
            sink.session(ctx.session_id, project_path=wd)
            return
        found: list[Any] = []
        path = tool_input.get("path")
        if path is not None:
            found.append(path)
        paths = tool_input.get("paths")
        if isinstance(paths, list):
            found.extend(paths)
        for value in found:
            if type(value) is str and is_absolute(value):
                common = memo.get("common")
                narrowed = common_parent(common, value)
                if common is not None and value != common:
                    memo["varied"] = True
                memo["common"] = narrowed

    def _turn_ended(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        status = record.get("status")
        if status is not None and type(status) is not str:
            raise InvalidRecord("'status' is not a string")
        memo = ctx.memo
        sid = ctx.session_id
        native = f"@{offset}"
        ts = memo.get("ts")
        side = ctx.parent_session_id is not None
        label = status or "unknown"
        failed = label.lower() in FAILED_STATUSES
        sink.event(
            sid, native, 0, ts, "system", "system", f"turn ended: {label}", offset,
            is_error=failed, is_sidechain=side,
        )  # fmt: skip
        open_calls: list[str] = memo.pop("open", None) or []
        if failed:
            for k, call_id in enumerate(open_calls, 1):
                sink.event(
                    sid, native, k, ts, "tool_result", "tool", f"turn ended: {label}", offset,
                    tool_call_id=call_id, is_error=True, is_sidechain=side,
                )  # fmt: skip
        if "cwd" not in memo:
            common = memo.get("common")
            if common is not None:
                flavour = posixpath if common.startswith("/") else ntpath
                cwd = common if memo.get("varied") else flavour.dirname(common)
                if cwd and flavour.dirname(cwd) != cwd:  # never a filesystem root
                    memo["cwd"] = cwd
                    sink.session(sid, project_path=cwd)
        return "mapped"


def _check_open(held: int, content: list[Any], cap: int) -> None:
    """The tool calls of an open turn are remembered until its ``turn_ended`` (a failed
    one fails them all): a line that would hold more than ``cap`` of them refuses the
    source before any of its rows, instead of forgetting some."""
    if held + len(content) <= cap:
        return
    calls = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
    if held + calls > cap:
        raise StateLimitExceeded(
            f"a turn holds more than {cap:,} open tool calls, the cap of the state that "
            "pairs them with the turn's end"
        )
