"""Read-side operations: reports, search and ad-hoc SQL, each on a read-only connection
scoped to one workspace. Results are Arrow tables; the CLI decides how to show them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import duckdb
import pyarrow as pa

from agentlake import sql
from agentlake.load.catalog import open_for_read

from .errors import ConfigurationError

Period = Literal["daily", "weekly", "monthly"]
ReportKind = Literal["daily", "weekly", "monthly", "session"]
_UNITS: Final = {"daily": "day", "weekly": "week", "monthly": "month"}
SCOPED_TABLES: Final = (
    "sources",
    "sessions",
    "events",
    "usage",
    "imports",
    "rejects",
    "usage_costed",
    "usage_daily",
)


@dataclass(frozen=True, slots=True)
class ReportFilter:
    """Bounds shared by every report."""

    tz: str = "UTC"
    since: date | None = None
    until: date | None = None
    provider: str | None = None

    def __post_init__(self) -> None:
        try:
            ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigurationError(
                f"unknown time zone {self.tz!r}; use an IANA name such as Europe/Berlin"
            ) from None
        if self.since and self.until and self.since > self.until:
            raise ConfigurationError(f"--since {self.since} is after --until {self.until}")


def report(catalog: Path, workspace: str, kind: ReportKind, flt: ReportFilter) -> pa.Table:
    """Token usage per period (in ``flt.tz``) and model, or per session (most recent first)."""
    params: dict[str, object] = {
        "tz": flt.tz, "workspace": workspace, "provider": flt.provider,
        "since": flt.since, "until": flt.until,
    }  # fmt: skip
    if kind == "session":
        query = sql.query("report_session")
    else:
        query, params["unit"] = sql.query("report_period"), _UNITS[kind]
    with open_for_read(catalog) as con:
        return con.execute(query, params).to_arrow_table()


def period_report(catalog: Path, workspace: str, period: Period, flt: ReportFilter) -> pa.Table:
    """Usage per period (in ``flt.tz``) and model."""
    return report(catalog, workspace, period, flt)


def scoped_sql(catalog: Path, workspace: str, statement: str) -> pa.Table:
    """Run one read-only statement where every catalog table and view is replaced by a
    temporary view of this workspace's rows."""
    with open_for_read(catalog) as con:
        row = con.execute("SELECT current_database()").fetchone()
        assert row is not None
        database = '"' + str(row[0]).replace('"', '""') + '"'
        for name in SCOPED_TABLES:
            con.execute(
                f"CREATE TEMP VIEW {name} AS SELECT * FROM {database}.main.{name} "
                f"WHERE workspace = {_literal(workspace)}"
            )
        try:
            return con.execute(statement).to_arrow_table()
        except duckdb.Error as exc:
            raise ConfigurationError(f"SQL error: {' '.join(str(exc).split())[:300]}") from None


def _literal(text: str) -> str:
    """A SQL string literal (workspace names are validated to [A-Za-z0-9._-])."""
    return "'" + text.replace("'", "''") + "'"


def unpriced_models(catalog: Path, workspace: str) -> pa.Table:
    """Models of this workspace's calls that have no price (their cost is NULL): model,
    provider, calls, tokens; most tokens first. A call without a model is listed as NULL."""
    with open_for_read(catalog) as con:
        return con.execute(
            "SELECT model, provider, count(*) AS calls, sum(total_tokens) AS tokens "
            "FROM usage_costed WHERE workspace = $workspace AND cost_usd IS NULL "
            "GROUP BY ALL ORDER BY tokens DESC, calls DESC, model, provider",
            {"workspace": workspace},
        ).to_arrow_table()
