"""Gemini CLI sessions: ``~/.gemini/tmp/<project>/chats/``.

Field-level format: provider-formats §4. Two on-disk formats hold the same records:

* the legacy single document ``chats/session-<stamp>-<id8>.json`` (``document``
  position: re-read whole and replaced atomically when its content changes);
* the current append-only log ``chats/<name>.jsonl`` (``byte-offset`` position): a
  metadata line, message records (anything with a string ``id``), ``{"$set": {...}}``
  metadata updates and ``{"$rewindTo": "<id>"}``, which drops that message and every
  message after it. A message id can be written again; its last copy wins, at the
  position of its first appearance. Subagents write ``chats/<parentSessionId>/<id>.jsonl``.

Identity does not depend on the format: a session is its ``sessionId``, an event is
(session, message id, block index) and a model call is (session, message id), so a
``.json`` migrated to ``.jsonl`` (Gemini CLI appends an ``l`` to the name and copies every
message) yields the same ids from both files. While both files exist the ``.json`` is
left out as superseded (:func:`superseded`); rows imported from it earlier merge with the
log's by id.

Across runs the log adapter keeps, in ``SourceContext.memo`` (persisted with every
checkpoint), the surviving message ids in first-appearance order, so a later
``$rewindTo`` or a re-written message withdraws rows committed by an earlier run
(``RowSink.retract``). The memo holds ids, times and fingerprints only, never text.

Token rule (DESIGN §4): one call per surviving message id; ``input = input − cached +
tool``, ``cache_read = cached``, ``output = output + thoughts``, ``reasoning =
thoughts``, ``cache_write = 0``; the model is the message's ``model``.

Format versions: the metadata line or document may carry ``version`` (absent means 1); a
major version other than :data:`KNOWN_FORMAT_MAJORS` raises :class:`FormatDrift`.

A message becomes rows in :mod:`.gemini_messages`; a project directory's path is found by
:mod:`.gemini_projects`. This module holds discovery and the two adapters.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile, rel_parts
from .gemini_messages import Row, Usage, emit_rows, str_or_none
from .gemini_messages import message_rows as message_rows  # one message's events and call
from .gemini_projects import ProjectResolver as ProjectResolver  # the sessions' project path

PROVIDER_ID: Final = "gemini-cli"
ADAPTER_VERSION: Final = "1.0"
KNOWN_FORMAT_MAJORS: Final = frozenset({1})

#: Title rank of a session ``summary`` (Gemini CLI generates it; see RAW_SESSION_SCHEMA).
SUMMARY_TITLE_RANK: Final = 2

_MAJOR: Final = re.compile(r"^\s*v?(\d+)")


# --------------------------------------------------------------------------- discovery


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``~/.gemini/tmp`` (Gemini CLI has no environment override for it)."""
    return [Root(PROVIDER_ID, home / ".gemini" / "tmp", "default")]


def owns_document(rel: RelParts) -> bool:
    """A legacy session document: ``<project>/chats/session-*.json``."""
    parts = rel
    return (
        len(parts) == 3
        and parts[1] == "chats"
        and parts[2].startswith("session-")
        and parts[2].endswith(".json")
    )


def owns_log(rel: RelParts) -> bool:
    """An append-only session log: ``<project>/chats/*.jsonl`` or a subagent's
    ``<project>/chats/<parentSessionId>/*.jsonl``."""
    parts = rel
    return 3 <= len(parts) <= 4 and parts[1] == "chats" and parts[-1].endswith(".jsonl")


def superseded(found: Sequence[SourceFile]) -> dict[str, str]:
    """Documents migrated to a log: ``session-x.json`` whose ``session-x.jsonl`` exists.

    Gemini CLI copies every message of the document into the log when it resumes the
    session and never writes the document again, so the log is the transcript to read.
    """
    logs = {s.path for s in found if s.position_kind == "byte-offset"}
    return {
        s.source_id: f"migrated to {s.path.name}l, which is read instead"
        for s in found
        if s.position_kind == "document" and s.path.with_name(s.path.name + "l") in logs
    }


# --------------------------------------------------------------------------- metadata


def check_version(value: Any) -> None:
    """Refuse an unknown major format version (``version`` absent means 1)."""
    if value is None:
        return
    if type(value) is int:
        major = value
    elif isinstance(value, str) and (match := _MAJOR.match(value)):
        try:
            major = int(match[1])
        except ValueError:  # more digits than Python converts
            raise InvalidRecord("'version' is not a version string") from None
    else:
        raise InvalidRecord("'version' is neither a number nor a version string")
    if major not in KNOWN_FORMAT_MAJORS:
        raise FormatDrift(
            f"Gemini CLI session format version {value!r} has an unknown major version "
            f"(known: {', '.join(map(str, sorted(KNOWN_FORMAT_MAJORS)))})"
        )


def _session_fields(
    record: Mapping[str, Any],
) -> tuple[str | None, str | None, str | None]:
    """(title, started_at, updated_at) of a metadata line, ``$set`` or document."""
    return (
        str_or_none(record.get("summary")),
        str_or_none(record.get("startTime")),
        str_or_none(record.get("lastUpdated")),
    )


