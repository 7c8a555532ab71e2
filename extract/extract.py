"""The extract runner: the one loop that turns a source's new bytes into raw batches.

It owns seeking to the checkpoint, bounds, batching and the classification of bad
records; adapters only map records to rows. It never advances a checkpoint itself: each
:class:`ExtractBatch` says which byte range it covers and the load stage commits that.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Final, cast

import orjson

from agentlake.errors import REMEDIES, SourceError, SourceErrorCode

from .adapter import (
    DatabaseAdapter,
    DocumentAdapter,
    DocumentEnd,
    FormatDrift,
    IncrementalDatabaseAdapter,
    InvalidRecord,
    LineAdapter,
    NotThisFormat,
    SourceContext,
    TextDocumentAdapter,
    UnknownRecord,
    one_snapshot,
)
from .digests import bytes_digest
from .jsonl import LineBatch, RecordLimits, Reject, parse_line, read_lines, take_lines
from .providers import ProviderSpec
from .rows import RawTables, RowSink
from .sources import NotARegularFile, SourceFile, open_regular
from .stores import StoreWentBack, read_store

MiB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    """Bounds of one extraction: per-record ceilings, batch size, per-run source ceilings."""

    record: RecordLimits = field(default_factory=RecordLimits)
    batch_lines: int = 50_000
    batch_bytes: int = 64 * MiB  # a batch ends once it covers this many bytes
    chunk_bytes: int = MiB
    max_records_per_source: int | None = None
    max_bytes_per_source: int | None = None
    max_document_bytes: int = 256 * MiB


@dataclass(slots=True)
class ExtractBatch:
    """Raw rows of one contiguous byte range ``[start_offset, end_offset)`` of a source."""

    source: SourceFile
    rows: RowSink  # built into tables when committed, together with the commit's others
    rejects: list[Reject]
    start_offset: int
    end_offset: int
    lines: int
    outcomes: Counter[str] = field(default_factory=Counter)
    state: str | None = None  # the adapter's memo after this batch, as JSON
    retracts: bool = False  # the batch withdraws rows already committed
    # The checkpoint digest at ``end_offset`` (extract.digests), from the bytes read;
    # ``None`` when they were not all at hand (the committer then reads the file).
    digest: str | None = None

    @property
    def tables(self) -> RawTables:
        """The batch's rows as Arrow tables (built on each call)."""
        return self.rows.build()

    @property
    def records(self) -> int:
        """Records read (mapped, ignored, unknown or invalid)."""
        return sum(self.outcomes.values())


def extract_source(
    spec: ProviderSpec,
    source: SourceFile,
    *,
    start: int,
    stop: int,
    limits: ExtractLimits = ExtractLimits(),
    state: str | None = None,
) -> Iterator[ExtractBatch]:
    """Yield the batches of ``source`` that the plan asked for.

    A ``byte-offset`` source is read from ``start`` up to the last newline before
    ``stop``, honouring the per-run ceilings; ``document`` and ``sqlite`` sources are
    read whole, in one batch. ``state`` is the adapter memo saved with the checkpoint at
    ``start``. Raises :class:`SourceError` (after yielding any clean prefix) when the
    input declares an unknown major format version.
    """
    fmt = spec.format_of(source)
    ctx = fmt.adapter.locate(source)
    if state:
        ctx.memo.update(orjson.loads(state))
    try:
        if source.position_kind == "byte-offset":
            yield from _extract_lines(
                cast(LineAdapter, fmt.adapter), ctx, source, start, stop, limits
            )
        elif source.position_kind == "document" and hasattr(fmt.adapter, "map_record"):
            yield from _extract_line_document(cast(LineAdapter, fmt.adapter), ctx, source, limits)
        elif source.position_kind == "document":
            yield from _extract_document(
                cast(DocumentAdapter | TextDocumentAdapter, fmt.adapter), ctx, source, limits
            )
        else:
            yield from _extract_database(cast(DatabaseAdapter, fmt.adapter), ctx, source)
    except FormatDrift as drift:
        raise SourceError(
            "SCHEMA_DRIFT",
            str(source.path),
            f"{drift}; the rest of this source is refused "
            "(rerun with --restart-drifted after upgrading agentlake)",
        ) from None
    except NotThisFormat as exc:
        raise _refused("SOURCE_CORRUPT", source, f"not a {source.format} file: {exc}") from None
    except NotARegularFile as exc:
        raise _refused("NOT_A_FILE", source, str(exc)) from None
    except OSError as exc:
        raise _refused(
            "SOURCE_UNREADABLE", source, f"cannot read it: {exc.strerror or exc}"
        ) from None


def _refused(code: SourceErrorCode, source: SourceFile, what: str) -> SourceError:
    """The refusal of ``source``: what is wrong, and the remedy for ``code``."""
    return SourceError(code, str(source.path), f"{what}; {REMEDIES[code]}")


