"""``agentlake export jsonl FILE``: the exported selection (:mod:`.export_scope`) as one
``aiwg.session-interchange`` 1.x file, which ``agentlake import --file FILE --format
generic`` reads back into the same rows (:mod:`agentlake.extract.providers.generic_agentlake`).

Line 1 is the header; then, session by session, an ``agentlake.session`` line, the
session's events (interchange kinds ``message``/``reasoning``/``tool-call``/
``tool-result``/``summary``/``system``) and its calls as ``agentlake.usage`` lines; what
agentlake needs to rebuild its rows is under ``extensions.agentlake`` (README "Export").
DuckDB builds every line's JSON (sql/queries/export_jsonl.sql), a chunk of sessions
at a time (each chunk's lines sorted into session order; a long session is cut into
several chunks, since DuckDB cannot spill a sort of long texts); Python only moves Arrow
batches of finished lines to the file (each batch's text buffer as it is), so memory
is bounded by a batch. The file appears
whole or not at all (:mod:`.export_target`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from agentlake import __version__, sql
from agentlake.read.export_parquet import ExportReporter
from agentlake.read.export_scope import export_connection, filters_json, scope_params
from agentlake.read.export_target import check_target, place, private_file, spill_path, staged
from agentlake.read.reports import ReportFilter

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides

FORMAT: Final = "aiwg.session-interchange"
SCHEMA_VERSION: Final = "1.0.0"
# The version of agentlake's own members (extensions.agentlake); the importer reads 1.
AGENTLAKE_FORMAT: Final = 1
SOURCE_CLASS: Final = "agentlake-export"
JSON_VERSION: Final = 1
_BATCH_ROWS: Final = 20_000
# Lines and bytes of text per query: a chunk's lines, sorted into session order, stay
# within DuckDB's memory (export_scope.MEMORY_LIMIT); one larger session is its own chunk.
_CHUNK_LINES: Final = 100_000
_CHUNK_BYTES: Final = 32 << 20
_CHUNK_SCHEMA: Final = pa.schema(
    [("provider", pa.string()), ("session_id", pa.string()), ("events", pa.int64()),
     ("lo", pa.int64()), ("hi", pa.int64())]
)  # fmt: skip
_PARTS: Final = {"s": "sessions", "e": "events", "u": "calls"}


@dataclass(frozen=True, slots=True)
class JsonlExport:
    """A finished JSONL export: where, what it covered, its line counts and size."""

    path: Path
    workspace: str
    filter: ReportFilter
    sessions: int
    events: int
    calls: int
    bytes: int
    replaced: bool
    seconds: float

    @property
    def lines(self) -> int:
        """Lines written, the header included."""
        return 1 + self.sessions + self.events + self.calls

    def to_json(self) -> dict[str, Any]:
        """The stable ``--json`` document (README "Export")."""
        return {
            "version": JSON_VERSION,
            "export": "jsonl",
            "path": str(self.path),
            "workspace": self.workspace,
            "filters": filters_json(self.filter),
            "format": FORMAT,
            "schema_version": SCHEMA_VERSION,
            "sessions": self.sessions,
            "events": self.events,
            "calls": self.calls,
            "lines": self.lines,
            "bytes": self.bytes,
            "replaced": self.replaced,
            "seconds": round(self.seconds, 3),
        }


def _chunks(sessions: pa.Table) -> Iterator[pa.Table]:
    """The parts the export queries one by one: ``sessions`` (in file order, with the
    ``events``, ``lines`` and text ``bytes`` of each) as runs of whole sessions of at
    most :data:`_CHUNK_LINES` lines and :data:`_CHUNK_BYTES` bytes of text, a session
    larger than that cut into ranges of its lines' sequence numbers (``lo``, ``hi``)."""
    rows = sessions.select(["provider", "session_id", "events", "lines", "bytes"]).to_pylist()
    run: list[dict[str, Any]] = []
    count, size = 0, 0
    for row in rows:
        lines, nbytes = row.pop("lines"), row.pop("bytes")
        if run and (count + lines > _CHUNK_LINES or size + nbytes > _CHUNK_BYTES):
            yield _chunk_table(run)
            run, count, size = [], 0, 0
        if lines <= _CHUNK_LINES and nbytes <= _CHUNK_BYTES:
            run.append({**row, "lo": 0, "hi": lines - 1})
            count, size = count + lines, size + nbytes
            continue
        parts = max(-(-lines // _CHUNK_LINES), -(-nbytes // _CHUNK_BYTES))
        step = -(-lines // parts)
        for lo in range(0, lines, step):
            yield _chunk_table([{**row, "lo": lo, "hi": min(lo + step, lines) - 1}])
    if run:
        yield _chunk_table(run)


def _chunk_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=_CHUNK_SCHEMA)


def _text_bytes(lines: pa.Array) -> memoryview:
    """The texts of ``lines`` (non-null strings, each ending in a newline) end to end:
    the slice of the array's data buffer they occupy, written without a copy."""
    if lines.type not in (pa.string(), pa.large_string()):
        lines = lines.cast(pa.large_string())
    assert lines.null_count == 0  # every line is a JSON text
    _, offsets, data = lines.buffers()
    bounds = memoryview(offsets).cast("i" if lines.type == pa.string() else "q")
    return memoryview(data)[bounds[lines.offset] : bounds[lines.offset + len(lines)]]


def header(workspace: str, flt: ReportFilter) -> dict[str, Any]:
    """The interchange header of an export of ``workspace`` under ``flt``."""
    return {
        "type": FORMAT,
        "schemaVersion": SCHEMA_VERSION,
        "product": "agentlake",
        "productVersion": __version__,
        "sourceId": f"agentlake:{workspace}",
        "exportedAt": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        # One read snapshot (a lake transaction, or the file under its read lock).
        "consistency": "consistent-snapshot",
        "lifecycle": "complete",
        "workspace": {"id": workspace},
        "provenance": {
            "exporter": "agentlake",
            "exporterVersion": __version__,
            "sourceClass": SOURCE_CLASS,
        },
        "extensions": {
            "agentlake": {
                "format": AGENTLAKE_FORMAT,
                "workspace": workspace,
                "filters": filters_json(flt),
            }
        },
    }


def export_jsonl(
    catalog: Catalog,
    workspace: str,
    target: Path,
    flt: ReportFilter | None = None,
    *,
    prices: PriceOverrides | None = None,
    replace: bool = False,
    reporter: ExportReporter | None = None,
) -> JsonlExport:
    """Write the selection ``flt`` of ``workspace`` as an interchange file at ``target``
    (which must not exist unless ``replace``), atomically; hidden sessions only with
    ``flt.include_hidden``; each call's cost (``costUsd``) with the user's ``prices``."""
    started = time.perf_counter()
    flt = flt or ReportFilter()
    target = check_target(target, kind="file", replace=replace)
    counts = dict.fromkeys(_PARTS, 0)
    with (
        export_connection(catalog, workspace, flt, prices, spill=spill_path(target)) as con,
        staged(target, kind="file") as temp,
    ):
        # Inlined, the open bounds fold away (a bound parameter kept every chunk's
        # session filter scanning all events and calls).
        params = scope_params(workspace, flt)
        sessions = con.execute(sql.inline(sql.query("export_jsonl_sessions"), params))
        sessions_table = sessions.to_arrow_table()
        lines_query = sql.inline(sql.query("export_jsonl"), params)
        with private_file(temp) as out:
            out.write(orjson.dumps(header(workspace, flt)) + b"\n")
            for chunk in _chunks(sessions_table):
                con.register("export_chunk", chunk)
                try:
                    reader = con.execute(lines_query)
                    for batch in reader.to_arrow_reader(_BATCH_ROWS):
                        if not batch.num_rows:
                            continue
                        for item in pc.value_counts(batch.column(0)).to_pylist():
                            counts[item["values"]] += item["counts"]
                        out.write(_text_bytes(batch.column(1)))
                        if reporter is not None:
                            reporter.wrote("lines", batch.num_rows)
                finally:
                    con.unregister("export_chunk")
        size = temp.stat().st_size
        replaced = place(temp, target)
    return JsonlExport(
        target, workspace, flt, counts["s"], counts["e"], counts["u"], size, replaced,
        time.perf_counter() - started,
    )  # fmt: skip