# --------------------------------------------------------------------------- adapters


class _Base:
    """What both formats share: the session of a path and its project."""

    def __init__(self, projects: ProjectResolver) -> None:
        self._projects = projects

    def locate(self, source: SourceFile) -> SourceContext:
        """Session identity from the path: a subagent log is the session named by its
        stem whose parent is the directory it sits in; any other file starts with its
        stem, replaced by the ``sessionId`` written inside it."""
        parts = rel_parts(source)
        if len(parts) == 4:
            return SourceContext(source, source.path.stem, parts[2])
        return SourceContext(source, source.path.stem)

    def _describe(
        self, ctx: SourceContext, sink: RowSink, sid: str, fields: Mapping[str, Any]
    ) -> None:
        """Emit the session's path-derived metadata and what ``fields`` says of it."""
        source = ctx.source
        project_dir = rel_parts(source)[0]
        title, started, updated = _session_fields(fields)
        sink.session(
            sid,
            parent_session_id=ctx.parent_session_id,
            project_path=self._projects.resolve(
                source.root, project_dir, str_or_none(fields.get("projectHash"))
            ),
            title=title,
            title_rank=SUMMARY_TITLE_RANK if title else None,
            started_at=started,
            updated_at=updated,
        )


class GeminiDocumentAdapter(_Base):
    """Maps a legacy ``session-*.json`` document (one whole conversation record)."""

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """Events and calls of every message (the last copy of a repeated id, at its
        first position); returns the number of messages. Raises :class:`InvalidRecord`
        for a document that is not a conversation record."""
        if not isinstance(document, dict):
            raise InvalidRecord("not a Gemini CLI conversation record")
        check_version(document.get("version"))
        sid, messages = document.get("sessionId"), document.get("messages")
        if type(sid) is not str or not sid or type(messages) is not list:
            raise InvalidRecord("not a Gemini CLI conversation record (sessionId, messages)")
        latest: dict[str, dict[str, Any]] = {}
        for msg in messages:
            if type(msg) is dict and type(msg.get("id")) is str:
                latest[msg["id"]] = msg
        built = [(mid, message_rows(msg)) for mid, msg in latest.items()]
        ctx.session_id = sid
        self._describe(ctx, sink, sid, document)
        for position, (mid, (rows, usage, _known)) in enumerate(built):
            emit_rows(sink, sid, mid, rows, usage, position, 0)
        return len(messages)


