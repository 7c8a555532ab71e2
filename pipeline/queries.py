"""Ad-hoc read-only SQL scoped to one workspace. Results are Arrow tables; the CLI decides
how to show them (reports live in reports.py, search in search.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import duckdb
import pyarrow as pa

from agentlake.load.price_overrides import PriceOverrides, open_priced

from .errors import ConfigurationError

SCOPED_TABLES: Final = (
    "sources",
    "sessions",
    "events",
    "usage",
    "imports",
    "rejects",
    "usage_costed",
    "usage_daily",
    "session_rollup",
    "rate_limits",
)


def scoped_sql(
    catalog: Path, workspace: str, statement: str, *, prices: PriceOverrides | None = None
) -> pa.Table:
    """Run one read-only statement where every catalog table and view is replaced by a
    temporary view of this workspace's rows, with the user's ``prices`` (if any) in force
    for ``usage_costed`` and ``usage_daily``."""
    with open_priced(catalog, prices) as con:
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
