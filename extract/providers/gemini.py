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
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, Root, SourceFile, open_regular
from ..values import json_text, token_count

PROVIDER_ID: Final = "gemini-cli"
ADAPTER_VERSION: Final = "1.0"
KNOWN_FORMAT_MAJORS: Final = frozenset({1})

#: Title rank of a session ``summary`` (Gemini CLI generates it; see RAW_SESSION_SCHEMA).
SUMMARY_TITLE_RANK: Final = 2

_ERROR_STATUSES: Final = frozenset({"error", "failed", "fail", "cancelled", "canceled"})
_OK_STATUSES: Final = frozenset({"success", "ok", "completed"})
_SYSTEM_TYPES: Final = frozenset({"info", "error", "warning"})
_HASH_DIR: Final = re.compile(r"^[0-9a-f]{64}$")
_MAJOR: Final = re.compile(r"^\s*v?(\d+)")
_PROJECT_ROOT_BYTES: Final = 64 * 1024
_PROJECTS_JSON_BYTES: Final = 8 * 1024 * 1024

Row = tuple[
    int,  # block index inside the message
    BlockType,
    str,  # role
    str | None,  # text
    str | None,  # ts
    str | None,  # model
    str | None,  # tool name
    str | None,  # tool call id
    str | None,  # tool input (JSON text)
    bool | None,  # is_error
]
"""One event of a message, before it is emitted."""

Usage = tuple[str | None, str | None, int, int, int, int]
"""One call of a message: (ts, model, input, cache_read, output, reasoning)."""


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


# --------------------------------------------------------------------------- projects


class ProjectResolver:
    """Finds the absolute project path of a ``~/.gemini/tmp/<project>`` directory.

    In order: the directory's ``.project_root`` file; ``~/.gemini/projects.json``
    (``{"projects": {"/abs/path": "slug"}}``) by slug; a legacy SHA-256 directory (or a
    ``projectHash``) matched against the SHA-256 of the paths listed there. ``None``
    when nothing matches. ``projects.json`` is parsed once per (size, mtime).
    """

    def __init__(self) -> None:
        self._projects: dict[Path, tuple[tuple[int, int], dict[str, str], dict[str, str]]] = {}

    def resolve(self, root: Path, project_dir: str, project_hash: str | None = None) -> str | None:
        """The project path of ``root / project_dir`` (``root`` = ``~/.gemini/tmp``)."""
        marker = root / project_dir / ".project_root"
        path = _read_small(marker, _PROJECT_ROOT_BYTES)
        if path is not None:
            text = path.decode("utf-8", "replace").strip()
            if text.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", text):
                return text
        by_slug, by_hash = self._index(root.parent / "projects.json")
        found = by_slug.get(project_dir)
        if found is None and _HASH_DIR.match(project_dir):
            found = by_hash.get(project_dir)
        if found is None and project_hash:
            found = by_hash.get(project_hash)
        return found

    def _index(self, path: Path) -> tuple[dict[str, str], dict[str, str]]:
        try:
            st = path.stat()
        except OSError:
            return {}, {}
        key = (st.st_size, st.st_mtime_ns)
        cached = self._projects.get(path)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        by_slug: dict[str, str] = {}
        by_hash: dict[str, str] = {}
        data = _read_small(path, _PROJECTS_JSON_BYTES)
        try:
            doc = orjson.loads(data) if data is not None else None
        except orjson.JSONDecodeError:
            doc = None
        projects = doc.get("projects") if isinstance(doc, dict) else None
        if isinstance(projects, dict):
            for project, slug in projects.items():
                if isinstance(slug, str) and slug:
                    by_slug.setdefault(slug, project)
                by_hash[hashlib.sha256(project.encode()).hexdigest()] = project
        self._projects[path] = (key, by_slug, by_hash)
        return by_slug, by_hash


