"""The Warp provider: ``warp.sqlite`` (discovery, the mapping of every table it reads, the
one read transaction, the drift rule, per-session token totals left unpriced) and the
Markdown export in Warp's own shape and AIWG's heading dialect.

Stores are built from the SQL in fixtures/warp/sql at test time; expected values are
computed by hand from it (see fixtures/warp/README.md).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentlake.errors import ConfigurationError
from agentlake.extract.adapter import FormatDrift, SourceContext
from agentlake.extract.providers import by_id, resolve, warp, warp_export
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.ingest.files import NamedFile, guess_format
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from fixtures.warp.store import HERE, STATE, STORES, build_store, dump
from tests.conftest import CONFORMANCE
from tests.extract.catalogs import catalog_rows

SPEC = by_id("warp")
EXPORTS = HERE / "exports"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide/test/fixtures/sessions/warp"
A = "c0a00000-0000-4000-8000-000000000001"
B = "c0b00000-0000-4000-8000-000000000002"
C = "c0c00000-0000-4000-8000-000000000003"
D = "c0d00000-0000-4000-8000-000000000004"
E = "c0e00000-0000-4000-8000-000000000005"

# --------------------------------------------------------------------------- helpers


def _store_home(tmp: Path, *scripts: str, extra: str = "", rel: Path = STATE) -> Path:
    """A home whose Warp state directory holds a store built from ``scripts``."""
    home = tmp / "home"
    build_store(home / rel / "warp.sqlite", *scripts, extra=extra)
    return home


def _import(catalog: Path, home: Path | None = None, *files: NamedFile,
            env: dict[str, str] | None = None) -> ImportResult:  # fmt: skip
    options: dict[str, Any] = {"files": files} if files else {"providers": ("warp",)}
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home or Path("/nonexistent"),
                      env=env or {}, build_index=False, **options)
    )  # fmt: skip


_rows = catalog_rows


def _map(path: Path, con: sqlite3.Connection | None = None) -> tuple[RowSink, int]:
    """The store at ``path`` mapped by the adapter directly (read-only, as the runner)."""
    st = path.stat()
    source = SourceFile("warp", path, path.parent, "sqlite", warp.STORE_FORMAT,
                        st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)  # fmt: skip
    own = con is None
    con = con or sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    sink = RowSink()
    try:
        return sink, warp.WarpStoreAdapter().map_database(con, SourceContext(source, ""), sink)
    finally:
        if own:
            con.close()


# --------------------------------------------------------------------------- fixtures


def test_the_shipped_stores_are_what_their_sql_builds(tmp_path: Path) -> None:
    for rel, scripts in STORES.items():
        assert dump(HERE / rel) == dump(build_store(tmp_path / rel, *scripts)), rel


# --------------------------------------------------------------------------- discovery


@pytest.mark.parametrize(
    "rel",
    [
        STATE,
        STATE / "tui",
        Path(
            "Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support"
            "/dev.warp.Warp-Stable"
        ),
        Path("Library/Application Support/dev.warp.Warp-Stable"),
        Path("AppData/Local/warp/Warp/data"),
    ],
    ids=["linux", "tui", "macos-group-container", "macos-legacy", "windows"],
)
def test_the_store_is_found_where_each_platform_keeps_it(tmp_path: Path, rel: Path) -> None:
    home = _store_home(tmp_path, "schema.sql", rel=rel)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,))
    assert [(s.path, s.action) for s in plan.sources] == [(home / rel / "warp.sqlite", "read")]
    assert resolve("warp-terminal") is SPEC


def test_xdg_state_home_moves_the_linux_store_when_absolute(tmp_path: Path) -> None:
    state = tmp_path / "state"
    build_store(state / "warp-terminal" / "warp.sqlite", "schema.sql")
    home = tmp_path / "home"
    home.mkdir()
    found = make_plan({}, workspace="w", home=home, env={"XDG_STATE_HOME": str(state)},
                      providers=(SPEC,)).sources  # fmt: skip
    assert [s.path for s in found] == [state / "warp-terminal" / "warp.sqlite"]
    relative = make_plan({}, workspace="w", home=home, env={"XDG_STATE_HOME": "state"},
                         providers=(SPEC,)).sources  # fmt: skip
    assert relative == ()


# --------------------------------------------------------------------------- the store


def test_every_table_maps_to_its_events_and_sessions(tmp_path: Path) -> None:
    home = _store_home(tmp_path, "schema.sql", "all_record_shapes.sql")
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, home).exit_code == 0
    events = _rows(catalog, "SELECT session_id, kind, role, model, strftime(ts, '%H:%M:%S'), "
                            "text FROM events WHERE kind IN ('prompt', 'system') ORDER BY ALL")  # fmt: skip
    assert events == sorted([
        (A, "prompt", "user", "claude-4-sonnet", "18:00:00", "why does the build fail?"),
        (A, "system", "system", "claude-4-sonnet", "18:00:00", "agent output: Completed"),
        (A, "system", "system", "claude-4-sonnet", "18:02:00", "agent output: Completed"),
        (A, "prompt", "user", "gpt-5", "18:05:30", "fix it"),
        (A, "system", "system", "gpt-5", "18:05:30", "agent output: Cancelled"),
        (A, "system", "system", "gpt-5", "18:06:00", "input: ActionResult"),
        (A, "system", "system", "gpt-5", "18:06:00", "agent output: Completed"),
        (A, "system", "system", "gpt-5", "18:07:00", "agent output: Completed"),
        (B, "prompt", "user", "claude-4-sonnet", "18:03:00",
         "run the test suite and report failures"),
        (B, "system", "system", "claude-4-sonnet", "18:03:00", "agent output: Completed"),
        (C, "prompt", "user", "claude-4-opus", "09:00:00", "try a different linker"),
        (C, "system", "system", "claude-4-opus", "09:00:00", "agent output: Completed"),
    ])  # fmt: skip
    tools = _rows(catalog, "SELECT session_id, kind, tool_name, tool_call_id, "
                           "CAST(tool_input AS VARCHAR), text FROM events "
                           "WHERE kind LIKE 'tool%' ORDER BY ALL")  # fmt: skip
    assert tools == [
        (A, "tool_call", "command", "act-0001", '{"command":"cargo build"}', None),
        (A, "tool_result", None, "act-0001", None, "error: linker `cc` not found\n"),
        (B, "tool_call", "command", "act-0002", '{"command":"pytest -q"}', None),
        (B, "tool_result", None, "act-0002", None, "3 passed"),
    ]
    sessions = _rows(catalog, "SELECT session_id, parent_session_id, project_path, title, "
                              "git_branch, model, strftime(started_at, '%d %H:%M:%S.%f'), "
                              "strftime(updated_at, '%d %H:%M') FROM sessions ORDER BY 1")  # fmt: skip
    assert sessions == [
        (A, None, "/home/dev/webshop", "Fix the failing build", "main", "gpt-5",
         "01 18:00:00.123456", "01 18:10"),
        (B, A, "/home/dev/webshop", "test-runner", None, "claude-4-sonnet",
         "01 18:03:00.000000", "01 18:04"),
        (C, A, "/home/dev/webshop-alt", "Try another linker", None, "claude-4-opus",
         "02 09:00:00.000000", "02 09:01"),
        (D, None, None, "An unreadable conversation", None, None, None, "03 08:00"),
    ]  # fmt: skip


def test_the_tui_store_is_a_store_of_its_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(HERE / "all_record_shapes", home)
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, home).exit_code == 0
    assert _rows(catalog, f"SELECT project_path, model FROM sessions WHERE session_id = '{E}'") \
        == [("/home/dev/infra", "gpt-5")]  # fmt: skip
    assert _rows(catalog, "SELECT count(*) FROM sources") == [(2,)]


def test_every_query_runs_in_one_read_transaction(tmp_path: Path) -> None:
    """One snapshot of a live WAL store: BEGIN first, ROLLBACK last, every read between."""
    path = build_store(tmp_path / "warp.sqlite", "schema.sql", "all_record_shapes.sql")
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    statements: list[str] = []
    con.set_trace_callback(statements.append)
    try:
        _, rows = _map(path, con)
        assert not con.in_transaction
    finally:
        con.close()
    assert rows == 7 + 4 + 3  # exchanges, conversations, blocks naming a conversation
    assert statements[0] == "BEGIN" and statements[-1] == "ROLLBACK"
    assert all(s.lstrip().startswith(("SELECT", "PRAGMA")) for s in statements[1:-1])


def test_a_write_between_queries_is_not_seen(tmp_path: Path) -> None:
    """Warp writing while the store is read: the conversations read after a new exchange
    was committed still belong to the snapshot the exchanges were read from."""
    path = build_store(tmp_path / "warp.sqlite", "schema.sql", "all_record_shapes.sql")
    with sqlite3.connect(path) as writer:
        writer.execute("PRAGMA journal_mode = WAL")
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    late = "c9000000-0000-4000-8000-000000000009"
    written: list[str] = []

    def write_once(statement: str) -> None:
        if "FROM agent_conversations" in statement and not written:
            written.append(statement)
            with sqlite3.connect(path) as writer:
                writer.execute(
                    "INSERT INTO agent_conversations (conversation_id, conversation_data, "
                    f"summary) VALUES ('{late}', '{{}}', 'written meanwhile')"
                )

    con.set_trace_callback(write_once)
    try:
        sink, _ = _map(path, con)
    finally:
        con.close()
    assert written
    assert late not in sink.build().sessions.column("session_id").to_pylist()


def test_missing_tables_and_columns_yield_what_is_there(tmp_path: Path) -> None:
    empty = build_store(tmp_path / "empty.sqlite")
    sink, rows = _map(empty)
    assert rows == 0 and sink.build().events.num_rows == 0
    bare = build_store(tmp_path / "bare.sqlite", extra=(
        "CREATE TABLE ai_queries (exchange_id TEXT, conversation_id TEXT, input TEXT);"
        "INSERT INTO ai_queries VALUES ('x1', 'k1', '[{\"Query\":{\"text\":\"hi\"}}]');"
        "CREATE TABLE blocks (stylized_command TEXT);"
    ))  # fmt: skip
    events = _map(bare)[0].build().events
    assert events.select(["session_id", "block_type", "role", "text", "ts"]).to_pylist() == [
        {"session_id": "k1", "block_type": "text", "role": "user", "text": "hi", "ts": None}
    ]


@pytest.mark.parametrize(
    "schema",
    [
        "CREATE TABLE ai_queries (id INTEGER, turn_uuid TEXT, conversation_id TEXT);",
        "CREATE TABLE agent_conversations (conversation_id TEXT, data_json TEXT);",
    ],
    ids=["ai_queries-without-exchange_id", "agent_conversations-without-conversation_data"],
)
def test_a_table_without_its_identity_columns_is_drift(tmp_path: Path, schema: str) -> None:
    path = build_store(tmp_path / "warp.sqlite", extra=schema)
    with pytest.raises(FormatDrift, match="a schema this adapter does not know"):
        _map(path)
    catalog = tmp_path / "c.duckdb"
    home = _store_home(tmp_path, extra=schema)
    result = _import(catalog, home)
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]


# --------------------------------------------------------------------------- tokens

_SNAPSHOT = (
    "INSERT OR REPLACE INTO agent_conversations (conversation_id, conversation_data, "
    'last_modified_at) VALUES (\'{cid}\', \'{{"conversation_usage_metadata":{{"token_usage":'
    '[{{"model_id":"claude-4-sonnet","warp_tokens":{warp},"byok_tokens":{byok},'
    "\"custom_endpoint_tokens\":1}}]}}}}', '{ts}');"
)


def test_token_totals_are_one_unpriced_per_session_row_the_latest_snapshot_wins(
    tmp_path: Path,
) -> None:
    home = _store_home(tmp_path, "schema.sql", extra=(
        _SNAPSHOT.format(cid="k1", warp=1000, byok=0, ts="2026-04-01 10:00:00")
        + _SNAPSHOT.format(cid="k2", warp=5, byok=4, ts="2026-04-01 11:00:00")
    ))  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    _import(catalog, home)
    store = home / STATE / "warp.sqlite"
    build_store(store, "schema.sql", extra=(
        _SNAPSHOT.format(cid="k1", warp=1500, byok=200, ts="2026-04-02 09:00:00")
        + _SNAPSHOT.format(cid="k2", warp=5, byok=4, ts="2026-04-01 11:00:00")
    ))  # fmt: skip
    assert _import(catalog, home).exit_code == 0
    usage = _rows(catalog, "SELECT session_id, model, input_tokens, output_tokens, "
                           "cache_read_tokens, total_tokens, per_session, "
                           "strftime(ts, '%m-%d %H:%M') FROM usage ORDER BY 1")  # fmt: skip
    assert usage == [
        ("k1", "warp:claude-4-sonnet", 1701, 0, 0, 1701, True, "04-02 09:00"),
        ("k2", "warp:claude-4-sonnet", 10, 0, 0, 10, True, "04-01 11:00"),
    ]
    assert _rows(catalog, "SELECT count(*), count(cost_usd) FROM usage_costed") == [(2, 0)]


def test_a_conversation_without_tokens_has_no_usage_row(tmp_path: Path) -> None:
    path = build_store(tmp_path / "warp.sqlite", "schema.sql", extra=(
        _SNAPSHOT.format(cid="k1", warp=0, byok=0, ts="2026-04-01 10:00:00").replace(
            '"custom_endpoint_tokens":1', '"custom_endpoint_tokens":"many"')
    ))  # fmt: skip
    assert _map(path)[0].build().usage.num_rows == 0


def test_stored_times_are_read_as_utc_instants() -> None:
    assert warp.instant("2026-03-01 18:00:00.5") == "2026-03-01T18:00:00.5Z"
    assert warp.instant("2026-03-01T18:00:00+02:00") == "2026-03-01T18:00:00+02:00"
    assert warp.instant("2026-03-01 18:00:00 +0000") == "2026-03-01T18:00:00+0000"
    assert warp.instant(1772388000) == "2026-03-01T18:00:00.000Z"
    assert warp.instant(1772388000000) == "2026-03-01T18:00:00.000Z"
    assert warp.instant("yesterday") is None and warp.instant(None) is None


# --------------------------------------------------------------------------- the export


def _export(tmp: Path, name: str, data: bytes | None = None) -> Path:
    target = tmp / "exports" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if data is None:
        shutil.copy(EXPORTS / name, target)
    else:
        target.write_bytes(data)
    return target


WARP_SHAPE = "20260301_180000-why_does_the_build_fail_.md"


def test_warp_shape_export_maps_each_labelled_block(tmp_path: Path) -> None:
    path = _export(tmp_path, WARP_SHAPE)
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, None, NamedFile(path)).exit_code == 0
    sid = "warp-md:" + hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    rows = _rows(catalog, "SELECT session_id, kind, source_offset, text FROM events ORDER BY seq")
    assert rows == [
        (sid, "prompt", 0, "why does the build fail?"),
        (sid, "response", 32,
         "The linker cannot find libssl.\n\n```sh\nsudo apt install libssl-dev\n```"),
        (sid, "prompt", 110, "fix it"),
        (sid, "response", 124, "I installed `libssl-dev`; the build passes now.\n\n## Summary"
                               "\n\n- installed the library\n- rebuilt\n\nThe todo list is done."),
        (sid, "prompt", 251, "thanks"),
    ]  # fmt: skip
    assert _rows(catalog, "SELECT title, started_at FROM sessions") == [(None, None)]
    # The same export under another name is the same session: nothing new.
    copy = _export(tmp_path, "renamed.md", path.read_bytes())
    again = _import(catalog, None, NamedFile(copy))
    assert again.exit_code == 0 and again.totals()["events"] == 0


def test_output_before_the_first_label_and_labels_in_code_are_the_agents(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(catalog, None, NamedFile(_export(tmp_path, "leading_output_and_fence.md")))
    assert _rows(catalog, "SELECT kind, text FROM events ORDER BY seq") == [
        ("response", "The previous session was restored."),
        ("prompt", "show the fixture"),
        ("response", "Here it is:\n\n```text\nUSER:\nthis label is inside a code block\n```"),
    ]


def test_aiwg_heading_export_maps_roles_title_and_markers(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    path = _export(tmp_path, "aiwg_headings.md")
    assert _import(catalog, None, NamedFile(path, warp_export.FORMAT)).exit_code == 0
    assert _rows(catalog, "SELECT kind, text FROM events ORDER BY seq") == [
        ("prompt", "What is left before the release?"),
        ("response", "Two items: the changelog and the tag."),
        ("prompt", "Write the changelog."),
        ("response", "Done; see `CHANGELOG.md`."),
    ]
    assert _rows(catalog, "SELECT title FROM sessions") == [("Release checklist",)]


def test_an_unknown_export_marker_major_is_drift(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, None, NamedFile(_export(tmp_path, "aiwg_unknown_major.md")))
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]


def test_markdown_that_is_neither_shape_is_refused(tmp_path: Path) -> None:
    path = _export(tmp_path, "neither.md")
    with pytest.raises(ConfigurationError, match="no export format recognizes"):
        guess_format(path)
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, None, NamedFile(path, warp_export.FORMAT))
    assert [s.code for s in result.refused] == ["SOURCE_CORRUPT"]
    assert _rows(catalog, "SELECT count(*) FROM events UNION ALL "
                          "SELECT count(*) FROM sessions") == [(0,), (0,)]  # fmt: skip


def test_an_export_that_is_not_utf8_is_one_reject(tmp_path: Path) -> None:
    path = _export(tmp_path, "latin1.md", "USER:\ncaf\xe9\n".encode("latin-1"))
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, None, NamedFile(path)).exit_code == 0
    assert _rows(catalog, "SELECT reason, length FROM rejects") == [("BAD_ENCODING", 11)]
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]


def test_a_rewritten_export_replaces_what_it_held(tmp_path: Path) -> None:
    path = _export(tmp_path, "chat.md", b"USER:\nfirst\n\nAGENT:\none\n")
    catalog = tmp_path / "c.duckdb"
    _import(catalog, None, NamedFile(path))
    path.write_bytes(b"USER:\nfirst\n\nAGENT:\none\n\nUSER:\nsecond\n")
    assert _import(catalog, None, NamedFile(path)).exit_code == 0
    sid = "warp-md:" + hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    assert _rows(catalog, "SELECT session_id, text FROM events ORDER BY seq") == [
        (sid, "first"), (sid, "one"), (sid, "second"),
    ]  # fmt: skip


def test_the_sniffer_claims_both_shapes_and_nothing_else() -> None:
    for name in (WARP_SHAPE, "aiwg_headings.md", "aiwg_unknown_major.md"):
        assert warp_export.sniff((EXPORTS / name).read_bytes()), name
    for head in (
        (EXPORTS / "neither.md").read_bytes(),
        b'{"type":"aiwg.session-interchange","schemaVersion":"1.0.0"}\n',
        b'{"USER:":1}\n',
        b"USER: hello on the same line\n",
        b"# Title\n\n## Users\n",
    ):
        assert not warp_export.sniff(head), head


# --------------------------------------------------------------------------- conformance


@pytest.mark.skipif(not AIWG.is_dir(), reason="the shared conformance corpus is absent")
def test_the_aiwg_warp_fixtures(tmp_path: Path) -> None:
    """AIWG's dialect: complete and unknown-lifecycle import (role headings, title); the
    file without role headings is refused; the 2.0.0 marker is drift."""
    work = tmp_path / "aiwg"
    shutil.copytree(AIWG, work)
    catalog = tmp_path / "complete.duckdb"
    assert _import(catalog, None, NamedFile(work / "complete.md")).exit_code == 0
    assert _rows(catalog, "SELECT kind, role FROM events ORDER BY seq") == [
        ("prompt", "user"), ("response", "assistant"), ("prompt", "user"),
        ("response", "assistant"),
    ]  # fmt: skip
    assert _rows(catalog, "SELECT title FROM sessions") == [("Synthetic Warp Conversation",)]
    catalog = tmp_path / "unknown.duckdb"
    assert _import(catalog, None, NamedFile(work / "unknown-lifecycle.md")).exit_code == 0
    assert _rows(catalog, "SELECT kind FROM events ORDER BY seq") == [("prompt",), ("response",)]
    with pytest.raises(ConfigurationError):
        guess_format(work / "malformed.md")
    for name, code in (("malformed.md", "SOURCE_CORRUPT"), ("unknown-major.md", "SCHEMA_DRIFT")):
        catalog = tmp_path / f"{name}.duckdb"
        result = _import(catalog, None, NamedFile(work / name, warp_export.FORMAT))
        assert [s.code for s in result.refused] == [code]
        assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]
