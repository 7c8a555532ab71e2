"""SQLite stores read incrementally by a watermark (:mod:`agentlake.extract.stores`):
after the first read only the changed sessions are mapped again, and the catalog is the
one a first import of the grown store makes; a store that went backwards, or another
store at the same path, is refused until ``--restart-drifted``."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentlake.extract.adapter import IncrementalDatabaseAdapter, SourceContext
from agentlake.extract.providers import by_id
from agentlake.extract.rows import RowSink
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import FIXTURES
from tests.extract.catalogs import catalog_rows
from tests.extract.test_openclaw import _header, _reply, _store
from tests.extract.test_opencode import DATA, build_database

HERMES_DB = Path(".hermes") / "state.db"
OPENCODE_DB = DATA / "opencode.db"
OPENCLAW_DB = Path(".openclaw/agents/main/agent/openclaw-agent.sqlite")


def _openclaw_home(home: Path) -> Path:
    _store(home, [("s1", _header("s1")), ("s1", _reply("r1", {"input": 3, "output": 4})),
                  ("s2", _header("s2")), ("s2", _reply("r2", {"input": 5, "output": 6}))])  # fmt: skip
    return home / OPENCLAW_DB


def _grow_openclaw(home: Path) -> set[str]:
    _store(home, [("s1", _reply("r3", {"input": 7, "output": 8})), ("s3", _header("s3")),
                  ("s3", _reply("r4", {"input": 1, "output": 2}))])  # fmt: skip
    return {"s1", "s3"}


def _hermes_home(home: Path) -> Path:
    shutil.copytree(FIXTURES / "hermes" / "all_record_types", home, symlinks=True)
    return home / HERMES_DB


def _grow_hermes(home: Path) -> set[str]:
    con = sqlite3.connect(home / HERMES_DB)
    sid = con.execute("SELECT session_id FROM messages ORDER BY id LIMIT 1").fetchone()[0]
    con.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', "
        "'one more thing', 1779300000.5)",
        (sid,),
    )  # with the call it made: a same total keeps its first time, as in any merge
    con.execute("UPDATE sessions SET input_tokens = input_tokens + 100 WHERE id = ?", (sid,))
    con.execute(
        "INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens) "
        "VALUES ('s-new', 'cli', 'anthropic/claude-sonnet-4.6', 1779300001, 40, 2)"
    )
    con.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) "
        "VALUES ('s-new', 'user', 'a new session', 1779300001.5)"
    )
    con.commit()
    con.close()
    return {sid, "s-new"}


def _opencode_home(home: Path) -> Path:
    storage = FIXTURES / "opencode" / "contract_all_record_types" / DATA / "storage"
    build_database(storage, home / OPENCODE_DB)
    return home / OPENCODE_DB


def _grow_opencode(home: Path) -> set[str]:
    """A new user message and its part in one session, and a part updated in place in
    another (its state moved on, and so did its ``time_updated``)."""
    con = sqlite3.connect(home / OPENCODE_DB)
    sid, created = con.execute("SELECT id, time_created FROM session ORDER BY id").fetchone()
    t = created + 3_600_000
    info = {"role": "user", "time": {"created": t}}
    con.execute("INSERT INTO message VALUES ('msg_zz_new', ?, ?, ?, ?)",
                (sid, t, t, orjson.dumps(info).decode()))  # fmt: skip
    part = {"type": "text", "text": "one more thing"}
    con.execute("INSERT INTO part VALUES ('prt_zz_new', 'msg_zz_new', ?, ?, ?, ?)",
                (sid, t, t, orjson.dumps(part).decode()))  # fmt: skip
    con.commit()
    con.close()
    return {sid}


STORES: dict[str, tuple[Callable[[Path], Path], Callable[[Path], set[str]]]] = {
    "openclaw": (_openclaw_home, _grow_openclaw),
    "hermes": (_hermes_home, _grow_hermes),
    "opencode": (_opencode_home, _grow_opencode),
}


def _import(provider: str, home: Path, catalog: Path, *, restart: bool = False) -> ImportResult:
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      providers=(provider,), build_index=False, restart_drifted=restart)
    )  # fmt: skip


def _contents(catalog: Path) -> dict[str, list[tuple[Any, ...]]]:
    """What the catalog holds, without what names the import that wrote it."""
    return {
        table: catalog_rows(
            catalog, f"SELECT COLUMNS(* EXCLUDE ({drop}))::VARCHAR FROM {table} ORDER BY ALL"
        )
        for table, drop in (
            ("events", "import_id, source_offset"),
            ("usage", "import_id, source_offset"),
            ("sessions", "last_import_id"),
        )
    }


def _assert_same(catalog: Path, expected: Path) -> None:
    got, want = _contents(catalog), _contents(expected)
    for table, rows in want.items():
        assert (table, [r for r in got[table] if r not in rows]) == (table, [])
        assert (table, [r for r in rows if r not in got[table]]) == (table, [])


@pytest.mark.parametrize("provider", sorted(STORES))
def test_a_grown_store_maps_only_its_changed_sessions(
    provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build, grow = STORES[provider]
    home = tmp_path / "home"
    build(home)
    catalog = tmp_path / "c.duckdb"
    assert _import(provider, home, catalog).exit_code == 0
    changed = grow(home)
    adapter = next(f.adapter for f in by_id(provider).formats if f.position_kind == "sqlite")
    assert isinstance(adapter, IncrementalDatabaseAdapter)
    mapped: list[list[str]] = []
    whole = type(adapter).map_sessions

    def spy(self: Any, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink,
            sessions: list[str]) -> int:  # fmt: skip
        mapped.append(sessions)
        return whole(self, con, ctx, sink, sessions)

    monkeypatch.setattr(type(adapter), "map_sessions", spy)
    monkeypatch.setattr(type(adapter), "map_database", None)  # never read whole again
    assert _import(provider, home, catalog).exit_code == 0
    assert mapped == [sorted(changed)]
    assert _import(provider, home, catalog).exit_code == 0  # unchanged: nothing mapped
    assert mapped == [sorted(changed)]
    monkeypatch.undo()
    fresh = tmp_path / "fresh.duckdb"
    assert _import(provider, home, fresh).exit_code == 0
    _assert_same(catalog, fresh)


@pytest.mark.parametrize("provider", ["openclaw", "hermes"])
def test_a_store_gone_backwards_is_refused_until_restarted(provider: str, tmp_path: Path) -> None:
    build, grow = STORES[provider]
    home = tmp_path / "home"
    db = build(home)
    older = tmp_path / "older.sqlite"
    shutil.copyfile(db, older)
    grow(home)
    catalog = tmp_path / "c.duckdb"
    assert _import(provider, home, catalog).exit_code == 0
    before = _contents(catalog)
    shutil.copyfile(older, db)  # an older copy restored over the store
    for _ in range(2):  # refused again from the checkpoint
        result = _import(provider, home, catalog)
        assert [s.code for s in result.refused] == ["SOURCE_TRUNCATED"]
        assert "the store went backwards" in str(result.refused[0].message)
        assert _contents(catalog) == before  # nothing imported is lost
    assert _import(provider, home, catalog, restart=True).exit_code == 0
    fresh = tmp_path / "fresh.duckdb"
    _import(provider, home, fresh)
    # A restart forgets the rows of sessions the older copy lacks; their rows in
    # ``sessions`` stay, emptied (as for any source re-read from zero).
    for name in ("events", "usage"):
        assert _contents(catalog)[name] == _contents(fresh)[name]


def test_another_store_at_the_same_path_is_rewritten(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = _openclaw_home(home)
    catalog = tmp_path / "c.duckdb"
    assert _import("openclaw", home, catalog).exit_code == 0
    db.unlink()
    _store(home, [("t1", _header("t1")), ("t1", _reply("q1", None)), ("t2", _header("t2")),
                  ("t2", _reply("q2", None)), ("t2", _reply("q3", None))])  # fmt: skip
    result = _import("openclaw", home, catalog)
    assert [s.code for s in result.refused] == ["SOURCE_REWRITTEN"]
    assert "is not the one imported" in str(result.refused[0].message)
    assert catalog_rows(catalog, "SELECT DISTINCT session_id FROM events ORDER BY 1") == [
        ("s1",),
        ("s2",),
    ]
