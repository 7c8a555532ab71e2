"""What an export covers, said once for both formats (``export parquet`` and ``export
jsonl``): a :class:`~agentlake.read.reports.ReportFilter` over one workspace, read through
the reports' ``report_calls`` macro (the calls, with their cost) and the table macros of
``sql/queries/export_selection.sql`` (events, sessions, rejects), so that ``--since``,
``--until``, ``--tz``, ``--provider``, ``--project`` and ``--include-hidden`` mean in an
export exactly what they mean in a report."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

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


@contextmanager
def export_connection(
    catalog: Catalog, workspace: str, flt: ReportFilter, prices: PriceOverrides | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to ``catalog`` (a DuckDB file or a lake, one snapshot for
    the whole export) with the user's ``prices`` in force and the export macros
    defined: ``report_calls``, ``export_events``, ``export_sessions``, ``export_rejects``."""
    check_export_filter(flt)
    with report_connection(catalog, prices, per_session=False, scope=(workspace, flt)) as con:
        for statement in _statements():
            con.execute(statement)
        yield con


def _statements() -> list[str]:
    from agentlake.load.catalog import statements

    return statements(sql.query("export_selection"))
