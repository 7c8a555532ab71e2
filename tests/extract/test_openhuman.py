"""OpenHuman: ``session_raw`` transcripts rewritten whole on every turn (document sources)
and AIWG's ``openhuman-enriched-jsonl`` export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentlake.extract.providers import openhuman, openhuman_export
from agentlake.ingest.files import NamedFile, guess_format
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows

HOME = FIXTURES / "openhuman" / "contract_all_record_types"
EXPORT = FIXTURES / "openhuman" / "exports" / "enriched_session.jsonl"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide" / "test" / "fixtures" / "sessions" / "openhuman"
ROOT_SID = "1776416400_code_executor"
RAW = Path(".openhuman") / "workspace" / "session_raw"


def _import(
    catalog: Path, home: Path, *files: Path, env: dict[str, str] | None = None
) -> ImportResult:
    options: dict[str, Any] = (
        {"files": tuple(NamedFile(p) for p in files)} if files else {"providers": ("openhuman",)}
    )
    return run_import(ImportOptions(catalog=catalog, workspace="default", home=home,
                                    env=env or {}, build_index=False, **options))  # fmt: skip


_rows = catalog_rows


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _meta(input_tokens: int, output: int, cached: int, updated: str) -> dict[str, Any]:
    return {"_meta": {"agent": "chat", "created": "2026-05-01T10:00:00Z", "updated": updated,
                      "input_tokens": input_tokens, "output_tokens": output,
                      "cached_input_tokens": cached}}  # fmt: skip


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        (("workspace", "session_raw", "1_a.jsonl"), True),
        (("u-1", "workspace", "session_raw", "1_a.jsonl"), True),
        (("session_raw", "1_a.jsonl"), True),  # OPENHUMAN_WORKSPACE names the workspace
        (("workspace", "session_raw", "17042026", "a_0.jsonl"), True),
        (("workspace", "session_raw", "2026", "a_0.jsonl"), False),
        (("workspace", "sessions", "2026_04_17", "1_a.md"), False),
        (("other", "session_raw", "1_a.jsonl"), False),
        (("a", "b", "workspace", "session_raw", "1_a.jsonl"), False),
        (("workspace", "session_raw", ".1_a.jsonl"), False),
        (("workspace", "session_raw", "1_a.json"), False),
    ],
)
def test_owns_the_flat_dated_and_per_user_layouts(rel: tuple[str, ...], owned: bool) -> None:
    assert openhuman.owns(rel) is owned


def test_every_record_shape_maps(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, HOME).exit_code == 0
    root = _rows(catalog, f"SELECT kind, role, text, model, CAST(ts AS VARCHAR) FROM events "
                          f"WHERE session_id = '{ROOT_SID}' ORDER BY seq")  # fmt: skip
    assert [r[:2] for r in root] == [("system", "system"), ("prompt", "user"),
                                     ("response", "assistant"), ("tool_result", "tool"),
                                     ("response", "assistant")]  # fmt: skip
    assert root[-1][2:4] == ("It is a small CLI.", "claude-sonnet-4-5")
    # lines without a time borrow the header's creation time; the last one has its own
    assert root[0][4].startswith("2026-04-17 09:00:00") and root[-1][4].startswith(
        "2026-04-17 09:04:10"
    )
    sessions = dict(
        (s, (p, m))
        for s, p, m in _rows(catalog, "SELECT session_id, parent_session_id, model FROM sessions")
    )
    assert sessions == {
        ROOT_SID: (None, "claude-sonnet-4-5"),
        f"{ROOT_SID}__1776416460_researcher": (ROOT_SID, "gpt-4.1"),
        "17042026/planner_0": (None, None),
        "1776506400_chat": (None, "claude-haiku-4-5"),
    }
    started = _rows(catalog, f"SELECT CAST(started_at AS VARCHAR) FROM sessions "
                             f"WHERE session_id = '{ROOT_SID}'")  # fmt: skip
    assert started[0][0].startswith("2026-04-17 09:00:00")


def test_tokens_are_the_meta_totals_once_per_session(tmp_path: Path) -> None:
    """The cumulative ``_meta`` counters are the session's one row; the last assistant
    line's per-turn ``usage`` (already inside them) is not counted on top."""
    catalog = tmp_path / "c.duckdb"
    _import(catalog, HOME)
    usage = _rows(catalog, "SELECT session_id, model, input_tokens, cache_read_tokens, "
                           "output_tokens FROM usage ORDER BY session_id")  # fmt: skip
    assert usage == [
        (ROOT_SID, "claude-sonnet-4-5", 1500, 3500, 1200),
        (f"{ROOT_SID}__1776416460_researcher", "gpt-4.1", 800, 0, 200),
        ("1776506400_chat", "claude-haiku-4-5", 200, 100, 50),
    ]


