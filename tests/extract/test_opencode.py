"""The OpenCode provider: discovery, every part type, the multi-step token trap, the
legacy tree and ``opencode.db`` agreeing (and counted once together), drift and bad files.

Expected totals are computed by hand from the fixtures (fixtures/opencode/README.md)
with the rule: one call per ``step-finish`` part; ``message.tokens`` (the latest step's
tokens) only for an assistant message without steps.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentlake.extract.adapter import FormatDrift, InvalidRecord
from agentlake.extract.providers import by_id, opencode, resolve
from agentlake.extract.providers.opencode_records import (
    PART_TYPES,
    UNKNOWN_MESSAGE,
    MessageMeta,
    check_version,
    emit_message,
    emit_part,
    id_instant,
    order,
    part_instant,
)
from agentlake.extract.rows import RowSink
from agentlake.ingest.files import NamedFile, export_format, guess_format
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows, import_provider
from tests.pipeline.helpers import snapshot

SPEC = by_id("opencode")
HERE = FIXTURES / "opencode"
DATA = Path(".local") / "share" / "opencode"
TABLES = ("events", "usage", "sessions", "rejects")
PARENT = "ses_de2c42a80000DemoParentSess"
CHILD = "ses_de2c4c6c0000DemoChildSessn"
TWO_STEPS = "msg_de2c43250002Msg2AAAAAAAAAA"  # message.tokens repeats its second step
NO_STEPS = "msg_de2c45578004Msg4AAAAAAAAAA"

# --------------------------------------------------------------------------- helpers


def _home(tmp: Path, name: str = "contract_all_record_types") -> Path:
    """A private copy of a fixture home (tests mutate it)."""
    target = tmp / name
    shutil.copytree(HERE / name, target, symlinks=True)
    return target


def _import(home: Path, catalog: Path, env: dict[str, str] | None = None) -> ImportResult:
    return import_provider("opencode", home, catalog, env)


_rows = catalog_rows


def _write(path: Path, record: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


_SESSION_DDL = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT,
  parent_id TEXT, slug TEXT, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
  share_url TEXT, cost REAL, tokens_input INTEGER, tokens_output INTEGER, model TEXT,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER,
  time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE todo (session_id TEXT, content TEXT);
"""