def _extract_lines(
    adapter: LineAdapter,
    ctx: SourceContext,
    source: SourceFile,
    start: int,
    stop: int,
    limits: ExtractLimits,
) -> Iterator[ExtractBatch]:
    if limits.max_bytes_per_source is not None:
        stop = min(stop, start + limits.max_bytes_per_source)
    budget = limits.max_records_per_source
    lines = read_lines(
        source.path,
        start=start,
        stop=stop,
        limits=limits.record,
        chunk_bytes=limits.chunk_bytes,
        batch_lines=limits.batch_lines,
        batch_bytes=limits.batch_bytes,
    )
    for chunk in lines:
        batch, drift = _map_chunk(adapter, ctx, source, chunk, budget)
        yield batch
        if drift is not None:
            raise drift
        if budget is not None:
            budget -= batch.records
            if budget <= 0:
                return


def _whole(source: SourceFile, sink: RowSink, ctx: SourceContext, outcomes: Counter[str],
           rejects: list[Reject], digest: str | None = None) -> ExtractBatch:  # fmt: skip
    return ExtractBatch(
        source=source, rows=sink, rejects=rejects, start_offset=0, end_offset=source.size,
        lines=1, outcomes=outcomes, state=orjson.dumps(ctx.memo).decode(),
        retracts=sink.retracts, digest=digest,
    )  # fmt: skip


def _extract_document(
    adapter: DocumentAdapter | TextDocumentAdapter,
    ctx: SourceContext,
    source: SourceFile,
    limits: ExtractLimits,
) -> Iterator[ExtractBatch]:
    """A whole JSON document, parsed once (or a text document, decoded once); a bad
    document is one reject covering it."""
    sink, outcomes, rejects = RowSink(), Counter[str](), list[Reject]()
    size = source.size
    if size > limits.max_document_bytes:
        rejects.append(
            Reject(
                0,
                size,
                "OVERSIZED",
                f"document of {size} bytes exceeds {limits.max_document_bytes}",
            )
        )
        yield _whole(source, sink, ctx, outcomes, rejects)
        return
    with open_regular(source.path) as fh:
        data = fh.read(size)
    # The checkpoint keys the document by the digest of the bytes parsed here.
    digest = bytes_digest(data)
    if isinstance(adapter, TextDocumentAdapter):
        rejects.extend(_map_text(adapter, data, ctx, sink, outcomes))
        if rejects:
            sink = RowSink()
        yield _whole(source, sink, ctx, outcomes, rejects, digest)
        return
    parsed = parse_line(
        data, RecordLimits(max_line_bytes=size + 1, max_depth=limits.record.max_depth)
    )
    if not isinstance(parsed, dict):
        reason, detail = parsed
        rejects.append(Reject(0, len(data), reason, detail))
    else:
        try:
            outcomes["mapped"] += adapter.map_document(parsed, ctx, sink)
        except FormatDrift:
            raise  # the whole document is refused (SCHEMA_DRIFT), nothing of it written
        except InvalidRecord as exc:
            sink = RowSink()
            rejects.append(Reject(0, len(data), "INVALID_RECORD", str(exc)[:200]))
            outcomes["invalid"] += 1
    yield _whole(source, sink, ctx, outcomes, rejects, digest)


def _extract_line_document(
    adapter: LineAdapter, ctx: SourceContext, source: SourceFile, limits: ExtractLimits
) -> Iterator[ExtractBatch]:
    """A JSONL file rewritten in place, read whole in one batch (keyed by its content
    digest, like a JSON document): each line is mapped and classified as in a byte-offset
    source. A last line without a newline is part of the document (the file is written
    whole). A line declaring an unknown major version refuses the whole file."""
    size = source.size
    if size > limits.max_document_bytes:
        detail = f"document of {size} bytes exceeds {limits.max_document_bytes}"
        rejects = [Reject(0, size, "OVERSIZED", detail)]
        yield _whole(source, RowSink(), ctx, Counter[str](), rejects)
        return
    with open_regular(source.path) as fh:
        data = fh.read(size)
    lines = LineBatch(limits=limits.record)
    pieces = data.split(b"\n")
    if not pieces[-1]:
        pieces.pop()  # the text after the last newline: nothing
    take_lines(pieces, 0, lines)
    if not data.endswith(b"\n"):  # the last line has no newline to count
        if lines.lengths and lines.offsets[-1] + lines.lengths[-1] > len(data):
            lines.lengths[-1] -= 1
        lines.rejects = [
            replace(r, length=len(data) - r.offset) if r.offset + r.length > len(data) else r
            for r in lines.rejects
        ]
    batch, drift = _map_chunk(adapter, ctx, source, lines)
    if drift is not None:
        raise drift  # nothing of the document is written
    if isinstance(adapter, DocumentEnd):
        adapter.end_document(ctx, batch.rows)
        batch.state = orjson.dumps(ctx.memo).decode()
    batch.end_offset, batch.digest = len(data), bytes_digest(data)
    yield batch


