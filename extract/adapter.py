"""The small contracts provider adapters implement, one per position kind.

The framework (``extract.extract``) owns the loop: it opens the source, reads bounded
batches from the checkpoint, classifies bad input and builds Arrow tables. An adapter
only says where a file's session is (``locate``) and maps what it is handed to rows:

* :class:`LineAdapter` — one parsed JSONL record at a time (``byte-offset`` sources);
* :class:`DocumentAdapter` — one parsed JSON document (``document`` sources, re-read
  whole and replaced atomically when their content changes); a ``document`` format
  whose adapter is a :class:`LineAdapter` is a JSONL file its agent rewrites in place
  (not append-only): it too is re-read whole when it changes, one record at a time,
  with the same per-line rejects as a byte-offset source, and nothing of it is written
  when a line declares an unknown major version;
* :class:`TextDocumentAdapter` — a ``document`` source that is not JSON (e.g. a Markdown
  export), handed over as its decoded text;
* :class:`DatabaseAdapter` — a read-only SQLite connection (``sqlite`` sources).

``SourceContext.memo`` is the adapter's state for one source. It must stay
JSON-serializable: it is saved with every checkpoint and handed back when the source is
read again from that checkpoint (e.g. Codex's running token totals).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from .rows import RowSink
from .schema import RejectReason
from .sources import PositionKind, RelParts, SourceFile

RecordOutcome = Literal["mapped", "ignored", "unknown"]
"""``mapped``: rows emitted; ``ignored``: a known record type with nothing to import;
``unknown``: a record type the adapter does not know (rejected as UNKNOWN_RECORD)."""


class InvalidRecord(ValueError):
    """A known record type whose fields have impossible types (rejected, not fatal).

    The only exception of an adapter that the runner turns into a reject (of
    :attr:`reason`): any other one is a bug of the adapter and fails the run.
    """

    reason: ClassVar[RejectReason] = "INVALID_RECORD"


class DuplicateRecord(InvalidRecord):
    """A record whose native id an earlier record of the same file already carried, in
    a format where ids are unique: the first copy stands, this one is rejected."""

    reason: ClassVar[RejectReason] = "DUPLICATE_ID"


class UnknownRecord(ValueError):
    """A record of a shape the adapter does not know, with the reason it is not mapped
    (rejected as ``UNKNOWN_RECORD`` with that reason, not fatal): e.g. a line of another
    tool's format found among the provider's files. Returning ``"unknown"`` is the same
    without a reason of the adapter's own."""


class FormatDrift(ValueError):
    """The input declares a major format version the adapter does not know."""


class StateLimitExceeded(ValueError):
    """The adapter's join state (ids it must remember to pair records, e.g. the open tool
    calls of a turn) reached its cap, :attr:`SourceContext.max_open_ids`: raised before
    any row of the record is emitted, it refuses the source (``RESOURCE_LIMIT_EXCEEDED``)
    with what came before kept, instead of forgetting ids and pairing wrongly."""


class NotThisFormat(ValueError):
    """A file named in a format it is not in (an export whose header is missing or
    wrong): the whole source is refused as corrupt, nothing of it written."""


@dataclass(slots=True)
class SourceContext:
    """Per-source state an adapter keeps while mapping one file.

    ``session_id``/``parent_session_id`` come from ``locate``; ``memo`` is the adapter's
    persisted scratch space (JSON-serializable); ``max_open_ids`` caps the ids of its
    join state (:class:`StateLimitExceeded`), set by the runner from its limits.
    """

    source: SourceFile
    session_id: str
    parent_session_id: str | None = None
    memo: dict[str, Any] = field(default_factory=dict)
    max_open_ids: int = 10_000


