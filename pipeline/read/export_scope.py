"""What an export covers, said once for both formats (``export parquet`` and ``export
jsonl``): a :class:`~agentlake.read.reports.ReportFilter` over one workspace, read through
the reports' ``report_calls`` macro (the calls, with their cost) and the table macros of
``sql/queries/export_selection.sql`` (events, sessions, rejects), so that ``--since``,
``--until``, ``--tz``, ``--provider``, ``--project`` and ``--include-hidden`` mean in an
export exactly what they mean in a report."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final

import duckdb

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.read.reports import ReportFilter, report_connection

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides


def check_export_filter(flt: ReportFilter) -> ReportFilter:
    """``flt`` when an export can apply it: exports select whole sessions' rows by time,
    provider, project and lifecycle, never by model or tag."""
    if flt.model is not None or flt.tag is not None:
        raise ConfigurationError(
            "an export filters by time, provider and project, not by model or tag"
        )
    return flt


def filters_json(flt: ReportFilter) -> dict[str, object]:
    """The filter an export applied, as its ``--json`` document and JSONL header say it."""
    keep = ("tz", "since", "until", "provider", "project", "include_hidden")
    return {k: v for k, v in flt.to_json().items() if k in keep}


def scope_params(workspace: str, flt: ReportFilter) -> dict[str, object]:
    """The named parameters of the export macros' calls (``$workspace``, ``$tz``,
    ``$since``, ``$until``, ``$provider``, ``$project``, ``$include_hidden``)."""
    return {
        "workspace": workspace,
        "tz": flt.tz,
        # Days as ISO text: the macros cast them, and a COPY takes them inlined.
        "since": flt.since.isoformat() if flt.since else None,
        "until": flt.until.isoformat() if flt.until else None,
        "provider": flt.provider,
        "project": flt.project,
        "include_hidden": flt.include_hidden,
    }


# DuckDB's memory for an export's queries (the default; an export may ask for another):
# what an export holds does not grow with the catalog (a partitioned COPY streams; the
# JSONL lines are sorted a bounded chunk at a time).
MEMORY_LIMIT: Final = "512MiB"


@contextmanager
def export_connection(
    catalog: Catalog,
    workspace: str,
    flt: ReportFilter,
    prices: PriceOverrides | None = None,
    *,
    spill: Path,
    memory_limit: str = MEMORY_LIMIT,
    ordered: bool = True,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to ``catalog`` (a DuckDB file or a lake, one snapshot for
    the whole export) with the user's ``prices`` in force, the export macros defined
    (``report_calls``, ``export_events``, ``export_sessions``, ``export_rejects``), and
    DuckDB's memory bounded (``memory_limit``). A DuckDB file spills where DuckDB
    puts it (``CATALOG.tmp``); a lake's connection, whose default is the working
    directory, into the folder ``spill`` (made and removed here). Without ``ordered``,
    a statement without ORDER BY may return its rows in any order (DuckDB then holds
    less of them at once). Both settings are the database's, which other connections of
    this process to the same file share: they are put back afterwards."""
    from agentlake.load.lake import LakeCatalog

    check_export_filter(flt)
    with report_connection(catalog, prices, per_session=False, scope=(workspace, flt)) as con:
        saved = con.execute(
            "SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order')"
        ).fetchone()
        assert saved is not None
        lake = isinstance(catalog, LakeCatalog)
        try:
            if lake:  # this process's own in-memory database, closed after the export
                spill.mkdir(mode=0o700)
                con.execute(f"SET temp_directory = {sql.constant(str(spill))}")
            con.execute(f"SET memory_limit = {sql.constant(memory_limit)}")
            con.execute(f"SET preserve_insertion_order = {str(ordered).lower()}")
            for statement in _statements():
                con.execute(statement)
            yield con
        finally:
            con.execute(f"SET memory_limit = {sql.constant(saved[0])}")
            con.execute(f"SET preserve_insertion_order = {str(saved[1]).lower()}")
            if lake:
                shutil.rmtree(spill, ignore_errors=True)


def _statements() -> list[str]:
    from agentlake.load.catalog import statements

    return statements(sql.query("export_selection"))
