"""Unit tests of the catalog (load/catalog.py) and the batch writer (load/load.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from agentlake import sql
from agentlake.errors import CatalogLocked, CatalogUnusable, NotFoundError
from agentlake.extract.jsonl import Reject
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.load.catalog import (
    SCHEMA_VERSION,
    connect_writer,
    fts_extension_path,
    load_fts,
    open_for_read,
    open_for_write,
    run_script,
    split_script,
)
from agentlake.load.load import (
    CatalogWriter,
    Piece,
    SourceState,
    insert_new_events_script,
    without_conflict_clause,
    without_snapshots,
)
from agentlake.load.publish import publish
from agentlake.transform.transform import CatalogRows, transform_batch

TABLES = ("sources", "sessions", "events", "usage", "imports", "rejects", "prices")
VIEWS = ("usage_daily", "usage_costed")


def create_catalog(path: Path) -> None:
    """A fresh, migrated catalog at ``path``."""
    with open_for_write(path):
        pass


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names of the catalog's tables."""
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    """Column names of ``table``."""
    rows = con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [table])
    return {r[0] for r in rows.fetchall()}


# -- migrations ------------------------------------------------------------------------


def test_fresh_catalog_migrates_to_schema_version(catalog: Path) -> None:
    with open_for_write(catalog) as con:
        row = con.execute("SELECT max(version), count(*) FROM schema_version").fetchone()
    assert row is not None
    assert row[0] == SCHEMA_VERSION
    assert row[1] == SCHEMA_VERSION  # one row per applied migration


def _view_definitions(path: Path) -> dict[str, tuple[str, str | None]]:
    """The catalog's views: DuckDB's text of each (its ``EXCLUDE`` lists sorted, which
    DuckDB writes in no fixed order) and its comment."""

    def ordered(text: str) -> str:
        return re.sub(
            r"EXCLUDE \(([^()]*)\)",
            lambda m: "EXCLUDE (" + ", ".join(sorted(m.group(1).split(", "))) + ")",
            text,
        )

    with open_for_read(path) as con:
        rows = con.execute(
            "SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
    return {str(name): (ordered(str(text)), comment) for name, text, comment in rows}


def test_the_views_are_the_files_of_sql_views() -> None:
    from importlib.resources import files

    shipped = {
        e.name.removesuffix(".sql")
        for e in files("agentlake.sql").joinpath("views").iterdir()
        if e.name.endswith(".sql")
    }
    assert shipped == set(sql.VIEWS)
    for _, name, text in sql.migrations():
        assert "CREATE VIEW" not in text.upper() and "DROP VIEW" not in text.upper(), name


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_a_migrated_catalog_ends_with_the_views_of_a_fresh_one(
    tmp_path: Path, version: int
) -> None:
    """Whatever views an older catalog holds (here stand-ins, and one no longer made),
    migrating it leaves exactly the views of ``sql/views``, as in a fresh catalog."""
    fresh, old = tmp_path / "fresh.duckdb", tmp_path / "old.duckdb"
    create_catalog(fresh)
    con = connect_writer(old)  # a new file in the same storage format as the fresh one
    for number, name, text in sql.migrations():
        if number > version:
            break
        run_script(con, text, {"random_secret": "0" * 64})
        con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [number, name])
    if version >= 2:
        con.execute("CREATE VIEW usage_costed AS SELECT *, NULL AS cost_usd FROM usage")
        con.execute("CREATE VIEW usage_daily AS SELECT count(*) AS calls FROM usage_costed")
        con.execute("CREATE VIEW retired AS SELECT 1 AS one")
    con.close()
    create_catalog(old)
    assert _view_definitions(old) == _view_definitions(fresh)
    assert set(_view_definitions(old)) == set(sql.VIEWS)


def test_a_view_changed_without_a_migration_is_made_again(catalog: Path) -> None:
    create_catalog(catalog)
    expected = _view_definitions(catalog)
    con = duckdb.connect(str(catalog))
    con.execute("DROP VIEW usage_daily")
    con.execute("CREATE VIEW usage_daily AS SELECT 1 AS day")  # an older definition
    con.close()
    assert _view_definitions(catalog) != expected
    create_catalog(catalog)
    assert _view_definitions(catalog) == expected


