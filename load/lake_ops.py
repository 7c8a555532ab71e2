"""Operating a DuckLake catalog: compaction (small Parquet files merged, old snapshots
expired and their files deleted) and the copy of a DuckDB catalog into a lake."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

import duckdb

from agentlake.errors import ConfigurationError

from .catalog import SCHEMA_VERSION, open_for_read, open_for_write
from .lake import ALIAS, LakeCatalog, retrying
from .transaction import transaction

# The lake's metadata, as the ducklake extension attaches it beside the lake.
_METADATA: Final = f"__ducklake_metadata_{ALIAS}"


@dataclass(frozen=True, slots=True)
class LakeShape:
    """How many live Parquet data files and snapshots a lake has."""

    data_files: int
    snapshots: int

    def to_json(self) -> dict[str, int]:
        """The JSON form (``--json``)."""
        return {"data_files": self.data_files, "snapshots": self.snapshots}


@dataclass(frozen=True, slots=True)
class CompactResult:
    """What ``agentlake lake compact`` did: the lake's shape before and after, the
    files it deleted and how long it took."""

    lake: str
    before: LakeShape
    after: LakeShape
    deleted_files: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """The stable ``--json`` document."""
        return {
            "lake": self.lake,
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "deleted_files": self.deleted_files,
            "seconds": round(self.seconds, 3),
        }


def shape(con: duckdb.DuckDBPyConnection) -> LakeShape:
    """The live data files and the snapshots of the lake ``con`` has attached."""
    files = con.execute(
        f"SELECT count(*) FROM {_METADATA}.ducklake_data_file WHERE end_snapshot IS NULL"
    ).fetchone()
    snapshots = con.execute(f"SELECT count(*) FROM {_METADATA}.ducklake_snapshot").fetchone()
    return LakeShape(int(files[0]) if files else 0, int(snapshots[0]) if snapshots else 0)


def compact(
    lake: LakeCatalog, *, keep: timedelta = timedelta(days=7), wait: bool = False
) -> CompactResult:
    """Write the rows the metadata store holds inline to Parquet, merge the small
    Parquet files each commit leaves, expire the snapshots older than ``keep`` and
    delete the files only they still needed. Readers and importers go on meanwhile: a
    step that conflicts with an import's commit runs again."""
    started = time.perf_counter()
    seconds = int(keep.total_seconds())
    with open_for_write(lake, wait=wait) as con:
        before = shape(con)
        for step in (
            f"CALL ducklake_flush_inlined_data('{ALIAS}')",
            f"CALL ducklake_merge_adjacent_files('{ALIAS}')",
            f"CALL ducklake_expire_snapshots('{ALIAS}', "
            f"older_than => now() - INTERVAL {seconds} SECOND)",
        ):
            retrying(con, lambda step=step: _run(con, step))  # type: ignore[misc]
        cleanup = (
            f"SELECT count(*) FROM ducklake_cleanup_old_files('{ALIAS}', "
            f"older_than => now() - INTERVAL {seconds} SECOND)"
        )
        row = retrying(con, lambda: con.execute(cleanup).fetchone())
        after = shape(con)
    deleted = int(row[0]) if row else 0
    return CompactResult(str(lake), before, after, deleted, time.perf_counter() - started)


def _run(con: duckdb.DuckDBPyConnection, statement: str) -> None:
    # Fetched as Arrow: their rows hold zoned times, which Python objects would need
    # pytz for.
    con.execute(statement).to_arrow_table()


# Tables a copy leaves out: the lake's own version, secrets, prices and leases.
_NOT_COPIED: Final = frozenset(
    {"schema_version", "settings", "prices", "price_aliases", "writer_leases"}
)
# Numbers shared by every workspace of a catalog, shifted past the lake's own on copy:
# table -> its numbered columns (a posting names a term and a document by number).
_SHIFTED: Final = {
    "search_terms": {"term_id": "term"},
    "search_docs": {"doc": "doc"},
    "search_postings": {"term_id": "term", "doc": "doc"},
    "audit": {"audit_id": "audit"},
}
_BASES: Final = {
    "term": "SELECT coalesce(max(term_id), 0) FROM search_terms",
    "doc": "SELECT coalesce(max(doc), 0) FROM search_docs",
    "audit": "SELECT coalesce(max(audit_id), 0) FROM audit",
}
# The workspaces the copied file holds rows of.
_FILE_WORKSPACES: Final = (
    "SELECT workspace FROM migrated.sources UNION SELECT workspace FROM migrated.events "
    "UNION SELECT workspace FROM migrated.imports"
)
_TOTALS: Final = (
    "SELECT workspace, count(*), sum(input_tokens), sum(cache_write_tokens), "
    "sum(cache_read_tokens), sum(output_tokens), sum(reasoning_tokens), sum(total_tokens) "
    "FROM {usage} GROUP BY workspace ORDER BY workspace"
)


@dataclass(frozen=True, slots=True)
class MigrateResult:
    """What ``agentlake lake migrate`` copied: rows per table in the file and in the
    lake afterwards (equal, or the copy is rolled back), and the token totals per
    workspace, read back from the lake."""

    source: Path
    lake: str
    workspaces: tuple[str, ...]
    rows: dict[str, int]
    totals: dict[str, dict[str, int]]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """The stable ``--json`` document."""
        return {
            "source": str(self.source),
            "lake": self.lake,
            "workspaces": list(self.workspaces),
            "rows": self.rows,
            "totals": self.totals,
            "verified": True,
            "seconds": round(self.seconds, 3),
        }