class GeminiLogAdapter(_Base):
    """Maps the records of an append-only ``.jsonl`` session log.

    ``ctx.memo`` keys: ``sid`` (the session id), ``ids`` (surviving message ids in
    first-appearance order → 1 if rows of it were emitted), ``last`` (when the most
    recent message is a model message: its id, the block indices of its rows, their
    CRC-32 and its call), ``meta`` (session metadata emitted), ``start``/``updated``
    (earliest start and latest update written; a hint is emitted only when it widens
    that range, and both are re-emitted whenever rows are withdrawn, because the catalog
    then recomputes the session's times from its remaining events).

    A re-written message whose copy only adds rows (tokens, tool calls, results) emits
    just the new rows and call (the call's rank is its offset, so the latest copy wins);
    any other change withdraws the earlier copy (``RowSink.retract``) and emits the new
    one whole.
    """

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one log record (see the class docstring)."""
        memo = ctx.memo
        sid = memo.get("sid")
        if sid is None:
            sid = memo["sid"] = ctx.session_id
            memo.update(ids={}, meta=0, last=None, start=None, updated=None)
        elif sid is not ctx.session_id:
            ctx.session_id = sid
        if "$rewindTo" in record:
            target = record["$rewindTo"]
            if type(target) is str:
                return self._rewind(target, memo, sid, sink)
        mid = record.get("id")
        if type(mid) is str:
            rows, usage, known = message_rows(record)
            if not memo["meta"]:
                memo["meta"] = 1
                self._describe(ctx, sink, sid, {})
            self._copy(record, mid, rows, usage, offset, memo, sink)
            return "mapped" if known else "unknown"
        update = record.get("$set")
        if type(update) is dict:
            if len(update) == 1 and "lastUpdated" in update:  # after every message
                updated = update["lastUpdated"]
                if type(updated) is str and (memo["updated"] is None or updated > memo["updated"]):
                    memo["updated"] = updated
                    sink.session(sid, updated_at=updated)
                return "mapped"
            return self._update(update, offset, memo, sink)
        if type(record.get("sessionId")) is str:
            return self._metadata(record, ctx, sink)
        return "unknown"

    # -- records -------------------------------------------------------------------
    def _metadata(self, record: dict[str, Any], ctx: SourceContext, sink: RowSink) -> RecordOutcome:
        check_version(record.get("version"))
        memo = ctx.memo
        if not memo["ids"] and not memo["meta"]:
            memo["sid"] = ctx.session_id = record["sessionId"]
        self._times(memo, record)
        self._describe(ctx, sink, memo["sid"], record)
        memo["meta"] = 1
        return "mapped"

    def _update(
        self, update: dict[str, Any], offset: int, memo: dict[str, Any], sink: RowSink
    ) -> RecordOutcome:
        added: list[tuple[dict[str, Any], str, list[Row], Usage | None]] = []
        messages = update.get("messages")
        if type(messages) is list:
            # The curated history Gemini CLI rewrites in place (masked tool output, a
            # compressed prefix): it adds messages never seen, it drops and changes none.
            ids = memo["ids"]
            for msg in messages:
                if type(msg) is dict and type(msg.get("id")) is str and msg["id"] not in ids:
                    rows, usage, _known = message_rows(msg)
                    added.append((msg, msg["id"], rows, usage))
        sid = memo["sid"]
        started, updated = self._times(memo, update)
        title = str_or_none(update.get("summary"))
        if title or started or updated:
            sink.session(
                sid,
                title=title,
                title_rank=SUMMARY_TITLE_RANK if title else None,
                started_at=started,
                updated_at=updated,
            )
        for msg, mid, rows, usage in added:
            self._copy(msg, mid, rows, usage, offset, memo, sink)
        return "mapped"

    def _rewind(self, target: str, memo: dict[str, Any], sid: str, sink: RowSink) -> RecordOutcome:
        ids: dict[str, int] = memo["ids"]
        if target not in ids:
            raise InvalidRecord("$rewindTo names no surviving message of this session")
        order = list(ids)
        withdrawn = False
        for mid in order[order.index(target) :]:
            if ids.pop(mid):
                sink.retract(sid, mid)
                withdrawn = True
        last = memo["last"]
        if last is not None and last[0] not in ids:
            memo["last"] = None
        if withdrawn:
            self._rehint(memo, sid, sink)
        return "mapped"

    def _copy(
        self,
        msg: dict[str, Any],
        mid: str,
        rows: list[Row],
        usage: Usage | None,
        offset: int,
        memo: dict[str, Any],
        sink: RowSink,
    ) -> None:
        """Emit one copy of a message; a later copy of an id replaces the earlier one."""
        ids: dict[str, int] = memo["ids"]
        sid = memo["sid"]
        prior = ids.get(mid)
        new_rows, new_usage = rows, usage
        if prior is not None:
            last = memo["last"]
            added = _added_rows(last, mid, rows, usage) if last is not None else None
            if added is not None:
                new_rows, new_usage = added
            elif prior:
                sink.retract(sid, mid)
                self._rehint(memo, sid, sink)
        emit_rows(sink, sid, mid, new_rows, new_usage, offset, offset + 1)
        ids[mid] = 1 if rows or usage is not None else 0
        # Only model messages are written again with more content (tokens, tool calls).
        memo["last"] = _fingerprint(mid, rows, usage) if msg.get("type") == "gemini" else None

    # -- session times -------------------------------------------------------------
    @staticmethod
    def _times(memo: dict[str, Any], fields: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """Widen the remembered (start, update) range; returns what widened it."""
        started, updated = (
            str_or_none(fields.get("startTime")),
            str_or_none(fields.get("lastUpdated")),
        )
        if started is not None and (memo["start"] is None or started < memo["start"]):
            memo["start"] = started
        else:
            started = None
        if updated is not None and (memo["updated"] is None or updated > memo["updated"]):
            memo["updated"] = updated
        else:
            updated = None
        return started, updated

    @staticmethod
    def _rehint(memo: dict[str, Any], sid: str, sink: RowSink) -> None:
        sink.session(sid, started_at=memo["start"], updated_at=memo["updated"])


def _fingerprint(mid: str, rows: list[Row], usage: Usage | None) -> list[Any]:
    """What the memo keeps of the latest message: [id, block indices, CRC-32 of the
    rows, call] — enough to tell whether a next copy only adds to it, without text."""
    return [mid, [r[0] for r in rows], zlib.crc32(orjson.dumps(rows)), usage]


def _added_rows(
    last: list[Any], mid: str, rows: list[Row], usage: Usage | None
) -> tuple[list[Row], Usage | None] | None:
    """The rows and call a new copy of the latest message adds to it, or ``None`` when
    the copy changes or drops something already emitted (or is of another message)."""
    last_id, indices, crc, last_usage = last
    if last_id != mid:
        return None
    if last_usage is not None:
        if usage is None:
            return None
        same_call = list(usage) == list(last_usage)
    else:
        same_call = usage is None
    by_index = {r[0]: r for r in rows}
    kept = [by_index.get(i) for i in indices]
    if any(r is None for r in kept) or zlib.crc32(orjson.dumps(kept)) != crc:
        return None
    known = set(indices)
    return [r for r in rows if r[0] not in known], None if same_call else usage


_PROJECTS: Final = ProjectResolver()

#: The adapters registered for the two formats (they share one project resolver).
DOCUMENT_ADAPTER: Final = GeminiDocumentAdapter(_PROJECTS)
LOG_ADAPTER: Final = GeminiLogAdapter(_PROJECTS)
