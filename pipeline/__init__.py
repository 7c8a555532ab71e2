"""agentlake: AI coding agents' local transcripts → one DuckDB catalog.

Notebook use::

    import agentlake
    lake = agentlake.open("~/.local/share/agentlake/catalog.duckdb")
    lake.report("daily").to_pandas()
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import date, datetime, timedelta

    import pyarrow as pa

    from agentlake.ingest.run import ImportResult
    from agentlake.load.lake import Catalog
    from agentlake.load.publish import PublishResult
    from agentlake.read.dashboard import DashboardWritten
    from agentlake.read.export_jsonl import JsonlExport
    from agentlake.read.export_parquet import ParquetExport
    from agentlake.read.limits import LimitsReport
    from agentlake.read.reports import Report, ReportFilter, ReportKind
    from agentlake.read.search import SearchHit, SearchMode
    from agentlake.read.sessions import SessionDetail, SessionPage


class Lake:
    """A catalog and workspace, with the CLI's operations returning Arrow tables.

    Report filters (``tz``, ``since``, ``until``, ``provider``, ``model``, ``project``)
    mean what they mean in :class:`agentlake.read.reports.ReportFilter`."""

    def __init__(self, catalog: Catalog, workspace: str) -> None:
        self.catalog = catalog
        self.workspace = workspace

    def import_(
        self,
        home: Path | None = None,
        *,
        providers: Sequence[str] = (),
        restart_drifted: bool = False,
        memory_limit: str | None = "1GiB",
        wait: bool = False,
        build_index: bool = True,
        reindex: bool = False,
        max_duration: float | None = None,
    ) -> ImportResult:
        """Import transcripts found under ``home`` (default ``$HOME``); the options are
        those of :class:`agentlake.ingest.run.ImportOptions`."""
        import os

        from agentlake.config import default_home
        from agentlake.ingest.run import ImportOptions, run_import

        return run_import(
            ImportOptions(
                catalog=self.catalog,
                workspace=self.workspace,
                home=home or default_home(),
                env=dict(os.environ),
                providers=providers,
                restart_drifted=restart_drifted,
                memory_limit=memory_limit,
                wait=wait,
                build_index=build_index,
                reindex=reindex,
                max_duration=max_duration,
            )
        )

    def index(self, *, memory_limit: str | None = "1GiB", wait: bool = False) -> PublishResult:
        """Bring the search index up to date (``agentlake index``)."""
        from agentlake.ingest.run import IndexOptions, run_index

        return run_index(
            IndexOptions(
                catalog=self.catalog, workspace=self.workspace, memory_limit=memory_limit, wait=wait
            )
        )

    def report(
        self,
        kind: ReportKind = "daily",
        *,
        breakdown: bool = False,
        rollup: bool = False,
        tz: str = "UTC",
        since: date | None = None,
        until: date | None = None,
        provider: str | None = None,
        model: str | None = None,
        project: str | None = None,
    ) -> pa.Table:
        """One row per period, session, model, project or block; with ``breakdown``, one
        row per model inside each of them (``rollup``: the session report per root
        session)."""
        result = self.report_full(
            kind, breakdown=breakdown, rollup=rollup, tz=tz, since=since, until=until,
            provider=provider, model=model, project=project,
        )  # fmt: skip
        return result.breakdown if result.breakdown is not None else result.rows

    def report_full(
        self,
        kind: ReportKind = "daily",
        *,
        breakdown: bool = False,
        rollup: bool = False,
        tz: str = "UTC",
        since: date | None = None,
        until: date | None = None,
        provider: str | None = None,
        model: str | None = None,
        project: str | None = None,
    ) -> Report:
        """The whole :class:`agentlake.read.reports.Report`: rows, breakdown and totals
        (``rollup``: the session report per root session)."""
        from agentlake.read.reports import report

        flt = _report_filter(tz, since, until, provider, model, project)
        return report(self.catalog, self.workspace, kind, flt, breakdown=breakdown, rollup=rollup)

    def limits(self, *, tz: str = "UTC", provider: str | None = None) -> LimitsReport:
        """The latest rate-limit snapshot per provider, limit and window (as in
        :func:`agentlake.read.limits.limits_report`)."""
        from agentlake.read.limits import limits_report

        return limits_report(self.catalog, self.workspace, tz=tz, provider=provider)

    def unpriced(
        self,
        *,
        tz: str = "UTC",
        since: date | None = None,
        until: date | None = None,
        provider: str | None = None,
        model: str | None = None,
        project: str | None = None,
    ) -> pa.Table:
        """Models whose calls have no price, with their token volume."""
        from agentlake.read.reports import unpriced

        flt = _report_filter(tz, since, until, provider, model, project)
        return unpriced(self.catalog, self.workspace, flt)

    def dashboard(
        self,
        out: Path | str,
        *,
        tz: str = "UTC",
        since: date | None = None,
        until: date | None = None,
        provider: str | None = None,
        model: str | None = None,
        project: str | None = None,
    ) -> DashboardWritten:
        """Write the HTML dashboard of the calls inside the filters to ``out`` (as
        ``agentlake report html``)."""
        from agentlake.read.dashboard import write_dashboard

        flt = _report_filter(tz, since, until, provider, model, project)
        return write_dashboard(self.catalog, self.workspace, flt, Path(out))

    def search(self, query: str, *, limit: int = 20, mode: SearchMode = "auto") -> list[SearchHit]:
        """Ranked search by words, meaning or both (``mode``, as ``agentlake search
        --mode``: hybrid once the workspace's events are embedded)."""
        from agentlake.read.search import search

        return search(self.catalog, self.workspace, query, limit=limit, mode=mode)

    def sessions(
        self,
        *,
        provider: str | Sequence[str] | None = None,
        project: str | None = None,
        since: date | datetime | None = None,
        max_age: str | timedelta | None = None,
        text: str | None = None,
        limit: int = 25,
        cursor: str | None = None,
    ) -> SessionPage:
        """One page of sessions, newest first (filters and ``cursor`` as in
        :func:`agentlake.read.sessions.list_sessions`)."""
        from agentlake.read.sessions import list_sessions

        return list_sessions(
            self.catalog, self.workspace, provider=provider, project=project, since=since,
            max_age=max_age, text=text, limit=limit, cursor=cursor,
        )  # fmt: skip

    def session(self, session_id: str, *, full: bool = False) -> SessionDetail:
        """One session by id or unique prefix; its timeline bounded unless ``full``."""
        from agentlake.read.sessions import DEFAULT_BOUNDS, show_session

        return show_session(
            self.catalog, self.workspace, session_id, bounds=None if full else DEFAULT_BOUNDS
        )

    def export_parquet(
        self,
        target: str | Path,
        *,
        tz: str = "UTC",
        since: date | None = None,
        until: date | None = None,
        provider: str | None = None,
        project: str | None = None,
        include_hidden: bool = False,
        replace: bool = False,
    ) -> ParquetExport:
        """Write events, usage (with cost), sessions and rejects as a Hive-partitioned
        Parquet dataset at ``target`` (``agentlake export parquet``)."""
        from agentlake.read.export_parquet import export_parquet

        flt = _export_filter(tz, since, until, provider, project, include_hidden)
        return export_parquet(self.catalog, self.workspace, Path(target), flt, replace=replace)

    def export_jsonl(
        self,
        target: str | Path,
        *,
        tz: str = "UTC",
        since: date | None = None,
        until: date | None = None,
        provider: str | None = None,
        project: str | None = None,
        include_hidden: bool = False,
        replace: bool = False,
    ) -> JsonlExport:
        """Write sessions, events and calls as one session-interchange JSONL file at
        ``target`` (``agentlake export jsonl``)."""
        from agentlake.read.export_jsonl import export_jsonl

        flt = _export_filter(tz, since, until, provider, project, include_hidden)
        return export_jsonl(self.catalog, self.workspace, Path(target), flt, replace=replace)

    def sql(self, statement: str, *, all_workspaces: bool = False) -> pa.Table:
        """One read-only query over this workspace's views (every workspace's rows with
        ``all_workspaces``); see :func:`agentlake.read.queries.scoped_sql` for its bounds."""
        from agentlake.read.queries import scoped_sql

        return scoped_sql(self.catalog, self.workspace, statement, all_workspaces=all_workspaces)


def _report_filter(
    tz: str,
    since: date | None,
    until: date | None,
    provider: str | None,
    model: str | None,
    project: str | None,
) -> ReportFilter:
    from agentlake.read.reports import ReportFilter

    return ReportFilter(
        tz=tz, since=since, until=until, provider=provider, model=model, project=project
    )


def _export_filter(
    tz: str,
    since: date | None,
    until: date | None,
    provider: str | None,
    project: str | None,
    include_hidden: bool,
) -> ReportFilter:
    from agentlake.read.reports import ReportFilter

    return ReportFilter(
        tz=tz, since=since, until=until, provider=provider, project=project,
        include_hidden=include_hidden,
    )  # fmt: skip


def open(
    catalog: str | Path | None = None,
    workspace: str | None = None,
    *,
    data_path: str | Path | None = None,
) -> Lake:
    """The catalog ``catalog`` names: a DuckDB file's path or a DuckLake URL (default:
    ``$AGENTLAKE_CATALOG``, the config file's, or the XDG path); ``data_path`` is a new
    lake's Parquet folder. The workspace defaults as the CLI's does."""
    from agentlake.config import check_workspace, default_workspace, resolve_catalog

    found = resolve_catalog(catalog, data_path=data_path)
    chosen = check_workspace(workspace) if workspace else default_workspace(catalog=found)
    return Lake(found, chosen)
