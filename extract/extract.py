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
    StateLimitExceeded,
    TextDocumentAdapter,
    UnknownRecord,
    one_snapshot,
)
from .digests import bytes_digest
from .jsonl import (
    LineBatch,
    RecordLimits,
    Reject,
    line_within,
    parse_line,
    read_lines,
    take_lines,
)
from .providers import ProviderSpec
from .rows import RawTables, RowSink
from .sources import NotARegularFile, SourceFile, open_regular
from .stores import StoreWentBack, read_store

MiB: Final = 1024 * 1024
GiB: Final = 1024 * MiB

# The option and config key that raise each ceiling, named in its refusal.
_RAISE: Final = {
    "records": "--source-records-ceiling (config: source_records_ceiling)",
    "bytes": "--source-bytes-ceiling (config: source_bytes_ceiling)",
    "document": "--max-document-bytes (config: max_document_bytes)",
    "open": "--max-open-ids (config: max_open_ids)",
}


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    """Bounds of one extraction: per-record ceilings, batch size, per-run source ceilings
    (``max_*_per_source``: the rest is pending for the next run) and the ceilings that
    refuse a source (``RESOURCE_LIMIT_EXCEEDED``, what came before kept):

    * ``source_records``/``source_bytes`` — what a source may hold in one generation: an
      append-only file counts every record and byte committed since byte 0 of its
      generation; a document or database read whole counts what one read holds (bytes:
      documents only; a database is read by queries, not parsed whole). ``None``: none.
    * ``max_document_bytes`` — one JSON (or text) document, parsed whole in memory (about
      ten times its size as Python objects): 64 MiB keeps that within the default 1 GiB
      run; the largest real transcript documents are a few MiB.
    * ``max_open_ids`` — the ids an adapter's join state holds at once
      (:class:`~.adapter.StateLimitExceeded`).
    """

    record: RecordLimits = field(default_factory=RecordLimits)
    batch_lines: int = 50_000
    batch_bytes: int = 64 * MiB  # a batch ends once it covers this many bytes
    chunk_bytes: int = MiB
    max_records_per_source: int | None = None
    max_bytes_per_source: int | None = None
    max_document_bytes: int = 64 * MiB
    source_records: int | None = 1_000_000
    source_bytes: int | None = GiB
    max_open_ids: int = 10_000


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
    committed_records: int = 0,
) -> Iterator[ExtractBatch]:
    """Yield the batches of ``source`` that the plan asked for.

    A ``byte-offset`` source is read from ``start`` up to the last newline before
    ``stop``, honouring the per-run ceilings; ``document`` and ``sqlite`` sources are
    read whole, in one batch. ``state`` is the adapter memo saved with the checkpoint at
    ``start``, ``committed_records`` the records its generation holds up to ``start``.
    Raises :class:`SourceError` (after yielding any clean prefix) when the input declares
    an unknown major format version or the source reaches a ceiling of ``limits``.
    """
    fmt = spec.format_of(source)
    ctx = fmt.adapter.locate(source)
    ctx.max_open_ids = limits.max_open_ids
    if state:
        ctx.memo.update(orjson.loads(state))
    try:
        if source.position_kind == "byte-offset":
            yield from _extract_lines(
                cast(LineAdapter, fmt.adapter), ctx, source, start, stop, limits,
                committed_records,
            )  # fmt: skip
        elif source.position_kind == "document" and hasattr(fmt.adapter, "map_record"):
            yield from _extract_line_document(cast(LineAdapter, fmt.adapter), ctx, source, limits)
        elif source.position_kind == "document":
            yield from _extract_document(
                cast(DocumentAdapter | TextDocumentAdapter, fmt.adapter), ctx, source, limits
            )
        else:
            yield from _extract_database(cast(DatabaseAdapter, fmt.adapter), ctx, source, limits)
    except StateLimitExceeded as exc:
        raise _over(source, f"{exc}; nothing of it from there on was read", "open") from None
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


def _over(source: SourceFile, what: str, ceiling: str) -> SourceError:
    """The refusal of a source past a ceiling, naming the option that raises it. The
    message depends only on the ceiling and the checkpoint, so a source refused again at
    the same place is *still refused*, not new."""
    return _refused("RESOURCE_LIMIT_EXCEEDED", source, f"{what} (raise {_RAISE[ceiling]})")


def _check_whole(source: SourceFile, records: int, limits: ExtractLimits) -> None:
    """Refuse a document or database whose one read holds more records than the ceiling."""
    if limits.source_records is not None and records > limits.source_records:
        raise _over(
            source,
            f"one read of it holds more than its ceiling of {limits.source_records:,} "
            "records; nothing of this read was written",
            "records",
        )


