"""Naming a DuckLake catalog (URL, data path, workspace), and the SQL DuckLake runs."""

from __future__ import annotations

import socket
from pathlib import Path

import duckdb
import pytest

from agentlake.config import catalog_settings, default_workspace, host_workspace, resolve_catalog
from agentlake.errors import ConfigurationError
from agentlake.load.lake import LakeCatalog, parse_catalog
from agentlake.load.lake_sql import migration, table_keys, upsert_as_merge


def test_a_path_names_a_duckdb_file_and_a_url_a_lake(tmp_path: Path) -> None:
    assert parse_catalog(str(tmp_path / "c.duckdb")) == tmp_path / "c.duckdb"
    lake = parse_catalog(f"ducklake:sqlite:{tmp_path}/meta.db")
    assert lake == LakeCatalog(f"sqlite:{tmp_path}/meta.db")
    pg = parse_catalog("ducklake:postgres:dbname=lake host=h password=s3cret", data_path="/d")
    assert isinstance(pg, LakeCatalog) and pg.kind == "postgres" and pg.data_path == "/d"
    assert "s3cret" not in str(pg) and "password=***" in str(pg)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ducklake:mysql:db=x", "unsupported DuckLake metadata store"),
        ("ducklake:postgres:", "name the PostgreSQL database"),
        ("ducklake:sqlite:", "name the SQLite file"),
    ],
)
def test_a_bad_lake_url_is_a_configuration_error(url: str, expected: str) -> None:
    with pytest.raises(ConfigurationError, match=expected):
        parse_catalog(url)


def test_the_catalog_comes_from_the_option_the_environment_or_the_config_file(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[catalog]\nurl = "ducklake:sqlite:/srv/lake.db"\ndata_path = "/srv/files"\n'
        'workspace = "laptop-a"\n'
    )
    env = {"AGENTLAKE_CONFIG": str(config), "HOME": str(tmp_path)}
    lake = resolve_catalog(env=env)
    assert lake == LakeCatalog("sqlite:/srv/lake.db", "/srv/files")
    assert default_workspace(env, catalog=lake) == "laptop-a"
    assert resolve_catalog("x.duckdb", env=env) == Path("x.duckdb")
    assert resolve_catalog(env={**env, "AGENTLAKE_CATALOG": "/c.duckdb"}) == Path("/c.duckdb")
    overridden = resolve_catalog(env={**env, "AGENTLAKE_DATA_PATH": "/elsewhere"})
    assert isinstance(overridden, LakeCatalog) and overridden.data_path == "/elsewhere"
    config.write_text('[catalog]\nurl = "x"\npath = "y"\n')
    with pytest.raises(ConfigurationError, match=r"unknown key 'path' in \[catalog\]"):
        catalog_settings(env)


def test_a_lake_s_default_workspace_is_the_host_name(tmp_path: Path) -> None:
    env = {"AGENTLAKE_CONFIG": str(tmp_path / "none.toml")}
    lake = parse_catalog("ducklake:sqlite:/x.db")
    assert default_workspace(env, catalog=lake) == host_workspace()
    assert host_workspace().startswith(socket.gethostname().split(".")[0][:8].replace(".", "-"))
    assert default_workspace(env, catalog=Path("/c.duckdb")) == "default"
    assert default_workspace({**env, "AGENTLAKE_WORKSPACE": "w"}, catalog=lake) == "w"


def test_migrations_lose_keys_indexes_sequences_and_fixed_arrays() -> None:
    script = (
        "CREATE SEQUENCE s START 1;\n"
        "CREATE TABLE t (\n    id BIGINT NOT NULL DEFAULT nextval('s') PRIMARY KEY,\n"
        "    v FLOAT[128],\n    k VARCHAR,\n    PRIMARY KEY (id, k)\n);\n"
        "CREATE INDEX t_k ON t (k);\n"
        "ALTER TABLE t ADD COLUMN IF NOT EXISTS f BOOLEAN DEFAULT false;\n"
    )
    out = migration(script)
    assert "SEQUENCE" not in out and "INDEX" not in out and "PRIMARY" not in out
    assert "nextval" not in out and "FLOAT[]" in out
    assert "ALTER TABLE t ADD COLUMN IF NOT EXISTS f BOOLEAN;" in out
    assert "ALTER TABLE t ALTER COLUMN f SET DEFAULT 'false'" in out


def test_every_upsert_runs_as_a_merge_with_the_same_result() -> None:
    """An ``ON CONFLICT`` upsert and its MERGE leave the same rows (run here on a DuckDB
    table with the key, and on one without it)."""
    assert table_keys()["sessions"] == ("workspace", "provider", "session_id")
    upsert = (
        "INSERT INTO t AS s (k, n) SELECT * FROM (VALUES (1, 10), (3, 30)) v(k, n) "
        "ON CONFLICT (k) DO UPDATE SET n = s.n + excluded.n"
    )
    keyed, bare = duckdb.connect(), duckdb.connect()
    keyed.execute("CREATE TABLE t (k INT PRIMARY KEY, n INT); INSERT INTO t VALUES (1, 1), (2, 2)")
    bare.execute("CREATE TABLE t (k INT, n INT); INSERT INTO t VALUES (1, 1), (2, 2)")
    keyed.execute(upsert)
    merge = upsert_as_merge(upsert, lambda table: ["k", "n"])
    assert merge.startswith("MERGE INTO t AS s USING")
    bare.execute(merge)
    query = "SELECT * FROM t ORDER BY k"
    assert (
        bare.execute(query).fetchall()
        == keyed.execute(query).fetchall()
        == [(1, 11), (2, 2), (3, 30)]
    )
    ignore = upsert_as_merge(
        "INSERT OR IGNORE INTO session_tags (workspace, provider, session_id, tag, tagged_at) "
        "VALUES ('w', 'p', 's', 't', now())",
        lambda table: [],
    )
    assert "WHEN MATCHED" not in ignore  # a row whose key exists is left as it is
    assert "ON session_tags.workspace = excluded.workspace AND " in ignore
    assert ignore.endswith(
        "session_tags.tag = excluded.tag\nWHEN NOT MATCHED THEN INSERT "
        "(workspace, provider, session_id, tag, tagged_at) VALUES "
        "(excluded.workspace, excluded.provider, excluded.session_id, "
        "excluded.tag, excluded.tagged_at)"
    )