def test_a_rewrite_that_drops_an_earlier_message_imports_the_new_state(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / RAW / "1777630000_chat.jsonl"
    first = [
        _meta(100, 20, 0, "2026-05-01T10:00:10Z"),
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "1", "model": "gpt-4.1", "ts": "2026-05-01T10:00:10Z"},
    ]
    _write(path, first)
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, home).exit_code == 0
    ids = dict(_rows(catalog, "SELECT text, event_id FROM events"))
    # context reduction drops "one"; the next turn is added and the header rewritten
    _write(path, [
        _meta(250, 45, 100, "2026-05-01T10:01:00Z"),
        {"role": "system", "content": "be brief"},
        {"role": "assistant", "content": "1"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "2", "model": "gpt-4.1", "ts": "2026-05-01T10:01:00Z"},
    ])  # fmt: skip
    result = _import(catalog, home)
    assert result.exit_code == 0
    assert [s.planned.continuity for s in result.sources] == ["updated"]
    events = _rows(catalog, "SELECT text, event_id FROM events ORDER BY seq")
    assert [t for t, _ in events] == ["be brief", "1", "two", "2"]
    assert {t: e for t, e in events if t in ids} == {t: ids[t] for t in ("be brief", "1")}
    assert _rows(catalog, "SELECT count(*), sum(input_tokens), sum(cache_read_tokens), "
                          "sum(output_tokens) FROM usage") == [(1, 150, 100, 45)]  # fmt: skip
    # the same state again is no change
    assert _import(catalog, home).totals()["sources_opened"] == 0


def test_a_plain_append_adds_only_the_new_messages(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / RAW / "1777630000_chat.jsonl"
    lines = [_meta(100, 20, 0, "2026-05-01T10:00:10Z"), {"role": "user", "content": "one"},
             {"role": "assistant", "content": "same"}]  # fmt: skip
    _write(path, lines)
    catalog = tmp_path / "c.duckdb"
    _import(catalog, home)
    lines[0] = _meta(300, 60, 0, "2026-05-01T10:02:00Z")
    lines += [{"role": "user", "content": "again"}, {"role": "assistant", "content": "same"}]
    _write(path, lines)
    assert _import(catalog, home).exit_code == 0
    texts = _rows(catalog, "SELECT text, native_id FROM events ORDER BY seq")
    assert [t for t, _ in texts] == ["one", "same", "again", "same"]
    assert len({n for _, n in texts}) == 4  # a repeated reply is a second message
    assert _rows(catalog, "SELECT sum(input_tokens), sum(output_tokens) FROM usage") == [(300, 60)]


def test_the_workspace_override_is_the_root(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    _write(workspace / "session_raw" / "1777630000_chat.jsonl",
           [{"_meta": {"agent": "chat"}}, {"role": "user", "content": "hi"}])  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, tmp_path / "nohome", env={"OPENHUMAN_WORKSPACE": str(workspace)})
    assert result.exit_code == 0
    assert _rows(catalog, "SELECT session_id, text FROM events") == [("1777630000_chat", "hi")]


def test_the_export_is_sniffed_and_maps_every_shape(tmp_path: Path) -> None:
    assert guess_format(EXPORT)[1].name == openhuman_export.FORMAT
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, Path("/nonexistent"), EXPORT).exit_code == 0
    rows = _rows(catalog, "SELECT kind, role, text, tool_name, is_error, is_sidechain, model "
                          "FROM events ORDER BY seq")  # fmt: skip
    kinds = [r[0] for r in rows]
    assert kinds == ["system", "prompt", "response", "tool_result", "response", "tool_result",
                     "tool_result", "system", "system", "summary", "system", "response",
                     "system"]  # fmt: skip
    assert rows[4][5] is True and rows[4][6] == "gpt-4.1"  # the nested agent's reply
    assert rows[5][2:5] == ("no such file: /home/dev/shop/NOTES", "read", True)
    assert rows[6][2:5] == ('{"entries":3}', "list", False)
    assert rows[7][2] == "attachment diagram.png (present)"
    assert rows[8][2] == "attachment old.txt (expired)"
    assert _rows(catalog, "SELECT session_id, title, model FROM sessions") == [
        (ROOT_SID, "Summarise the shop repo", "claude-sonnet-4-5")
    ]
    assert _rows(catalog, "SELECT input_tokens, cache_read_tokens, output_tokens FROM usage") == [
        (1500, 3500, 1200)
    ]