def _check_document(source: SourceFile, limits: ExtractLimits) -> None:
    """Refuse a document over a size ceiling before reading it: never an unbounded parse."""
    size = source.size
    if size > limits.max_document_bytes:
        raise _over(
            source,
            f"document larger than the ceiling of one document "
            f"({limits.max_document_bytes:,} bytes); it was not parsed",
            "document",
        )
    if limits.source_bytes is not None and size > limits.source_bytes:
        raise _over(
            source,
            f"document larger than its ceiling of {limits.source_bytes:,} bytes; it was not parsed",
            "bytes",
        )


def _extract_lines(
    adapter: LineAdapter,
    ctx: SourceContext,
    source: SourceFile,
    start: int,
    stop: int,
    limits: ExtractLimits,
    committed_records: int = 0,
) -> Iterator[ExtractBatch]:
    """The lines of ``[start, stop)`` in batches. An append-only file's generation
    begins at byte 0, so ``start`` is the bytes it holds; at its records or bytes ceiling
    the file is read no further and, when a complete line is left past it, refused."""
    end = stop
    if limits.max_bytes_per_source is not None:
        stop = min(stop, start + limits.max_bytes_per_source)
    at_bytes = limits.source_bytes is not None and stop > limits.source_bytes
    if at_bytes:
        stop = max(start, cast(int, limits.source_bytes))
    budget = limits.max_records_per_source
    left = None  # records the ceiling leaves this generation
    if limits.source_records is not None:
        left = max(0, limits.source_records - committed_records)
        budget = left if budget is None else min(budget, left)
    offset, read = start, 0
    if budget != 0 and stop > start:
        for batch in _read_lines(adapter, ctx, source, start, stop, limits, budget):
            yield batch
            offset, read = batch.end_offset, read + batch.records
    if left is not None and read >= left and line_within(source.path, offset, end):
        raise _over(
            source,
            f"reached its ceiling of {limits.source_records:,} records in this generation; "
            f"nothing past byte {offset:,} was read",
            "records",
        )
    if at_bytes and (budget is None or read < budget) and line_within(source.path, offset, end):
        raise _over(
            source,
            f"reached its ceiling of {limits.source_bytes:,} bytes in this generation; "
            f"nothing past byte {offset:,} was read",
            "bytes",
        )


def _read_lines(
    adapter: LineAdapter,
    ctx: SourceContext,
    source: SourceFile,
    start: int,
    stop: int,
    limits: ExtractLimits,
    budget: int | None,
) -> Iterator[ExtractBatch]:
    """The batches of ``[start, stop)``, ending before the record past ``budget``."""
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
    _check_document(source, limits)
    size = source.size
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
    _check_whole(source, sum(outcomes.values()), limits)
    yield _whole(source, sink, ctx, outcomes, rejects, digest)


def _extract_line_document(
    adapter: LineAdapter, ctx: SourceContext, source: SourceFile, limits: ExtractLimits
) -> Iterator[ExtractBatch]:
    """A JSONL file rewritten in place, read whole in one batch (keyed by its content
    digest, like a JSON document): each line is mapped and classified as in a byte-offset
    source. A last line without a newline is part of the document (the file is written
    whole). A line declaring an unknown major version, or a ceiling reached, refuses the
    whole file."""
    _check_document(source, limits)
    size = source.size
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
    _check_whole(source, batch.records, limits)
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
    adapter: DatabaseAdapter,
    ctx: SourceContext,
    source: SourceFile,
    limits: ExtractLimits = ExtractLimits(),
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
    _check_whole(source, sum(outcomes.values()), limits)
    yield _whole(source, sink, ctx, outcomes, rejects)


def _map_chunk(
    adapter: LineAdapter,
    ctx: SourceContext,
    source: SourceFile,
    chunk: LineBatch,
    budget: int | None = None,
) -> tuple[ExtractBatch, FormatDrift | StateLimitExceeded | None]:
    """Parse and map the lines of ``chunk`` one at a time. The batch ends before the
    record past ``budget`` records, or before a record that declares an unknown format
    or fills the adapter's join state (the exception is returned with the batch)."""
    sink = RowSink()
    outcomes: Counter[str] = Counter()
    new_rejects: list[Reject] = []
    map_record = adapter.map_record
    drift: FormatDrift | StateLimitExceeded | None = None
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
        except (FormatDrift, StateLimitExceeded) as exc:
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
