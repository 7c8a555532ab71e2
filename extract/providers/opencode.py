"""OpenCode sessions: ``$XDG_DATA_HOME/opencode`` (``~/.local/share/opencode``).

Field-level format: provider-formats-more §4. Two stores hold the same records:

* the legacy JSON tree (before v1.2) under ``storage/``, one ``document`` source per
  record: ``session/<projectID>/<sessionID>.json``, ``message/<sessionID>/<messageID>.json``
  and ``part/<messageID>/<partID>.json`` (a flat ``part/<partID>.json`` naming its message
  inside is read too);
* ``opencode.db`` (v1.2 and later; ``opencode-<channel>.db`` for other release channels),
  a ``sqlite`` source opened read-only: tables ``session`` (columns), ``message`` and
  ``part`` (the record as JSON in ``data``, ids in columns).

A third copy is the JSON document ``opencode export <sessionID>`` writes, read from files
the user names (``import --file``, format ``opencode-export``).

OpenCode migrates the tree into the database and may leave both behind; all map through
:mod:`.opencode_records`, so a session in both is one session and each call is counted
once (the token rule is in that module's docstring).

A part record names its message but not the message's role and model, which decide its
events' kinds; the part adapter reads them from the message's own file in the same tree
(:class:`_MessageFiles`, read-only, never outside the root). OpenCode writes a message
before its parts; a part whose message is gone keeps its events (kind ``system`` for its
prose, the role being unknown) and its call, at the time its id encodes.

Uncertain [?]: whether ``XDG_DATA_HOME`` is the only override (``OPENCODE_DATA_DIR`` is
ccusage's own, not OpenCode's, and is not read), and the Windows data directory.

Format versions: a session records the OpenCode version that wrote it; an unknown major
version raises :class:`FormatDrift`, and so does a database holding OpenCode 2.x
event-sourced messages (``session_message`` rows), which this adapter does not map.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, SourceContext
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile, open_regular, rel_parts
from .cursor_fields import instant
from .opencode_records import (
    UNKNOWN_MESSAGE,
    MessageMeta,
    emit_message,
    emit_part,
    emit_session,
    id_instant,
    message_meta,
    record_id,
)

PROVIDER_ID: Final = "opencode"
ADAPTER_VERSION: Final = "1.0"
SESSION_FORMAT: Final = "opencode-session"
MESSAGE_FORMAT: Final = "opencode-message"
PART_FORMAT: Final = "opencode-part"
DB_FORMAT: Final = "opencode-db"

# Ids become path names when a part looks up its message: nothing that could leave a
# directory (no separators, no leading dot).
_SAFE_ID: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")
_MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024


# --------------------------------------------------------------------------- discovery


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``$XDG_DATA_HOME/opencode`` when ``XDG_DATA_HOME`` is absolute (OpenCode resolves
    its data directory with ``xdg-basedir``, which ignores a relative one), else
    ``~/.local/share/opencode`` (Linux and macOS alike): its ``storage/`` tree and the
    databases at its top."""
    configured = env.get("XDG_DATA_HOME", "").strip()
    if configured and Path(configured).is_absolute():
        base, origin, warning = Path(configured) / "opencode", "XDG_DATA_HOME", None
    else:
        base, origin = home / ".local" / "share" / "opencode", "default"
        warning = (
            f"XDG_DATA_HOME={configured!r} is relative and was ignored, as OpenCode does"
            if configured
            else None
        )
    return [
        Root(PROVIDER_ID, base / "storage", origin,
             formats=(SESSION_FORMAT, MESSAGE_FORMAT, PART_FORMAT), max_depth=3,
             warning=warning),
        Root(PROVIDER_ID, base, origin, formats=(DB_FORMAT,), max_depth=1),
    ]  # fmt: skip


def _record_file(name: str) -> bool:
    return name.endswith(".json") and len(name) > 5 and not name.startswith(".")


def owns_session(rel: RelParts) -> bool:
    """``session/<projectID>/<sessionID>.json``."""
    return len(rel) == 3 and rel[0] == "session" and _record_file(rel[2])


def owns_message(rel: RelParts) -> bool:
    """``message/<sessionID>/<messageID>.json``."""
    return len(rel) == 3 and rel[0] == "message" and _record_file(rel[2])


def owns_part(rel: RelParts) -> bool:
    """``part/<messageID>/<partID>.json``, or a flat ``part/<partID>.json``."""
    return 2 <= len(rel) <= 3 and rel[0] == "part" and _record_file(rel[-1])


def owns_database(rel: RelParts) -> bool:
    """``opencode.db`` or a channel's ``opencode-<channel>.db`` (never ``-wal``/``-shm``)."""
    if len(rel) != 1:
        return False
    name = rel[0]
    return name == "opencode.db" or (
        name.startswith("opencode-") and name.endswith(".db") and len(name) > 12
    )


