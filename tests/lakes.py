"""DuckLake catalogs for tests: a real PostgreSQL server started for the test session
(initdb into a temporary folder, listening on 127.0.0.1 on a free port, stopped at the
end) and a fresh lake per test on it or on a SQLite file.

Without PostgreSQL binaries the PostgreSQL tests skip, saying why; with
``AGENTLAKE_REQUIRE_POSTGRES=1`` (CI, which installs them) their absence is an error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import duckdb
import pytest

from agentlake.load.lake import LakeCatalog, connect_lake, parse_catalog
from fixtures.postgres import PostgresMissing, PostgresServer, start_postgres

Backend = Literal["duckdb", "sqlite", "postgres"]
BACKENDS: tuple[Backend, ...] = ("duckdb", "sqlite", "postgres")


def postgres_for_tests() -> PostgresServer:
    """:func:`start_postgres`, or skip the test saying why (a failure where
    ``AGENTLAKE_REQUIRE_POSTGRES=1``)."""
    try:
        return start_postgres()
    except PostgresMissing as missing:
        if os.environ.get("AGENTLAKE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{missing}: install the postgresql package")
        pytest.skip(str(missing))


def lake_url(backend: Backend, folder: Path, server: PostgresServer | None) -> str:
    """A new catalog of ``backend`` under ``folder``: the ``--catalog`` value naming it
    (its data path is ``folder/data``, passed as ``--data-path``)."""
    if backend == "duckdb":
        return str(folder / "catalog.duckdb")
    if backend == "sqlite":
        return f"ducklake:sqlite:{folder / 'lake.sqlite'}"
    assert server is not None
    return f"ducklake:postgres:{server.dsn(server.new_database())}"


def read_connection(catalog: str | Path | LakeCatalog) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a catalog of any backend (or the URL naming it), for
    tests to look inside."""
    return _connection(catalog, read_only=True)


def write_connection(catalog: str | Path | LakeCatalog) -> duckdb.DuckDBPyConnection:
    """A read-write connection to a catalog of any backend (or the URL naming it), for
    tests that damage one."""
    return _connection(catalog, read_only=False)


def _connection(catalog: str | Path | LakeCatalog, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    if isinstance(catalog, str):
        catalog = parse_catalog(catalog)
    if isinstance(catalog, LakeCatalog):
        return connect_lake(catalog, read_only=read_only)
    return duckdb.connect(str(catalog), read_only=read_only)


def catalog_of(url: str | Path | LakeCatalog, folder: Path) -> Path | LakeCatalog:
    """The catalog ``url`` names (as given when it is one), with ``folder/data`` as a
    new lake's data path."""
    if isinstance(url, Path | LakeCatalog):
        return url
    return parse_catalog(url, data_path=str(folder / "data"))
