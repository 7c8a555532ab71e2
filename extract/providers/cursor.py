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

Turn status: ``{"type":"turn_ended","status":…}`` becomes a ``system`` event. Events are
immutable once written, so a failed turn (``error``, ``failed``, ``fail``, ``cancelled``,
``canceled``) does not rewrite its tool calls: it adds one ``tool_result`` event with
``is_error`` per tool call of the turn (every ``tool_use`` since the previous
``turn_ended``), linked by the call's positional ``tool_call_id``. The open turn's call
ids live in the memo, so the outcome is the same however the file is split into batches
or runs.

Format drift: Cursor writes no transcript version. ``composerData`` rows carry a schema
counter ``_v`` (3 in 2024 builds, 10 in 2025–2026 builds); a value above
:data:`MAX_COMPOSER_DATA_V` is a Cursor generation this adapter was never checked
against, and refuses the database (``SCHEMA_DRIFT``). Transcript lines of an unknown
shape are counted ``unknown``, never fatal.
"""

from __future__ import annotations

import math
import ntpath
import posixpath
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, Root, SourceFile
from ..values import json_text, token_count

ADAPTER_VERSION: Final = "1.0"
TRANSCRIPT_FORMAT: Final = "cursor-transcript"
STATE_FORMAT: Final = "cursor-state"

#: Highest ``composerData._v`` this adapter knows (observed: 3 … 10). Cursor bumps the
#: counter for additive migrations too, hence a small margin above the last one seen.
MAX_COMPOSER_DATA_V: Final = 15

#: ``turn_ended`` statuses that mark the turn's tool calls as failed.
FAILED_STATUSES: Final = frozenset({"error", "failed", "fail", "cancelled", "canceled"})

#: The slug of a Cursor window without a folder; its copies of a composer lose to others.
EMPTY_WINDOW: Final = "empty-window"

# Tool calls of one open turn remembered for a failed ``turn_ended`` (bounds the memo).
_MAX_OPEN_CALLS: Final = 10_000
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MONTH_NAMES: Final = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTHS: Final = {
    **{name: number for number, name in enumerate(_MONTH_NAMES, 1)},
    **{name[:3]: number for number, name in enumerate(_MONTH_NAMES, 1)},
    "sept": 9,
}
# "Friday, May 1, 2026, 9:00 AM (UTC-5)"; weekday, seconds, AM/PM and zone optional.
_CLOCK: Final = re.compile(
    r"\s*(?:[A-Za-z]+,\s*)?([A-Za-z]{3,})\.?\s+(\d{1,2}),?\s+(\d{4}),?\s+"
    r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp]\.?[Mm]\.?)?\s*"
    r"(?:\(\s*(?:UTC|GMT)\s*(?:([+-])\s*(\d{1,2})(?::?(\d{2}))?)?\s*\))?\s*"
)
_TS_OPEN: Final = "<timestamp>"
_TS_CLOSE: Final = "</timestamp>"
_QUERY_OPEN: Final = "<user_query>"
_QUERY_CLOSE: Final = "</user_query>"
_COMPOSER_PREFIX: Final = "composerData:"
_BUBBLE_PREFIX: Final = "bubbleId:"
_HEADERS_KEY: Final = "composer.composerHeaders"


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


def owns_state_db(rel: RelParts) -> bool:
    """Only ``state.vscdb`` at the top of the root (never its backups or ``-wal``)."""
    return rel == ("state.vscdb",)


def superseded(sources: Sequence[SourceFile]) -> dict[str, str]:
    """Copies of a composer's transcript directory to leave out when the same composer
    id appears under several slugs: keep the copy outside ``empty-window``, then the one
    most recently written (parent and subagent files alike), then the first found. Every
    file of a losing copy (its subagents too) is left out."""
    copies: dict[str, dict[tuple[Path, str], list[SourceFile]]] = {}
    for source in sources:
        if source.format != TRANSCRIPT_FORMAT:
            continue
        parts = source.path.relative_to(source.root).parts
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


# --------------------------------------------------------------------------- values


def parse_timestamp(text: str) -> str | None:
    """The UTC ISO-8601 instant of a ``<timestamp>`` body such as
    ``Friday, May 1, 2026, 9:00 AM (UTC-5)`` (→ ``2026-05-01T14:00:00.000Z``); a body
    without a zone is read as UTC; ``None`` when it cannot be read."""
    match = _CLOCK.fullmatch(text)
    if match is None:
        return None
    month_name, day, year, hour, minute, second, half, sign, off_h, off_m = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None:
        return None
    h = int(hour)
    if half is not None:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if half[0] in "Pp" else 0)
    try:
        local = datetime(int(year), month, int(day), h, int(minute), int(second or 0), tzinfo=UTC)
    except ValueError:
        return None
    if sign is not None:
        offset = timedelta(hours=int(off_h), minutes=int(off_m or 0))
        local = local - offset if sign == "+" else local + offset
    return f"{local:%Y-%m-%dT%H:%M:%S}.000Z"


def _instant(value: Any) -> str | None:
    """A time as Cursor stores it (epoch milliseconds, or ISO-8601 text) → ISO text."""
    if type(value) is str:
        if len(value) >= 19 and value[4] == "-" and value[10] in "T ":
            return value if value[10] == "T" else value[:10] + "T" + value[11:]
        if not (value.isascii() and value.isdigit()) or len(value) > 19:
            return None
        value = int(value)
    if type(value) is float and math.isfinite(value):
        value = int(value)
    if type(value) is not int or value <= 0:
        return None
    ms = value if value >= 100_000_000_000 else value * 1000  # seconds, if that small
    try:
        moment = _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return None
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _model(value: Any) -> str | None:
    """A model name, unless empty or ``default`` (Cursor's "auto": never pinned)."""
    if type(value) is str and value and value != "default":
        return value
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or (
        len(path) > 2 and path[1] == ":" and path[2] in "\\/" and path[0].isalpha()
    )


def _common_parent(current: str | None, path: str) -> str | None:
    """The common parent of ``current`` and ``path`` (same path style), else ``current``."""
    if current is None:
        return path
    posix = current.startswith("/")
    if path.startswith("/") != posix:
        return current
    try:
        common: str = (posixpath if posix else ntpath).commonpath([current, path])
    except ValueError:
        return current
    return common


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
        parts = source.path.relative_to(source.root).parts
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
        when = _instant(mtime // 1_000_000)
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
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                sink.event(
                    sid, native, i, ts, "text", "assistant", _text(block.get("text")), offset,
                    is_sidechain=side,
                )  # fmt: skip
            elif btype == "tool_use":
                call_id = f"{native}:{i}"
                tool_input = block.get("input")
                sink.event(
                    sid, native, i, ts, "tool_use", "assistant", None, offset,
                    tool_name=_text(block.get("name")), tool_call_id=call_id,
                    tool_input=json_text(tool_input), is_sidechain=side,
                )  # fmt: skip
                open_calls = memo.get("open")
                if open_calls is None:
                    memo["open"] = [call_id]
                elif len(open_calls) < _MAX_OPEN_CALLS:
                    open_calls.append(call_id)
                if "cwd" not in memo and isinstance(tool_input, dict):
                    self._scan_cwd(tool_input, ctx, sink)
            elif btype == "thinking" or btype == "reasoning":
                thought = block.get("thinking", block.get("text"))
                sink.event(
                    sid, native, i, ts, "thinking", "assistant", _text(thought), offset,
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
        if type(wd) is str and _is_absolute(wd):
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
            if type(value) is str and _is_absolute(value):
                common = memo.get("common")
                narrowed = _common_parent(common, value)
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


# --------------------------------------------------------------------------- state.vscdb


class _Composer:
    """What the database says about one composer (session)."""

    __slots__ = ("archived", "empty", "model", "project", "started", "title", "updated")

    def __init__(self) -> None:
        self.title: str | None = None
        self.model: str | None = None
        self.project: str | None = None
        self.started: str | None = None
        self.updated: str | None = None
        self.archived: bool | None = None
        self.empty = False

    def absorb(self, header: Mapping[str, Any]) -> None:
        """Fill fields still unknown from a header or ``composerData`` object."""
        if self.title is None:
            name = header.get("name")
            self.title = name if type(name) is str and name.strip() else None
        if self.model is None:
            config = header.get("modelConfig")
            if isinstance(config, dict):
                self.model = _model(config.get("modelName"))
        if self.project is None:
            ident = header.get("workspaceIdentifier")
            uri = ident.get("uri") if isinstance(ident, dict) else None
            fs_path = uri.get("fsPath") if isinstance(uri, dict) else None
            if type(fs_path) is str and _is_absolute(fs_path):
                self.project = fs_path
        if self.started is None:
            self.started = _instant(header.get("createdAt"))
        if self.updated is None:
            self.updated = _instant(header.get("lastUpdatedAt"))
        if self.archived is None:
            archived = header.get("isArchived")
            if type(archived) is bool:
                self.archived = archived
            elif type(archived) is int:
                self.archived = archived != 0


def _json(value: Any) -> Any:
    """A TEXT or BLOB value holding UTF-8 JSON, parsed; ``None`` if it is not JSON."""
    if value is None or not isinstance(value, str | bytes):
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


class CursorStateAdapter:
    """Reads ``state.vscdb`` (opened read-only by the framework): composer metadata for
    the sessions and one model call per bubble with a token count.

    A composer gets a session row when the database shows it has content (a non-empty
    conversation, or token counts); composers Cursor creates for every new window and
    never uses are left out. Every part is optional: a missing table, key or field
    yields nothing for it."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The database holds many sessions; its context names none."""
        return SourceContext(source, "")

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Emit session metadata and usage; returns the rows read (composerData,
        header entries and bubbles carrying a token count)."""
        tables = {
            str(name).lower()
            for (name,) in con.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
            )
        }
        composers: dict[str, _Composer] = {}
        records = 0
        if "cursordiskkv" in tables:
            records += self._composer_data(con, composers)
        if "composerheaders" in tables:
            records += self._header_table(con, composers)
        if "itemtable" in tables:
            records += self._header_item(con, composers)
        with_calls: set[str] = set()
        if "cursordiskkv" in tables:
            records += self._bubbles(con, composers, with_calls, sink)
        for composer_id, c in composers.items():
            if c.empty and composer_id not in with_calls:
                continue
            sink.session(
                composer_id, title=c.title, title_rank=2, model=c.model, project_path=c.project,
                started_at=c.started, updated_at=c.updated, archived=c.archived,
            )  # fmt: skip
        for composer_id in with_calls - composers.keys():
            sink.session(composer_id)
        return records

    def _composer_data(self, con: sqlite3.Connection, composers: dict[str, _Composer]) -> int:
        rows = 0
        for key, value in _prefix_rows(con, _COMPOSER_PREFIX, None):
            rows += 1
            if type(key) is not str:
                continue
            composer_id = key[len(_COMPOSER_PREFIX) :]
            data = _json(value)
            if not isinstance(data, dict) or not composer_id:
                continue
            version = data.get("_v")
            if type(version) is int and version > MAX_COMPOSER_DATA_V:
                raise FormatDrift(
                    f"Cursor composerData _v {version} is newer than this adapter knows "
                    f"(<= {MAX_COMPOSER_DATA_V})"
                )
            c = composers.setdefault(composer_id, _Composer())
            c.absorb(data)
            headers = data.get("fullConversationHeadersOnly")
            inline = data.get("conversation")
            c.empty = (
                isinstance(headers, list)
                and not headers
                and not (isinstance(inline, list) and inline)
                and not data.get("conversationMap")
                and not data.get("tabs")
            )
        return rows

    def _header_table(self, con: sqlite3.Connection, composers: dict[str, _Composer]) -> int:
        cursor = con.execute("SELECT * FROM composerHeaders")
        names = [str(d[0]).lower() for d in cursor.description]
        aliases = {
            "composerid": "composerId",
            "createdat": "createdAt",
            "lastupdatedat": "lastUpdatedAt",
            "isarchived": "isArchived",
            "name": "name",
        }
        rows = 0
        for row in cursor:
            rows += 1
            columns = dict(zip(names, row, strict=True))
            header: dict[str, Any] = {}
            stored = _json(columns.get("value"))
            if isinstance(stored, dict):
                header.update(stored)
            for column, field in aliases.items():
                if columns.get(column) is not None:
                    header[field] = columns[column]
            self._absorb_header(header, composers)
        return rows

    def _header_item(self, con: sqlite3.Connection, composers: dict[str, _Composer]) -> int:
        row = con.execute("SELECT value FROM ItemTable WHERE key = ?", (_HEADERS_KEY,)).fetchone()
        doc = _json(row[0]) if row else None
        listed = doc.get("allComposers") if isinstance(doc, dict) else None
        if not isinstance(listed, list):
            return 0
        for header in listed:
            if isinstance(header, dict):
                self._absorb_header(header, composers)
        return len(listed)

    @staticmethod
    def _absorb_header(header: dict[str, Any], composers: dict[str, _Composer]) -> None:
        composer_id = header.get("composerId")
        if type(composer_id) is str and composer_id:
            composers.setdefault(composer_id, _Composer()).absorb(header)

    def _bubbles(
        self,
        con: sqlite3.Connection,
        composers: dict[str, _Composer],
        with_calls: set[str],
        sink: RowSink,
    ) -> int:
        """One usage candidate per bubble with ``inputTokens``/``outputTokens`` > 0:
        ``input = inputTokens``, ``output = outputTokens``; model from the composer's
        pinned model, else the bubble's; time from the bubble's ``createdAt``, else the
        composer's last update (or creation)."""
        rows = 0
        usage = sink.usage
        for key, value in _prefix_rows(con, _BUBBLE_PREFIX, "tokenCount"):
            rows += 1
            if type(key) is not str:
                continue
            composer_id, sep, bubble_id = key[len(_BUBBLE_PREFIX) :].partition(":")
            if not sep or not composer_id or not bubble_id:
                continue
            data = _json(value)
            if not isinstance(data, dict):
                continue
            count = data.get("tokenCount")
            if not isinstance(count, dict):
                continue
            input_tokens = token_count(count.get("inputTokens"))
            output_tokens = token_count(count.get("outputTokens"))
            if not input_tokens and not output_tokens:
                continue
            c = composers.get(composer_id)
            model = c.model if c is not None else None
            if model is None:
                info = data.get("modelInfo")
                model = _model(info.get("modelName")) if isinstance(info, dict) else None
            ts = _instant(data.get("createdAt"))
            if ts is None and c is not None:
                ts = c.updated or c.started
            with_calls.add(composer_id)
            usage(
                composer_id, None, None, bubble_id, ts, model,
                input_tokens, 0, 0, 0, output_tokens, 0, False, 0,
            )  # fmt: skip
        return rows


def _prefix_rows(
    con: sqlite3.Connection, prefix: str, needle: str | None
) -> Iterable[tuple[str, Any]]:
    """``(key, value)`` of ``cursorDiskKV`` rows whose key starts with ``prefix`` (an
    index range: ``:`` is followed by ``;``), optionally only values containing
    ``needle``; streamed, one row at a time."""
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    if needle is None:
        return con.execute(
            "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (prefix, upper)
        )
    return con.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ? AND instr(value, ?) > 0",
        (prefix, upper, needle),
    )