def _read_small(path: Path, limit: int) -> bytes | None:
    """The bytes of a small regular file (not a symlink), or ``None``."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with open_regular(path) as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


# --------------------------------------------------------------------------- messages


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


def _str(value: Any) -> str | None:
    return value if type(value) is str else None


def _parts_text(content: Any) -> str | None:
    """The text of a ``PartListUnion``: a string, or the ``text`` parts of a list joined
    by newlines (thought parts skipped, files and images as placeholders)."""
    if type(content) is str:
        return content or None
    if content is None:
        return None
    if type(content) is dict:
        content = [content]
    elif type(content) is not list:
        raise InvalidRecord("'content' is neither text nor a list of parts")
    texts: list[str] = []
    for part in content:
        if type(part) is str:
            texts.append(part)
        elif type(part) is dict:
            text = part.get("text")
            if type(text) is str:
                if part.get("thought") is not True and text:
                    texts.append(text)
            elif "inlineData" in part or "fileData" in part:
                blob = part.get("inlineData") or part.get("fileData")
                mime = blob.get("mimeType") if isinstance(blob, dict) else None
                image = isinstance(mime, str) and mime.startswith("image/")
                texts.append("[image]" if image else "[file]")
    return "\n".join(texts) if texts else None


def _thought_text(thought: dict[str, Any]) -> str | None:
    subject, description = _str(thought.get("subject")), _str(thought.get("description"))
    if subject and description:
        return f"{subject}\n\n{description}"
    return subject or description


def _result_text(result: Any) -> str | None:
    """A tool's output: ``functionResponse.response.output`` (else its ``error``, else
    the response as JSON) of each result part, and plain text parts, joined."""
    if result is None:
        return None
    if type(result) is str:
        return result
    parts = result if type(result) is list else [result]
    texts: list[str] = []
    for part in parts:
        if type(part) is str:
            texts.append(part)
            continue
        if type(part) is not dict:
            continue
        call = part.get("functionResponse")
        if type(call) is dict:
            response = call.get("response")
            if type(response) is dict:
                output = response.get("output", response.get("error"))
                texts.append(output if type(output) is str else json_text(response))
            elif response is not None:
                texts.append(response if type(response) is str else json_text(response))
        elif type(part.get("text")) is str:
            texts.append(part["text"])
    return "\n".join(texts) if texts else None


def message_rows(msg: dict[str, Any]) -> tuple[list[Row], Usage | None, bool]:
    """The events and the call of one message record, and whether its type is known.

    Block indices: a ``gemini`` message puts its thoughts at ``0..T-1``, its text at
    ``T`` and tool call ``k`` at ``T+1+2k`` (the call) and ``T+2+2k`` (its result), so a
    copy that only adds tokens, tool calls or results keeps the earlier rows' ids.
    Raises :class:`InvalidRecord` before producing anything when a field has an
    impossible type.
    """
    mtype = msg.get("type")
    if isinstance(mtype, list | dict):
        raise InvalidRecord("'type' is not a string")
    ts = _str(msg.get("timestamp"))
    if mtype == "user":
        text = _parts_text(msg.get("content"))
        rows: list[Row] = (
            [(0, "text", "user", text, ts, None, None, None, None, None)] if text else []
        )
        return rows, None, True
    if mtype == "gemini":
        return _gemini_rows(msg, ts)
    if mtype in _SYSTEM_TYPES:
        text = _parts_text(msg.get("content"))
        is_error = True if mtype == "error" else None
        return [(0, "system", "system", text, ts, None, None, None, None, is_error)], None, True
    return [], None, False


def _gemini_rows(msg: dict[str, Any], ts: str | None) -> tuple[list[Row], Usage | None, bool]:
    thoughts = msg.get("thoughts")
    calls = msg.get("toolCalls")
    tokens = msg.get("tokens")
    if thoughts is not None and type(thoughts) is not list:
        raise InvalidRecord("'thoughts' is not a list")
    if calls is not None and type(calls) is not list:
        raise InvalidRecord("'toolCalls' is not a list")
    if tokens is not None and type(tokens) is not dict:
        raise InvalidRecord("'tokens' is not an object")
    text = _parts_text(msg.get("content"))
    model = _str(msg.get("model"))
    rows: list[Row] = []
    index = 0
    for thought in thoughts or ():
        if type(thought) is dict and (thought_text := _thought_text(thought)):
            tts = _str(thought.get("timestamp")) or ts
            rows.append(
                (index, "thinking", "assistant", thought_text, tts, model,
                 None, None, None, None)
            )  # fmt: skip
        index += 1
    if text:
        rows.append((index, "text", "assistant", text, ts, model, None, None, None, None))
    index += 1
    for call in calls or ():
        if type(call) is dict:
            name, call_id = _str(call.get("name")), _str(call.get("id"))
            args = call.get("args")
            # The call is asked for at the message's time (stable across the copies that
            # update its status); its own timestamp is when its result was recorded.
            rows.append(
                (index, "tool_use", "assistant", None, ts, model, name, call_id,
                 None if args is None else json_text(args), None)
            )  # fmt: skip
            result, status = call.get("result"), call.get("status")
            if isinstance(status, list | dict):
                raise InvalidRecord("a tool call's 'status' is not a string")
            if result is not None or status in _ERROR_STATUSES:
                cts = _str(call.get("timestamp")) or ts
                output = _result_text(result)
                if output is None:
                    output = _str(call.get("resultDisplay"))
                is_error = (
                    True
                    if status in _ERROR_STATUSES
                    else (False if status in _OK_STATUSES else None)
                )
                rows.append(
                    (index + 1, "tool_result", "tool", output, cts, None, name, call_id,
                     None, is_error)
                )  # fmt: skip
        index += 2
    usage: Usage | None = None
    if tokens is not None:
        cached = token_count(tokens.get("cached"))
        thinking = token_count(tokens.get("thoughts"))
        usage = (
            ts,
            model,
            max(token_count(tokens.get("input")) - cached, 0) + token_count(tokens.get("tool")),
            cached,
            token_count(tokens.get("output")) + thinking,
            thinking,
        )
    return rows, usage, True


def _emit(
    sink: RowSink,
    sid: str,
    mid: str,
    rows: Sequence[Row],
    usage: Usage | None,
    offset: int,
    rank: int,
) -> None:
    event = sink.event
    for index, btype, role, text, ts, model, tool, call_id, tool_input, is_error in rows:
        event(
            sid, mid, index, ts, btype, role, text, offset, model=model, tool_name=tool,
            tool_call_id=call_id, tool_input=tool_input, is_error=is_error,
        )  # fmt: skip
    if usage is not None:
        ts, model, inp, cache_read, output, reasoning = usage
        sink.usage(
            sid, None, None, mid, ts, model, inp, 0, 0, cache_read, output, reasoning, False,
            offset, rank=rank,
        )  # fmt: skip


def _session_fields(
    record: Mapping[str, Any],
) -> tuple[str | None, str | None, str | None]:
    """(title, started_at, updated_at) of a metadata line, ``$set`` or document."""
    return (
        _str(record.get("summary")),
        _str(record.get("startTime")),
        _str(record.get("lastUpdated")),
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
        parts = source.path.relative_to(source.root).parts
        if len(parts) == 4:
            return SourceContext(source, source.path.stem, parts[2])
        return SourceContext(source, source.path.stem)

    def _describe(
        self, ctx: SourceContext, sink: RowSink, sid: str, fields: Mapping[str, Any]
    ) -> None:
        """Emit the session's path-derived metadata and what ``fields`` says of it."""
        source = ctx.source
        project_dir = source.path.relative_to(source.root).parts[0]
        title, started, updated = _session_fields(fields)
        sink.session(
            sid,
            parent_session_id=ctx.parent_session_id,
            project_path=self._projects.resolve(
                source.root, project_dir, _str(fields.get("projectHash"))
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
            _emit(sink, sid, mid, rows, usage, position, 0)
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
        title = _str(update.get("summary"))
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
        _emit(sink, sid, mid, new_rows, new_usage, offset, offset + 1)
        ids[mid] = 1 if rows or usage is not None else 0
        # Only model messages are written again with more content (tokens, tool calls).
        memo["last"] = _fingerprint(mid, rows, usage) if msg.get("type") == "gemini" else None

    # -- session times -------------------------------------------------------------
    @staticmethod
    def _times(memo: dict[str, Any], fields: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """Widen the remembered (start, update) range; returns what widened it."""
        started, updated = _str(fields.get("startTime")), _str(fields.get("lastUpdated"))
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
