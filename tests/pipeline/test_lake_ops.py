"""``agentlake lake compact`` and ``agentlake lake migrate`` on real lakes (SQLite and
PostgreSQL metadata), through the CLI in process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.lake import LakeCatalog
from fixtures.synth import generate_demo_home
from tests.conftest import CliRunner
from tests.lakes import catalog_of, lake_url, read_connection

from .helpers import snapshot

TABLES = ("sources", "sessions", "events", "usage", "rejects")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("home")
    generate_demo_home(root)
    return root


def _files(lake: LakeCatalog) -> int:
    con = read_connection(lake)
    try:
        row = con.execute(
            "SELECT count(*) FROM __ducklake_metadata_lake.ducklake_data_file "
            "WHERE end_snapshot IS NULL"
        ).fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


def test_compact_merges_files_and_expires_snapshots_and_the_data_stay(
    home: Path, tmp_path: Path, cli: CliRunner
) -> None:
    url = lake_url("sqlite", tmp_path, None)
    lake = catalog_of(url, tmp_path)
    assert isinstance(lake, LakeCatalog)
    for provider in ("claude-code", "codex", "gemini-cli", "cursor"):  # many small commits
        result = run_import(
            ImportOptions(catalog=lake, workspace="w", home=home, env={}, providers=(provider,),
                          build_index=False)
        )  # fmt: skip
        assert result.exit_code == 0
    before = snapshot(lake, TABLES)
    files = _files(lake)
    time.sleep(1.1)  # every snapshot older than --keep 1s
    done = cli("lake", "compact", "--keep", "1s", "--catalog", url, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["before"]["data_files"] == files
    assert doc["after"]["data_files"] < files
    assert doc["after"]["snapshots"] < doc["before"]["snapshots"]
    assert doc["deleted_files"] > 0
    assert snapshot(lake, TABLES) == before
    report = cli("report", "daily", "--json", "--catalog", url, "--workspace", "w")
    assert report.returncode == 0 and json.loads(report.stdout)["totals"]["total_tokens"] > 0


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_migrate_copies_a_duckdb_catalog_verified_and_once(
    backend: str, home: Path, tmp_path: Path, cli: CliRunner, request: pytest.FixtureRequest
) -> None:
    source = tmp_path / "catalog.duckdb"
    for workspace in ("default", "other"):
        result = run_import(ImportOptions(catalog=source, workspace=workspace, home=home, env={}))
        assert result.exit_code in (0, 1)
    server = request.getfixturevalue("postgres") if backend == "postgres" else None
    url = lake_url(backend, tmp_path, server)  # type: ignore[arg-type]
    lake = catalog_of(url, tmp_path)
    # The lake holds a workspace of its own already: the copy's numbers go past its own.
    mine = run_import(ImportOptions(catalog=lake, workspace="mine", home=home, env={}))
    assert mine.exit_code in (0, 1)
    copied = cli("lake", "migrate", str(source), "--catalog", url,
                 "--data-path", str(tmp_path / "data"), "--json")  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    doc = json.loads(copied.stdout)
    assert doc["verified"] and doc["workspaces"] == ["default", "other"]
    assert doc["rows"]["events"] > 0
    for workspace in ("default", "other"):
        assert _rows(lake, workspace) == _rows(source, workspace)
        for query in ("cache", "flaky test", "parquet reader"):
            assert _hits(cli, url, workspace, query) == _hits(cli, str(source), workspace, query)
    again = cli("lake", "migrate", str(source), "--catalog", url)
    assert again.returncode == 2
    assert "already holds workspace(s) default, other" in again.stderr


def _rows(catalog: Path | LakeCatalog, workspace: str) -> dict[str, list[tuple[object, ...]]]:
    return {
        table: rows
        for table, rows in snapshot(catalog, TABLES).items()
        for rows in [[r for r in rows if workspace in r]]
    }


def _hits(cli: CliRunner, catalog: str, workspace: str, query: str) -> list[str]:
    found = cli("search", query, "--mode", "lexical", "--json", "--catalog", catalog,
                "--workspace", workspace)  # fmt: skip
    assert found.returncode == 0, found.stderr
    return [hit["event_id"] for hit in json.loads(found.stdout)["hits"]]
