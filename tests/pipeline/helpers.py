"""Helpers for end-to-end tests: catalog snapshots compared table by table, and
imports run through the real CLI in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from agentlake.extract.extract import ExtractLimits
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.lake import LakeCatalog
from tests.conftest import cli_env

# Columns that legitimately differ between two imports of the same data.
VOLATILE = {"import_id", "last_import_id", "started_at", "ended_at", "applied_at"}
TABLES = ("sources", "sessions", "events", "usage", "rejects")
# Tables read through a query: postings name events and terms by their numbers in the
# index, which depend on commit boundaries, so they are compared by event id and term.
_READ_AS = {
    "search_postings": "SELECT t.workspace, t.term, d.event_id, p.tf, p.dl FROM search_postings p "
    "LEFT JOIN search_terms t USING (term_id) LEFT JOIN search_docs d USING (doc)",
    "search_terms": "SELECT workspace, term, df FROM search_terms",
}


def snapshot(
    catalog: Path | str | LakeCatalog,
    tables: tuple[str, ...] = TABLES,
    *,
    keep_paths: bool = True,
    exclude: tuple[str, ...] = (),
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of each table, sorted, without run-dependent (or ``exclude``d) columns
    (a catalog of any backend)."""
    from tests.lakes import read_connection

    con = read_connection(catalog)
    try:
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table in tables:
            relation = f"({_READ_AS[table]})" if table in _READ_AS else table
            cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()]
            keep = [
                c
                for c in cols
                if c not in VOLATILE and c not in exclude and (keep_paths or c != "path")
            ]
            select = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in keep)
            out[table] = sorted(
                con.execute(f"SELECT {select} FROM {relation}").fetchall(), key=repr
            )
        return out
    finally:
        con.close()


def import_with(home: Path, catalog: Path, limits: ExtractLimits) -> None:
    """Import ``home`` into ``catalog`` in process with ``limits`` and no memory ceiling
    (so the limits alone set the batches); the import must succeed."""
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      memory_limit=None, limits=limits)
    )  # fmt: skip
    assert result.exit_code == 0


def scalar(catalog: Path | str | LakeCatalog, query: str, params: list[Any] | None = None) -> Any:
    """The single value of ``query`` (a catalog of any backend, or its URL)."""
    from tests.lakes import read_connection

    con = read_connection(catalog)
    try:
        row = con.execute(query, params or []).fetchone()
        return None if row is None else row[0]
    finally:
        con.close()


def start_import(home: Path, catalog: Path, *options: str) -> subprocess.Popen[str]:
    """``agentlake import`` of ``home`` into ``catalog`` in a subprocess (stderr piped,
    for the assertion message when it fails)."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentlake", "import", "--home", str(home), "--catalog",
         str(catalog), *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=cli_env(), text=True,
    )  # fmt: skip


def start_import_reporting(home: Path, catalog: Path, *options: str) -> subprocess.Popen[str]:
    """:func:`start_import` with ``--progress lines``: read its stderr with
    :func:`wait_for_commit` (or let it finish with ``communicate``), never leave it unread."""
    return start_import(home, catalog, "--progress", "lines", *options)


def wait_for_commit(proc: subprocess.Popen[str], fraction: float) -> bool:
    """Read ``proc``'s progress lines until commits cover ``fraction`` of the bytes it
    planned (0 means: once it has planned). False when the import ended first."""
    assert proc.stderr is not None
    total = None
    for line in proc.stderr:
        words = line.split()
        if line.startswith("progress: planned "):
            total = int(words[2])
            if fraction <= 0:
                return True
        elif (
            line.startswith("progress: committed ")
            and total is not None
            and int(words[2]) >= fraction * total
        ):
            return True
    return False
