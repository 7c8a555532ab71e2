"""``agentlake lake compact`` and ``agentlake lake migrate`` on real lakes (SQLite and
PostgreSQL metadata), through the CLI in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.lake import LakeCatalog
from fixtures.postgres import PostgresServer
from fixtures.synth import generate_demo_home
from tests.conftest import CliRunner
from tests.lakes import catalog_of, lake_url, read_connection

from .helpers import scalar, snapshot

TABLES = ("sources", "sessions", "events", "usage", "rejects")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("home")
    generate_demo_home(root)
    return root


def _files(lake: LakeCatalog) -> dict[str, int]:
    """Live Parquet data files per table."""
    con = read_connection(lake)
    try:
        rows = con.execute(
            "SELECT t.table_name, count(*) FROM __ducklake_metadata_lake.ducklake_data_file f "
            "JOIN __ducklake_metadata_lake.ducklake_table t USING (table_id) "
            "WHERE f.end_snapshot IS NULL AND t.end_snapshot IS NULL GROUP BY ALL"
        ).fetchall()
        return {str(table): int(n) for table, n in rows}
    finally:
        con.close()


def test_compact_merges_files_and_expires_snapshots_and_the_data_stay(
    home: Path, tmp_path: Path, cli: CliRunner
) -> None:
    url = lake_url("sqlite", tmp_path, None)
    lake = catalog_of(url, tmp_path)
    assert isinstance(lake, LakeCatalog)
    for provider in ("claude-code", "codex", "cursor"):  # commits of their own
        result = run_import(
            ImportOptions(catalog=lake, workspace="w", home=home, env={}, providers=(provider,),
                          build_index=False)
        )  # fmt: skip
        assert result.exit_code == 0
    before = snapshot(lake, TABLES)
    files = _files(lake)
    assert files["events"] == 3  # a file per commit
    done = cli("lake", "compact", "--keep", "0s", "--catalog", url, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["before"]["data_files"] == sum(files.values())
    # One file per table: the small ones merged, the rows the metadata store held
    # inline written out.
    after = _files(lake)
    assert set(after.values()) == {1} and set(files) <= set(after)
    assert doc["after"]["data_files"] == len(after)
    assert doc["after"]["snapshots"] == 1 < doc["before"]["snapshots"]
    assert doc["deleted_files"] > 0
    assert snapshot(lake, TABLES) == before
    report = cli("report", "daily", "--json", "--catalog", url, "--workspace", "w")
    assert report.returncode == 0 and json.loads(report.stdout)["totals"]["total_tokens"] > 0


def test_migrate_copies_a_duckdb_catalog_verified_and_once(
    home: Path, tmp_path: Path, cli: CliRunner, postgres: PostgresServer
) -> None:
    source = tmp_path / "catalog.duckdb"
    other = tmp_path / "other"
    generate_demo_home(other, seed=9, providers=("codex",))
    for workspace, where, index in (("default", home, True), ("other", other, False)):
        result = run_import(
            ImportOptions(catalog=source, workspace=workspace, home=where, env={},
                          build_index=index)
        )  # fmt: skip
        assert result.exit_code == 0
    url = lake_url("postgres", tmp_path, postgres)
    lake = catalog_of(url, tmp_path)
    # The lake holds a workspace of its own already: the copy's numbers go past its own.
    mine = run_import(ImportOptions(catalog=lake, workspace="mine", home=home, env={}))
    assert mine.exit_code == 0
    copied = cli("lake", "migrate", str(source), "--catalog", url,
                 "--data-path", str(tmp_path / "data"), "--json")  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    doc = json.loads(copied.stdout)
    assert doc["verified"] and doc["workspaces"] == ["default", "other"]
    assert doc["rows"]["events"] > 0
    for workspace in ("default", "other"):
        assert _rows(lake, workspace) == _rows(source, workspace)
    for query in ("cache", "flaky test", "parquet reader"):  # numbers shifted, same hits
        assert _hits(cli, url, "default", query) == _hits(cli, str(source), "default", query)
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


def test_lifecycle_changes_and_their_audit_rows_work_on_a_lake(
    home: Path, tmp_path: Path, cli: CliRunner
) -> None:
    """hide, restore, tag, untag and purge, each with its audit row, on a lake."""
    url = lake_url("sqlite", tmp_path, None)
    lake = catalog_of(url, tmp_path)
    imported = run_import(
        ImportOptions(catalog=lake, workspace="w", home=home, env={}, build_index=False)
    )
    assert imported.exit_code == 0
    common = ("--catalog", url, "--workspace", "w")
    listed = cli("sessions", "list", "--json", "--limit", "2", *common)
    first, second = (s["session_id"] for s in json.loads(listed.stdout)["sessions"])
    for args in (
        ("sessions", "hide", first),
        ("sessions", "tag", first, "team/infra"),
        ("sessions", "untag", first, "team/infra"),
    ):
        done = cli(*args, "--json", *common)
        assert done.returncode == 0, done.stderr
    preview = cli("sessions", "purge", second, "--json", *common)
    assert preview.returncode == 0, preview.stderr
    operation = json.loads(preview.stdout)["operation_id"]
    purged = cli("sessions", "purge", second, "--confirm", operation, "--json", *common)
    assert purged.returncode == 0, purged.stderr
    audit = cli("audit", "--json", *common)
    rows = json.loads(audit.stdout)["rows"]
    assert [r["operation"] for r in rows] == ["purge", "untag", "tag", "hide"]
    assert [r["audit_id"] for r in rows] == sorted((r["audit_id"] for r in rows), reverse=True)
    assert scalar(lake, "SELECT count(*) FROM events WHERE session_id = ?", [second]) == 0
    doctor = cli("doctor", "--json", "--home", str(home), *common)
    checked = json.loads(doctor.stdout)["catalog"]["lake"]
    assert checked["metadata"] == "sqlite" and checked["data_path_writable"] is True
    assert checked["state"] == "ok" and checked["snapshot"] > 0 and checked["leases"] == []
    assert checked["commits_since_import"] >= 5  # the changes above, after the import


def test_one_writer_per_workspace_and_a_dead_writer_s_lease_is_taken_over(
    home: Path, tmp_path: Path, cli: CliRunner
) -> None:
    """Two imports of one workspace never run at once (the second would plan from the
    same checkpoints): it fails fast (exit 5) or waits; another workspace goes on. A
    lease left by a killed process of this machine is taken over."""
    import socket

    from agentlake.load.catalog import open_for_write
    from agentlake.load.lake import connect_lake

    url = lake_url("sqlite", tmp_path, None)
    lake = catalog_of(url, tmp_path)
    assert isinstance(lake, LakeCatalog)
    args = ("import", "--home", str(home), "--catalog", url, "--no-index", "--json")
    elsewhere = tmp_path / "elsewhere"
    generate_demo_home(elsewhere, seed=5, providers=("codex",))
    with open_for_write(lake, workspace="w"):
        held = cli(*args, "--workspace", "w")
        assert held.returncode == 5
        assert "workspace 'w' is being written by process" in held.stderr
        other = cli("import", "--home", str(elsewhere), "--catalog", url, "--no-index",
                    "--workspace", "elsewhere")  # fmt: skip
        assert other.returncode == 0, other.stderr
    first = cli(*args, "--workspace", "w")
    assert first.returncode == 0, first.stderr
    con = connect_lake(lake, read_only=False)
    try:  # a holder that was SIGKILLed: no such process on this host any more
        con.execute(
            "INSERT INTO writer_leases VALUES ('w', 'gone', ?, 4194300, NULL, now(), now())",
            [socket.gethostname()],
        )
    finally:
        con.close()
    again = cli(*args, "--workspace", "w")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["totals"]["events"] == 0  # nothing counted twice
    assert scalar(lake, "SELECT count(*) FROM writer_leases") == 0
