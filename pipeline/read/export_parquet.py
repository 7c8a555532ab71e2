"""``agentlake export parquet DIR``: the exported selection (:mod:`.export_scope`) as
four Hive-partitioned Parquet datasets written by DuckDB, ``DIR/<table>/workspace=W/
provider=P/month=YYYY-MM/data_N.parquet`` for ``events``, ``usage`` (with ``cost_usd``),
``sessions`` and ``rejects``.

``month`` is the YYYY-MM of the row's time in the filter's zone (``--tz``, default UTC):
an event's ``ts``, a call's ``ts``, a session's ``started_at``, a reject's import start;
a row without a time is in the Hive default partition (``month=__HIVE_DEFAULT_PARTITION__``,
which DuckDB, polars and pyarrow read as null). A reject's provider is its source's. The
partition columns are in the paths, not in the files. A table with no row is an empty
folder. The whole dataset appears at once (:mod:`.export_target`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, get_args

from agentlake import sql
from agentlake.read.export_scope import export_connection, filters_json, scope_params
from agentlake.read.export_target import check_target, place, spill_path, staged, tree_size
from agentlake.read.reports import ReportFilter

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides

ParquetTable = Literal["events", "usage", "sessions", "rejects"]
PARQUET_TABLES: Final[tuple[ParquetTable, ...]] = get_args(ParquetTable)
PARTITION_KEYS: Final = ("workspace", "provider", "month")
JSON_VERSION: Final = 1
# DuckDB's memory for the COPYs. A partitioned write keeps a buffer per open partition
# and thread beyond what DuckDB counts: at 384 MiB, with rows in no particular order,
# the export of the one-million-record home peaks under 1 GiB of RSS.
_MEMORY: Final = "384MiB"


class ExportReporter(Protocol):
    """Told of an export's progress (the default tells no one)."""

    def wrote(self, part: str, rows: int) -> None:
        """``part`` (a table, or the JSONL lines of a kind) is written, ``rows`` rows;
        the export is not in place yet."""


class _Silent:
    def wrote(self, part: str, rows: int) -> None:
        """Nothing."""


@dataclass(frozen=True, slots=True)
class WrittenTable:
    """One table of a Parquet export: its rows, files and bytes."""

    table: ParquetTable
    rows: int
    files: int
    bytes: int

    def to_json(self) -> dict[str, Any]:
        """``{"rows", "files", "bytes", "path"}`` (path relative to the dataset)."""
        return {"rows": self.rows, "files": self.files, "bytes": self.bytes, "path": self.table}


@dataclass(frozen=True, slots=True)
class ParquetExport:
    """A finished Parquet export: where, what it covered, each table written, whether
    it replaced a previous dataset, and how long it took."""

    path: Path
    workspace: str
    filter: ReportFilter
    tables: tuple[WrittenTable, ...]
    replaced: bool
    seconds: float

    @property
    def bytes(self) -> int:
        """The dataset's size on disk."""
        return sum(t.bytes for t in self.tables)

    def rows(self, table: ParquetTable) -> int:
        """The rows written of ``table``."""
        return next(t.rows for t in self.tables if t.table == table)

    def to_json(self) -> dict[str, Any]:
        """The stable ``--json`` document (README "Export")."""
        return {
            "version": JSON_VERSION,
            "export": "parquet",
            "path": str(self.path),
            "workspace": self.workspace,
            "filters": filters_json(self.filter),
            "partitioning": list(PARTITION_KEYS),
            "tables": {t.table: t.to_json() for t in self.tables},
            "bytes": self.bytes,
            "replaced": self.replaced,
            "seconds": round(self.seconds, 3),
        }


def export_parquet(
    catalog: Catalog,
    workspace: str,
    target: Path,
    flt: ReportFilter | None = None,
    *,
    prices: PriceOverrides | None = None,
    replace: bool = False,
    reporter: ExportReporter | None = None,
) -> ParquetExport:
    """Write the selection ``flt`` of ``workspace`` as a Parquet dataset at ``target``
    (a folder that must not exist, or be empty, unless ``replace``), atomically; hidden
    sessions only with ``flt.include_hidden``; costs with the user's ``prices``."""
    started = time.perf_counter()
    flt = flt or ReportFilter()
    tell = reporter or _Silent()
    target = check_target(target, kind="dir", replace=replace)
    params = scope_params(workspace, flt)
    written: list[WrittenTable] = []
    with (
        export_connection(
            catalog,
            workspace,
            flt,
            prices,
            spill=spill_path(target),
            memory_limit=_MEMORY,
            ordered=False,
        ) as con,
        staged(target, kind="dir") as temp,
    ):
        for table in PARQUET_TABLES:
            folder = temp / table
            folder.mkdir()
            statement = sql.inline(
                sql.query(f"export_parquet_{table}"), {**params, "target": str(folder)}
            )
            row = con.execute(statement).fetchone()
            rows = int(row[0]) if row else 0
            tell.wrote(table, rows)
            files, size = tree_size(folder)
            written.append(WrittenTable(table, rows, files, size))
        replaced = place(temp, target)
    return ParquetExport(
        target, workspace, flt, tuple(written), replaced, time.perf_counter() - started
    )
