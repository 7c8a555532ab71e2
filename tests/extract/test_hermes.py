"""The Hermes provider: discovery (home, profiles, ``HERMES_HOME``), every record shape of
provider-formats-more §3 from ``state.db``, the session JSON logs and the
``hermes-export-jsonl`` export, one session read from all three without doubled rows,
the per-session token totals (latest snapshot wins), drift, bad rows and lines, the
sniffer, and the conformance fixtures (skipped when absent).

Expected figures are computed by hand from the fixtures (fixtures/hermes/README.md).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from agentlake.errors import ConfigurationError
from agentlake.extract.providers import by_id, hermes, resolve
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.ingest.files import NamedFile, guess_format
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows
from tests.extract.test_fuzz import EXPORT_FUZZ_EXAMPLES, MUTATION_LISTS, account_export

SPEC = by_id("hermes")
HERE = FIXTURES / "hermes"
EXPORTS = HERE / "export"
S1, S2, S3 = "20260501_090000_ab12cd", "20260501_090500_de34ef", "20260502_100000_aa11bb"
S4, S6, SX = "20260503_080000_cc22dd", "20260504_070000_ee33ff", "20260505_120000_bb55cc"
AGENT_SESSIONS = CONFORMANCE / "jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/hermes"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide/test/fixtures/sessions/hermes"

# --------------------------------------------------------------------------- helpers


def _home(name: str, tmp: Path) -> Path:
    target = tmp / name
    shutil.copytree(HERE / name, target, symlinks=True)
    return target


def _import(
    catalog: Path, home: Path | None = None, *files: Path, env: dict[str, str] | None = None
) -> ImportResult:
    options: dict[str, Any] = {"files": tuple(NamedFile(f) for f in files)}
    if home is not None:
        options["providers"] = ("hermes",)
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home or Path("/nonexistent"),
                      env=env or {}, build_index=False, **options)
    )  # fmt: skip


_rows = catalog_rows


def _kinds(catalog: Path, session: str | None = None) -> dict[str, int]:
    where = f"WHERE session_id = '{session}'" if session else ""
    return dict(_rows(catalog, f"SELECT kind, count(*) FROM events {where} GROUP BY ALL"))


def _usage(catalog: Path) -> list[tuple[Any, ...]]:
    return _rows(
        catalog,
        "SELECT session_id, model, input_tokens, cache_write_tokens, cache_read_tokens, "
        "output_tokens, reasoning_tokens, per_session, is_sidechain FROM usage ORDER BY ALL",
    )


def _event_ids(catalog: Path, session: str) -> set[str]:
    return {
        r[0] for r in _rows(catalog, f"SELECT event_id FROM events WHERE session_id = '{session}'")
    }


# --------------------------------------------------------------------------- fixtures


def test_shipped_databases_are_built_from_their_sql(tmp_path: Path) -> None:
    """Each ``state.db`` is ``schema.sql`` + the ``state.sql`` beside it (rebuild them with
    AGENTLAKE_UPDATE_SNAPSHOTS=1)."""
    schema = (HERE / "schema.sql").read_text()
    for sql in sorted(HERE.rglob("state.sql")):
        built = tmp_path / "built.db"
        built.unlink(missing_ok=True)
        con = sqlite3.connect(built)
        con.execute("PRAGMA page_size = 512")
        con.executescript(schema + sql.read_text())
        con.commit()
        con.execute("VACUUM")
        con.close()
        shipped = sql.with_name("state.db")
        if os.environ.get("AGENTLAKE_UPDATE_SNAPSHOTS"):
            shutil.copyfile(built, shipped)
        dumps = []
        for path in (built, shipped):
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            dumps.append(list(con.iterdump()))
            con.close()
        assert dumps[0] == dumps[1], f"{shipped} differs from {sql}"


# --------------------------------------------------------------------------- discovery


def test_registry_row_and_aliases() -> None:
    assert resolve("hermes-agent") is SPEC and SPEC.support == "both"
    assert {f.name for f in SPEC.formats} == {
        hermes.STATE_FORMAT, hermes.LOG_FORMAT, hermes.EXPORT_FORMAT,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("rel", "state", "log"),
    [
        (("state.db",), True, False),
        (("profiles", "work", "state.db"), True, False),
        (("state.db-wal",), False, False),
        (("state.db.bak",), False, False),
        (("profiles", "state.db"), False, False),
        (("profiles", "work", "backup", "state.db"), False, False),
        (("sessions", "session_20260501_090000_ab12cd.json"), False, True),
        (("profiles", "work", "sessions", "session_x.json"), False, True),
        (("sessions", "sessions.json"), False, False),
        (("sessions", "session_x.json.bak"), False, False),
        (("sessions", "archive", "session_x.json"), False, False),
        (("logs", "session_1.json"), False, False),
        (("session_x.json",), False, False),
    ],
)
def test_what_is_a_source(rel: tuple[str, ...], state: bool, log: bool) -> None:
    assert hermes.owns_state(rel) is state
    assert hermes.owns_log(rel) is log
    assert hermes.owns_export(rel) is False


def test_roots_default_env_list_and_relative_values(tmp_path: Path) -> None:
    assert [r.path for r in hermes.roots(tmp_path, {})] == [
        tmp_path / ".hermes", tmp_path / "AppData" / "Local" / "hermes",
    ]  # fmt: skip
    both = hermes.roots(tmp_path, {"HERMES_HOME": "/srv/h1, /srv/h2"})
    assert [r.path for r in both] == [Path("/srv/h1"), Path("/srv/h2")]
    ignored, _ = hermes.roots(tmp_path, {"HERMES_HOME": "rel/home"})
    assert ignored.path == tmp_path / ".hermes" and ignored.warning


def test_the_home_and_its_profiles_are_discovered_database_first(tmp_path: Path) -> None:
    home = _home("all_record_types", tmp_path)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,))
    found = [(s.source.format, s.path.relative_to(home / ".hermes").as_posix())
             for s in plan.sources if s.source]  # fmt: skip
    assert found == [
        ("hermes-state", "state.db"),
        ("hermes-state", "profiles/work/state.db"),
        ("hermes-session-json", f"sessions/session_{S1}.json"),
        ("hermes-session-json", f"sessions/session_{S6}.json"),
    ]
    env_home = tmp_path / "elsewhere"
    shutil.copytree(home / ".hermes", env_home)
    plan = make_plan({}, workspace="w", home=tmp_path / "none", env={"HERMES_HOME": str(env_home)},
                     providers=(SPEC,))  # fmt: skip
    assert len(plan.sources) == 4


# --------------------------------------------------------------------------- state.db


def test_every_record_shape_of_the_database_and_logs(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, _home("all_record_types", tmp_path)).exit_code == 0
    events = _rows(catalog, "SELECT kind, role, text, tool_name, tool_call_id, "
                            "CAST(tool_input AS VARCHAR), is_error, is_sidechain, model FROM events "
                            f"WHERE session_id = '{S1}' ORDER BY ts, seq")  # fmt: skip
    assert events == [
        ("system", "system", "You are Hermes, a coding agent.", None, None, None, None, False, None),
        ("prompt", "user", "Why does the docker build fail?", None, None, None, None, False, None),
        ("reasoning", "assistant", "Need to run make first.", None, None, None, None, False,
         "anthropic/claude-sonnet-4.6"),
        ("response", "assistant", "Running the build.", None, None, None, None, False,
         "anthropic/claude-sonnet-4.6"),
        ("tool_call", "assistant", None, "terminal", "call_1", '{"command":"make"}', None, False,
         "anthropic/claude-sonnet-4.6"),
        ("tool_result", "tool", "make: *** [build] Error 2", "terminal", "call_1", None, True,
         False, None),
        ("reasoning", "assistant", "Check the COPY lines.", None, None, None, None, False,
         "anthropic/claude-sonnet-4.6"),
        ("reasoning", "assistant", "Compared COPY paths", None, None, None, None, False,
         "anthropic/claude-sonnet-4.6"),
        ("response", "assistant", "The Dockerfile copies a missing file.", None, None, None, None,
         False, "anthropic/claude-sonnet-4.6"),
        ("prompt", "user", "Here is the screenshot.", None, None, None, None, False, None),
        ("prompt", "user", "[image]", None, None, None, None, False, None),
        ("system", "system", "Context window at 80%.", None, None, None, None, False, None),
        ("response", "assistant", "Fixed: the COPY path was wrong.", None, None, None, None, False,
         "anthropic/claude-sonnet-4.6"),
    ]  # fmt: skip
    # the sub-agent: its own session, linked to its parent, its rows marked sidechain
    assert _kinds(catalog, S2) == {"prompt": 1, "tool_call": 1, "tool_result": 1, "response": 1}
    assert _rows(
        catalog, f"SELECT DISTINCT is_sidechain FROM events WHERE session_id = '{S2}'"
    ) == [(True,)]
    sessions = _rows(catalog, "SELECT session_id, parent_session_id, project_path, title, "
                              "git_branch FROM sessions ORDER BY 1")  # fmt: skip
    assert sessions == [
        (S1, None, "/home/dev/webshop", "Fix docker build", "main"),
        (S2, S1, "/home/dev/webshop", None, None),
        (S3, None, "/home/dev/payments", "Refactor payments", None),
        (S4, None, None, "Weekly report", None),
        ("20260503_090000_ff44aa", None, None, None, None),
        (S6, None, "/home/dev/notes", None, None),
    ]


def test_in_place_compaction_copies_are_one_message(tmp_path: Path) -> None:
    """Rows 25/26 re-insert 22/23 (same content and time): one event each; row 27 says
    22's words again at a new time: an event of its own."""
    catalog = tmp_path / "c.duckdb"
    _import(catalog, _home("all_record_types", tmp_path))
    texts = _rows(catalog, f"SELECT text FROM events WHERE session_id = '{S3}' ORDER BY ts")
    assert [t for (t,) in texts] == [
        "Start the refactor.", "Plan drafted.", "Go ahead.", "Done step one.",
        "[Context summary] Planned the refactor and did step one.", "Go ahead.",
        "Step two done.",
    ]  # fmt: skip


