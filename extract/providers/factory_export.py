"""``factory-droid-jsonl``: Factory Droid sessions in a JSONL file the user names
(``import --file``), AIWG's export class for Droid (provider-formats-more §2 and §0.2).
Never discovered: the session store itself is read by :mod:`.factory`.

Two record families are read, in any mix within one file:

* the session store's own records, ``session_start`` and ``message``: mapped by the
  store's adapter (:class:`.factory.DroidSessionAdapter`, the same code), so a session
  both in the store and exported is one session and its messages the same events;
* AIWG's older family, synthetic [aiwg; not known to be written by Droid], which the
  store's adapter rejects: ``session``, ``user``, ``assistant``, ``tool`` and
  ``session_end`` records, Claude-like, with ``schemaVersion``.

Fields: every line needs a string ``type``. Optional: ``schemaVersion`` (major 1),
``subtype``, ``uuid``/``id``, ``parentUuid`` (the previous record: not mapped),
``sessionId``/``session_id``, ``timestamp`` (ISO, or epoch ms), ``createdAt``/
``updatedAt``, ``cwd``, ``version`` (the store's rule: a number is the format's major,
a semver the CLI's), ``message{id, role, content, model}`` or a top-level ``content``
(and ``role``), ``sessionSettings``/``settings`` (``model``; reasoning effort and
interaction mode have no catalog column), ``status``.

* ``session``: the session row: project ``cwd``, CLI version, ``title``/``sessionTitle``,
  the settings' model (normalized as the store's ``.settings.json`` model is), start
  (``timestamp``/``createdAt``) and ``updatedAt``.
* ``user``/``assistant``/``tool``: a message whose role is ``message.role``, else the
  record's ``role``, else its type. Blocks as in the store (text by role, the
  ``<system-reminder>`` split included; ``thinking``/``reasoning``; ``tool_use``;
  ``tool_result``; ``image``). A block of another type is kept as a ``system`` event
  ``factory.<type>: <its JSON>`` (AIWG's opaque kind; the store maps it to nothing).
* Activity boundaries — ``session_end``, and a ``session_start`` whose ``subtype`` is
  ``resume`` or ``continuation`` — are ``system`` events at their time (``session_end:
  completed``, ``session_start: resume``). The catalog has no lifecycle column: a
  ``status`` (AIWG's completion mark) is kept only as that event's text, and a
  ``status`` on other records is not kept.
* Another type is ``UNKNOWN_RECORD`` with the store's reason (e.g. a stream-json record).

Refusals: a file whose first record is not of either family (no string ``type`` of
theirs) is not in this format: refused whole (``SOURCE_CORRUPT``), nothing written.
A later record without a string ``type`` is ``INVALID_RECORD`` (a receipt): AIWG
refuses such a file, this importer keeps the rest. A ``schemaVersion`` of another
major, or a second, different ``schemaVersion`` in one file, is drift: the file is
refused from that line (``SCHEMA_DRIFT``).

Identity: one session per file, as AIWG requires: ``session_start.id``, else
``sessionId``/``session_id``, else the file's stem; a record naming another session
after messages were mapped is invalid. A store record's event is (session, ``id``,
block position), as in the store; an AIWG record's is (session, ``uuid``, else ``id``,
else ``message.id``, else ``@<offset>``, block position). A record id given twice is
``DUPLICATE_ID`` (the first copy stands).

Tokens: none. These files carry no counts; Droid keeps a session's totals in the
store's ``<session>.settings.json`` (:mod:`.factory_settings`).
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from ..adapter import (
    DuplicateRecord,
    FormatDrift,
    InvalidRecord,
    NotThisFormat,
    RecordOutcome,
    SourceContext,
    UnknownRecord,
)
from ..rows import RowSink
from ..sources import RelParts, SourceFile
from ..values import json_text, version_major
from .cursor_fields import instant
from .factory import (
    AIWG_TYPES,
    AUTO_TITLE_RANK,
    STREAM_TYPES,
    DroidSessionAdapter,
    check_version,
    content_blocks,
    emit_blocks,
    foreign_reason,
)
from .factory_settings import normalize_model

FORMAT: Final = "factory-droid-jsonl"
KNOWN_MAJORS: Final = frozenset({1})
MESSAGE_TYPES: Final = frozenset({"user", "assistant", "tool"})
RESUMES: Final = frozenset({"resume", "continuation"})
# The types a file's first record may have: those of either family.
_FIRST_TYPES: Final = AIWG_TYPES | {"session_start", "message"}
# Besides ``id``, keys every store ``session_start`` seen has [fx]: a bare ``{type, id}``
# is too little to claim a file by.
_START_KEYS: Final = ("version", "cwd")
# Keys of other export formats' records (OpenHuman's wrapper, Devin Desktop's hook).
_FOREIGN_KEYS: Final = ("recordType", "trajectory_id")


def owns(rel: RelParts) -> bool:
    """Never: exports are named by the user, not discovered."""
    return False


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is in this format: its first line is a
    ``session_start`` with an ``id`` and a ``version`` or ``cwd``, a ``message`` with a
    ``message`` object, or an AIWG record (``session``/``user``/``assistant``/``tool``/
    ``session_end``) with a ``schemaVersion`` and a session or record id; never a line
    with another export format's keys."""
    first = head.split(b"\n", 1)[0]
    if b'"type"' not in first:
        return False
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(value, dict) or any(k in value for k in _FOREIGN_KEYS):
        return False
    kind = value.get("type")
    if kind == "session_start":  # Droid writes its version and directory there too
        return type(value.get("id")) is str and any(k in value for k in _START_KEYS)
    if kind == "message":
        return type(value.get("message")) is dict
    return (
        kind in AIWG_TYPES
        and "schemaVersion" in value
        and any(type(value.get(k)) is str for k in ("sessionId", "session_id", "uuid"))
    )