def test_fresh_catalog_has_every_table_and_view(catalog: Path) -> None:
    create_catalog(catalog)
    with open_for_read(catalog) as con:
        assert set(TABLES) <= table_names(con)
        views = {
            r[0]
            for r in con.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal"
            ).fetchall()
        }
        assert set(VIEWS) <= views
        for view in VIEWS:
            con.execute(f"SELECT * FROM {view} LIMIT 0").fetchall()


@pytest.mark.parametrize("table", [t for t in TABLES if t != "prices"])
def test_every_table_has_a_workspace_column(catalog: Path, table: str) -> None:
    create_catalog(catalog)
    with open_for_read(catalog) as con:
        assert "workspace" in columns(con, table)


def test_public_columns_of_design_section_3(catalog: Path) -> None:
    create_catalog(catalog)
    expected = {
        "sources": {
            "source_id",
            "workspace",
            "provider",
            "path",
            "device",
            "inode",
            "size_bytes",
            "mtime_ns",
            "position_kind",
            "committed_offset",
            "prefix_digest",
            "generation",
            "adapter_version",
            "policy_version",
            "continuity",
            "status",
            "records",
            "rejected",
            "last_import_id",
        },
        "sessions": {
            "workspace",
            "provider",
            "session_id",
            "parent_session_id",
            "project_path",
            "title",
            "git_branch",
            "cli_version",
            "started_at",
            "updated_at",
            "prompts",
            "events",
            "tool_calls",
            "lifecycle",
        },
        "events": {
            "event_id",
            "workspace",
            "provider",
            "session_id",
            "seq",
            "ts",
            "kind",
            "role",
            "model",
            "text",
            "tool_name",
            "tool_call_id",
            "tool_input",
            "is_error",
            "is_sidechain",
            "source_id",
            "source_offset",
            "import_id",
        },
        "usage": {
            "call_id",
            "workspace",
            "provider",
            "session_id",
            "ts",
            "model",
            "input_tokens",
            "cache_write_tokens",
            "cache_write_1h_tokens",
            "cache_read_tokens",
            "output_tokens",
            "reasoning_tokens",
            "total_tokens",
            "source_id",
            "source_offset",
        },
        "rejects": {"source_id", "offset", "length", "reason", "import_id"},
        "usage_daily": {
            "day",
            "workspace",
            "provider",
            "model",
            "calls",
            "input_tokens",
            "cache_write_tokens",
            "cache_read_tokens",
            "output_tokens",
            "reasoning_tokens",
            "total_tokens",
            "cost_usd",
        },
        "usage_costed": {"call_id", "workspace", "cost_usd"},
    }
    with open_for_read(catalog) as con:
        for table, cols in expected.items():
            assert cols <= columns(con, table), table


def test_a_new_catalog_is_written_in_the_current_storage_format(tmp_path: Path) -> None:
    """New catalogs get DuckDB's current format (an old-format file converts every index
    at each checkpoint); reopening needs no configuration, so a plain connection of the
    caller's can share the file in the same process."""
    from agentlake.load.catalog import STORAGE_VERSION

    path = tmp_path / "c.duckdb"
    with open_for_write(path):
        pass
    with duckdb.connect(str(path), read_only=True) as plain:
        tags = plain.execute(
            "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'c'"
        ).fetchone()
        assert tags is not None and str(tags[0]).startswith(STORAGE_VERSION)
        with open_for_read(path) as con:  # beside the plain connection
            assert con.execute("SELECT count(*) FROM schema_version").fetchone() == (
                len(sql.migrations()),
            )


def test_reopening_does_not_reapply_migrations(catalog: Path) -> None:
    create_catalog(catalog)
    with open_for_write(catalog) as con:
        con.execute("INSERT INTO prices (model) VALUES ('m')")
        before = con.execute("SELECT count(*) FROM prices").fetchone()
    with open_for_write(catalog) as con:
        row = con.execute("SELECT count(*) FROM schema_version").fetchone()
        prices = con.execute("SELECT count(*) FROM prices").fetchone()
    assert row == (SCHEMA_VERSION,)
    assert prices == before


# -- unusable catalogs -----------------------------------------------------------------


def _future_catalog(path: Path) -> None:
    with open_for_write(path) as con:
        con.execute(
            "INSERT INTO schema_version (version, name) VALUES (?, 'from-the-future')",
            [SCHEMA_VERSION + 1],
        )


def test_newer_schema_version_is_refused_for_write(catalog: Path) -> None:
    _future_catalog(catalog)
    with pytest.raises(CatalogUnusable, match="newer"), open_for_write(catalog):
        pytest.fail("opened a catalog of a newer schema version")


