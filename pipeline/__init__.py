"""agentlake: AI coding agents' local transcripts → one DuckDB catalog.

Notebook use::

    import agentlake
    lake = agentlake.open("~/.local/share/agentlake/catalog.duckdb")
    lake.report("daily").to_pandas()
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    import pyarrow as pa

    from agentlake.load.search_index import PublishResult

    from .limits import LimitsReport
    from .reports import Report, ReportKind
    from .run import ImportResult
    from .search import SearchHit
    from .sessions import SessionDetail, SessionPage


class Lake:
    """A catalog and workspace, with the CLI's operations returning Arrow tables."""

    def __init__(self, catalog: Path, workspace: str) -> None:
        self.catalog = catalog
        self.workspace = workspace

    def import_(self, home: Path | None = None, **options: Any) -> ImportResult:
        """Import transcripts found under ``home`` (default ``$HOME``)."""
        import os

        from .run import ImportOptions, default_home, run_import

        return run_import(
            ImportOptions(
                catalog=self.catalog,
                workspace=self.workspace,
                home=home or default_home(),
                env=dict(os.environ),
                **options,
            )
        )

    def index(self, **options: Any) -> PublishResult:
        """Bring the search index up to date (``agentlake index``); ``options`` are
        :class:`agentlake.run.IndexOptions` fields."""
        from .run import IndexOptions, run_index

        return run_index(IndexOptions(catalog=self.catalog, workspace=self.workspace, **options))

    def report(
        self, kind: ReportKind = "daily", *, breakdown: bool = False, **filters: Any
    ) -> pa.Table:
        """One row per period, session, model, project or block (filters as in
        :class:`agentlake.reports.ReportFilter`); with ``breakdown``, one row per model
        inside each of them."""
        result = self.report_full(kind, breakdown=breakdown, **filters)
        return result.breakdown if result.breakdown is not None else result.rows

    def report_full(self, kind: ReportKind = "daily", **options: Any) -> Report:
        """The whole :class:`agentlake.reports.Report`: rows, breakdown and totals
        (``rollup=True``: the session report per root session)."""
        from .reports import ReportFilter, report

        breakdown = bool(options.pop("breakdown", False))
        rollup = bool(options.pop("rollup", False))
        return report(
            self.catalog,
            self.workspace,
            kind,
            ReportFilter(**options),
            breakdown=breakdown,
            rollup=rollup,
        )

    def limits(self, **options: Any) -> LimitsReport:
        """The latest rate-limit snapshot per provider, limit and window (``tz``,
        ``provider`` as in :func:`agentlake.limits.limits_report`)."""
        from .limits import limits_report

        return limits_report(self.catalog, self.workspace, **options)

    def unpriced(self, **filters: Any) -> pa.Table:
        """Models whose calls have no price, with their token volume."""
        from .reports import ReportFilter, unpriced

        return unpriced(self.catalog, self.workspace, ReportFilter(**filters))

    def search(self, query: str, *, limit: int = 20) -> list[SearchHit]:
        """Ranked full-text search."""
        from .search import search

        return search(self.catalog, self.workspace, query, limit=limit)

    def sessions(self, **filters: Any) -> SessionPage:
        """One page of sessions, newest first (filters and ``cursor`` as in
        :func:`agentlake.sessions.list_sessions`)."""
        from .sessions import list_sessions

        return list_sessions(self.catalog, self.workspace, **filters)

    def session(self, session_id: str, *, full: bool = False) -> SessionDetail:
        """One session by id or unique prefix; its timeline bounded unless ``full``."""
        from .sessions import DEFAULT_BOUNDS, show_session

        return show_session(
            self.catalog, self.workspace, session_id, bounds=None if full else DEFAULT_BOUNDS
        )

    def sql(self, statement: str, *, all_workspaces: bool = False) -> pa.Table:
        """One read-only query over this workspace's views (every workspace's rows with
        ``all_workspaces``); see :func:`agentlake.queries.scoped_sql` for its bounds."""
        from .queries import scoped_sql

        return scoped_sql(self.catalog, self.workspace, statement, all_workspaces=all_workspaces)


def open(catalog: str | Path | None = None, workspace: str | None = None) -> Lake:
    """The catalog at ``catalog`` (default: ``$AGENTLAKE_CATALOG`` or the XDG path)."""
    from .config import check_workspace, default_catalog, default_workspace

    path = Path(catalog).expanduser() if catalog else default_catalog()
    return Lake(path, check_workspace(workspace) if workspace else default_workspace())