# --------------------------------------------------------------------------- the tree


class _MessageFiles:
    """Reads the message records parts need from ``<storage>/message/`` (read-only, inside
    the root only). What a file said is remembered (a few thousand per process) while
    its size and mtime stay the same.

    OpenCode names a message's file after its id, in its session's folder. A part whose
    message is not there (it names no session, or a tree written by another tool names
    files otherwise) finds it through an index of every message file by the ids written
    inside, read once per storage folder and process, and only when first needed."""

    _LIMIT: Final = 4096

    def __init__(self) -> None:
        # (storage, message id) -> (session id, (size, mtime_ns), meta)
        self._meta: dict[tuple[str, str], tuple[str, tuple[int, int], MessageMeta]] = {}
        self._indexes: dict[str, dict[str, tuple[str, Path]]] = {}

    def find(self, storage: Path, sid: str | None, mid: str) -> tuple[str | None, MessageMeta]:
        """(session id, meta) of message ``mid``; ``UNKNOWN_MESSAGE`` if it is not there."""
        if not _SAFE_ID.match(mid) or (sid is not None and not _SAFE_ID.match(sid)):
            return sid, UNKNOWN_MESSAGE
        located = None if sid is None else (sid, storage / "message" / sid / f"{mid}.json")
        try:
            if located is None:
                raise FileNotFoundError
            st = located[1].stat()
        except OSError:
            located = self._index(storage).get(mid)
            if located is None or (sid is not None and located[0] != sid):
                return sid, UNKNOWN_MESSAGE
            try:
                st = located[1].stat()
            except OSError:
                return located[0], UNKNOWN_MESSAGE
        sid, path = located
        signature = (st.st_size, st.st_mtime_ns)
        key = (str(storage), mid)
        hit = self._meta.get(key)
        if hit is not None and hit[0] == sid and hit[1] == signature:
            return sid, hit[2]
        info = _read_inside(storage, path)
        if info is None:
            return sid, UNKNOWN_MESSAGE
        if len(self._meta) >= self._LIMIT:
            self._meta.clear()
        meta = message_meta(info)
        self._meta[key] = (sid, signature, meta)
        return sid, meta

    def _index(self, storage: Path) -> dict[str, tuple[str, Path]]:
        index = self._indexes.get(str(storage))
        if index is None:
            index = self._indexes[str(storage)] = dict(_message_index(storage))
        return index


