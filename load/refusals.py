"""Which refusals a run is the first to meet (``refusals`` table, sql/013_refusals.sql).

A nightly job should hear of a lasting problem once: a source refused again for the same
reason (code and message) as its last report is *still refused*, not new, and only new
refusals make an import exit 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from agentlake import sql

from .catalog import run_script, statements
from .lease import committed


@dataclass(frozen=True, slots=True)
class Refusal:
    """One source a run refused, and why."""

    source_id: str
    provider: str
    path: str
    code: str
    message: str | None


def record_refusals(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    import_id: int,
    refusals: Sequence[Refusal],
    *,
    providers: Sequence[str],
    complete: bool,
) -> frozenset[str]:
    """Store this run's ``refusals`` and return the source ids refused anew. A
    ``complete`` run (it planned every source of ``providers``) also forgets the earlier
    refusals of those providers' sources it found fine."""
    find, forget, upsert = statements(sql.query("record_refusals"))
    rows = [(r.source_id, r.provider, r.path, r.code, r.message) for r in refusals]

    def body() -> frozenset[str]:
        # A handful of rows, bound as values: registering an Arrow table would load
        # pyarrow.dataset, which a nightly run with nothing new never needs.
        con.execute(
            "CREATE OR REPLACE TEMP TABLE run_refusals (source_id VARCHAR, provider VARCHAR, "
            "path VARCHAR, code VARCHAR, message VARCHAR)"
        )
        if rows:
            con.executemany("INSERT INTO run_refusals VALUES (?, ?, ?, ?, ?)", rows)
        fresh = frozenset(str(r[0]) for r in con.execute(find, {"workspace": workspace}).fetchall())
        if complete:
            con.execute(forget, {"workspace": workspace, "providers": list(providers)})
        run_script(con, upsert, {"workspace": workspace, "import_id": import_id})
        con.execute("DROP TABLE run_refusals")
        return fresh

    return committed(con, body)
