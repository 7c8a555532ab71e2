"""The lifecycle and tag filters every read applies (``sessions hide``, ``sessions
tag``), for the reads whose own modules are better left alone: the search's ranked
query takes its fragment from ``sql/queries/search_lifecycle.sql``, checked at query
time against ``sessions`` and ``session_tags`` (the postings are never rewritten)."""

from __future__ import annotations

from functools import cache

import duckdb

from agentlake import sql


@cache
def search_predicate() -> str:
    """The ``AND …`` lines that keep a matching event ``e`` only when its session is
    visible (or ``$include_hidden``) and carries ``$tag`` (when given)."""
    lines = sql.query("search_lifecycle").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("--")) + "\n"


def any_hidden(con: duckdb.DuckDBPyConnection, workspace: str) -> bool:
    """Whether ``workspace`` has hidden sessions (a search ranks its postings alone only
    when it has none)."""
    row = con.execute(sql.query("sessions_hidden_count"), {"workspace": workspace}).fetchone()
    return bool(row and row[0])