def test_a_session_imported_natively_and_exported_is_one(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(catalog, HOME)
    native = _rows(catalog, f"SELECT count(*) FROM events WHERE session_id = '{ROOT_SID}'")[0][0]
    assert _import(catalog, Path("/nonexistent"), EXPORT).exit_code == 0
    assert _rows(catalog, f"SELECT count(*) FROM sessions WHERE session_id = '{ROOT_SID}'") == [
        (1,)
    ]
    messages = _rows(catalog, f"SELECT text, count(*) FROM events WHERE session_id = "
                              f"'{ROOT_SID}' AND kind IN ('prompt', 'response') GROUP BY text")  # fmt: skip
    assert all(n == 1 for _, n in messages)  # the native copies and the exported ones are one
    total = _rows(catalog, f"SELECT count(*) FROM events WHERE session_id = '{ROOT_SID}'")[0][0]
    assert total == native + 8  # the export's events the native file has no line for
    assert _rows(catalog, f"SELECT count(*), sum(input_tokens), sum(output_tokens) FROM usage "
                          f"WHERE session_id = '{ROOT_SID}'") == [(1, 1500, 1200)]  # fmt: skip


def _export_lines(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    _write(path, records)
    return path


def _raw(eid: str, **kw: Any) -> dict[str, Any]:
    rec = {"schemaVersion": 1, "recordType": "session_raw", "session_id": "s1", "event_id": eid,
           "thread_id": "t1", "type": "message", "role": "user", "content": eid}  # fmt: skip
    return rec | kw


def test_export_errors(tmp_path: Path) -> None:
    """Another version in the file is drift; missing ids and a repeated event id are
    rejected with receipts; a file that is not a wrapper is refused whole."""
    mixed = _export_lines(tmp_path, "mixed.jsonl", [_raw("a"), _raw("b", schemaVersion=2)])
    result = _import(tmp_path / "m.duckdb", Path("/nonexistent"), mixed)
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    bad = _export_lines(tmp_path, "bad.jsonl", [
        _raw("a"), _raw("a"), {"schemaVersion": 1, "recordType": "session_raw", "session_id": "s1"},
        _raw("c", content=7), {"schemaVersion": 1, "recordType": "other"},
    ])  # fmt: skip
    catalog = tmp_path / "b.duckdb"
    assert _import(catalog, Path("/nonexistent"), bad).exit_code == 0
    assert _rows(catalog, "SELECT text FROM events") == [("a",)]
    assert dict(_rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL")) == {
        "DUPLICATE_ID": 1, "INVALID_RECORD": 2, "UNKNOWN_RECORD": 1}  # fmt: skip
    other = _export_lines(tmp_path, "other.jsonl", [{"type": "event"}, _raw("a")])
    result = run_import(ImportOptions(
        catalog=tmp_path / "o.duckdb", workspace="default", home=Path("/nonexistent"), env={},
        build_index=False, files=(NamedFile(other, openhuman_export.FORMAT),)))  # fmt: skip
    assert [s.code for s in result.refused] == ["SOURCE_CORRUPT"]


@pytest.mark.skipif(not AIWG.is_dir(), reason="the shared conformance corpus is absent")
def test_the_wrapper_fixtures_of_the_ingestion_project(tmp_path: Path) -> None:
    work = tmp_path / "aiwg"
    shutil.copytree(AIWG, work)
    cases = {p.name: p for p in work.iterdir()}
    catalog = tmp_path / "complete.duckdb"
    assert _import(catalog, Path("/nonexistent"), cases["complete.jsonl"]).exit_code == 0
    kinds = dict(_rows(catalog, "SELECT kind, count(*) FROM events GROUP BY ALL"))
    assert kinds == {"prompt": 1, "response": 2, "tool_result": 1, "system": 4, "summary": 1}
    assert _rows(catalog, "SELECT session_id, title FROM sessions") == [
        ("openhuman-complete", "Synthetic thread")
    ]
    assert _rows(catalog, "SELECT input_tokens, cache_read_tokens, output_tokens FROM usage") == [
        (6, 4, 20)
    ]
    for name in ("active.jsonl", "raw-after-thread-delete.jsonl"):
        catalog = tmp_path / f"{name}.duckdb"
        assert _import(catalog, Path("/nonexistent"), cases[name]).exit_code == 0
        assert _rows(catalog, "SELECT count(*) FROM events") == [(1,)]
    for name in ("mixed-schema.jsonl", "unknown-major.jsonl"):
        result = _import(tmp_path / f"{name}.duckdb", Path("/nonexistent"), cases[name])
        assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    catalog = tmp_path / "malformed.duckdb"
    _import(catalog, Path("/nonexistent"), cases["malformed.jsonl"])
    assert _rows(catalog, "SELECT reason FROM rejects") == [("INVALID_RECORD",)]