def test_newer_schema_version_is_refused_for_read(catalog: Path) -> None:
    _future_catalog(catalog)
    with pytest.raises(CatalogUnusable), open_for_read(catalog):
        pytest.fail("opened a catalog of a newer schema version")


def test_refused_newer_catalog_is_left_untouched(catalog: Path) -> None:
    _future_catalog(catalog)
    with pytest.raises(CatalogUnusable), open_for_write(catalog):
        pass
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    finally:
        con.close()
    assert row == (SCHEMA_VERSION + 1,)


def _foreign_duckdb(path: Path) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
        con.execute("INSERT INTO customers VALUES (1, 'a')")
    finally:
        con.close()


def test_foreign_duckdb_file_is_refused_for_write(catalog: Path) -> None:
    _foreign_duckdb(catalog)
    with pytest.raises(CatalogUnusable, match="not an agentlake catalog"), open_for_write(catalog):
        pytest.fail("opened a foreign database")
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        assert table_names(con) == {"customers"}
    finally:
        con.close()


def test_foreign_duckdb_file_is_refused_for_read(catalog: Path) -> None:
    _foreign_duckdb(catalog)
    with pytest.raises(CatalogUnusable), open_for_read(catalog):
        pytest.fail("opened a foreign database")


def test_empty_duckdb_file_is_refused_for_read(catalog: Path) -> None:
    duckdb.connect(str(catalog)).close()
    with pytest.raises(CatalogUnusable), open_for_read(catalog):
        pytest.fail("opened an empty database for reading")


@pytest.mark.parametrize(
    "content", [b"this is not a database\n" * 500, b"\x00" * 8192, b"PK\x03\x04junk"]
)
def test_garbage_file_is_refused(catalog: Path, content: bytes) -> None:
    catalog.write_bytes(content)
    with pytest.raises(CatalogUnusable), open_for_write(catalog):
        pytest.fail("opened a garbage file for writing")
    with pytest.raises(CatalogUnusable), open_for_read(catalog):
        pytest.fail("opened a garbage file for reading")


def test_missing_catalog_for_read_is_not_found(catalog: Path) -> None:
    with pytest.raises(NotFoundError), open_for_read(catalog):
        pytest.fail("opened a missing catalog")
    assert not catalog.exists()


# -- the writer lock -------------------------------------------------------------------

_HOLD_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agentlake.load.catalog import open_for_write

    with open_for_write(Path(sys.argv[1])):
        print("locked", flush=True)
        sys.stdin.read()
    """
)


@contextmanager
def writer_in_another_process(path: Path) -> Iterator[subprocess.Popen[str]]:
    """A second process holding ``open_for_write(path)`` until the block exits."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD_WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "locked", proc.stderr.read() if proc.stderr else line
        yield proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=30)


def test_second_writer_in_another_process_is_locked_out(catalog: Path) -> None:
    with writer_in_another_process(catalog) as proc:
        with pytest.raises(CatalogLocked, match="--wait"), open_for_write(catalog):
            pytest.fail("two writers at once")
        assert proc.poll() is None
    assert proc.returncode == 0
    with open_for_write(catalog) as con:  # the lock goes with the process
        assert con.execute("SELECT 1").fetchone() == (1,)


def test_reader_is_locked_out_while_another_process_writes(catalog: Path) -> None:
    create_catalog(catalog)
    with writer_in_another_process(catalog), pytest.raises(CatalogLocked), open_for_read(catalog):
        pytest.fail("read while a writer holds the catalog")
    with open_for_read(catalog) as con:
        assert con.execute("SELECT max(version) FROM schema_version").fetchone() == (
            SCHEMA_VERSION,
        )


def test_two_readers_may_share_the_catalog(catalog: Path) -> None:
    create_catalog(catalog)
    with open_for_read(catalog) as a, open_for_read(catalog) as b:
        assert a.execute("SELECT 1").fetchone() == b.execute("SELECT 1").fetchone()


def test_writer_is_locked_out_while_reading(catalog: Path) -> None:
    create_catalog(catalog)
    with open_for_read(catalog), pytest.raises(CatalogLocked), open_for_write(catalog):
        pytest.fail("wrote while a reader holds the catalog")


# -- run_script ------------------------------------------------------------------------