def build_database(storage: Path, db: Path, *, version: str | None = None) -> None:
    """``opencode.db`` holding the records of a storage tree, as OpenCode's migration
    writes them (ids in columns, the rest of each record as JSON in ``data``)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(_SESSION_DDL)
    for path in sorted(storage.glob("session/*/*.json")):
        s = json.loads(path.read_text())
        t = s["time"]
        con.execute(
            "INSERT INTO session (id, project_id, parent_id, directory, title, version, "
            "time_created, time_updated, time_archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (s["id"], s["projectID"], s.get("parentID"), s["directory"], s["title"],
             version or s["version"], t["created"], t["updated"], t.get("archived")),
        )  # fmt: skip
    for path in sorted(storage.glob("message/*/*.json")):
        m = json.loads(path.read_text())
        mid, sid = m.pop("id"), m.pop("sessionID")
        created = m["time"]["created"]
        con.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
            (mid, sid, created, created, json.dumps(m)),
        )
    for path in sorted(storage.glob("part/*/*.json")):
        p = json.loads(path.read_text())
        pid, mid, sid = p.pop("id"), p.pop("messageID"), p.pop("sessionID")
        con.execute(
            "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, sid, 0, 0, json.dumps(p))
        )
    con.commit()
    con.close()


def _database_home(tmp: Path, name: str = "db_home", **kwargs: Any) -> Path:
    """A home holding only ``opencode.db``, built from the contract tree."""
    home = tmp / name
    build_database(
        HERE / "contract_all_record_types" / DATA / "storage", home / DATA / "opencode.db",
        **kwargs,
    )  # fmt: skip
    return home


def _calls(catalog: Path) -> list[tuple[Any, ...]]:
    return _rows(
        catalog,
        "SELECT call_id, session_id, message_id, request_id, ts::VARCHAR, model, input_tokens, "
        "cache_write_tokens, cache_read_tokens, output_tokens, reasoning_tokens "
        "FROM usage ORDER BY call_id",
    )


def _events(catalog: Path) -> list[tuple[Any, ...]]:
    return _rows(
        catalog,
        "SELECT event_id, session_id, seq, ts::VARCHAR, kind, role, model, text, tool_name, "
        "tool_call_id, tool_input, is_error FROM events ORDER BY event_id",
    )


def _sessions(catalog: Path) -> list[tuple[Any, ...]]:
    return _rows(
        catalog,
        "SELECT session_id, parent_session_id, project_path, title, cli_version, "
        "started_at::VARCHAR, updated_at::VARCHAR, prompts, events, tool_calls, total_tokens FROM sessions ORDER BY 1",
    )


# --------------------------------------------------------------------------- discovery


@pytest.mark.parametrize(
    ("rel", "fmt"),
    [
        (("session", "3c1f", "ses_1.json"), opencode.SESSION_FORMAT),
        (("message", "ses_1", "msg_1.json"), opencode.MESSAGE_FORMAT),
        (("part", "msg_1", "prt_1.json"), opencode.PART_FORMAT),
        (("part", "prt_1.json"), opencode.PART_FORMAT),  # a flat legacy part
        (("opencode.db",), opencode.DB_FORMAT),
        (("opencode-beta.db",), opencode.DB_FORMAT),
        (("session", "ses_1.json"), None),
        (("session_diff", "ses_1.json"), None),
        (("message", "ses_1", ".msg_1.json"), None),
        (("message", "ses_1", "msg_1.json.tmp"), None),
        (("part", "msg_1", "x", "prt_1.json"), None),
        (("opencode.db-wal",), None),
        (("opencode-.db",), None),
        (("storage", "opencode.db"), None),
    ],
)
def test_file_predicates(rel: tuple[str, ...], fmt: str | None) -> None:
    owned = [f.name for f in SPEC.formats if f.owns(rel)]
    assert owned == ([fmt] if fmt else [])


def test_registry_row_and_alias() -> None:
    assert resolve("opencode-cli") is SPEC
    assert SPEC.env_overrides == ("XDG_DATA_HOME",)
    assert {f.position_kind for f in SPEC.formats} == {"document", "sqlite"}


def test_roots_follow_an_absolute_xdg_data_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    default = opencode.roots(home, {})
    assert default[0].path == home / DATA / "storage" and default[1].path == home / DATA
    moved = opencode.roots(home, {"XDG_DATA_HOME": "/srv/data"})
    assert moved[0].path == Path("/srv/data/opencode/storage")
    assert moved[0].origin == "XDG_DATA_HOME"
    relative = opencode.roots(home, {"XDG_DATA_HOME": "data"})
    assert relative[0].path == home / DATA / "storage" and relative[0].warning


def test_xdg_data_home_is_discovered(tmp_path: Path) -> None:
    data = tmp_path / "xdg"
    shutil.copytree(HERE / "contract_all_record_types" / DATA, data / "opencode")
    plan = make_plan({}, workspace="w", home=tmp_path / "nohome",
                     env={"XDG_DATA_HOME": str(data)}, providers=(SPEC,))  # fmt: skip
    assert len(plan.sources) == 39  # 2 sessions, 9 messages, 28 parts


# --------------------------------------------------------------------------- part types


def _part_rows(part: dict[str, Any], role: str = "assistant", summary: bool = False) -> Any:
    sink = RowSink()
    meta = MessageMeta(role, "claude-sonnet-4-5", "2026-05-01T09:00:00.000Z", summary)
    emit_part(sink, "ses_1", "msg_1", {"id": "prt_1", **part}, meta, "tree")
    return sink.build()


PART_CASES: list[tuple[dict[str, Any], str, bool, list[tuple[int, str, bool | None]]]] = [
        ({"type": "text", "text": "hi"}, "user", False, [(0, "text", None)]),
        ({"type": "text", "text": "hi"}, "assistant", True, [(0, "summary", None)]),
        ({"type": "text", "text": "ctx", "synthetic": True}, "user", False, [(0, "system", None)]),
        ({"type": "text", "text": ""}, "user", False, []),
        ({"type": "reasoning", "text": "hmm"}, "assistant", False, [(0, "thinking", None)]),
        ({"type": "tool", "tool": "bash", "callID": "c1",
          "state": {"status": "pending", "input": {}}}, "assistant", False,
         [(0, "tool_use", None)]),
        ({"type": "tool", "tool": "bash", "callID": "c1",
          "state": {"status": "running", "input": {"command": "ls"}}}, "assistant", False,
         [(0, "tool_use", None)]),
        ({"type": "tool", "tool": "bash", "callID": "c1",
          "state": {"status": "completed", "input": {}, "output": "ok",
                    "attachments": [{"id": "prt_2", "type": "file", "mime": "image/png",
                                     "url": "data:image/png;base64,AA", "filename": "a.png"}]}},
         "assistant", False, [(0, "tool_use", None), (1, "tool_result", False), (2, "image", None)]),
        ({"type": "tool", "tool": "bash", "callID": "c1",
          "state": {"status": "error", "input": {}, "error": "boom"}}, "assistant", False,
         [(0, "tool_use", None), (1, "tool_result", True)]),
        ({"type": "tool", "tool": "bash", "callID": "c1",
          "state": {"status": "success", "input": {}, "output": "ok"}}, "assistant", False,
         [(0, "tool_use", None), (1, "tool_result", False)]),
        ({"type": "file", "mime": "text/plain", "filename": "a.txt", "url": "file:///a.txt"},
         "user", False, [(0, "image", None)]),
        ({"type": "step-start"}, "assistant", False, [(0, "system", None)]),
        ({"type": "step-finish", "reason": "stop"}, "assistant", False, [(0, "system", None)]),
        ({"type": "snapshot", "snapshot": "abc"}, "assistant", False, [(0, "system", None)]),
        ({"type": "patch", "hash": "h", "files": ["/a"]}, "assistant", False,
         [(0, "system", None)]),
        ({"type": "agent", "name": "explore"}, "user", False, [(0, "system", None)]),
        ({"type": "subtask", "prompt": "p", "description": "d", "agent": "explore"}, "user",
         False, [(0, "system", None)]),
        ({"type": "retry", "attempt": 2, "error": {"name": "APIError", "data": {"message": "m"}},
          "time": {"created": 1777626000000}}, "assistant", False, [(0, "system", True)]),
        ({"type": "compaction", "auto": True}, "user", False, [(0, "system", None)]),
    ]  # fmt: skip


@pytest.mark.parametrize(("part", "role", "summary", "blocks"), PART_CASES)
def test_every_part_type_maps_to_events(
    part: dict[str, Any], role: str, summary: bool, blocks: list[tuple[int, str, bool | None]]
) -> None:
    events = _part_rows(part, role, summary).events.to_pylist()
    got = [(e["block_index"], e["block_type"], e["is_error"]) for e in events]
    assert got == blocks
    assert all(e["role"] == role and e["native_id"] == "prt_1" for e in events)


def test_every_part_type_is_covered() -> None:
    assert {case[0]["type"] for case in PART_CASES} == set(PART_TYPES)


def test_text_fields_of_parts() -> None:
    tool = _part_rows({"type": "tool", "tool": "bash", "callID": "c1", "state": {
        "status": "completed", "input": {"command": "ls"}, "output": "a.txt",
        "time": {"start": 1777626001000, "end": 1777626002000}}}).events.to_pylist()  # fmt: skip
    assert tool[0]["tool_input"] == '{"command":"ls"}' and tool[0]["tool_call_id"] == "c1"
    assert tool[0]["ts"] == "2026-05-01T09:00:01.000Z"
    assert tool[1]["text"] == "a.txt" and tool[1]["ts"] == "2026-05-01T09:00:02.000Z"
    inlined = _part_rows({"type": "file", "mime": "image/png", "filename": "a.png",
                          "url": "data:image/png;base64,AAAA"}).events.to_pylist()  # fmt: skip
    assert inlined[0]["text"] == "[file a.png image/png]"
    subtask = _part_rows({"type": "subtask", "prompt": "Find it", "description": "Look",
                          "agent": "explore"}).events.to_pylist()  # fmt: skip
    assert subtask[0]["text"] == "subtask @explore: Look\nFind it"


@pytest.mark.parametrize(
    "part",
    [
        {"type": "future-block"},
        {"type": 3},
        {"type": "text", "text": 5},
        {"type": "tool", "tool": "bash", "state": "done"},
        {"type": "step-finish", "tokens": "many"},
        {"type": "step-finish", "tokens": {"input": 1, "cache": [1]}},
        {"type": "step-finish", "tokens": {"input": 2**60}},
    ],
)
def test_impossible_parts_are_invalid(part: dict[str, Any]) -> None:
    with pytest.raises(InvalidRecord):
        _part_rows(part)


def test_message_events_and_stand_in_call() -> None:
    sink = RowSink()
    emit_message(sink, "ses_1", {
        "id": "msg_1", "role": "assistant", "modelID": "m", "time": {"created": 1777626000000},
        "error": {"name": "APIError", "data": {"message": "overloaded"}},
        "tokens": {"input": 5, "output": 7, "reasoning": 0, "cache": {"read": 3, "write": 2}},
    }, "db")  # fmt: skip
    tables = sink.build()
    (event,) = tables.events.to_pylist()
    assert (event["block_type"], event["text"], event["is_error"]) == (
        "system", "APIError: overloaded", True,
    )  # fmt: skip
    (call,) = tables.usage.to_pylist()
    assert call["is_sidechain"] and call["request_id"] is None and call["rank"] == 2
    assert (call["input_tokens"], call["cache_write_tokens"], call["cache_read_tokens"],
            call["output_tokens"]) == (5, 2, 3, 7)  # fmt: skip
    for role in ("robot", ["user"], None):
        with pytest.raises(InvalidRecord):
            emit_message(RowSink(), "ses_1", {"id": "msg_2", "role": role}, "tree")


@pytest.mark.parametrize(
    ("tokens", "output", "reasoning"),
    [
        # no `total`: older revisions, whose output already holds the reasoning
        ({"input": 10, "output": 50, "reasoning": 20, "cache": {"read": 0, "write": 0}}, 50, 20),
        # `total` above input + cache + output: output without the reasoning
        ({"total": 80, "input": 10, "output": 50, "reasoning": 20}, 70, 20),
        # `total` equal to input + cache + output: output already holds it
        ({"total": 60, "input": 10, "output": 50, "reasoning": 20}, 50, 20),
    ],
)
def test_billed_output_holds_the_reasoning_once(
    tokens: dict[str, Any], output: int, reasoning: int
) -> None:
    (call,) = _part_rows({"type": "step-finish", "tokens": tokens}).usage.to_pylist()
    assert (call["output_tokens"], call["reasoning_tokens"]) == (output, reasoning)
    assert call["request_id"] == "prt_1" and call["message_id"] == "msg_1"
    assert not call["is_sidechain"]


def test_ids_encode_order_and_time() -> None:
    ms = 1777626003001
    pid = f"prt_{(ms * 4096 + 9) % (1 << 48):012x}Part9AAAAAAAAA"
    assert id_instant(pid, ms + 5_000) == "2026-05-01T09:00:03.001Z"
    assert id_instant(pid, ms + 900 * 86_400_000) != "2026-05-01T09:00:03.001Z"  # wrapped
    assert order(pid) < order(f"prt_{(ms * 4096 + 10) % (1 << 48):012x}Part10AAAAAAAA")
    assert order("p_text_1") == 0 and id_instant("p_text_1", ms) is None
    # a part's time: the first its id allows after its message's creation, if near it
    meta = MessageMeta("assistant", None, "2026-05-01T09:00:02.000Z", created_ms=ms - 1001)
    assert part_instant(pid, meta) == "2026-05-01T09:00:03.001Z"
    late = MessageMeta("assistant", None, "2026-05-01T09:00:02.000Z", created_ms=ms + 1)
    assert part_instant(pid, late) == "2026-05-01T09:00:02.000Z"  # ~795 days on: not trusted
    assert part_instant("p_text_1", meta) == "2026-05-01T09:00:02.000Z"


def test_version_drift() -> None:
    for known in (None, "0.15.8", "1.1.20", "v1.2.0", "local", "0.0.0-dev-202605"):
        check_version(known)
    with pytest.raises(FormatDrift):
        check_version("2.0.0")
    with pytest.raises(InvalidRecord):
        check_version(2)


# --------------------------------------------------------------------------- the token trap


def test_multi_step_message_counts_each_step_once(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(_home(tmp_path), catalog).exit_code == 0
    calls = _rows(
        catalog,
        "SELECT message_id, request_id, input_tokens, cache_write_tokens, cache_read_tokens, "
        f"output_tokens, reasoning_tokens FROM usage WHERE message_id = '{TWO_STEPS}' "
        "ORDER BY request_id",
    )
    # both steps, not the message's tokens (= step 2) on top of them
    assert [c[2:] for c in calls] == [(100, 200, 1000, 50, 0), (30, 0, 1200, 100, 20)]
    # each at the time of its step (its step-finish part's id), not the message's start
    times = f"SELECT ts::VARCHAR FROM usage WHERE message_id = '{TWO_STEPS}' ORDER BY ts"
    assert _rows(catalog, times) == [
        ("2026-05-01 09:00:03.001+00",),
        ("2026-05-01 09:00:08.95+00",),
    ]
    assert all(c[1] is not None for c in calls)
    # a message without steps is one call: its own tokens
    assert _rows(catalog, f"SELECT count(*), sum(output_tokens) FROM usage "
                          f"WHERE message_id = '{NO_STEPS}'") == [(1, 60)]  # fmt: skip


def test_steps_arriving_after_their_message_replace_its_stand_in(tmp_path: Path) -> None:
    home = _home(tmp_path)
    parts = home / DATA / "storage" / "part" / TWO_STEPS
    aside = tmp_path / "aside"
    shutil.move(parts, aside)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    # only the message is known: its tokens (step 2's) stand in for the message
    assert _rows(catalog, "SELECT request_id, input_tokens FROM usage "
                          f"WHERE message_id = '{TWO_STEPS}'") == [(None, 30)]  # fmt: skip
    shutil.move(aside, parts)
    assert _import(home, catalog).exit_code == 0
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    assert snapshot(catalog, TABLES) == snapshot(clean, TABLES)
    assert _rows(catalog, f"SELECT count(*) FROM usage WHERE message_id = '{TWO_STEPS}'") == [(2,)]


def test_rewritten_message_and_part_files_never_double_count(tmp_path: Path) -> None:
    home = _home(tmp_path)
    storage = home / DATA / "storage"
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    before = snapshot(catalog, ("usage",))
    # OpenCode rewrites a message file at each step (cost, tokens, times) and a part file
    # as it streams: same records, new bytes
    for path in [
        storage / "message" / PARENT / f"{TWO_STEPS}.json",
        storage / "message" / PARENT / f"{NO_STEPS}.json",
        *(storage / "part" / TWO_STEPS).glob("*.json"),
    ]:
        record = json.loads(path.read_text())
        record["cost"] = 0.5
        path.write_text(json.dumps(record))
    result = _import(home, catalog)
    assert result.exit_code == 0
    assert snapshot(catalog, ("usage",)) == before
    # a message without steps whose tokens change is still one call, with the new tokens
    path = storage / "message" / PARENT / f"{NO_STEPS}.json"
    record = json.loads(path.read_text())
    record["tokens"]["output"] = 99
    path.write_text(json.dumps(record))
    _import(home, catalog)
    assert _rows(catalog, f"SELECT count(*), sum(output_tokens) FROM usage "
                          f"WHERE message_id = '{NO_STEPS}'") == [(1, 99)]  # fmt: skip


# --------------------------------------------------------------------------- the database


def test_database_and_tree_agree(tmp_path: Path) -> None:
    tree, db = tmp_path / "tree.duckdb", tmp_path / "db.duckdb"
    assert _import(_home(tmp_path), tree).exit_code == 0
    assert _import(_database_home(tmp_path), db).exit_code == 0
    assert _calls(db) == _calls(tree)
    assert _events(db) == _events(tree)
    assert _sessions(db) == _sessions(tree)
    assert _rows(db, "SELECT count(*) FROM rejects") == [(0,)]  # the unknown part: skipped


def test_tree_and_database_together_count_once(tmp_path: Path) -> None:
    tree = tmp_path / "tree.duckdb"
    _import(_home(tmp_path), tree)
    both_home = _home(tmp_path / "b")
    build_database(both_home / DATA / "storage", both_home / DATA / "opencode.db")
    both = tmp_path / "both.duckdb"
    assert _import(both_home, both).exit_code == 0
    assert _calls(both) == _calls(tree)
    assert _events(both) == _events(tree)
    assert _sessions(both) == _sessions(tree)
    # the database's copy of each call wins (OpenCode writes only the database after it
    # migrates the tree)
    assert _rows(
        both,
        "SELECT DISTINCT s.path LIKE '%opencode.db' FROM usage u JOIN sources s USING (source_id)",
    ) == [(True,)]
    again = _import(both_home, both)
    assert again.exit_code == 0 and _calls(both) == _calls(tree)
    # OpenCode goes on in the database: a new step there is one more call, and the calls
    # the database held before are still counted once
    con = sqlite3.connect(both_home / DATA / "opencode.db")
    step = {"type": "step-finish", "reason": "stop", "tokens": {"input": 7, "output": 3}}
    con.execute(
        "INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)",
        ("prt_de2c4ce2c0ffNewStepAAAAAAA", NO_STEPS, PARENT, json.dumps(step)),
    )
    con.commit()
    con.close()
    assert _import(both_home, both).exit_code == 0
    assert _rows(both, "SELECT count(*), sum(input_tokens) FROM usage") == [(5, 490 - 40 + 7)]


def test_database_session_of_unknown_major_version_is_drift(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    result = _import(_database_home(tmp_path, version="2.0.0"), catalog)
    assert result.exit_code == 1 and [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]


def test_database_with_event_sourced_messages_is_drift(tmp_path: Path) -> None:
    home = _database_home(tmp_path)
    con = sqlite3.connect(home / DATA / "opencode.db")
    con.execute("CREATE TABLE session_message (id TEXT, session_id TEXT, type TEXT, data TEXT)")
    con.execute("INSERT INTO session_message VALUES ('m', 's', 'user', '{}')")
    con.commit()
    con.close()
    result = _import(home, tmp_path / "c.duckdb")
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]


def test_database_rows_of_impossible_shape_are_skipped(tmp_path: Path) -> None:
    home = _database_home(tmp_path)
    con = sqlite3.connect(home / DATA / "opencode.db")
    con.execute(f"INSERT INTO message VALUES ('msg_x', '{PARENT}', 0, 0, 'not json')")
    con.execute(f"INSERT INTO message VALUES ('msg_y', '{PARENT}', 0, 0, '{{\"role\": 7}}')")
    con.execute(f"INSERT INTO part VALUES ('prt_x', 'msg_y', '{PARENT}', 0, 0, '[1]')")
    con.execute(f"INSERT INTO part VALUES ('prt_y', 'msg_y', '{PARENT}', 0, 0, "
                "'{\"type\": \"text\", \"text\": 5}')")  # fmt: skip
    con.commit()
    con.close()
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM usage") == [(5,)]


# --------------------------------------------------------------------------- bad files


def test_bad_files_are_rejected_with_receipts(tmp_path: Path) -> None:
    home = _home(tmp_path)
    storage = home / DATA / "storage"
    (storage / "message" / PARENT / "msg_broken.json").write_text('{"id": "msg_broken", ')
    _write(storage / "message" / PARENT / "msg_list.json", [1, 2])
    _write(storage / "message" / PARENT / "msg_robot.json",
           {"id": "msg_robot", "sessionID": PARENT, "role": "robot"})  # fmt: skip
    _write(storage / "message" / PARENT / "msg_tokens.json",
           {"id": "msg_tokens", "sessionID": PARENT, "role": "assistant", "tokens": "many"})  # fmt: skip
    _write(storage / "session" / "p" / "ses_bad.json", {"id": "ses_bad", "title": 5})
    _write(storage / "part" / "prt_orphan.json", {"id": "prt_orphan", "type": "text", "text": "x"})
    _write(storage / "part" / "msg_nowhere" / "prt_lost.json",
           {"id": "prt_lost", "type": "text", "text": "x"})  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    result = _import(home, catalog)
    assert result.exit_code == 0
    assert dict(_rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL")) == {
        "MALFORMED": 2,  # not JSON; JSON that is not an object
        "INVALID_RECORD": 6,  # + the contract home's unknown part type
    }
    assert _rows(catalog, "SELECT count(*) FROM usage") == [(5,)]


def test_sub_agent_session_names_its_parent(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(_home(tmp_path), catalog)
    query = f"SELECT parent_session_id, title FROM sessions WHERE session_id = '{CHILD}'"
    assert _rows(catalog, query) == [(PARENT, "Explore cache code (@explore subagent)")]


def test_part_whose_message_file_is_missing_keeps_its_call(tmp_path: Path) -> None:
    home = _home(tmp_path)
    (home / DATA / "storage" / "message" / PARENT / f"{TWO_STEPS}.json").unlink()
    written = (1777626000 + 86_400) * 10**9  # a day after the session: the ids' anchor
    for part in (home / DATA / "storage" / "part" / TWO_STEPS).iterdir():
        os.utime(part, ns=(written, written))
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    # its steps' times come from their ids
    query = f"SELECT count(*), min(ts)::VARCHAR FROM usage WHERE message_id = '{TWO_STEPS}'"
    assert _rows(catalog, query) == [(2, "2026-05-01 09:00:03.001+00")]


def test_a_message_file_outside_the_root_is_never_read(tmp_path: Path) -> None:
    home = _home(tmp_path)
    first = "msg_de2c42e68001Msg1AAAAAAAAAA"  # the first user message
    message = home / DATA / "storage" / "message" / PARENT / f"{first}.json"
    outside = tmp_path / "outside.json"
    shutil.move(message, outside)
    message.symlink_to(outside)
    catalog = tmp_path / "c.duckdb"
    result = _import(home, catalog)
    assert [s.code for s in result.refused] == ["SOURCE_OUTSIDE_ROOT"]
    # its parts do not learn its role from the file outside: their prose is not a prompt
    query = "SELECT count(*) FROM events WHERE text = 'Why is the cache stale after a deploy?'"
    assert _rows(catalog, query + " AND kind = 'system'") == [(1,)]


# --------------------------------------------------------------------------- exports


def _export(storage: Path, sid: str) -> dict[str, Any]:
    """What ``opencode export <sid>`` writes for a session of a storage tree."""
    info = json.loads(next(storage.glob(f"session/*/{sid}.json")).read_text())
    messages = []
    for path in sorted((storage / "message" / sid).glob("*.json")):
        message = json.loads(path.read_text())
        parts = [
            json.loads(p.read_text()) for p in sorted((storage / "part" / path.stem).glob("*.json"))
        ]
        messages.append(
            {"info": message, "parts": [p for p in parts if p["type"] != "future-block"]}
        )
    return {"info": info, "messages": messages, "todos": []}


def _import_files(paths: list[Path], catalog: Path, fmt: str | None = None) -> ImportResult:
    files = tuple(NamedFile(p, fmt) for p in paths)
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=catalog.parent, env={},
                      build_index=False, files=files)
    )  # fmt: skip


def test_an_export_is_the_same_session_as_the_store(tmp_path: Path) -> None:
    storage = HERE / "contract_all_record_types" / DATA / "storage"
    exported = tmp_path / "session.json"
    exported.write_text(json.dumps(_export(storage, PARENT), indent=2))
    assert guess_format(exported)[1].name == opencode.EXPORT_FORMAT
    assert (
        export_format("opencode-export-json")[1].name == opencode.EXPORT_FORMAT
    )  # its locator class
    catalog = tmp_path / "export.duckdb"
    assert _import_files([exported], catalog).exit_code == 0
    tree = tmp_path / "tree.duckdb"
    _import(_home(tmp_path), tree)
    parent_only = [c for c in _calls(tree) if c[1] == PARENT]
    assert _calls(catalog) == parent_only
    assert _events(catalog) == [e for e in _events(tree) if e[1] == PARENT]
    # imported into the store's catalog, it adds nothing
    before = (_calls(tree), _events(tree))
    assert _import_files([exported], tree).exit_code == 0
    assert (_calls(tree), _events(tree)) == before


def test_export_of_an_unknown_schema_major_is_drift(tmp_path: Path) -> None:
    exported = tmp_path / "future.json"
    exported.write_text(json.dumps({"schemaVersion": "2.0.0", "info": {"id": "ses_x"},
                                    "messages": []}))  # fmt: skip
    result = _import_files([exported], tmp_path / "c.duckdb", opencode.EXPORT_FORMAT)
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]


def test_a_file_that_is_not_an_export_is_rejected(tmp_path: Path) -> None:
    exported = tmp_path / "other.json"
    exported.write_text(json.dumps({"messages": [], "sessionID": "x"}))
    catalog = tmp_path / "c.duckdb"
    assert _import_files([exported], catalog, opencode.EXPORT_FORMAT).exit_code == 0
    assert _rows(catalog, "SELECT reason FROM rejects") == [("INVALID_RECORD",)]


AIWG_OPENCODE = (
    CONFORMANCE / "jmagly__ai-writing-guide" / "test" / "fixtures" / "sessions" / "opencode"
)


@pytest.mark.skipif(not AIWG_OPENCODE.is_dir(), reason="conformance data not present")
def test_conformance_export_of_an_unknown_major(tmp_path: Path) -> None:
    result = _import_files([AIWG_OPENCODE / "unknown-major.json"], tmp_path / "c.duckdb",
                           opencode.EXPORT_FORMAT)  # fmt: skip
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]


# --------------------------------------------------------------------------- conformance

STAGE0 = CONFORMANCE / "jazzyalex__agent-sessions" / "Resources" / "Fixtures" / "stage0"
OPENCODE_STAGE0 = STAGE0 / "agents" / "opencode"


@pytest.mark.skipif(not OPENCODE_STAGE0.is_dir(), reason="conformance data not present")
@pytest.mark.parametrize(
    ("tree", "sessions", "calls", "kinds"),
    [
        # the step-finish of m_assistant_large_1 is its one call (its message.tokens, the
        # same figures, is the stand-in dropped); files are named otherwise than their ids
        ("storage_v2", 2, [(120, 16)], {"prompt": 3, "response": 3, "tool_call": 2,
                                         "tool_result": 2, "reasoning": 1, "summary": 4,
                                         "system": 6}),
        # flat part files naming no session; a tool status "success"
        ("storage_legacy", 1, [], {"response": 1, "tool_call": 1, "tool_result": 1,
                                   "summary": 1}),
    ],
)  # fmt: skip
def test_conformance_trees(
    tmp_path: Path,
    tree: str,
    sessions: int,
    calls: list[tuple[int, int]],
    kinds: dict[str, int],
) -> None:
    home = tmp_path / "home"
    shutil.copytree(OPENCODE_STAGE0 / tree, home / DATA / "storage")
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]
    assert _rows(catalog, "SELECT count(*) FROM sessions")[0][0] == sessions
    assert _rows(catalog, "SELECT input_tokens, output_tokens FROM usage") == calls
    assert dict(_rows(catalog, "SELECT kind, count(*) FROM events GROUP BY ALL")) == kinds


def test_unknown_message_meta_is_the_fallback() -> None:
    assert UNKNOWN_MESSAGE.role is None and UNKNOWN_MESSAGE.created is None