def _opt_str(rec: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` present in ``rec``: a string (empty → ``None``), or invalid."""
    for key in keys:
        value = rec.get(key)
        if value is not None:
            if type(value) is not str:
                raise InvalidRecord(f"'{key}' is not a string")
            return value or None
    return None


def _time(rec: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` that names a time (ISO text or epoch milliseconds)."""
    for key in keys:
        value = rec.get(key)
        if value is not None:
            if type(value) not in (str, int, float):
                raise InvalidRecord(f"'{key}' is neither text nor a number")
            return instant(value)
    return None


class FactoryExportAdapter(DroidSessionAdapter):
    """Maps the records of a ``factory-droid-jsonl`` file (see the module docstring).

    ``ctx.memo`` keys, beside the store adapter's ``sid`` and ``msgs``: ``schema`` (the
    file's ``schemaVersion``, once one was given) and ``ids`` (record ids seen; a dict:
    the memo is saved as JSON).
    """

    def locate(self, source: SourceFile) -> SourceContext:
        """The file's stem (a record naming its session replaces it)."""
        name = source.path.name
        return SourceContext(source, name.removesuffix(".jsonl") or name)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """One record of either family."""
        self._resume(ctx)
        memo = ctx.memo
        kind = record.get("type")
        named = type(kind) is str  # any JSON value may stand there
        if "ids" not in memo:
            if (
                not named
                or kind not in _FIRST_TYPES
                or (kind == "message" and "message" not in record)
            ):
                raise NotThisFormat("its first record is not a Droid session record")
            memo["ids"] = {}
        if not named:
            raise InvalidRecord("a record without a string 'type'")
        self._check_schema(record, memo)
        if kind == "session_start":
            subtype = _opt_str(record, "subtype")
            ts = _time(record, "timestamp", "createdAt", "updatedAt")
            outcome = self._start(record, ctx, sink)
            if subtype in RESUMES:
                self._boundary(kind, f"session_start: {subtype}", None, ts, offset, ctx, sink)
            return outcome
        if kind == "message" and "message" in record:
            # The store's adapter validates before it emits: the id is claimed after.
            native = _opt_str(record, "id")
            self._claim(native, memo, check_only=True)
            outcome = self._message(record, offset, ctx, sink)
            self._claim(native, memo)
            return outcome
        if kind == "session":
            self._session(record, ctx, sink)
            return "mapped"
        if kind in MESSAGE_TYPES:
            self._aiwg_message(record, kind, offset, ctx, sink)
            return "mapped"
        if kind == "session_end":
            status = _opt_str(record, "status")
            native = _opt_str(record, "uuid", "id")
            ts = _time(record, "timestamp", "createdAt", "updatedAt")
            self._adopt(record, ctx)
            self._claim(native, memo)
            text = f"session_end: {status}" if status else "session_end"
            self._boundary(kind, text, native, ts, offset, ctx, sink)
            return "mapped"
        if kind in STREAM_TYPES or kind == "message":
            raise UnknownRecord(str(foreign_reason({}, kind)))
        return "unknown"

    # ------------------------------------------------------------------ checks

    @staticmethod
    def _check_schema(rec: dict[str, Any], memo: dict[str, Any]) -> None:
        """``schemaVersion``: major 1, and one version per file (else drift)."""
        version = rec.get("schemaVersion")
        if version is None:
            return
        major = version_major(version)
        if major is None:
            raise InvalidRecord("'schemaVersion' is not a version")
        if major not in KNOWN_MAJORS:
            raise FormatDrift(f"{FORMAT} schemaVersion {str(version)[:20]} is unknown")
        known = memo.setdefault("schema", str(version))
        if known != str(version):
            raise FormatDrift(f"schemaVersion {str(version)[:20]} in a file of version {known}")

    @staticmethod
    def _claim(native: str | None, memo: dict[str, Any], *, check_only: bool = False) -> None:
        """Claim a record id (called once the record is known valid, before its rows):
        one given before is a duplicate, and the first copy stands."""
        if native is None:
            return
        if native in memo["ids"]:
            raise DuplicateRecord(f"record id {native[:80]!r} was given before")
        if not check_only:
            memo["ids"][native] = 1

    @staticmethod
    def _adopt(rec: dict[str, Any], ctx: SourceContext) -> str:
        """The session a record names (``sessionId``/``session_id``), which must be the
        file's once messages were mapped."""
        named = _opt_str(rec, "sessionId", "session_id")
        memo = ctx.memo
        if named and named != memo["sid"]:
            if memo["msgs"]:
                raise InvalidRecord("a record names another session than the file's messages")
            memo["sid"] = ctx.session_id = named
        return str(memo["sid"])

    # ------------------------------------------------------------------ AIWG records

    def _session(self, rec: dict[str, Any], ctx: SourceContext, sink: RowSink) -> None:
        cli_version = check_version(rec.get("version"))
        native = _opt_str(rec, "uuid", "id")
        cwd, title = _opt_str(rec, "cwd"), _opt_str(rec, "sessionTitle", "title")
        settings = rec.get("sessionSettings", rec.get("settings"))
        if settings is not None and type(settings) is not dict:
            raise InvalidRecord("'sessionSettings' is not an object")
        model = _opt_str(settings or {}, "model")
        started, updated = _time(rec, "timestamp", "createdAt"), _time(rec, "updatedAt")
        sid = self._adopt(rec, ctx)
        self._claim(native, ctx.memo)
        sink.session(
            sid, project_path=cwd, title=title, title_rank=AUTO_TITLE_RANK,
            cli_version=cli_version, model=normalize_model(model) if model else None,
            started_at=started, updated_at=updated,
        )  # fmt: skip

    def _aiwg_message(
        self, rec: dict[str, Any], kind: str, offset: int, ctx: SourceContext, sink: RowSink
    ) -> None:
        msg = rec.get("message")
        if msg is None:
            msg = {"role": rec.get("role"), "content": rec.get("content")}
        elif type(msg) is not dict:
            raise InvalidRecord("'message' is not an object")
        role = _opt_str(msg, "role") or kind
        blocks = content_blocks(msg.get("content"), "content")
        model = _opt_str(msg, "model")
        cli_version = check_version(rec.get("version"))
        native = _opt_str(rec, "uuid", "id") or _opt_str(msg, "id")
        ts = _time(rec, "timestamp", "createdAt", "updatedAt")
        cwd = _opt_str(rec, "cwd")
        sid = self._adopt(rec, ctx)
        self._claim(native, ctx.memo)
        ctx.memo["msgs"] = 1
        event_id = native or f"@{offset}"
        for pos, block in emit_blocks(sink, sid, event_id, ts, role, model, blocks, offset):
            btype = block.get("type")
            label = btype[:60] if type(btype) is str else "block"
            sink.event(sid, event_id, pos, ts, "system", role, f"factory.{label}: "
                       f"{json_text(block)}", offset)  # fmt: skip
        if cwd or cli_version:
            sink.session(sid, project_path=cwd, cli_version=cli_version)

    @staticmethod
    def _boundary(
        kind: str,
        text: str,
        native: str | None,
        ts: str | None,
        offset: int,
        ctx: SourceContext,
        sink: RowSink,
    ) -> None:
        """An activity boundary as a ``system`` event. Without an id of its own it is the
        file's n-th boundary of its kind (not its byte offset: two exports of one session
        name their boundaries alike)."""
        if native is None:
            counts = ctx.memo.setdefault("bounds", {})
            counts[kind] = n = counts.get(kind, 0) + 1
            native = f"{kind}:{n}"
        sink.event(ctx.session_id, native, 0, ts, "system", "system", text, offset)