def test_run_script_binds_only_the_parameters_each_statement_uses() -> None:
    con = duckdb.connect()
    script = textwrap.dedent(
        """
        -- A comment naming $not_a_parameter must not be bound.
        CREATE TABLE t (a INTEGER, b VARCHAR);
        INSERT INTO t VALUES ($a, $b);
        INSERT INTO t (a) VALUES ($a + 1);
        INSERT INTO t (b) VALUES ($b_other);
        """
    )
    run_script(con, script, {"a": 1, "b": "x", "b_other": "y", "unused": 42})
    assert con.execute("SELECT a, b FROM t ORDER BY rowid").fetchall() == [
        (1, "x"),
        (2, None),
        (None, "y"),
    ]


def test_run_script_with_no_parameters() -> None:
    con = duckdb.connect()
    run_script(con, "CREATE TABLE t (a INTEGER);\nINSERT INTO t VALUES (7);\n", {})
    assert con.execute("SELECT a FROM t").fetchall() == [(7,)]


def test_run_script_missing_parameter_raises() -> None:
    con = duckdb.connect()
    with pytest.raises(KeyError):
        run_script(con, "SELECT $missing;\n", {})


def test_binding_an_unused_parameter_is_what_run_script_avoids() -> None:
    con = duckdb.connect()
    with pytest.raises(duckdb.Error):
        con.execute("SELECT 1", {"unused": 1})


# -- fts -------------------------------------------------------------------------------


def test_fts_extension_ships_with_the_wheel() -> None:
    path = fts_extension_path()
    assert path is not None
    assert path.is_file()
    assert path.name == "fts.duckdb_extension"


def test_load_fts() -> None:
    con = duckdb.connect()
    assert load_fts(con) is True
    loaded = con.execute(
        "SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'fts'"
    ).fetchone()
    assert loaded == (True,)


# -- CatalogWriter ---------------------------------------------------------------------


def _source(tmp_path: Path) -> SourceFile:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"{}\n" * 10)
    st = path.stat()
    return SourceFile(
        "claude",
        path,
        tmp_path,
        "byte-offset",
        "claude-jsonl",
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
    )


def _batch() -> RowSink:
    sink = RowSink()
    sink.event("s1", "u1", 0, "2025-03-01T10:00:00Z", "text", "user", "find the needle", 0)
    sink.event("s1", "a1", 0, "2025-03-01T10:00:05Z", "text", "assistant", "done", 3)
    sink.usage(
        "s1",
        "msg_1",
        "req_1",
        "a1",
        "2025-03-01T10:00:05Z",
        "claude-sonnet-4",
        10,
        100,
        0,
        1000,
        5,
        0,
        False,
        3,
    )
    sink.session("s1", project_path="/work/demo", title="Demo", title_rank=2)
    return sink


def _state(src: SourceFile, offset: int) -> SourceState:
    return SourceState(src, offset, None, 1, "claude/1", 1, "new")


def test_commit_writes_data_and_checkpoint_together(tmp_path: Path) -> None:
    src = _source(tmp_path)
    rows = transform_batch(_batch().build(), provider="claude", source_id=src.source_id)
    reject = Reject(6, 3, "MALFORMED", "invalid JSON at column 1")
    with open_for_write(tmp_path / "c.duckdb") as con:
        writer = CatalogWriter(con, "default")
        first_import = writer.begin_import()
        result = writer.commit(first_import, [Piece(_state(src, 9), [reject], 3)], [rows])
        got = result[src.source_id]
        assert (got.new_events, got.new_usage, got.rejects) == (2, 1, 1)
        source = con.execute(
            "SELECT committed_offset, records, rejected, last_import_id FROM sources"
        ).fetchone()
        assert source == (9, 3, 1, first_import)
        # A replay of the same batch adds nothing.
        second_import = writer.begin_import()
        again = writer.commit(second_import, [Piece(_state(src, 9), [], 3)], [rows])[src.source_id]
        assert (again.new_events, again.new_usage) == (0, 0)
        statuses = con.execute(
            "SELECT import_id, status FROM imports ORDER BY import_id"
        ).fetchall()
        assert statuses == [(first_import, "abandoned"), (second_import, "running")]
        assert con.execute(
            "SELECT count(*) FROM events WHERE workspace = 'default'"
        ).fetchone() == (2,)
        usage = con.execute("SELECT total_tokens, source_id FROM usage").fetchall()
        assert usage == [(1115, src.source_id)]
        assert con.execute('SELECT "offset", length, reason FROM rejects').fetchall() == [
            (6, 3, "MALFORMED")
        ]
        source = con.execute("SELECT committed_offset, last_import_id FROM sources").fetchone()
        assert source == (9, second_import)
        session = con.execute("SELECT title, events, prompts FROM sessions").fetchone()
        assert session == ("Demo", 2, 1)
        # the commits leave the search index alone; the publish step indexes "needle"
        # once although the batch was committed twice
        assert con.execute("SELECT count(*) FROM search_postings").fetchone() == (0,)
        assert publish(con, "default").indexed == 2
        assert con.execute(
            "SELECT count(*) FROM search_postings JOIN search_terms USING (term_id) "
            "WHERE term = 'needl'"
        ).fetchone() == (1,)
        assert con.execute("SELECT df FROM search_terms WHERE term = 'needl'").fetchone() == (1,)
        assert con.execute("SELECT docs FROM search_state").fetchone() == (2,)


