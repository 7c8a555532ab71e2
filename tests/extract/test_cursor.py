"""The Cursor provider: transcripts (parent + subagents), the ``state.vscdb`` index and
their accounting. Expected totals are computed by hand from the fixture content with
DESIGN §4's rule (one call per bubble row with a non-zero ``tokenCount``:
input = ``inputTokens``, output = ``outputTokens``, nothing cached, no reasoning)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from agentlake.extract.extract import extract_source
from agentlake.extract.providers import by_id, cursor, resolve
from agentlake.extract.sources import SourceFile, walk_root
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import FIXTURES
from tests.pipeline.helpers import snapshot

SPEC = by_id("cursor")
CONTENT = ("events", "usage", "sessions", "rejects")
GLOBAL_STORAGE = Path(".config/Cursor/User/globalStorage")

# Composer ids of the fixtures.
PARENT = "aa000000-0000-4000-8000-000000000001"
CHILD_1 = "aa000000-0000-4000-8000-000000000051"
CHILD_2 = "aa000000-0000-4000-8000-000000000052"


def _home(name: str, tmp: Path) -> Path:
    target = tmp / name
    shutil.copytree(FIXTURES / "cursor" / name, target)
    return target


def _import(home: Path, catalog: Path) -> ImportResult:
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      providers=("cursor",), build_index=False)
    )  # fmt: skip


def _rows(catalog: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _usage(catalog: Path) -> tuple[int, int, int, int, int, int]:
    """(calls, input, cache_write, cache_read, output, reasoning) over all usage rows."""
    row = _rows(
        catalog,
        "SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(cache_write_tokens), 0), "
        "coalesce(sum(cache_read_tokens), 0), coalesce(sum(output_tokens), 0), "
        "coalesce(sum(reasoning_tokens), 0) FROM usage",
    )[0]
    return (row[0], int(row[1]), int(row[2]), int(row[3]), int(row[4]), int(row[5]))


def _transcript(home: Path, composer: str) -> Path:
    return next(home.rglob(f"{composer}.jsonl"))


def _set_mtime(path: Path, iso: str) -> int:
    ns = int(datetime.fromisoformat(iso).timestamp()) * 1_000_000_000
    os.utime(path, ns=(ns, ns))
    return ns


def _split_after(path: Path, lines: int) -> bytes:
    """Keep the first ``lines`` lines of ``path``; return the rest."""
    data = path.read_bytes()
    cut = 0
    for _ in range(lines):
        cut = data.index(b"\n", cut) + 1
    path.write_bytes(data[:cut])
    return data[cut:]


def _append(path: Path, tail: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(tail)


def _utc(column: str) -> str:
    """SQL rendering ``column`` (TIMESTAMPTZ) as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC."""
    return f"strftime(timezone('UTC', {column}), '%Y-%m-%dT%H:%M:%SZ')"


# --------------------------------------------------------------------------- registry


def test_registry_row() -> None:
    assert resolve("cursor-agent") is SPEC
    assert SPEC.capabilities == {"discover", "stream", "enrich", "tokens", "subagents"}
    assert SPEC.adapter_version == cursor.ADAPTER_VERSION == "1.0"
    assert {(f.name, f.position_kind) for f in SPEC.formats} == {
        ("cursor-transcript", "byte-offset"),
        ("cursor-state", "sqlite"),
    }
    assert SPEC.superseded is cursor.superseded


# --------------------------------------------------------------------------- discovery


@pytest.mark.parametrize(
    ("rel", "transcript", "database"),
    [
        ("home-dev-x/agent-transcripts/c1/c1.jsonl", True, False),
        ("home-dev-x/agent-transcripts/c1/subagents/c2.jsonl", True, False),
        ("home-dev-x/agent-transcripts/c1.jsonl", False, False),  # flat: not discovered
        ("home-dev-x/agent-transcripts/c1/other.jsonl", False, False),
        ("home-dev-x/agent-transcripts/c1/c1.txt", False, False),
        ("home-dev-x/agent-transcripts/c1/subagents/deeper/c2.jsonl", False, False),
        ("home-dev-x/agent-transcripts/c1/subagents/.jsonl", False, False),
        ("home-dev-x/notes.jsonl", False, False),
        ("state.vscdb", False, True),
        ("state.vscdb.backup", False, False),
        ("state.vscdb-wal", False, False),
        ("backups/state.vscdb", False, False),
    ],
)
def test_predicates(rel: str, transcript: bool, database: bool) -> None:
    assert cursor.owns_transcript(Path(rel).parts) is transcript
    assert cursor.owns_state_db(Path(rel).parts) is database


def test_roots_cover_linux_macos_and_windows_under_home(tmp_path: Path) -> None:
    paths = [r.path for r in cursor.roots(tmp_path, {})]
    assert paths == [
        tmp_path / ".config/Cursor/User/globalStorage",
        tmp_path / "Library/Application Support/Cursor/User/globalStorage",
        tmp_path / "AppData/Roaming/Cursor/User/globalStorage",
        tmp_path / ".cursor/projects",
    ]


def test_database_found_in_the_macos_and_windows_locations(tmp_path: Path) -> None:
    home = _home("state_vscdb_itemtable_headers", tmp_path)
    db = home / GLOBAL_STORAGE / "state.vscdb"
    for place in ("Library/Application Support", "AppData/Roaming"):
        target = home / place / "Cursor/User/globalStorage/state.vscdb"
        target.parent.mkdir(parents=True)
        shutil.copy2(db, target)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,))
    assert sum(1 for s in plan.sources if s.path.name == "state.vscdb") == 3
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    # The same bubbles in three databases are the same calls: counted once.
    assert _usage(catalog) == (2, 4000, 0, 0, 400, 0)


def test_subagent_symlinked_out_of_the_root_is_refused(tmp_path: Path) -> None:
    home = _home("parent_and_subagents", tmp_path)
    outside = tmp_path / "outside.jsonl"
    shutil.copy2(_transcript(home, CHILD_1), outside)
    link = _transcript(home, CHILD_1).with_name("cc000000-0000-4000-8000-000000000099.jsonl")
    link.symlink_to(outside)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,))
    refused = [s for s in plan.sources if s.path == link]
    assert [(s.action, s.code) for s in refused] == [("refuse", "SOURCE_OUTSIDE_ROOT")]


def test_look_alikes_are_not_admitted() -> None:
    home = FIXTURES / "cursor" / "contract_lookalikes"
    assert make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,)).sources == ()


# --------------------------------------------------------------------------- subagents


def test_parent_and_subagents_roll_up(tmp_path: Path) -> None:
    home = _home("parent_and_subagents", tmp_path)
    _set_mtime(_transcript(home, PARENT), "2026-05-01T14:06:00+00:00")
    _set_mtime(_transcript(home, CHILD_1), "2026-05-01T15:10:00+00:00")
    _set_mtime(_transcript(home, CHILD_2), "2026-05-01T15:20:00+00:00")
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    # parent 1000/100 + 2000/200, child 1 500/50, child 2 300/30
    assert _usage(catalog) == (4, 3800, 0, 0, 380, 0)
    per_session = _rows(
        catalog,
        "SELECT session_id, count(*), sum(input_tokens), sum(output_tokens), "
        "string_agg(DISTINCT model, ',') FROM usage GROUP BY ALL ORDER BY ALL",
    )
    assert per_session == [
        (PARENT, 2, 3000, 300, "claude-4.5-sonnet-thinking"),
        (CHILD_1, 1, 500, 50, "gpt-5"),  # composer model "default": the bubble's model
        (CHILD_2, 1, 300, 30, "claude-4.5-haiku"),  # no composerData: the bubble's model
    ]
    sessions = {
        r[0]: r[1:]
        for r in _rows(
            catalog,
            f"SELECT session_id, parent_session_id, project_path, {_utc('updated_at')} FROM sessions",
        )
    }
    assert sessions.keys() == {PARENT, CHILD_1, CHILD_2}
    assert sessions[CHILD_1][0] == sessions[CHILD_2][0] == PARENT
    assert sessions[PARENT][0] is None
    assert sessions[PARENT][1] == "/home/dev/demo"  # composerData fsPath
    assert sessions[CHILD_1][1] == "/home/dev/demo/app"  # parent dir of its one path
    assert sessions[CHILD_2][1] == "/home/dev/demo"  # its working_directory
    # The parent's freshness is its latest child's write (its own events end 14:00Z).
    assert sessions[PARENT][2] == "2026-05-01T15:20:00Z"
    assert sessions[CHILD_1][2] == "2026-05-01T15:10:00Z"
    sidechain = dict(
        _rows(catalog, "SELECT session_id, bool_and(is_sidechain) FROM events GROUP BY 1")
    )
    assert sidechain == {PARENT: False, CHILD_1: True, CHILD_2: True}


def test_parent_freshness_follows_an_append_to_a_child(tmp_path: Path) -> None:
    home = _home("parent_and_subagents", tmp_path)
    for composer in (CHILD_1, CHILD_2):
        _set_mtime(_transcript(home, composer), "2026-05-01T15:00:00+00:00")
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    child = _transcript(home, CHILD_1)
    _append(child, orjson.dumps({"role": "assistant", "message": {"content": "More."}}) + b"\n")
    _set_mtime(child, "2026-05-02T08:00:00+00:00")
    result = _import(home, catalog)
    assert {s.planned.path.name: s.planned.continuity for s in result.sources}[child.name] == (
        "validated-append"
    )
    updated = _rows(
        catalog, f"SELECT {_utc('updated_at')} FROM sessions WHERE session_id = ?", [PARENT]
    )
    assert updated == [("2026-05-02T08:00:00Z",)]


# --------------------------------------------------------------------------- duplicates


def test_duplicate_stems_prefer_outside_empty_window_then_newer(tmp_path: Path) -> None:
    home = _home("duplicate_stems_empty_window", tmp_path)
    projects = home / ".cursor/projects"
    dup, child, twin, single = (
        "dd000000-0000-4000-8000-000000000001",
        "dd000000-0000-4000-8000-0000000000c1",
        "ee000000-0000-4000-8000-000000000001",
        "ff000000-0000-4000-8000-000000000001",
    )
    # The empty-window copy is the newest, and still loses.
    _set_mtime(
        projects / f"home-dev-api/agent-transcripts/{dup}/{dup}.jsonl", "2026-05-01T10:00:00+00:00"
    )
    _set_mtime(
        projects / f"empty-window/agent-transcripts/{dup}/{dup}.jsonl", "2026-05-03T10:00:00+00:00"
    )
    _set_mtime(
        projects / f"home-dev-a/agent-transcripts/{twin}/{twin}.jsonl", "2026-05-01T10:00:00+00:00"
    )
    _set_mtime(
        projects / f"home-dev-b/agent-transcripts/{twin}/{twin}.jsonl", "2026-05-02T10:00:00+00:00"
    )
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,))
    left_out = sorted(
        str(s.path.relative_to(projects)) for s in plan.sources if s.continuity == "superseded"
    )
    assert left_out == [
        f"empty-window/agent-transcripts/{dup}/{dup}.jsonl",
        f"empty-window/agent-transcripts/{dup}/subagents/{child}.jsonl",
        f"home-dev-a/agent-transcripts/{twin}/{twin}.jsonl",
    ]
    assert all(s.action == "skip" and "preferred" in (s.message or "") for s in plan.sources
               if s.continuity == "superseded")  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert {r[0] for r in _rows(catalog, "SELECT session_id FROM sessions")} == {dup, twin, single}
    prompts = {r[0] for r in _rows(catalog, "SELECT text FROM events WHERE kind = 'prompt'")}
    assert prompts == {"from the api window", "newer copy", "only in the empty window"}


def test_duplicate_stems_newer_copy_wins_when_neither_is_empty_window(tmp_path: Path) -> None:
    home = _home("duplicate_stems_empty_window", tmp_path)
    twin = "ee000000-0000-4000-8000-000000000001"
    older = home / f".cursor/projects/home-dev-b/agent-transcripts/{twin}/{twin}.jsonl"
    newer = home / f".cursor/projects/home-dev-a/agent-transcripts/{twin}/{twin}.jsonl"
    _set_mtime(older, "2026-05-01T10:00:00+00:00")
    _set_mtime(newer, "2026-05-02T10:00:00+00:00")
    found = [
        s
        for root in SPEC.roots(home, {})
        for s in walk_root(root, SPEC.formats)
        if isinstance(s, SourceFile)
    ]
    left_out = cursor.superseded(found)
    assert {s.path for s in found if s.source_id in left_out} >= {older}
    assert newer not in {s.path for s in found if s.source_id in left_out}


# --------------------------------------------------------------------------- clock


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("Friday, May 1, 2026, 9:00 AM (UTC-5)", "2026-05-01T14:00:00.000Z"),
        ("Friday, May 1, 2026, 11:59 PM (UTC+2)", "2026-05-01T21:59:00.000Z"),
        ("Sat, May 2, 2026, 12:30 AM (UTC-7)", "2026-05-02T07:30:00.000Z"),
        ("Sunday, May 3, 2026, 12:00 PM (UTC+05:30)", "2026-05-03T06:30:00.000Z"),
        ("Thursday, December 31, 2026, 11:30 PM (UTC-3)", "2027-01-01T02:30:00.000Z"),
        ("Monday, Jan 5, 2026, 7:05:09 am (UTC)", "2026-01-05T07:05:09.000Z"),
        ("Monday, January 5, 2026, 19:05 (UTC+1)", "2026-01-05T18:05:00.000Z"),
        ("May 1, 2026, 9:00 AM", "2026-05-01T09:00:00.000Z"),  # no zone: read as UTC
        ("sometime after lunch", None),
        ("Friday, Mayo 1, 2026, 9:00 AM (UTC-5)", None),
        ("Friday, February 30, 2026, 9:00 AM (UTC-5)", None),
        ("Friday, May 1, 2026, 13:00 PM (UTC-5)", None),
    ],
)
def test_parse_timestamp(text: str, iso: str | None) -> None:
    assert cursor.parse_timestamp(text) == iso


# One event per line of timestamps_carried_forward: the clock of each line.
CLOCK = [
    None,  # 1 assistant line before any <timestamp>
    *["2026-05-01T14:00:00Z"] * 3,  # 2 9:00 AM (UTC-5), 3, 4
    *["2026-05-01T21:59:00Z"] * 3,  # 5 11:59 PM (UTC+2), 6, 7
    *["2026-05-02T07:30:00Z"] * 5,  # 8 12:30 AM (UTC-7), 9, 10, 11 unparsable, 12
    *["2026-05-03T06:30:00Z"] * 2,  # 13 12:00 PM (UTC+05:30), 14
]


def _clock(catalog: Path) -> list[str | None]:
    return [r[0] for r in _rows(catalog, f"SELECT {_utc('ts')} FROM events ORDER BY seq")]


def test_timestamps_are_carried_forward(tmp_path: Path) -> None:
    home = _home("timestamps_carried_forward", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _clock(catalog) == CLOCK
    times = _rows(catalog, f"SELECT {_utc('started_at')}, {_utc('updated_at')} FROM sessions")
    assert times == [("2026-05-01T14:00:00Z", "2026-05-03T06:30:00Z")]


@pytest.mark.parametrize("cut", [8, 11])
def test_clock_continues_across_an_append_in_a_later_run(tmp_path: Path, cut: int) -> None:
    home = _home("timestamps_carried_forward", tmp_path)
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    path = _transcript(home, "7a000000-0000-4000-8000-000000000001")
    tail = _split_after(path, cut)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _clock(catalog) == CLOCK[:cut]
    _append(path, tail)
    result = _import(home, catalog)
    assert [s.planned.continuity for s in result.sources] == ["validated-append"]
    assert _clock(catalog) == CLOCK  # lines 9.. still carry 07:30Z from line 8
    assert snapshot(catalog, CONTENT) == snapshot(clean, CONTENT)


# --------------------------------------------------------------------------- turns


def test_turn_status_marks_the_turns_tool_calls(tmp_path: Path) -> None:
    home = _home("turn_ended_error", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    statuses = _rows(
        catalog, "SELECT text, is_error FROM events WHERE kind = 'system' ORDER BY seq"
    )
    assert statuses == [
        ("turn ended: success", False),
        ("turn ended: error", True),
        ("turn ended: Cancelled", True),
        ("turn ended: aborted", False),  # not a failure status
    ]
    calls = _rows(
        catalog, "SELECT tool_call_id, tool_name FROM events WHERE kind = 'tool_call' ORDER BY seq"
    )
    assert len(calls) == 6 and all(c[0] for c in calls)
    failed = _rows(
        catalog,
        "SELECT c.tool_name, r.text FROM events r JOIN events c "
        "ON c.kind = 'tool_call' AND c.tool_call_id = r.tool_call_id AND c.session_id = r.session_id "
        "WHERE r.kind = 'tool_result' AND r.is_error ORDER BY r.seq",
    )
    # the error turn's Shell and Read, the cancelled turn's Grep; nothing of the success
    # turn, the aborted turn or the turn still open at the end of the file
    assert failed == [
        ("Shell", "turn ended: error"),
        ("Read", "turn ended: error"),
        ("Grep", "turn ended: Cancelled"),
    ]
    assert _rows(catalog, "SELECT count(*) FROM events WHERE kind = 'tool_result'")[0][0] == 3


@pytest.mark.parametrize("cut", [5, 6])
def test_turn_status_is_the_same_when_the_turn_spans_two_runs(tmp_path: Path, cut: int) -> None:
    home = _home("turn_ended_error", tmp_path)
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    path = _transcript(home, "7e000000-0000-4000-8000-000000000001")
    tail = _split_after(path, cut)  # inside the failing turn: its calls are in run 1
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _rows(catalog, "SELECT count(*) FROM events WHERE kind = 'tool_result'")[0][0] == 0
    _append(path, tail)
    _import(home, catalog)
    assert snapshot(catalog, CONTENT) == snapshot(clean, CONTENT)


# --------------------------------------------------------------------------- cwd


def test_project_path_is_inferred_from_tool_inputs(tmp_path: Path) -> None:
    home = _home("cwd_inference", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    paths = dict(_rows(catalog, "SELECT session_id, project_path FROM sessions"))
    assert paths == {
        # working_directory beats the path read before it in the same turn
        "cd000000-0000-4000-8000-000000000001": "/home/dev/shop",
        # common parent of the absolute path/paths values (relative ones ignored); the
        # working_directory after the first turn comes too late
        "cd000000-0000-4000-8000-000000000002": "/home/dev/lib",
        # one file, read twice: its directory
        "cd000000-0000-4000-8000-000000000003": "/home/dev/tool",
        # only relative paths: unknown
        "cd000000-0000-4000-8000-000000000004": None,
    }


# --------------------------------------------------------------------------- state.vscdb


def test_state_vscdb_headers_table(tmp_path: Path) -> None:
    home = _home("state_vscdb_headers_table", tmp_path)
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    # h1-b1 1200/80, h1-b2 "900" (not a number → 0) / 30, h2-b1 700/0
    assert _usage(catalog) == (3, 1900, 0, 0, 110, 0)
    calls = _rows(catalog, f"SELECT native_id, {_utc('ts')}, model FROM usage ORDER BY 1")
    assert calls == [
        ("h1-b1", "2026-05-01T14:10:00Z", "gpt-5-codex"),  # no createdAt: header lastUpdatedAt
        ("h1-b2", "2026-05-01T14:03:00Z", "gpt-5-codex"),
        ("h2-b1", "2026-05-03T12:00:00Z", "claude-4.5-haiku"),
    ]
    sessions = {
        r[0]: r[1:]
        for r in _rows(
            catalog,
            "SELECT session_id, title, archived, project_path, "
            f"{_utc('started_at')}, events FROM sessions",
        )
    }
    h1 = sessions["4e000000-0000-4000-8000-000000000001"]
    assert h1[:3] == ("Refactor auth", True, "/home/dev/auth")
    assert h1[3:] == ("2026-05-01T13:58:00Z", 3)
    h2 = sessions["4e000000-0000-4000-8000-000000000002"]  # header row + tokens, no transcript
    assert h2 == (None, False, None, "2026-05-03T09:20:00Z", 0)


def test_state_vscdb_itemtable_headers(tmp_path: Path) -> None:
    home = _home("state_vscdb_itemtable_headers", tmp_path)
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _usage(catalog) == (2, 4000, 0, 0, 400, 0)  # 2500/300 + 1500/100
    # the never-used "New Chat" composer (empty conversation, no tokens) is no session
    assert _rows(catalog, "SELECT session_id, title, model, project_path FROM sessions") == [
        (
            "17000000-0000-4000-8000-000000000001",
            "Fix flaky test",
            "claude-4.5-opus",
            "/home/dev/ci",
        )
    ]


def test_state_vscdb_blob_values(tmp_path: Path) -> None:
    home = _home("state_vscdb_blob_values", tmp_path)
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    # 800/40 + 600/20; the bubble whose BLOB is not UTF-8 is skipped
    assert _usage(catalog) == (2, 1400, 0, 0, 60, 0)
    ts = [r[0] for r in _rows(catalog, f"SELECT {_utc('ts')} FROM usage ORDER BY native_id")]
    assert ts == ["2026-05-01T14:00:30Z", "2026-05-01T14:01:00Z"]  # x1-b2: header lastUpdatedAt
    assert _rows(catalog, "SELECT title, model, project_path FROM sessions") == [
        ("Log summary", "gpt-5", "/home/dev/blob")
    ]


def test_positive_home_accounting_by_session(tmp_path: Path) -> None:
    home = _home("all_record_shapes", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    rows = _rows(
        catalog,
        "SELECT session_id[:4], count(*), sum(input_tokens), sum(output_tokens) FROM usage "
        "GROUP BY ALL ORDER BY 1",
    )
    # a: 5200/140 + 1800/60 (60.0 → 60; a-b3 is 0/0, a-b1 has no tokenCount)
    # b: 900/45 + (-5 → 0)/30; c: 400/20 (c-b2 is malformed JSON)
    assert rows == [("a100", 2, 7000, 200), ("b200", 2, 900, 75), ("c300", 1, 400, 20)]


def test_no_state_db_imports_the_transcripts(tmp_path: Path) -> None:
    home = _home("no_state_db", tmp_path)
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _usage(catalog) == (0, 0, 0, 0, 0, 0)
    assert _rows(catalog, "SELECT project_path, prompts, tool_calls FROM sessions") == [
        ("/home/dev/plain", 1, 1)
    ]


def test_database_without_cursor_tables_changes_nothing(tmp_path: Path) -> None:
    home = _home("no_state_db", tmp_path)
    db = home / GLOBAL_STORAGE / "state.vscdb"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    con.execute("INSERT INTO ItemTable VALUES ('workbench.sideBar', '{}')")
    con.commit()
    con.close()
    catalog = tmp_path / "c.duckdb"
    result = _import(home, catalog)
    assert result.exit_code == 0 and len(result.sources) == 2
    assert _usage(catalog) == (0, 0, 0, 0, 0, 0)
    assert _rows(catalog, "SELECT count(*) FROM sessions")[0][0] == 1


def _put(db: Path, key: str, value: dict[str, Any]) -> None:
    con = sqlite3.connect(db)
    con.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, orjson.dumps(value).decode()))
    con.commit()
    con.close()


def test_rereading_a_changed_database_never_double_counts(tmp_path: Path) -> None:
    home = _home("state_vscdb_itemtable_headers", tmp_path)
    db = home / GLOBAL_STORAGE / "state.vscdb"
    composer = "17000000-0000-4000-8000-000000000001"
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _usage(catalog) == (2, 4000, 0, 0, 400, 0)
    # Cursor rewrites one bubble with a larger count and adds another.
    _put(db, f"bubbleId:{composer}:i1-b2", {"tokenCount": {"inputTokens": 1600, "outputTokens": 120},
                                          "createdAt": "2026-05-01T14:04:00.000Z"})  # fmt: skip
    _put(db, f"bubbleId:{composer}:i1-b3", {"tokenCount": {"inputTokens": 300, "outputTokens": 30},
                                          "createdAt": "2026-05-01T14:09:00.000Z"})  # fmt: skip
    os.utime(db, ns=(db.stat().st_mtime_ns + 10**9,) * 2)
    result = _import(home, catalog)
    assert [
        s.planned.continuity for s in result.sources if s.planned.path.name == "state.vscdb"
    ] == ["updated"]
    expected = (3, 2500 + 1600 + 300, 0, 0, 300 + 120 + 30, 0)
    assert _usage(catalog) == expected
    # touched again without a change, then re-read: still the same calls
    os.utime(db, ns=(db.stat().st_mtime_ns + 10**9,) * 2)
    _import(home, catalog)
    assert _usage(catalog) == expected
    assert _import(home, catalog).totals()["sources_opened"] == 0


def test_unknown_composer_data_version_refuses_only_the_database(tmp_path: Path) -> None:
    home = _home("no_state_db", tmp_path)
    shutil.copytree(FIXTURES / "cursor/contract_drift/.config", home / ".config")
    catalog = tmp_path / "c.duckdb"
    result = _import(home, catalog)
    assert result.exit_code == 1
    assert [(s.planned.path.name, s.status) for s in result.refused] == [("state.vscdb", "refused")]
    assert "composerData _v 99" in (result.refused[0].message or "")
    assert _rows(catalog, "SELECT count(*) FROM events")[0][0] == 4  # the transcript imported
    assert _usage(catalog)[0] == 0


# --------------------------------------------------------------------------- lines


def test_torn_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    home = _home("torn_last_line", tmp_path)
    path = _transcript(home, "70000000-0000-4000-8000-000000000001")
    data = path.read_bytes()
    complete = data.rindex(b"\n") + 1
    catalog = tmp_path / "c.duckdb"
    first = _import(home, catalog)
    assert first.exit_code == 0 and first.sources[0].pending_bytes == len(data) - complete
    assert _rows(catalog, "SELECT committed_offset FROM sources")[0][0] == complete
    assert _rows(catalog, "SELECT count(*) FROM rejects")[0][0] == 0
    assert _rows(catalog, "SELECT count(*) FROM events")[0][0] == 3
    whole = orjson.dumps(
        {"role": "assistant", "message": {"content": [{"type": "text",
         "text": "Second answer, written while the import ran."}]}}
    ) + b"\n"  # fmt: skip
    _append(path, whole[len(data) - complete :])
    _import(home, catalog)
    texts = [r[0] for r in _rows(catalog, "SELECT text FROM events ORDER BY seq")]
    assert texts[-1] == "Second answer, written while the import ran." and len(texts) == 4


def test_line_shapes_mapped_unknown_or_invalid(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / ".cursor/projects/home-dev-s/agent-transcripts/c9/c9.jsonl"
    path.parent.mkdir(parents=True)
    lines: list[dict[str, Any]] = [
        {"role": "user", "message": {"content": "<user_query>hi</user_query>"}},
        {"role": "assistant", "message": {"content": [{"type": "tool_result", "content": "ok"}]}},
        {"type": "future_marker"},
        {"role": "system", "message": {"content": "?"}},
        {"role": "user", "message": "not an object"},
        {"role": "assistant", "message": {"content": 42}},
        {"type": "turn_ended", "status": 3},
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    source = next(
        s for s in walk_root(SPEC.roots(home, {})[3], SPEC.formats) if isinstance(s, SourceFile)
    )
    batches = list(extract_source(SPEC, source, start=0, stop=source.size))
    outcomes: Counter[str] = Counter()
    for batch in batches:
        outcomes.update(batch.outcomes)
    assert outcomes == Counter({"mapped": 2, "unknown": 2, "invalid": 3})
    reasons = sorted(r.reason for b in batches for r in b.rejects)
    assert reasons == ["INVALID_RECORD"] * 3 + ["UNKNOWN_RECORD"] * 2