class LineAdapter(Protocol):
    """Maps the records of a JSONL file."""

    def locate(self, source: SourceFile) -> SourceContext:
        """Session identity of a file, from its path alone."""
        ...

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one parsed record (at byte ``offset``) to rows in ``sink``.

        Raises :class:`InvalidRecord` for a known record with impossible field types,
        :class:`UnknownRecord` for an unknown one whose reason it can name and
        :class:`FormatDrift` for an unknown major format version.
        """
        ...


@runtime_checkable
class DocumentEnd(Protocol):
    """A :class:`LineAdapter` of a JSONL document that emits rows once the whole file is
    mapped (e.g. a header's totals that need a fact of a later line)."""

    def end_document(self, ctx: SourceContext, sink: RowSink) -> None:
        """Emit what the file's records, all mapped, imply."""
        ...


class DocumentAdapter(Protocol):
    """Maps a whole JSON document."""

    def locate(self, source: SourceFile) -> SourceContext:
        """Session identity of a file, from its path alone."""
        ...

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """Map the parsed document to rows; returns how many records it held.

        Raises :class:`InvalidRecord` when the document is not of this format and
        :class:`FormatDrift` for an unknown major format version.
        """
        ...


@runtime_checkable
class TextDocumentAdapter(Protocol):
    """Maps a whole document that is not JSON (a Markdown export, say): the framework
    reads it as UTF-8 text (invalid UTF-8 is one ``BAD_ENCODING`` reject covering it)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """Session identity of a file, from its path alone (``map_text`` may replace it)."""
        ...

    def map_text(self, text: str, ctx: SourceContext, sink: RowSink) -> int:
        """Map the document's text to rows; returns how many records it held.

        Raises :class:`NotThisFormat` when the text is not in this format,
        :class:`InvalidRecord` for a record of it that cannot be read and
        :class:`FormatDrift` for an unknown major format version.
        """
        ...


@contextmanager
def one_snapshot(con: sqlite3.Connection) -> Iterator[None]:
    """Every query inside reads one snapshot of the database: a read transaction
    (``BEGIN`` … ``ROLLBACK``), so a store its agent writes meanwhile (WAL mode) is never
    seen half-way between two of its transactions. Within a transaction already open it
    adds nothing (the runner opens one around every database adapter)."""
    if con.in_transaction:
        yield
        return
    con.execute("BEGIN")
    try:
        yield
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")


class DatabaseAdapter(Protocol):
    """Maps rows of a SQLite database opened read-only."""

    def locate(self, source: SourceFile) -> SourceContext:
        """Identity of the database (its rows may belong to many sessions)."""
        ...

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Query the database and emit rows; returns how many records it read. A missing
        table or column is not an error: emit what is there."""
        ...


@dataclass(frozen=True, slots=True)
class StoreMarks:
    """Where a store stood when it was read: its watermark (the largest rowid, or update
    time, of the table its sessions grow in), the identity of the row at that watermark
    (``None`` where rows are updated in place, so no row keeps one), and a fingerprint of
    each session (its largest rowid or update time, its row count, …)."""

    high: int
    anchor: str | None
    sessions: dict[str, str]


@runtime_checkable
class IncrementalDatabaseAdapter(DatabaseAdapter, Protocol):
    """A database adapter read incrementally: after the first read, only the sessions
    whose fingerprint changed are mapped again (whole, so per-session state stays
    exact; their rows already imported merge by identity)."""

    def marks(self, con: sqlite3.Connection) -> StoreMarks | None:
        """The store's marks now; ``None`` when it holds none of the adapter's tables."""
        ...

    def anchor_at(self, con: sqlite3.Connection, high: int) -> str | None:
        """The identity of the row at watermark ``high`` now (``None`` if it is gone)."""
        ...

    def map_sessions(
        self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink, sessions: list[str]
    ) -> int:
        """Like ``map_database``, for ``sessions`` only; returns the rows read."""
        ...


Adapter = LineAdapter | DocumentAdapter | TextDocumentAdapter | DatabaseAdapter


# Where a format's files come from: the agent's own store, found by discovery, or a
# file the user exported and names (``import --file``).
FormatOrigin = Literal["native", "export"]


@dataclass(frozen=True)
class FormatSpec:
    """One on-disk format of a provider: its name, position kind, file predicate (given
    the parts of the path relative to the root) and adapter."""

    name: str
    position_kind: PositionKind
    predicate: Callable[[RelParts], bool]
    adapter: Adapter
    origin: FormatOrigin = "native"
    # Whether a file whose first bytes (up to 64 KiB) are these is in this format: how
    # ``import --file`` without ``--format`` tells an export's format from its content.
    sniff: Callable[[bytes], bool] | None = None
    # Former names of an export format, still accepted by ``import --format``.
    aliases: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        """The file of the adapter's module, relative to the repository: its docstring
        documents the format."""
        parts = type(self.adapter).__module__.split(".")[1:]  # without "agentlake"
        return "/".join(parts) + ".py"

    def owns(self, rel: RelParts) -> bool:
        """Whether the file whose path relative to its root has the parts ``rel`` is in
        this format."""
        return bool(self.predicate(rel))