def _snapshot(totals: tuple[int, int], rank: int, offset: int) -> RowSink:
    """One session's cumulative totals for one model, as an agent without per-call
    counts writes them (a later snapshot of the same session grows)."""
    sink = RowSink()
    sink.usage("s1", "session-total:gpt-5", None, "session-total:gpt-5",
               "2025-03-01T10:00:05Z", "gpt-5", totals[0], 0, 0, 0, totals[1], 0, False,
               offset, rank=rank, per_session=True)  # fmt: skip
    sink.session("s1", project_path="/work/demo")
    return sink


def test_a_later_session_snapshot_replaces_the_earlier_one(tmp_path: Path) -> None:
    """Rows of session granularity are flagged, and a later, larger snapshot of the same
    session and model replaces the earlier one instead of adding to it, in the same
    commit as across commits."""
    src = _source(tmp_path)
    with open_for_write(tmp_path / "c.duckdb") as con:
        writer = CatalogWriter(con, "default")
        first = _snapshot((100, 10), rank=1, offset=0).build()
        rows = transform_batch(first, provider="copilot", source_id=src.source_id)
        writer.commit(writer.begin_import(), [Piece(_state(src, 5), [], 1)], [rows])
        later = _snapshot((300, 40), rank=2, offset=9).build()
        rows = transform_batch(later, provider="copilot", source_id=src.source_id)
        writer.commit(writer.begin_import(), [Piece(_state(src, 12), [], 1)], [rows])
        assert con.execute(
            "SELECT input_tokens, output_tokens, per_session FROM usage"
        ).fetchall() == [(300, 40, True)]
        assert con.execute("SELECT total_tokens FROM sessions").fetchall() == [(340,)]
        calls = transform_batch(_batch().build(), provider="claude", source_id=src.source_id)
        writer.commit(writer.begin_import(), [Piece(_state(src, 20), [], 1)], [calls])
        assert con.execute(
            "SELECT provider, per_session FROM usage ORDER BY provider"
        ).fetchall() == [("claude", False), ("copilot", True)]


def test_only_sessions_the_catalog_holds_are_probed_for_known_events(tmp_path: Path) -> None:
    """A commit looks for its events in the catalog only within the sessions the catalog
    already holds: an event seen before in such a session is not inserted again, and a
    commit of new sessions alone does not read the catalog's events at all."""
    src = _source(tmp_path)
    with open_for_write(tmp_path / "c.duckdb") as con:
        writer = CatalogWriter(con, "default")
        import_id = writer.begin_import()
        first = transform_batch(_batch().build(), provider="claude", source_id=src.source_id)
        assert writer._known_sessions(first.events, first.sessions) == []
        fresh = insert_new_events_script([])  # nothing to look in: the batch as it is
        assert (
            "FROM events" not in fresh and "VIEW new_events AS SELECT * FROM batch_events" in fresh
        )
        writer.commit(import_id, [Piece(_state(src, 9), [], 3)], [first])
        assert con.execute(
            "SELECT count(*) FROM duckdb_views() WHERE view_name = 'new_events'"
        ).fetchone() == (0,)  # dropped with the commit
        sink = _batch()  # s1's two events again, and a new session's
        sink.event("s2", "u9", 0, "2025-03-02T09:00:00Z", "text", "user", "fresh start", 6)
        again = transform_batch(sink.build(), provider="claude", source_id=src.source_id)
        known = writer._known_sessions(again.events, again.sessions)
        assert known == ["s1"]
        assert "IN ('s1')" in insert_new_events_script(known)
        result = writer.commit(import_id, [Piece(_state(src, 10), [], 4)], [again])
        assert result[src.source_id].new_events == 1
        # after a commit that made new_events a table, one of new sessions alone again
        later = RowSink()
        later.event("s3", "u10", 0, "2025-03-03T09:00:00Z", "text", "user", "later on", 7)
        third = transform_batch(later.build(), provider="claude", source_id=src.source_id)
        assert writer._known_sessions(third.events, third.sessions) == []
        result = writer.commit(import_id, [Piece(_state(src, 11), [], 5)], [third])
        assert result[src.source_id].new_events == 1
        rows = con.execute("SELECT session_id, count(*) FROM events GROUP BY ALL ORDER BY 1")
        assert rows.fetchall() == [("s1", 2), ("s2", 1), ("s3", 1)]


