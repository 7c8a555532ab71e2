"""Cursor's ``state.vscdb`` (opened read-only): composer headers and ``composerData`` rows
become session metadata, and every ``bubbleId`` row with a token count one model call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, SourceContext
from ..rows import RowSink
from ..sources import RelParts, SourceFile
from ..values import token_count
from .cursor_fields import instant, is_absolute, pinned_model

#: Highest ``composerData._v`` this adapter knows (observed: 3 … 10). Cursor bumps the
#: counter for additive migrations too, hence a small margin above the last one seen.
MAX_COMPOSER_DATA_V: Final = 15

_COMPOSER_PREFIX: Final = "composerData:"
_BUBBLE_PREFIX: Final = "bubbleId:"
_HEADERS_KEY: Final = "composer.composerHeaders"


def owns_state_db(rel: RelParts) -> bool:
    """Only ``state.vscdb`` at the top of the root (never its backups or ``-wal``)."""
    return rel == ("state.vscdb",)


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
                self.model = pinned_model(config.get("modelName"))
        if self.project is None:
            ident = header.get("workspaceIdentifier")
            uri = ident.get("uri") if isinstance(ident, dict) else None
            fs_path = uri.get("fsPath") if isinstance(uri, dict) else None
            if type(fs_path) is str and is_absolute(fs_path):
                self.project = fs_path
        if self.started is None:
            self.started = instant(header.get("createdAt"))
        if self.updated is None:
            self.updated = instant(header.get("lastUpdatedAt"))
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
                model = pinned_model(info.get("modelName")) if isinstance(info, dict) else None
            ts = instant(data.get("createdAt"))
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
