"""How close the plans are to their rate limits: the latest snapshot of each provider's
limit windows (``agentlake report limits``), and of one session's (``sessions show``).

Providers that write rate-limit snapshots into their transcripts (Codex, on its token
counts) are imported into ``rate_limits``; a snapshot is as old as the record that
carried it, so every row says how old it is and whether its window has reset since.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa

from agentlake import sql
from agentlake.load.catalog import reading
from agentlake.load.lake import Catalog
from agentlake.read.reports import ReportFilter

JSON_VERSION: Final = 1
LIMIT_COLUMNS: Final = (
    "provider", "limit_id", "window_kind", "window_minutes", "plan_type", "used_percent",
    "resets_at", "resets_in_seconds", "reset_passed", "observed_at", "age_seconds",
    "session_id",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LimitsReport:
    """The latest snapshot of every provider, limit and window (``rows``, columns
    :data:`LIMIT_COLUMNS`; times local in ``tz``), as of ``now``."""

    tz: str
    provider: str | None
    now: datetime
    rows: pa.Table

    def to_json(self) -> dict[str, Any]:
        """The stable ``report limits --json`` document (README "Reports")."""
        local = self.now.astimezone(ZoneInfo(self.tz)).replace(tzinfo=None)
        return {
            "version": JSON_VERSION,
            "report": "limits",
            "filters": {"tz": self.tz, "provider": self.provider},
            "now": local.isoformat(),
            "limits": self.rows.to_pylist(),
        }


def limits_report(
    catalog: Catalog,
    workspace: str,
    *,
    tz: str = "UTC",
    provider: str | None = None,
    now: datetime | None = None,
    include_hidden: bool = False,
) -> LimitsReport:
    """The latest rate-limit snapshot of each provider (id or alias), limit and window
    of the workspace, with how old it is and when its window resets (in zone ``tz``);
    hidden sessions' snapshots only with ``include_hidden``."""
    flt = ReportFilter(tz=tz, provider=provider)  # validates the zone and the provider
    moment = now or datetime.now(UTC)
    with reading(catalog) as con:
        rows = latest_limits(
            con, workspace, tz=flt.tz, provider=flt.provider, now=moment,
            include_hidden=include_hidden,
        )  # fmt: skip
    return LimitsReport(flt.tz, flt.provider, moment, rows)


def latest_limits(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    *,
    tz: str = "UTC",
    provider: str | None = None,
    session_id: str | None = None,
    now: datetime | None = None,
    include_hidden: bool = False,
) -> pa.Table:
    """The latest snapshot per provider, limit and window on ``con`` (of one session
    when ``session_id`` is given; of hidden sessions only with ``include_hidden``),
    columns :data:`LIMIT_COLUMNS`."""
    moment = now or datetime.now(UTC)
    params = {
        "workspace": workspace, "provider": provider, "session_id": session_id, "tz": tz,
        "now_epoch": moment.timestamp(), "include_hidden": include_hidden,
    }  # fmt: skip
    table = con.execute(sql.query("report_limits"), params).to_arrow_table()
    return table.select(list(LIMIT_COLUMNS))
