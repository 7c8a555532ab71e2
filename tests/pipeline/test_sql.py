"""The boundary of `agentlake sql`: one query, the workspace's views only, no file access."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import duckdb
import pytest

from agentlake.errors import ConfigurationError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.read.queries import SCOPED_TABLES, SHARED_TABLES, scoped_sql
from fixtures.synth import generate_claude_home
from tests.conftest import CliRunner


@pytest.fixture(scope="module")
def two_workspaces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalog holding the same sessions in workspaces ``default`` and ``other`` (two
    copies of one home: a source is bound to the workspace that first imported it), and
    a second home only in ``other``."""
    root = tmp_path_factory.mktemp("sql")
    generate_claude_home(root / "home", sessions=3)
    generate_claude_home(root / "copy", sessions=3)
    generate_claude_home(root / "more", sessions=2, seed=11)
    catalog = root / "catalog" / "c.duckdb"
    for workspace, home in (("default", "home"), ("other", "copy"), ("other", "more")):
        options = ImportOptions(catalog=catalog, workspace=workspace, home=root / home, env={})
        assert run_import(options).exit_code == 0
    return catalog


def _refused(catalog: Path, statement: str) -> str:
    with pytest.raises(ConfigurationError) as info:
        scoped_sql(catalog, "default", statement)
    return info.value.message


def test_a_query_reads_only_its_workspace(two_workspaces: Path) -> None:
    def count(*, all_workspaces: bool = False) -> int:
        query = "SELECT count(*) AS n FROM events"
        table = scoped_sql(two_workspaces, "default", query, all_workspaces=all_workspaces)
        return int(table.column("n")[0].as_py())

    con = duckdb.connect(str(two_workspaces), read_only=True)
    try:
        per_workspace = dict(
            con.execute("SELECT workspace, count(*) FROM events GROUP BY ALL").fetchall()
        )
    finally:
        con.close()
    assert count() == per_workspace["default"] < per_workspace["other"]
    assert count(all_workspaces=True) == sum(per_workspace.values())


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("COPY (SELECT 1) TO 'x.csv'", "COPY"),
        ("DELETE FROM usage", "DELETE"),
        ("INSERT INTO events SELECT * FROM events", "INSERT"),
        ("CREATE TABLE t AS SELECT 1", "CREATE"),
        ("ATTACH 'other.duckdb' AS o", "ATTACH"),
        ("INSTALL httpfs", "LOAD"),
        ("SET enable_external_access = true", "SET"),
        ("EXPLAIN SELECT 1", "EXPLAIN"),
        ("CALL pragma_version()", "CALL"),
    ],
)
def test_anything_but_a_query_is_refused_with_its_type(
    two_workspaces: Path, statement: str, kind: str
) -> None:
    assert f"this is a {kind} statement" in _refused(two_workspaces, statement)


def test_exactly_one_statement(two_workspaces: Path) -> None:
    message = _refused(two_workspaces, "SELECT 1; SELECT 2")
    assert "exactly one statement" in message and "2 (SELECT, SELECT)" in message


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM settings",  # the cursor-signing secret
        "SELECT * FROM main.events",
        "SELECT * FROM c.main.events",
        "SELECT * FROM temp.main.events",
        "SELECT * FROM events WHERE session_id IN (SELECT session_id FROM main.sessions)",
        "SELECT (SELECT max(value) FROM settings)",
        "SELECT * FROM search_postings",
        "SELECT * FROM information_schema.tables",
        "SELECT * FROM duckdb_tables()",
        "SELECT * FROM query('SELECT * FROM settings')",
        "SELECT * FROM query_table('settings')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SHOW TABLES",
        "SHOW ALL TABLES",
        # A CTE named like a table would be that table outside the CTE's own scope.
        "WITH settings AS (SELECT 1) SELECT * FROM (SELECT * FROM settings)",
        "WITH settings AS (SELECT * FROM settings) SELECT * FROM settings",
        "SELECT c.main.f(1)",
    ],
)
def test_only_the_scoped_names_are_reachable(two_workspaces: Path, statement: str) -> None:
    message = _refused(two_workspaces, statement)
    assert "sql" in message and "Traceback" not in message