def _message_index(storage: Path) -> Iterator[tuple[str, tuple[str, Path]]]:
    """(message id, (session id, path)) of every ``message/<session>/*.json`` record,
    the ids as written inside (the folder names the session when the record does not)."""
    try:
        with os.scandir(storage / "message") as listing:
            folders = [e for e in listing if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for folder in folders:
        try:
            with os.scandir(folder.path) as listing:
                paths = [Path(e.path) for e in listing if _record_file(e.name)]
        except OSError:
            continue
        for path in paths:
            info = _read_inside(storage, path)
            if info is None:
                continue
            mid, sid = info.get("id"), info.get("sessionID")
            if type(mid) is str and mid:
                yield mid, (sid if type(sid) is str and sid else folder.name, path)


def _read_inside(root: Path, path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path`` if it is a small regular file whose real path lies
    inside ``root``; ``None`` otherwise (never raises for a bad file)."""
    try:
        real = path.resolve()
        if root.resolve() not in real.parents:
            return None
        with open_regular(real) as fh:
            data = fh.read(_MAX_MESSAGE_BYTES + 1)
    except OSError:  # NotARegularFile is one
        return None
    if len(data) > _MAX_MESSAGE_BYTES:
        return None
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return parsed if type(parsed) is dict else None


class OpenCodeSessionAdapter:
    """Maps a ``session/<projectID>/<sessionID>.json`` record."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The session named by the file's stem (its ``id`` inside wins)."""
        return SourceContext(source, source.path.stem)

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """Session metadata; raises :class:`FormatDrift` for an unknown major version."""
        ctx.session_id = emit_session(sink, document)
        return 1


class OpenCodeMessageAdapter:
    """Maps a ``message/<sessionID>/<messageID>.json`` record."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The session named by the folder the file sits in."""
        return SourceContext(source, rel_parts(source)[1])

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """The message's events and stand-in call (see :mod:`.opencode_records`)."""
        record_id(document, "message")
        sid = document.get("sessionID")
        if sid is not None and (type(sid) is not str or not sid):
            raise InvalidRecord("message 'sessionID' is not a string")
        ctx.session_id = sid or ctx.session_id
        emit_message(sink, ctx.session_id, document, "tree")
        return 1


class OpenCodePartAdapter:
    """Maps a ``part/<messageID>/<partID>.json`` record, reading its message's role and
    model from the message's file."""

    def __init__(self) -> None:
        self._messages = _MessageFiles()

    def locate(self, source: SourceFile) -> SourceContext:
        """A part's session is written inside it (or found through its message)."""
        return SourceContext(source, "")

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """The part's events and, for a ``step-finish``, its call. Raises
        :class:`InvalidRecord` when the part names no message or no session can be found."""
        record_id(document, "part")
        parts = rel_parts(ctx.source)
        mid, sid = document.get("messageID"), document.get("sessionID")
        if mid is None and len(parts) == 3:
            mid = parts[1]
        if type(mid) is not str or not mid:
            raise InvalidRecord("part names no message ('messageID')")
        if sid is not None and (type(sid) is not str or not sid):
            raise InvalidRecord("part 'sessionID' is not a string")
        found, meta = self._messages.find(ctx.source.root, sid, mid)
        if found is None:
            raise InvalidRecord("part of a message of no known session")
        ctx.session_id = found
        if meta is UNKNOWN_MESSAGE:  # its time from its id, anchored at the file's mtime
            written = ctx.source.mtime_ns // 1_000_000
            created = id_instant(str(document["id"]), written) or instant(written)
            meta = MessageMeta(None, None, created)
        emit_part(sink, found, mid, document, meta, "tree")
        return 1


# --------------------------------------------------------------------------- exports

EXPORT_FORMAT: Final = "opencode-export"
#: Majors of AIWG's optional ``schemaVersion`` on an export this adapter knows.
KNOWN_EXPORT_MAJORS: Final = frozenset({1})
_EXPORT_HEAD: Final = re.compile(rb'^\s*\{\s*"(?:info|schemaVersion)"\s*:')


def never(rel: RelParts) -> bool:
    """Never: exports are named by the user (``import --file``), not discovered."""
    return False


def sniff_export(head: bytes) -> bool:
    """Whether a file starting with ``head`` is ``opencode export`` output: a JSON object
    opening with ``info`` (or AIWG's ``schemaVersion``) that holds ``messages``."""
    return bool(_EXPORT_HEAD.match(head)) and b'"messages"' in head and b'"sessionID"' in head


class OpenCodeExportAdapter:
    """Maps the JSON document ``opencode export <sessionID>`` writes (OpenCode 1.x):
    ``{info, messages: [{info, parts}], todos?}`` — the same session, message and part
    records as the stores, so a session both exported and in a store is one session and
    its calls count once. AIWG's additions (``schemaVersion``, ``sanitized``, …) are read
    where they matter (the version) and otherwise ignored; so are ``todos``. A message
    or part the stores would reject makes the whole export a reject (one document)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The session is named inside the document."""
        return SourceContext(source, source.path.stem)

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """The session's metadata, events and calls; returns the number of records."""
        if type(document) is not dict:
            raise InvalidRecord("not an OpenCode export (not an object)")
        _check_export_version(document.get("schemaVersion"))
        info, messages = document.get("info"), document.get("messages")
        if type(info) is not dict or type(messages) is not list:
            raise InvalidRecord("not an OpenCode export ({info, messages})")
        sid = ctx.session_id = emit_session(sink, info)
        records = 1
        for entry in messages:
            if type(entry) is not dict or type(entry.get("parts", [])) is not list:
                raise InvalidRecord("an export message is not {info, parts}")
            message = entry.get("info")
            if type(message) is not dict:
                raise InvalidRecord("an export message has no 'info' object")
            mid = record_id(message, "message")
            meta = emit_message(sink, sid, message, "export")
            for part in entry.get("parts", []):
                emit_part(sink, sid, mid, part, meta, "export")
            records += 1 + len(entry.get("parts", []))
        return records


def _check_export_version(value: Any) -> None:
    if value is None:
        return
    major = value if type(value) is int else None
    if type(value) is str and (match := re.match(r"^\s*v?(\d{1,6})(?:\.|$)", value)):
        major = int(match[1])
    if major is None:
        raise InvalidRecord("'schemaVersion' is neither a number nor a version string")
    if major not in KNOWN_EXPORT_MAJORS:
        raise FormatDrift(f"OpenCode export schemaVersion {str(value)[:40]!r} is unknown")


SESSION_ADAPTER: Final = OpenCodeSessionAdapter()
MESSAGE_ADAPTER: Final = OpenCodeMessageAdapter()
PART_ADAPTER: Final = OpenCodePartAdapter()
EXPORT_ADAPTER: Final = OpenCodeExportAdapter()