def migrate_file(source: Path, lake: LakeCatalog, *, wait: bool = False) -> MigrateResult:
    """Copy the DuckDB catalog ``source`` into ``lake`` in one transaction: every
    workspace's rows, the search index's numbers shifted past the lake's own, then
    verified (rows per table and token totals per workspace equal in both, or nothing
    is copied). A workspace the lake holds already is refused: copying it again would
    count its calls twice."""
    started = time.perf_counter()
    # Under the file's reader lock: no import writes it while it is copied.
    with open_for_read(source, wait=wait), open_for_write(lake, wait=wait) as con:
        con.execute(f"ATTACH '{_quoted(source)}' AS migrated (READ_ONLY)")
        try:
            rows, totals, workspaces = retrying(con, lambda: _copy(con, source, lake))
            # Read back from the lake as committed: the copied workspaces' rows of every
            # table and their token totals equal the file's.
            con.execute("BEGIN")
            copied = {w: t for w, t in _totals(con, "usage").items() if w in totals}
            held = _counts(con, list(rows), ALIAS)
            con.execute("COMMIT")
        finally:
            con.execute("DETACH migrated")
    if held != rows or copied != totals:
        from agentlake.errors import FatalError

        differ = sorted(t for t in rows if held.get(t) != rows[t]) or ["usage totals"]
        raise FatalError(
            f"{lake}: the copy of {source} does not read back equal ({', '.join(differ)}); "
            "compare the two with agentlake sql before using the lake"
        )
    return MigrateResult(source, str(lake), workspaces, rows, totals, time.perf_counter() - started)


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _copy(
    con: duckdb.DuckDBPyConnection, source: Path, lake: LakeCatalog
) -> tuple[dict[str, int], dict[str, dict[str, int]], tuple[str, ...]]:
    version = con.execute("SELECT max(version) FROM migrated.schema_version").fetchone()
    if version is None or version[0] != SCHEMA_VERSION:
        raise ConfigurationError(
            f"{source}: catalog schema version {version[0] if version else None} is not "
            f"this agentlake's ({SCHEMA_VERSION}); run an import into it first"
        )
    tables = [
        str(name)
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'migrated' "
            "ORDER BY table_name"
        ).fetchall()
        if name not in _NOT_COPIED
    ]
    workspaces = tuple(
        str(w) for (w,) in con.execute(f"SELECT * FROM ({_FILE_WORKSPACES}) ORDER BY 1").fetchall()
    )
    with transaction(con):
        held = [
            str(w)
            for (w,) in con.execute(
                "SELECT DISTINCT workspace FROM imports WHERE workspace IN "
                "(SELECT workspace FROM migrated.imports) ORDER BY workspace"
            ).fetchall()
        ]
        if held:
            raise ConfigurationError(
                f"{lake}: already holds workspace(s) {', '.join(held)}; copying them again "
                "would count their calls twice (migrate into another lake)"
            )
        bases = {name: _one(con, query) for name, query in _BASES.items()}
        for table in tables:
            shifted = _SHIFTED.get(table, {})
            columns = [
                str(c)
                for (c,) in con.execute(
                    "SELECT column_name FROM duckdb_columns() WHERE database_name = 'migrated' "
                    "AND table_name = ? ORDER BY column_index",
                    [table],
                ).fetchall()
            ]
            select = ", ".join(
                f'"{c}" + {bases[shifted[c]]} AS "{c}"' if c in shifted else f'"{c}"'
                for c in columns
            )
            con.execute(f"INSERT INTO {table} BY NAME SELECT {select} FROM migrated.{table}")
    rows = _counts(con, tables, "migrated")
    totals = _totals(con, "migrated.usage")
    return rows, totals, workspaces


def _counts(con: duckdb.DuckDBPyConnection, tables: list[str], database: str) -> dict[str, int]:
    """Rows per table of ``database`` that belong to the file's workspaces (postings,
    which name no workspace, through their terms)."""
    scope = f"workspace IN ({_FILE_WORKSPACES})"
    counts = {}
    for table in tables:
        if table == "search_postings":
            query = (
                f"SELECT count(*) FROM {database}.search_postings WHERE term_id IN "
                f"(SELECT term_id FROM {database}.search_terms WHERE {scope})"
            )
        else:
            query = f"SELECT count(*) FROM {database}.{table} WHERE {scope}"
        counts[table] = _one(con, query)
    return counts


def _one(con: duckdb.DuckDBPyConnection, query: str) -> int:
    row = con.execute(query).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _totals(con: duckdb.DuckDBPyConnection, usage: str) -> dict[str, dict[str, int]]:
    names = ("calls", "input", "cache_write", "cache_read", "output", "reasoning", "total")
    return {
        str(row[0]): dict(zip(names, (int(v or 0) for v in row[1:]), strict=True))
        for row in con.execute(_TOTALS.format(usage=usage)).fetchall()
    }
