"""The extract runner: the one loop that turns a source's new bytes into raw batches.

It owns seeking to the checkpoint, bounds, batching and the classification of bad
records; adapters only map records to rows. It never advances a checkpoint itself: each
:class:`ExtractBatch` says which byte range it covers and the load stage commits that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from agentlake.errors import SourceError

from .adapter import FormatDrift, InvalidRecord, SourceContext
from .jsonl import LineBatch, RecordLimits, Reject, read_lines
from .providers import ProviderSpec
from .rows import RawTables, RowSink
from .sources import SourceFile

MiB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    """Bounds of one extraction: per-record ceilings, batch size, per-run source ceilings."""

    record: RecordLimits = field(default_factory=RecordLimits)
    batch_lines: int = 50_000
    chunk_bytes: int = MiB
    max_records_per_source: int | None = None
    max_bytes_per_source: int | None = None


@dataclass(slots=True)
class ExtractBatch:
    """Raw rows of one contiguous byte range ``[start_offset, end_offset)`` of a source."""

    source: SourceFile
    tables: RawTables
    rejects: list[Reject]
    start_offset: int
    end_offset: int
    lines: int
    outcomes: Counter[str] = field(default_factory=Counter)

    @property
    def records(self) -> int:
        """Records that parsed as JSON objects (mapped, ignored or unknown)."""
        return sum(self.outcomes.values())


def extract_source(
    spec: ProviderSpec,
    source: SourceFile,
    *,
    start: int,
    stop: int,
    limits: ExtractLimits = ExtractLimits(),
) -> Iterator[ExtractBatch]:
    """Yield batches of ``source`` from byte ``start`` up to the last newline before
    ``stop``, honouring the per-run ceilings. Raises :class:`SourceError` (after
    yielding the clean prefix) when a record declares an unknown major format version."""
    if limits.max_bytes_per_source is not None:
        stop = min(stop, start + limits.max_bytes_per_source)
    ctx = spec.adapter.locate(source)
    budget = limits.max_records_per_source
    lines = read_lines(
        source.path,
        start=start,
        stop=stop,
        limits=limits.record,
        chunk_bytes=limits.chunk_bytes,
        batch_lines=limits.batch_lines,
    )
    for chunk in lines:
        if budget is not None and len(chunk.records) > budget:
            _cut(chunk, chunk.offsets[budget])
        batch, drift = _map_chunk(spec, ctx, source, chunk)
        yield batch
        if drift is not None:
            raise SourceError(
                "SCHEMA_DRIFT",
                str(source.path),
                f"{drift}; the rest of this source is refused "
                "(rerun with --restart-drifted after upgrading agentlake)",
            )
        if budget is not None:
            budget -= batch.records
            if budget <= 0:
                return


def _cut(chunk: LineBatch, at: int) -> None:
    """Shorten ``chunk`` so it ends just before the line starting at byte ``at``."""
    keep = sum(1 for o in chunk.offsets if o < at)
    del chunk.records[keep:], chunk.offsets[keep:], chunk.lengths[keep:]
    chunk.rejects = [r for r in chunk.rejects if r.offset < at]
    chunk.lines = keep + len(chunk.rejects)
    chunk.end_offset = at


def _map_chunk(
    spec: ProviderSpec, ctx: SourceContext, source: SourceFile, chunk: LineBatch
) -> tuple[ExtractBatch, FormatDrift | None]:
    sink = RowSink()
    outcomes: Counter[str] = Counter()
    rejects = chunk.rejects
    new_rejects: list[Reject] = []
    map_record = spec.adapter.map_record
    drift: FormatDrift | None = None
    for record, offset, length in zip(chunk.records, chunk.offsets, chunk.lengths, strict=True):
        try:
            outcome = map_record(record, offset, ctx, sink)
        except FormatDrift as exc:
            drift = exc
            _cut(chunk, offset)
            rejects = chunk.rejects
            break
        except (InvalidRecord, TypeError, ValueError, KeyError, AttributeError) as exc:
            new_rejects.append(Reject(offset, length, "INVALID_RECORD", str(exc)[:200]))
            outcomes["invalid"] += 1
            continue
        if outcome == "unknown":
            rtype = record.get("type")
            detail = (
                f"unknown record type {rtype[:80]!r}"
                if isinstance(rtype, str)
                else "record without a recognizable 'type'"
            )
            new_rejects.append(Reject(offset, length, "UNKNOWN_RECORD", detail))
        outcomes[outcome] += 1
    if new_rejects:
        rejects = sorted([*rejects, *new_rejects], key=lambda r: r.offset)
    batch = ExtractBatch(
        source=source,
        tables=sink.build(),
        rejects=rejects,
        start_offset=chunk.start_offset,
        end_offset=chunk.end_offset,
        lines=chunk.lines,
        outcomes=outcomes,
    )
    return batch, drift