def test_per_session_totals_per_model(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(catalog, _home("all_record_types", tmp_path))
    assert _usage(catalog) == [
        (S1, "anthropic/claude-sonnet-4.6", 5200, 300, 4100, 730, 90, True, False),
        (S2, "openai/gpt-5.2", 800, 0, 0, 150, 30, True, True),
        (S3, "anthropic/claude-sonnet-4.6", 3000, 0, 1000, 400, 0, True, False),
        # session_model_usage: two task rows of one model summed, one row per model
        (S4, "anthropic/claude-haiku-4.5", 500, 0, 0, 100, 0, True, False),
        (S4, "openai/gpt-5.2", 1500, 0, 500, 250, 50, True, False),
    ]
    # the day of a session's totals is its last activity (its end here)
    assert _rows(catalog, f"SELECT CAST(ts AS VARCHAR) FROM usage WHERE session_id = '{S1}'") == [
        ("2026-05-01 09:01:40+00",)
    ]


def test_a_grown_database_replaces_its_totals(tmp_path: Path) -> None:
    home = _home("all_record_types", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(catalog, home)
    con = sqlite3.connect(home / ".hermes" / "state.db")
    con.execute("UPDATE sessions SET input_tokens = 9000, output_tokens = 1000 WHERE id = ?", (S1,))
    con.commit()
    con.close()
    assert _import(catalog, home).exit_code == 0
    rows = [r for r in _usage(catalog) if r[0] == S1]
    assert rows == [(S1, "anthropic/claude-sonnet-4.6", 9000, 300, 4100, 1090, 90, True, False)]


def test_all_queries_run_in_one_read_transaction(tmp_path: Path) -> None:
    home = _home("all_record_types", tmp_path)
    db = home / ".hermes" / "state.db"
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    statements: list[str] = []
    con.set_trace_callback(statements.append)
    source = SourceFile("hermes", db, home / ".hermes", "sqlite", hermes.STATE_FORMAT, 0, 0, 0, 0)
    adapter = hermes.StateDbAdapter()
    assert adapter.map_database(con, adapter.locate(source), RowSink()) > 0
    con.close()
    statements = [s for s in statements if not s.startswith("--")]  # SQLite's own notes
    assert statements[0] == "BEGIN" and statements[-1] == "ROLLBACK"
    assert all(s.startswith("SELECT") for s in statements[1:-1])


def test_bad_database_rows_are_skipped(tmp_path: Path) -> None:
    """A session with an impossible counter, a BLOB role, a message of no session and
    an unknown table layout: skipped, the rest imported; text that is not UTF-8 is read
    with a replacement character."""
    home = _home("all_record_types", tmp_path)
    con = sqlite3.connect(home / ".hermes" / "state.db")
    con.execute("UPDATE sessions SET input_tokens = 1e300 WHERE id = ?", (S3,))
    con.execute("UPDATE messages SET content = CAST(X'4f6bff' AS TEXT) WHERE id = 28")  # not UTF-8
    con.execute("CREATE TABLE session_model_usage (session_id TEXT, model BLOB, input_tokens REAL)")
    con.execute("INSERT INTO session_model_usage VALUES (?, X'00', 5), (NULL, 'm', 5)", (S1,))
    con.commit()
    con.close()
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, home).exit_code == 0
    assert S3 not in {r[0] for r in _usage(catalog)}
    assert len(_kinds(catalog, S3)) == 2  # its messages stay
    assert _rows(catalog, "SELECT count(*) FROM events WHERE text = 'Ok\ufffd'") == [(1,)]
    assert [r[:3] for r in _usage(catalog) if r[0] == S1] == [
        (S1, "anthropic/claude-sonnet-4.6", 5200)
    ]


def test_a_future_schema_is_drift_and_a_database_without_tables_is_empty(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, _home("contract_drift", tmp_path))
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    empty = tmp_path / "empty" / ".hermes"
    empty.mkdir(parents=True)
    sqlite3.connect(empty / "state.db").close()
    assert _import(tmp_path / "e.duckdb", empty.parent).exit_code == 0


# --------------------------------------------------------------------------- one session


def test_the_json_log_alone_gives_the_database_copys_events(tmp_path: Path) -> None:
    """The JSON log of S1 names its messages as the database does: the same event ids;
    together they are one session with no doubled rows."""
    both = _home("all_record_types", tmp_path)
    catalog = tmp_path / "both.duckdb"
    _import(catalog, both)
    log_only = tmp_path / "log_only"
    (log_only / ".hermes" / "sessions").mkdir(parents=True)
    name = f"session_{S1}.json"
    shutil.copy(both / ".hermes" / "sessions" / name, log_only / ".hermes" / "sessions" / name)
    log_catalog = tmp_path / "log.duckdb"
    _import(log_catalog, log_only)
    db_only = _home("all_record_types", tmp_path / "d")
    shutil.rmtree(db_only / ".hermes" / "sessions")
    db_catalog = tmp_path / "db.duckdb"
    _import(db_catalog, db_only)
    assert _event_ids(log_catalog, S1) == _event_ids(db_catalog, S1) == _event_ids(catalog, S1)
    assert len(_event_ids(catalog, S1)) == 13
    # the log has no message times; the database's copy, read first, keeps them
    assert _rows(
        catalog, f"SELECT count(*) FROM events WHERE session_id = '{S1}' AND ts IS NULL"
    ) == [(0,)]
    assert _rows(log_catalog, "SELECT count(*) FROM usage") == [(0,)]


def test_an_export_of_a_native_session_is_the_same_session(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    home = _home("all_record_types", tmp_path)
    _import(catalog, home)
    before = _event_ids(catalog, S1), _usage(catalog)
    result = _import(catalog, None, EXPORTS / "sessions_export.jsonl")
    assert result.exit_code == 0
    assert (_event_ids(catalog, S1), [r for r in _usage(catalog) if r[0] != SX]) == before
    # a later snapshot of the same session replaces its totals, never adds to them
    _import(catalog, None, EXPORTS / "later_snapshot.jsonl")
    assert [r for r in _usage(catalog) if r[0] == S1] == [
        (S1, "anthropic/claude-sonnet-4.6", 6000, 300, 4100, 790, 90, True, False)
    ]
    # the export alone gives the same events as the database
    alone = tmp_path / "alone.duckdb"
    _import(alone, None, EXPORTS / "sessions_export.jsonl")
    assert _event_ids(alone, S1) == before[0]


def test_export_only_session_fields_and_shapes(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, None, EXPORTS / "sessions_export.jsonl").exit_code == 0
    assert _kinds(catalog, SX) == {"prompt": 1, "reasoning": 1, "response": 1, "tool_call": 1,
                                   "tool_result": 1}  # fmt: skip
    assert _rows(catalog, f"SELECT text, tool_name FROM events WHERE session_id = '{SX}' "
                          "AND kind = 'tool_result'") == [("3 rules found", "session_search")]  # fmt: skip
    assert _rows(
        catalog,
        "SELECT parent_session_id, project_path, git_branch FROM sessions "
        f"WHERE session_id = '{SX}'",
    ) == [("20260505_110000_aa44bb", "/home/dev/chatops", "feature/alerts")]
    assert [r for r in _usage(catalog) if r[0] == SX] == [
        (SX, "openai/gpt-5.2", 100, 5, 20, 60, 10, True, False)
    ]
    # a millisecond time is read as milliseconds
    assert _rows(catalog, f"SELECT CAST(max(ts) AS VARCHAR) FROM events WHERE session_id = '{SX}'"
                          " AND kind = 'response'") == [("2026-05-05 12:00:02+00",)]  # fmt: skip


def test_export_drift_bad_lines_and_foreign_files(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, None, EXPORTS / "unknown_major.jsonl")
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    bad = tmp_path / "bad.duckdb"
    assert _import(bad, None, EXPORTS / "bad_lines.jsonl").exit_code == 0
    assert _rows(bad, 'SELECT reason FROM rejects ORDER BY "offset"') == [
        ("DUPLICATE_ID",), ("INVALID_RECORD",), ("INVALID_RECORD",), ("INVALID_RECORD",),
        ("INVALID_RECORD",), ("MALFORMED",),
    ]  # fmt: skip
    assert _rows(bad, "SELECT count(*) FROM sessions") == [(2,)]
    # not sniffed as a Hermes export at all; named in the format, refused whole
    with pytest.raises(ConfigurationError):
        guess_format(EXPORTS / "not_an_export.jsonl")
    named = run_import(ImportOptions(
        catalog=tmp_path / "named.duckdb", workspace="default", home=Path("/nonexistent"),
        env={}, build_index=False,
        files=(NamedFile(EXPORTS / "not_an_export.jsonl", hermes.EXPORT_FORMAT),),
    ))  # fmt: skip
    assert [s.code for s in named.refused] == ["SOURCE_CORRUPT"]
    assert _rows(tmp_path / "named.duckdb", "SELECT count(*) FROM events") == [(0,)]


def test_sniffer_claims_exports_only() -> None:
    for name in ("sessions_export.jsonl", "later_snapshot.jsonl", "bad_lines.jsonl"):
        assert guess_format(EXPORTS / name)[1].name == hermes.EXPORT_FORMAT
    head = (EXPORTS / "sessions_export.jsonl").read_bytes()
    cut = head.index(b'"messages":[') + 40
    assert hermes.sniff(head[:cut])  # a first line cut short by the sniffing window
    assert not hermes.sniff(head[: cut - 60])  # no messages list in sight
    nested = b'{"schemaVersion":16,"sessions":[{"id":"s","source":"x","started_at":1,"messages":['
    assert not hermes.sniff(nested + b"x" * 100)
    assert not hermes.sniff((EXPORTS / "not_an_export.jsonl").read_bytes())
    log = HERE / "all_record_types" / ".hermes" / "sessions" / f"session_{S6}.json"
    assert not hermes.sniff(log.read_bytes())
    for other in (FIXTURES / "generic").rglob("*.jsonl"):
        assert not hermes.sniff(other.read_bytes()[:65536])


# --------------------------------------------------------------------------- conformance


@pytest.mark.skipif(not AGENT_SESSIONS.is_dir(), reason="conformance data not present")
def test_conformance_session_logs(tmp_path: Path) -> None:
    sessions = tmp_path / ".hermes" / "sessions"
    sessions.mkdir(parents=True)
    for name in ("small", "large", "schema_drift"):
        shutil.copy(AGENT_SESSIONS / f"{name}.json", sessions / f"session_{name}.json")
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, tmp_path).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]
    assert _kinds(catalog, "20260429_hermes_small") == {"prompt": 1, "response": 1}
    assert _kinds(catalog, "20260429_hermes_large") == {
        "system": 1, "prompt": 1, "reasoning": 2, "response": 2, "tool_call": 1, "tool_result": 1,
    }  # fmt: skip
    drift = "20260429_hermes_schema_drift"
    assert _kinds(catalog, drift) == {"prompt": 1, "response": 1, "tool_call": 1, "tool_result": 1}
    assert _rows(catalog, f"SELECT is_error FROM events WHERE session_id = '{drift}' "
                          "AND kind = 'tool_result'") == [(True,)]  # fmt: skip
    assert _rows(catalog, "SELECT project_path FROM sessions WHERE session_id = "
                          "'20260429_hermes_large'") == [("~/Repository/Codex-History",)]  # fmt: skip