def test_qualified_base_table_names_get_a_clear_message(two_workspaces: Path) -> None:
    message = _refused(two_workspaces, "SELECT count(*) FROM c.main.events")
    assert message.startswith("c.main.events: ") and "--all-workspaces" in message
    assert "events, usage" in message


@pytest.mark.parametrize(
    "statement",
    [
        "FROM sessions",
        "WITH s AS (SELECT * FROM sessions) SELECT count(*) FROM s",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) FROM r",
        "DESCRIBE events",
        "SUMMARIZE usage",
        "VALUES (1, 'a')",
        "SELECT * FROM range(3)",
        "SELECT provider, sum(cost_usd) FROM usage_costed GROUP BY ALL",
        "SELECT * FROM usage_daily ORDER BY day LIMIT 3",
        "SELECT count(*) FROM prices JOIN price_aliases USING (provider_id, model)",
        "SELECT e.kind, count(*) FROM events e JOIN sessions s USING (provider, session_id) GROUP BY 1",
        "SELECT * FROM sources, imports, rejects LIMIT 1",
    ],
)
def test_queries_over_the_views_run(two_workspaces: Path, statement: str) -> None:
    scoped_sql(two_workspaces, "default", statement)


def test_every_scoped_name_is_a_view_of_one_workspace(two_workspaces: Path) -> None:
    for name in SCOPED_TABLES:
        table = scoped_sql(
            two_workspaces, "default", f"SELECT DISTINCT workspace FROM {name}"
        ).column("workspace")
        assert table.to_pylist() in ([], ["default"]), name
    for name in SHARED_TABLES:
        assert scoped_sql(two_workspaces, "default", f"SELECT count(*) FROM {name}").num_rows == 1


def test_no_file_is_written_or_read(
    cli: CliRunner, two_workspaces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # Through a query too: a table function that reads files is refused, and the
    # connection could not read one anyway.
    for statement in (
        "COPY (SELECT 1) TO 'x.csv'",
        f"SELECT * FROM read_text('{two_workspaces}')",
    ):
        proc = cli("sql", statement, "--catalog", two_workspaces)
        assert proc.returncode == 2, proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_refusals_are_exit_2_and_all_workspaces_is_explicit(
    cli: CliRunner, two_workspaces: Path
) -> None:
    proc = cli("sql", "SELECT * FROM settings", "--catalog", two_workspaces)
    assert proc.returncode == 2 and "settings: not a table" in proc.stderr
    proc = cli("sql", "SELECT 1; SELECT 2", "--catalog", two_workspaces)
    assert proc.returncode == 2 and "exactly one statement" in proc.stderr
    query = "SELECT count(DISTINCT workspace) AS n FROM sessions"
    proc = cli("sql", query, "--catalog", two_workspaces, "--all-workspaces", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["rows"] == [{"n": 2}]
    both = cli("sql", query, "--catalog", two_workspaces, "--all-workspaces", "--workspace", "x")
    assert both.returncode == 2 and "not both" in both.stderr


def test_a_new_catalog_is_private_to_its_user(tmp_path: Path) -> None:
    generate_claude_home(tmp_path / "home", sessions=1)
    catalog = tmp_path / "data" / "agentlake" / "catalog.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=tmp_path / "home", env={}))
    assert stat.S_IMODE(catalog.parent.stat().st_mode) == 0o700
    made = [p for p in catalog.parent.iterdir()]
    assert catalog in made
    for path in made:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, (path, oct(path.stat().st_mode))
    # A catalog in a directory that exists keeps that directory's mode.
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    run_import(
        ImportOptions(
            catalog=shared / "c.duckdb", workspace="default", home=tmp_path / "home", env={}
        )
    )
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert stat.S_IMODE((shared / "c.duckdb").stat().st_mode) == 0o600
