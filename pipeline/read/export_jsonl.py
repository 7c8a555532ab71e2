"""``agentlake export jsonl FILE``: the exported selection (:mod:`.export_scope`) as one
``aiwg.session-interchange`` 1.x file, which ``agentlake import --file FILE --format
generic`` reads back into the same rows (:mod:`agentlake.extract.providers.generic_agentlake`).

Line 1 is the header; then, session by session, an ``agentlake.session`` line, the
session's events (interchange kinds ``message``/``reasoning``/``tool-call``/
``tool-result``/``summary``/``system``) and its calls as ``agentlake.usage`` lines; what
agentlake needs to rebuild its rows is under ``extensions.agentlake`` (README "Export").
DuckDB builds every line's JSON (sql/queries/export_jsonl.sql); Python only moves Arrow
batches of finished lines to the file, so memory is bounded by a batch. The file appears
whole or not at all (:mod:`.export_target`)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from agentlake import __version__, sql
from agentlake.read.export_parquet import ExportReporter, _filters
from agentlake.read.export_scope import export_connection, scope_params
from agentlake.read.export_target import check_target, place, staged
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
_BATCH_ROWS: Final = 50_000
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
            "filters": _filters(self.filter),
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
                "filters": _filters(flt),
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
        export_connection(catalog, workspace, flt, prices) as con,
        staged(target, kind="file") as temp,
    ):
        reader = con.execute(
            sql.query("export_jsonl"), scope_params(workspace, flt)
        ).to_arrow_reader(_BATCH_ROWS)
        # Private like the catalog it comes from (transcript text): 0600.
        with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            out.write(orjson.dumps(header(workspace, flt)) + b"\n")
            for batch in reader:
                if not batch.num_rows:
                    continue
                for item in pc.value_counts(batch.column(0)).to_pylist():
                    counts[item["values"]] += item["counts"]
                # The lines are finished JSON texts: joined in C, written in one call.
                lines = batch.column(1)
                whole = pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines)
                out.write(pc.binary_join(whole, "\n")[0].as_buffer())
                out.write(b"\n")
                if reporter is not None:
                    reporter.wrote("lines", batch.num_rows)
        size = temp.stat().st_size
        replaced = place(temp, target)
    return JsonlExport(
        target, workspace, flt, counts["s"], counts["e"], counts["u"], size, replaced,
        time.perf_counter() - started,
    )  # fmt: skip