@pytest.mark.skipif(not AIWG.is_dir(), reason="conformance data not present")
@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("complete", "ok"), ("active", "ok"), ("archived", "ok"), ("snapshot", "ok"),
        ("inconsistent-snapshot", "ok"), ("malformed", "SOURCE_CORRUPT"),
        ("unknown-major", "SCHEMA_DRIFT"),
    ],
)  # fmt: skip
def test_conformance_aiwg_exports(tmp_path: Path, name: str, outcome: str) -> None:
    """AIWG's export fixtures, named in the format. The snapshot class's
    ``snapshotConsistency`` is not checked: both read as plain exports."""
    catalog = tmp_path / "c.duckdb"
    result = run_import(ImportOptions(
        catalog=catalog, workspace="default", home=Path("/nonexistent"), env={},
        build_index=False, files=(NamedFile(AIWG / f"{name}.jsonl", hermes.EXPORT_FORMAT),),
    ))  # fmt: skip
    if outcome != "ok":
        assert [s.code for s in result.refused] == [outcome]
        return
    assert result.exit_code == 0 and _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]
    if name == "complete":
        assert _kinds(catalog) == {"prompt": 1, "reasoning": 2, "response": 1, "tool_call": 1,
                                   "tool_result": 1}  # fmt: skip
        assert _usage(catalog) == [("hermes-ended", "synthetic/model", 100, 5, 20, 60, 10, True,
                                    False)]  # fmt: skip
        assert _rows(catalog, "SELECT parent_session_id FROM sessions") == [("hermes-parent",)]


# --------------------------------------------------------------------------- fuzz


@settings(max_examples=EXPORT_FUZZ_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(mutations=MUTATION_LISTS)
def test_mutated_exports_never_escape(mutations: list[tuple[str, float, int]]) -> None:
    """The export adapter is not in the contract home (files are named, not found): the
    fuzz suite's mutations and byte accounting, applied to an export file."""
    data = (EXPORTS / "sessions_export.jsonl").read_bytes()
    account_export(SPEC, hermes.EXPORT_FORMAT, data, mutations)