def test_session_snapshots_are_left_out_only_when_the_workspace_began_empty(
    tmp_path: Path,
) -> None:
    """The statements that keep earlier imports' session values look for sessions of
    an older import; an import into a workspace that held none leaves them out, and the
    next import, which finds sessions, keeps them and snapshots what it changes."""
    for name in ("upsert_sessions", "merge_usage", "recompute_sessions"):
        full = [s for s in sql.query(name).split(";\n") if s.strip()]
        kept = [s for s in without_snapshots(sql.query(name)).split(";\n") if s.strip()]
        assert len(kept) == len(full) - 1, name
        assert all("INSERT INTO session_versions" not in s for s in kept), name
        assert all(s in full for s in kept), name
    src = _source(tmp_path)
    rows = transform_batch(_batch().build(), provider="claude", source_id=src.source_id)
    with open_for_write(tmp_path / "c.duckdb") as con:
        writer = CatalogWriter(con, "default")
        first = writer.begin_import()
        assert "INSERT INTO session_versions" not in writer._session_script("upsert_sessions")
        writer.commit(first, [Piece(_state(src, 9), [], 3)], [rows])
        second = writer.begin_import()
        assert "INSERT INTO session_versions" in writer._session_script("upsert_sessions")
        sink = RowSink()
        sink.event("s1", "u2", 0, "2025-03-01T11:00:00Z", "text", "user", "later", 9)
        later = transform_batch(sink.build(), provider="claude", source_id=src.source_id)
        writer.commit(second, [Piece(_state(src, 12), [], 1)], [later])
        assert con.execute(
            "SELECT session_id, events, superseded_by FROM session_versions"
        ).fetchall() == [("s1", 2, second)]


def test_failed_commit_leaves_nothing_behind(tmp_path: Path) -> None:
    src = _source(tmp_path)
    rows = transform_batch(_batch().build(), provider="claude", source_id=src.source_id)
    broken = pa.table({"event_id": ["x"], "session_id": ["s"]})  # not an events table
    bad = CatalogRows(
        events=broken, usage=rows.usage, sessions=rows.sessions, retractions=rows.retractions
    )
    reject = Reject(6, 3, "MALFORMED", "invalid JSON at column 1")
    with open_for_write(tmp_path / "c.duckdb") as con:
        writer = CatalogWriter(con, "default")
        import_id = writer.begin_import()
        with pytest.raises(duckdb.Error):
            writer.commit(import_id, [Piece(_state(src, 9), [reject], 3)], [bad])
        for table in ("events", "usage", "sessions", "sources", "rejects"):
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table


def test_literals_quote_every_value_and_match_nothing_when_empty() -> None:
    con = duckdb.connect()
    values = ["plain", "it's", "", None]
    listed = sql.literals(values)
    assert listed == "'plain', 'it''s', ''"
    rows = con.execute(f"SELECT x FROM (VALUES ('plain'), ('it''s'), (''), ('other')) t(x) "
                       f"WHERE x IN ({listed}) ORDER BY x").fetchall()  # fmt: skip
    assert rows == [("",), ("it's",), ("plain",)]
    assert sql.literals([None]) == "NULL"
    assert con.execute(
        f"SELECT count(*) FROM (VALUES ('a')) t(x) WHERE x IN ({sql.literals([])})"
    ).fetchone() == (0,)


