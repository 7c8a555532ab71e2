"""What a dashboard shows, read from the catalog in one connection: usage per local day,
provider and model; calls per weekday and hour; the costliest sessions and projects.

Every query reads the calls through the reports' ``report_calls`` macro, so a
dashboard's filters mean what the reports' do and its totals equal theirs. The page
filters by provider itself, so each table holds every provider inside the filter (and
the top sessions and projects of each).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from agentlake import sql
from agentlake.load.lake import current_snapshot
from agentlake.read.reports import ReportFilter, report_connection

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides

# Sessions and projects listed per provider (and of all providers together).
TOP: Final = 10
# A 15-minute cell never straddles a local hour or midnight (every zone's offset is a
# whole number of quarter hours), so cells are converted to local time, not calls.
_CELL_S: Final = 900
# Costs go to the page rounded to a millionth of a dollar: exact enough to read, and a
# third of the digits of a double.
_COST_DIGITS: Final = 6


@dataclass(frozen=True, slots=True)
class DashboardData:
    """The tables of one dashboard: ``days`` (local day × provider × model: calls, token
    kinds, cost and uncached cost), ``hours`` (provider × ISO weekday × local hour:
    calls, tokens, cost), ``sessions`` (top root sessions, subagents folded in),
    ``projects`` (top projects per provider) and ``provider_sessions`` (sessions with
    calls per provider); ``snapshot`` is the lake snapshot read (``None`` for a file)."""

    workspace: str
    filter: ReportFilter
    days: pa.Table
    hours: pa.Table
    sessions: pa.Table
    projects: pa.Table
    provider_sessions: pa.Table
    snapshot: int | None

    @property
    def calls(self) -> int:
        """The calls inside the filter."""
        return int(pc.sum(self.days["calls"]).as_py() or 0)

    def page_json(self) -> dict[str, Any]:
        """The page's data: columnar, providers and models as indexes into two lists,
        days as days since 1970-01-01, costs rounded to a millionth of a dollar."""
        providers = sorted(
            set(self.days["provider"].to_pylist()) | set(self.hours["provider"].to_pylist())
        )
        models = _models_by_cost(self.days)
        days, hours, projects = self.days, self.hours, self.projects
        return {
            "providers": providers,
            "models": models,
            "days": _columns({
                "day": days["day"].cast(pa.int32()),  # a date32 counts days since 1970
                "p": _index(days["provider"], providers),
                "m": _index(days["model"], models),
                "calls": days["calls"],
                "input": days["input_tokens"],
                "cache_write": days["cache_write_tokens"],
                "cache_read": days["cache_read_tokens"],
                "output": days["output_tokens"],
                "cost": _money(days["cost_usd"]),
                "uncached": _money(days["uncached_cost_usd"]),
                "unpriced": days["unpriced_calls"],
            }),
            "hours": _columns({
                "p": _index(hours["provider"], providers),
                "weekday": hours["weekday"],
                "hour": hours["hour"],
                "calls": hours["calls"],
                "tokens": hours["total_tokens"],
                "cost": _money(hours["cost_usd"]),
            }),
            "projects": _columns({
                "project": projects["project_path"],
                "p": _index(projects["provider"], providers),
                "sessions": projects["sessions"],
                "calls": projects["calls"],
                "tokens": projects["total_tokens"],
                "cost": _money(projects["cost_usd"]),
            }),
            "sessions": [_session(row, providers) for row in self.sessions.to_pylist()],
            "provider_sessions": dict(
                zip(self.provider_sessions["provider"].to_pylist(),
                    self.provider_sessions["sessions"].to_pylist(), strict=True)
            ),
        }  # fmt: skip


def dashboard_data(
    catalog: Catalog, workspace: str, flt: ReportFilter, *, prices: PriceOverrides | None = None
) -> DashboardData:
    """The tables of the dashboard of ``workspace``'s calls inside ``flt``, read in one
    transaction (one lake snapshot)."""
    params: dict[str, object] = {**flt.params(workspace), "cell_s": _CELL_S}
    with report_connection(catalog, prices, scope=(workspace, flt)) as con:
        snapshot = current_snapshot(con)
        con.execute(sql.query("dashboard_cells"), params)
        local = {"tz": flt.tz, "cell_s": _CELL_S}
        try:
            days = con.execute(sql.query("dashboard_days"), local).to_arrow_table()
            hours = con.execute(sql.query("dashboard_hours"), local).to_arrow_table()
        finally:
            con.execute("DROP TABLE IF EXISTS temp.dashboard_cells")
        con.execute(sql.query("dashboard_session_calls"), flt.params(workspace))
        con.execute(sql.query("dashboard_sessions_macro"))
        try:
            ranked = {**flt.params(workspace), "top": TOP}
            sessions_query = sql.query("dashboard_sessions").replace(
                "/* sessions */", sql.query("report_session_rollup")
            )
            sessions = con.execute(sessions_query, ranked).to_arrow_table()
            projects = con.execute(sql.query("dashboard_projects"), ranked).to_arrow_table()
            counts = con.execute(
                sql.query("dashboard_provider_sessions"), flt.params(workspace)
            ).to_arrow_table()
        finally:
            con.execute("DROP TABLE IF EXISTS temp.dashboard_session_calls")
    return DashboardData(workspace, flt, days, hours, sessions, projects, counts, snapshot)


def _models_by_cost(days: pa.Table) -> list[str]:
    """The models of ``days``, costliest first (then most tokens, then by name)."""
    spent = days.select(["model", "total_tokens"]).append_column(
        "cost", pc.fill_null(days["cost_usd"], 0.0)
    )
    totals = spent.group_by("model").aggregate([("cost", "sum"), ("total_tokens", "sum")])
    order = [("cost_sum", "descending"), ("total_tokens_sum", "descending"), ("model", "ascending")]
    return [str(m) for m in totals.sort_by(order)["model"].to_pylist()]


def _index(column: pa.ChunkedArray, names: list[str]) -> pa.ChunkedArray:
    """Each value of ``column`` as its position in ``names``."""
    return pc.index_in(column, value_set=pa.array(names, pa.string()))


def _money(column: pa.ChunkedArray) -> pa.ChunkedArray:
    return pc.round(column, _COST_DIGITS)


def _columns(columns: dict[str, pa.ChunkedArray]) -> dict[str, list[Any]]:
    return {name: column.to_pylist() for name, column in columns.items()}


def _session(row: dict[str, Any], providers: list[str]) -> dict[str, Any]:
    """One top session as the page reads it (times as ISO text in the report's zone)."""
    return {
        "p": providers.index(row["provider"]),
        "id": row["session_id"],
        "label": row["label"] or row["title"],
        "project": row["project_path"],
        "started": _iso(row["started_at"] or row["first_activity"]),
        "updated": _iso(row["updated_at"] or row["last_activity"]),
        "first": _iso(row["first_activity"]),
        "last": _iso(row["last_activity"]),
        "calls": row["calls"],
        "input": row["input_tokens"],
        "cache_write": row["cache_write_tokens"],
        "cache_read": row["cache_read_tokens"],
        "output": row["output_tokens"],
        "tokens": row["total_tokens"],
        "cost": None if row["cost_usd"] is None else round(row["cost_usd"], _COST_DIGITS),
        "models": row["models"],
        "subagents": row["subagents"],
    }


def _iso(value: Any) -> str | None:
    return None if value is None else value.isoformat(timespec="seconds")
