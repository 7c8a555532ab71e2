"""What the provider test modules share: a provider's import of a home into a fresh
catalog, and reading rows back from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from agentlake.ingest.run import ImportOptions, ImportResult, run_import


def import_provider(
    provider: str, home: Path, catalog: Path, env: dict[str, str] | None = None
) -> ImportResult:
    """Import what ``provider`` discovers under ``home`` (no search index)."""
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env=env or {},
                      providers=(provider,), build_index=False)
    )  # fmt: skip


def catalog_rows(catalog: Path, sql: str) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` on ``catalog``, opened read-only."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()