@pytest.mark.parametrize(
    "value",
    [None, True, False, 0, -7, 2**62, 0.1, 67.6810155972839, 1e-300, -2.5e300, float("inf"),
     "plain", "it's $ws", "", ["a", "b'c"], [0, 1, 2], [0.1, None], datetime(2026, 5, 1, 9, 30, 1, 250)],
)  # fmt: skip
def test_a_constant_is_the_value_a_parameter_binds(value: object) -> None:
    """Inlined constants stand for parameters: the same value, of the same type (a
    float exactly, through its shortest spelling)."""
    con = duckdb.connect()
    inlined = con.execute(f"SELECT {sql.constant(value)} AS v, typeof(v)").fetchone()
    bound = con.execute("SELECT $v AS v, typeof(v)", {"v": value}).fetchone()
    assert inlined == bound


def test_inline_replaces_every_named_parameter() -> None:
    statement = sql.inline("SELECT $a + $ab, $a IS NULL, $s", {"a": 1, "ab": 2.5, "s": "x'y"})
    assert statement == "SELECT 1 + '2.5'::DOUBLE, 1 IS NULL, 'x''y'"
    assert duckdb.connect().execute(statement).fetchone() == (3.5, False, "x'y")
    with pytest.raises(KeyError):
        sql.inline("SELECT $missing", {})
    with pytest.raises(TypeError):
        sql.constant(object())


def test_writer_folds_the_log_in_when_it_closes_not_every_few_commits(catalog: Path) -> None:
    # At DuckDB's default threshold (16 MiB) these commits would have been checkpointed
    # along the way; a writer keeps them in its log until it closes (CHECKPOINT_THRESHOLD).
    wal = Path(f"{catalog}.wal")
    with open_for_write(catalog) as con:
        con.execute("CREATE TABLE filler (s VARCHAR)")
        for _ in range(8):
            con.execute("INSERT INTO filler SELECT repeat('x', 100) || i FROM range(40000) t(i)")
        assert wal.stat().st_size > 24 << 20
    assert not wal.exists() or wal.stat().st_size == 0
    with open_for_write(catalog) as con:
        assert con.execute("SELECT count(*) FROM filler").fetchone() == (320_000,)


def test_connections_never_draw_a_progress_bar(tmp_path: Path) -> None:
    """stdout carries the commands' output (``--json``): DuckDB's progress bar, drawn
    for a statement past two seconds, must never reach it, on any connection. (Checked
    in a fresh interpreter: DuckDB turns the bar on by default, but not under pytest.)"""
    catalog = tmp_path / "c.duckdb"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from agentlake.load.catalog import connect_writer, open_for_read, open_for_write
        setting = "SELECT current_setting('enable_progress_bar')"
        with open_for_write(Path({str(catalog)!r})) as con:
            print(con.sql(setting).fetchone()[0])
        con = connect_writer(Path({str(catalog)!r}))
        print(con.sql(setting).fetchone()[0])
        con.close()
        with open_for_read(Path({str(catalog)!r})) as con:
            print(con.sql(setting).fetchone()[0])
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"] * 3


def test_sessions_of_a_batch_the_catalog_lacks_are_inserted_without_conflict_handling(
    tmp_path: Path,
) -> None:
    """The upsert loses only its ON CONFLICT clause (every other statement is kept as
    it is); such an insert of a session the catalog holds fails instead of merging."""
    full = split_script(sql.query("upsert_sessions"))
    plain = split_script(without_conflict_clause(sql.query("upsert_sessions")))
    assert len(plain) == len(full)
    changed = [(f, p) for f, p in zip(full, plain, strict=True) if f != p]
    assert len(changed) == 1
    before, after = changed[0]
    assert "ON CONFLICT" in before and "ON CONFLICT" not in after
    assert before.startswith(after) and after.rstrip().endswith("USING (provider, session_id)")
    src = _source(tmp_path)
    rows = transform_batch(_batch().build(), provider="claude", source_id=src.source_id)
    with open_for_write(tmp_path / "c.duckdb") as con:
        writer = CatalogWriter(con, "default")
        import_id = writer.begin_import()
        writer.commit(import_id, [Piece(_state(src, 9), [], 3)], [rows])
        con.register("batch_sessions", rows.sessions)
        con.register("batch_events", rows.events)
        con.execute("CREATE OR REPLACE TEMP TABLE new_events AS SELECT * FROM batch_events")
        params = {"workspace": "default", "import_id": import_id}
        with pytest.raises(duckdb.ConstraintException):
            run_script(con, without_conflict_clause(sql.query("upsert_sessions")), params)