def _map_text(
    adapter: TextDocumentAdapter,
    data: bytes,
    ctx: SourceContext,
    sink: RowSink,
    outcomes: Counter[str],
) -> list[Reject]:
    """Decode and map a text document; the reject covering it when it cannot be (a
    ``NotThisFormat`` or ``FormatDrift`` refuses the source instead)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Reject(0, len(data), "BAD_ENCODING", f"invalid UTF-8 at byte {exc.start}")]
    try:
        outcomes["mapped"] += adapter.map_text(text, ctx, sink)
    except InvalidRecord as exc:
        outcomes["invalid"] += 1
        return [Reject(0, len(data), exc.reason, str(exc)[:200])]
    return []


def _extract_database(
    adapter: DatabaseAdapter, ctx: SourceContext, source: SourceFile
) -> Iterator[ExtractBatch]:
    """A SQLite database opened read-only (``mode=ro``); the adapter runs its queries,
    all in one read transaction (:func:`one_snapshot`), incrementally where it can
    (:func:`.stores.read_store`)."""
    sink, outcomes, rejects = RowSink(), Counter[str](), list[Reject]()
    with open_regular(source.path):
        pass  # readable, and a regular file (SQLite's own open would block on a FIFO)
    try:
        con = sqlite3.connect(f"{source.path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise _refused("SOURCE_UNREADABLE", source, f"SQLite cannot open it ({exc})") from None
    try:
        with one_snapshot(con):
            if isinstance(adapter, IncrementalDatabaseAdapter):
                read = read_store(adapter, con, ctx, sink)
            else:
                read = adapter.map_database(con, ctx, sink)
            outcomes["mapped"] += read
    except StoreWentBack as exc:
        raise _refused(exc.code, source, str(exc)) from None
    except sqlite3.OperationalError as exc:
        # Locked by its agent, or unreadable: the file itself may be sound.
        raise _refused("SOURCE_UNREADABLE", source, f"SQLite cannot read it ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise _refused("SOURCE_CORRUPT", source, f"not a valid SQLite database ({exc})") from None
    finally:
        con.close()
    yield _whole(source, sink, ctx, outcomes, rejects)


def _map_chunk(
    adapter: LineAdapter,
    ctx: SourceContext,
    source: SourceFile,
    chunk: LineBatch,
    budget: int | None = None,
) -> tuple[ExtractBatch, FormatDrift | None]:
    """Parse and map the lines of ``chunk`` one at a time. The batch ends before the
    record past ``budget`` records, or before a record that declares an unknown format
    (the drift is returned with the batch)."""
    sink = RowSink()
    outcomes: Counter[str] = Counter()
    new_rejects: list[Reject] = []
    map_record = adapter.map_record
    drift: FormatDrift | None = None
    end: int | None = None  # where the batch is cut short, if it is
    records = unparsed = 0
    for record, offset, length in chunk.parsed():
        if isinstance(record, Reject):
            new_rejects.append(record)
            unparsed += 1
            continue
        if records == budget:
            end = offset
            break
        outcome: str
        try:
            outcome = map_record(record, offset, ctx, sink)
        except FormatDrift as exc:
            drift, end = exc, offset
            break
        except InvalidRecord as exc:
            new_rejects.append(Reject(offset, length, exc.reason, str(exc)[:200]))
            outcome = "invalid"
        except UnknownRecord as exc:
            new_rejects.append(Reject(offset, length, "UNKNOWN_RECORD", str(exc)[:200]))
            outcome = "unknown"
        else:
            if outcome == "unknown":
                new_rejects.append(_unknown(record, offset, length))
        records += 1
        outcomes[outcome] += 1
    rejects = chunk.rejects
    lines, end_offset = chunk.lines, chunk.end_offset
    if end is not None:  # the lines read before ``end``, without the blank ones
        rejects = [r for r in rejects if r.offset < end]
        lines, end_offset = records + unparsed + len(rejects), end
    if new_rejects:
        rejects = sorted([*rejects, *new_rejects], key=lambda r: r.offset)
    batch = ExtractBatch(
        source=source,
        rows=sink,
        rejects=rejects,
        start_offset=chunk.start_offset,
        end_offset=end_offset,
        lines=lines,
        outcomes=outcomes,
        state=orjson.dumps(ctx.memo).decode(),
        retracts=sink.retracts,
        digest=None if end is not None or chunk.window is None else bytes_digest(chunk.window),
    )
    return batch, drift


def _unknown(record: dict[str, Any], offset: int, length: int) -> Reject:
    """The reject of a parsed line the adapter did not recognize."""
    rtype = record.get("type")
    detail = (
        f"unknown record type {rtype[:80]!r}"
        if isinstance(rtype, str)
        else "record without a recognizable 'type'"
    )
    return Reject(offset, length, "UNKNOWN_RECORD", detail)
