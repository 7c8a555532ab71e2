"""The Gemini CLI provider: discovery, record mapping, the DESIGN §4 token rule, and the
log semantics (``$rewindTo``, re-written ids whose last copy wins, ``$set``) within one
run and across runs.

Expected totals are computed by hand from the fixtures (fixtures/gemini/README.md) with
the rule: one call per surviving message id; ``input = input − cached + tool``,
``cache_read = cached``, ``output = output + thoughts``, ``reasoning = thoughts``,
``cache_write = 0``.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from agentlake.extract.adapter import InvalidRecord
from agentlake.extract.extract import ExtractLimits, extract_source
from agentlake.extract.providers import by_id, gemini, resolve
from agentlake.extract.sources import SourceFile, walk_root
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from fixtures.synth import generate_gemini_corpus, generate_gemini_home
from tests.conftest import FIXTURES
from tests.pipeline.helpers import import_with, snapshot

SPEC = by_id("gemini-cli")
HERE = FIXTURES / "gemini"
TABLES = ("events", "usage", "sessions", "rejects")

# --------------------------------------------------------------------------- helpers


def _home(name: str, tmp: Path) -> Path:
    """A private copy of a fixture home (tests mutate it)."""
    target = tmp / name
    shutil.copytree(HERE / name, target, symlinks=True)
    return target


def _import(home: Path, catalog: Path) -> ImportResult:
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      providers=("gemini",), build_index=False)
    )  # fmt: skip


def _rows(catalog: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _totals(catalog: Path) -> tuple[int, int, int, int, int, int]:
    """(calls, input, cache_write, cache_read, output, reasoning)."""
    row = _rows(
        catalog,
        "SELECT count(*), sum(input_tokens), sum(cache_write_tokens), sum(cache_read_tokens), "
        "sum(output_tokens), sum(reasoning_tokens) FROM usage",
    )[0]
    calls, inp, write, read, out, reasoning = (int(v or 0) for v in row)
    return calls, inp, write, read, out, reasoning


def _kinds(catalog: Path) -> dict[str, int]:
    return dict(_rows(catalog, "SELECT kind, count(*) FROM events GROUP BY ALL"))


def _texts(catalog: Path) -> set[str]:
    return {t for (t,) in _rows(catalog, "SELECT text FROM events WHERE text IS NOT NULL")}


def _log(home: Path) -> Path:
    (path,) = [p for p in (home / ".gemini" / "tmp").rglob("session-*.jsonl")]
    return path


def _sources(home: Path) -> list[SourceFile]:
    out: list[SourceFile] = []
    for root in SPEC.roots(home, {}):
        out += [s for s in walk_root(root, SPEC.formats) if isinstance(s, SourceFile)]
    return out


def _import_line_by_line(home: Path, paths: list[Path], catalog: Path) -> None:
    """Import ``paths`` as they grow one line at a time, one file after the other (one
    run per line)."""
    contents = {path: path.read_bytes().splitlines(keepends=True) for path in paths}
    for path in paths:
        path.write_bytes(b"")
    for path, lines in contents.items():
        for line in lines:
            with path.open("ab") as fh:
                fh.write(line)
            assert _import(home, catalog).exit_code == 0


def _tokens(i: int, o: int, c: int = 0, t: int = 0, tool: int = 0) -> dict[str, int]:
    return {"input": i, "output": o, "cached": c, "thoughts": t, "tool": tool,
            "total": i + o + t + tool}  # fmt: skip


# --------------------------------------------------------------------------- registry


def test_registry_row() -> None:
    assert resolve("gemini") is SPEC and SPEC.id == "gemini-cli"
    assert SPEC.env_overrides == () and SPEC.adapter_version == gemini.ADAPTER_VERSION
    assert {(f.name, f.position_kind) for f in SPEC.formats} == {
        ("gemini-json", "document"),
        ("gemini-jsonl", "byte-offset"),
    }
    assert SPEC.capabilities == {"discover", "stream", "tokens", "subagents"}
    assert SPEC.fixtures == ("fixtures/gemini",)
    assert [r.path for r in SPEC.roots(Path("/h"), {})] == [Path("/h/.gemini/tmp")]


# --------------------------------------------------------------------------- discovery


@pytest.mark.parametrize(
    ("rel", "owner"),
    [
        ("p/chats/session-2026-05-01T09-00-7c1f0d9e.json", "gemini-json"),
        ("p/chats/session-2026-05-01T09-00-7c1f0d9e.jsonl", "gemini-jsonl"),
        ("p/chats/anything.jsonl", "gemini-jsonl"),
        ("p/chats/7c1f0d9e-parent/8a9b-child.jsonl", "gemini-jsonl"),
        ("p/logs.json", None),
        ("p/checkpoint-save.json", None),
        ("p/chats/checkpoint-save.json", None),
        ("p/shell_history", None),
        ("p/chats/notes.json", None),
        ("p/chats/session-x.json.bak", None),
        ("p/chats/parent/session-x.json", None),
        ("p/chats/a/b/deep.jsonl", None),
        ("p/session-x.jsonl", None),
        ("chats/session-x.json", None),
        ("p/tool-outputs/s/out.jsonl", None),
    ],
)
def test_predicates_own_only_chat_files(rel: str, owner: str | None) -> None:
    owners = [f.name for f in SPEC.formats if f.owns(Path(rel).parts)]
    assert owners == ([owner] if owner else [])


def test_a_migrated_document_is_superseded_by_its_log(tmp_path: Path) -> None:
    home = _home("migrated_json_to_jsonl", tmp_path)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,))
    decisions = {s.path.suffix: (s.continuity, s.action) for s in plan.sources}
    assert decisions == {".json": ("superseded", "skip"), ".jsonl": ("new", "read")}


# --------------------------------------------------------------------------- messages


def test_token_rule_of_the_format_reference_example() -> None:
    # input 5200 includes cached 4096: 5200 − 4096 + 0 = 1104; output 140 + thoughts 310
    _, usage, known = gemini.message_rows(
        {"id": "m2", "type": "gemini", "timestamp": "2026-05-01T09:00:05.000Z",
         "model": "gemini-2.5-pro", "content": "ok", "tokens": _tokens(5200, 140, 4096, 310)}
    )  # fmt: skip
    assert known and usage == ("2026-05-01T09:00:05.000Z", "gemini-2.5-pro", 1104, 4096, 450, 310)
    # tool-use prompt tokens are input: 6000 − 5000 + 50 = 1050
    _, usage, _ = gemini.message_rows(
        {"id": "x", "type": "gemini", "tokens": _tokens(6000, 200, 5000, 0, 50)}
    )
    assert usage is not None and usage[2:] == (1050, 5000, 200, 0)
    # a cache larger than the prompt never makes input negative
    _, usage, _ = gemini.message_rows({"id": "x", "type": "gemini", "tokens": _tokens(10, 1, 64)})
    assert usage is not None and usage[2:] == (0, 64, 1, 0)
    # no tokens (yet): no call
    assert gemini.message_rows({"id": "x", "type": "gemini", "tokens": None})[1] is None


def test_gemini_message_blocks_keep_their_indices() -> None:
    msg = {
        "id": "m", "type": "gemini", "timestamp": "t0", "model": "gemini-2.5-pro",
        "content": [{"text": "hidden", "thought": True}, {"text": "Answer"}],
        "thoughts": [{"subject": "A", "description": "a"}, {"subject": "B"}],
        "toolCalls": [
            {"id": "c1", "name": "read_file", "args": {"p": 1}, "status": "success",
             "result": [{"functionResponse": {"response": {"output": "body"}}}]},
            {"id": "c2", "name": "run_shell_command", "args": {}, "status": "cancelled",
             "result": [{"functionResponse": {"response": {"error": "denied"}}}]},
            {"id": "c3", "name": "glob", "args": {}, "status": "executing"},
        ],
    }  # fmt: skip
    rows, _, _ = gemini.message_rows(msg)
    got = [(r[0], r[1], r[3], r[6], r[8], r[9]) for r in rows]
    assert got == [
        (0, "thinking", "A\n\na", None, None, None),
        (1, "thinking", "B", None, None, None),
        (2, "text", "Answer", None, None, None),
        (3, "tool_use", None, "read_file", '{"p":1}', None),
        (4, "tool_result", "body", "read_file", None, False),
        (5, "tool_use", None, "run_shell_command", "{}", None),
        (6, "tool_result", "denied", "run_shell_command", None, True),
        (7, "tool_use", None, "glob", "{}", None),  # running: no result yet, slot 8 kept
    ]


def test_user_parts_system_types_and_unknown_types() -> None:
    rows, usage, known = gemini.message_rows(
        {"id": "u", "type": "user", "content": [
            {"text": "look at this"}, {"inlineData": {"mimeType": "image/png", "data": "AA=="}},
            {"fileData": {"mimeType": "application/pdf", "fileUri": "f"}}]}
    )  # fmt: skip
    assert [(r[1], r[2], r[3]) for r in rows] == [("text", "user", "look at this\n[image]\n[file]")]
    assert usage is None and known
    for kind, is_error in (("info", None), ("warning", None), ("error", True)):
        rows, _, known = gemini.message_rows({"id": "s", "type": kind, "content": "note"})
        assert known and [(r[1], r[2], r[3], r[9]) for r in rows] == [
            ("system", "system", "note", is_error)
        ]
    assert gemini.message_rows({"id": "z", "type": "x-future", "content": "?"}) == ([], None, False)


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "gemini", "toolCalls": {}},
        {"type": "gemini", "thoughts": "x"},
        {"type": "gemini", "tokens": 5},
        {"type": "user", "content": 42},
    ],
)
def test_impossible_field_types_are_invalid(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidRecord):
        gemini.message_rows({"id": "m", **bad})


def test_usage_candidates_use_the_message_id_as_native_identity() -> None:
    home = HERE / "jsonl_append_log"
    (src,) = _sources(home)
    (batch,) = extract_source(SPEC, src, start=0, stop=src.size)
    usage = batch.tables.usage.to_pylist()
    assert [(u["message_id"], u["request_id"], u["native_id"]) for u in usage] == [
        (None, None, "m2"),
        (None, None, "m4"),
    ]
    assert all(u["rank"] == u["source_offset"] + 1 for u in usage)  # a later copy wins
    assert {e["session_id"] for e in batch.tables.events.to_pylist()} == {
        "5a2b9c10-0000-4000-8000-00000000c001"
    }


# --------------------------------------------------------------------------- fixtures

# name: (calls, input, cache_write, cache_read, output, reasoning), events by kind
EXPECTED: dict[str, tuple[tuple[int, ...], dict[str, int]]] = {
    # m2 1104/4096/450/310 + m5 1050/5000/200/0
    "legacy_document": (
        (2, 2154, 0, 9096, 650, 310),
        {"prompt": 2, "response": 2, "reasoning": 1, "tool_call": 2, "tool_result": 2, "system": 2},
    ),
    # m2 952/2048/150/50 + m4 944/3072/420/120
    "jsonl_append_log": (
        (2, 1896, 0, 5120, 570, 170),
        {"prompt": 2, "response": 2, "reasoning": 1, "tool_call": 3, "tool_result": 3, "system": 1},
    ),
    # m2 1000/0/10/0 + m8 500/1000/20/5 (m3..m6 rewound)
    "rewind": ((2, 1500, 0, 1000, 30, 5), {"prompt": 2, "response": 2}),
    # m2 (last copy) 2000/6000/260/200 + m4 (last copy) 1010/8000/160/40
    "reappended_ids": (
        (2, 3010, 0, 14000, 420, 240),
        {"prompt": 2, "response": 2, "reasoning": 1, "tool_call": 1, "tool_result": 1},
    ),
    # m2 2500/0/120/30 + m4 1000/2000/110/0; m3 added by the $set history
    "set_metadata": ((2, 3500, 0, 2000, 230, 30), {"prompt": 2, "response": 2}),
    # m2 1000/3000/120/20 + m4 1000/4000/150/0 + m6 1000/5000/260/60, each once
    "migrated_json_to_jsonl": ((3, 3000, 0, 12000, 530, 80), {"prompt": 3, "response": 3}),
    # main 2000/5000/190/100 + 1600/6000/140/0; subagent 3000/0/90/40 + 1452/2048/60/0
    "subagent": (
        (4, 8052, 0, 13048, 480, 140),
        {"prompt": 2, "response": 2, "tool_call": 2, "tool_result": 2},
    ),
    # four sessions of 100/0/10/0
    "project_root_and_projects_json": ((4, 400, 0, 0, 40, 0), {"prompt": 4, "response": 4}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_totals_are_exact(name: str, tmp_path: Path) -> None:
    totals, kinds = EXPECTED[name]
    catalog = tmp_path / "c.duckdb"
    result = _import(_home(name, tmp_path), catalog)
    assert result.exit_code == 0
    assert _totals(catalog) == totals
    assert _kinds(catalog) == kinds
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]


@pytest.mark.parametrize("name", ["rewind", "reappended_ids", "set_metadata", "subagent"])
def test_importing_line_by_line_equals_one_import(name: str, tmp_path: Path) -> None:
    """Rewinds, re-written ids and $set across runs: one run per appended line gives the
    catalog a single run gives."""
    home = _home(name, tmp_path)
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    stepwise = tmp_path / "stepwise.duckdb"
    _import_line_by_line(home, sorted((home / ".gemini" / "tmp").rglob("*.jsonl")), stepwise)
    assert snapshot(stepwise, TABLES) == snapshot(clean, TABLES)
    assert _totals(stepwise) == EXPECTED[name][0]


def test_contract_home_line_by_line_equals_one_import(tmp_path: Path) -> None:
    home = _home("contract_all_record_types", tmp_path)
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    stepwise = tmp_path / "stepwise.duckdb"
    main = next((home / ".gemini" / "tmp" / "contract-app" / "chats").glob("session-*.jsonl"))
    _import_line_by_line(home, [main], stepwise)
    assert snapshot(stepwise, TABLES) == snapshot(clean, TABLES)


def test_rewind_across_runs_withdraws_rows_of_an_earlier_run(tmp_path: Path) -> None:
    home = _home("rewind", tmp_path)
    path = _log(home)
    lines = path.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b"$rewindTo" in line)
    path.write_bytes(b"".join(lines[:cut]))
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    # before the rewind: m2 1000/10, m4 2000/20, m6 3000/30
    assert _totals(catalog) == (3, 6000, 0, 0, 60, 0)
    assert _rows(catalog, "SELECT prompts, events FROM sessions") == [(3, 6)]
    path.write_bytes(b"".join(lines))
    result = _import(home, catalog)
    assert [s.planned.continuity for s in result.sources] == ["validated-append"]
    assert _totals(catalog) == EXPECTED["rewind"][0]
    natives = {n for (n,) in _rows(catalog, "SELECT DISTINCT native_id FROM events")}
    assert natives == {"m1", "m2", "m7", "m8"}
    assert _rows(catalog, "SELECT prompts, events, CAST(started_at AS VARCHAR), "
                          "CAST(updated_at AS VARCHAR) FROM sessions") == [
        (2, 4, "2026-05-03 10:00:00+00", "2026-05-03 10:03:06+00")
    ]  # fmt: skip
    (state,) = _rows(catalog, "SELECT adapter_state FROM sources")[0]
    assert list(orjson.loads(state)["ids"]) == ["m1", "m2", "m7", "m8"]


def test_reappended_id_across_runs_replaces_the_earlier_copy(tmp_path: Path) -> None:
    home = _home("reappended_ids", tmp_path)
    path = _log(home)
    lines = path.read_bytes().splitlines(keepends=True)
    catalog = tmp_path / "c.duckdb"
    path.write_bytes(b"".join(lines[:3]))  # metadata, m1, m2 without tokens
    _import(home, catalog)
    assert _totals(catalog)[0] == 0 and _kinds(catalog) == {
        "prompt": 1,
        "response": 1,
        "reasoning": 1,
    }
    path.write_bytes(b"".join(lines[:7]))  # + m2 with tokens, m2 with a tool call, m3, m4 (A)
    _import(home, catalog)
    # m2 2000/6000/260/200 + m4 (A) 9000−8000 = 1000/8000/80/0
    assert _totals(catalog) == (2, 3000, 0, 14000, 340, 200)
    assert "Renaming now." in _texts(catalog)
    path.write_bytes(b"".join(lines))  # + m4 (B), m1 re-written, $set
    _import(home, catalog)
    assert _totals(catalog) == EXPECTED["reappended_ids"][0]
    texts = _texts(catalog)
    assert "Renaming now." not in texts and "rename the config loader" not in texts
    assert {"Renamed load_config to read_settings in 3 files.",
            "rename the config loader to read_settings"} <= texts  # fmt: skip
    # each event once; the re-written prompt keeps its first position (seq of line 2)
    assert _rows(catalog, "SELECT count(*), count(DISTINCT event_id) FROM events") == [(7, 7)]
    (state,) = _rows(catalog, "SELECT adapter_state FROM sources")[0]
    assert list(orjson.loads(state)["ids"]) == ["m1", "m2", "m3", "m4"]


def test_reappended_ids_keep_only_the_last_copy_in_one_run(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(_home("reappended_ids", tmp_path), catalog)
    got = dict(
        _rows(catalog, "SELECT native_id, text FROM events WHERE kind IN ('prompt', 'response')")
    )
    assert got == {
        "m1": "rename the config loader to read_settings",
        "m2": "I'll look for usages first.",
        "m3": "go ahead",
        "m4": "Renamed load_config to read_settings in 3 files.",
    }
    # the additive copies of m2 (tokens, then a tool call) add rows, they do not repeat them
    assert _rows(catalog, "SELECT count(*) FROM events WHERE native_id = 'm2'") == [(4,)]


def test_rewind_to_an_unknown_id_is_rejected_and_drops_nothing(tmp_path: Path) -> None:
    home = _home("jsonl_append_log", tmp_path)
    with _log(home).open("ab") as fh:
        fh.write(b'{"$rewindTo":"never-written"}\n')
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _totals(catalog) == EXPECTED["jsonl_append_log"][0]
    assert _rows(catalog, "SELECT reason FROM rejects") == [("INVALID_RECORD",)]


def test_unknown_record_shapes_are_counted_not_fatal(tmp_path: Path) -> None:
    home = _home("jsonl_append_log", tmp_path)
    with _log(home).open("ab") as fh:
        fh.write(b'{"$compact":{"upTo":"m2"}}\n{"id":"m9","type":"x-future","content":"?"}\n')
        fh.write(
            b'{"id":"m10","type":"gemini","toolCalls":"oops"}\n{"id":"m11","type":"user","content":"after"}\n'
        )
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert dict(_rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL")) == {
        "UNKNOWN_RECORD": 2,
        "INVALID_RECORD": 1,
    }
    assert "after" in _texts(catalog)


def test_memo_keeps_ids_and_times_but_no_text(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(_home("jsonl_append_log", tmp_path), catalog)
    (state,) = _rows(catalog, "SELECT adapter_state FROM sources")[0]
    memo = orjson.loads(state)
    assert memo["sid"] == "5a2b9c10-0000-4000-8000-00000000c001"
    assert list(memo["ids"]) == ["m1", "m2", "m3", "m4", "m5"]
    assert (
        memo["start"] == "2026-05-02T14:30:00.000Z"
        and memo["updated"] == "2026-05-02T14:31:30.000Z"
    )
    assert "cart" not in state and "pytest" not in state and "rounding" not in state


def test_set_metadata_titles_times_and_history(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(_home("set_metadata", tmp_path), catalog)
    assert _rows(catalog, "SELECT title, title_rank, project_path, CAST(started_at AS VARCHAR), "
                          "CAST(updated_at AS VARCHAR) FROM sessions") == [
        ("Notes module and sync", 2, "/home/dev/notes-app",
         "2026-05-05 08:00:00+00", "2026-05-05 08:05:08+00")
    ]  # fmt: skip
    texts = _texts(catalog)
    # the $set history adds m3; it does not rewrite m1 (its masked copy is not imported)
    assert {"what about sync?", "summarize the notes module"} <= texts
    assert not any("[masked]" in t for t in texts)


# --------------------------------------------------------------------------- migration


def test_migrated_session_is_counted_once_whatever_the_order(tmp_path: Path) -> None:
    # both files at the first import: the log is read, the document superseded
    both = tmp_path / "both.duckdb"
    _import(_home("migrated_json_to_jsonl", tmp_path / "a"), both)
    assert _totals(both) == EXPECTED["migrated_json_to_jsonl"][0]
    # the document imported first, then the session migrated to the log
    home = _home("migrated_json_to_jsonl", tmp_path / "b")
    log = _log(home)
    aside = tmp_path / "log.jsonl"
    shutil.move(log, aside)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    # document alone: m2 1000/3000/120/20 + m4 1000/4000/150/0
    assert _totals(catalog) == (2, 2000, 0, 7000, 270, 20)
    shutil.move(aside, log)
    _import(home, catalog)
    assert _totals(catalog) == EXPECTED["migrated_json_to_jsonl"][0]
    assert _kinds(catalog) == EXPECTED["migrated_json_to_jsonl"][1]
    assert _rows(
        catalog, "SELECT count(*), max(title), max(prompts), max(events) FROM sessions"
    ) == [(1, "Planned and wrote the migration", 3, 6)]
    assert _rows(catalog, "SELECT count(*), count(DISTINCT event_id) FROM events") == [(6, 6)]


def test_both_formats_give_the_same_ids(tmp_path: Path) -> None:
    ids: list[tuple[set[str], set[str]]] = []
    for keep in (".json", ".jsonl"):
        home = _home("migrated_json_to_jsonl", tmp_path / keep)
        for path in (home / ".gemini" / "tmp").rglob("session-*"):
            if path.suffix != keep:
                path.unlink()
        catalog = tmp_path / f"c{keep}.duckdb"
        _import(home, catalog)
        natives = "('m1', 'm2', 'm3', 'm4')"
        events = {
            e
            for (e,) in _rows(catalog, f"SELECT event_id FROM events WHERE native_id IN {natives}")
        }
        calls = {
            c for (c,) in _rows(catalog, f"SELECT call_id FROM usage WHERE native_id IN {natives}")
        }
        ids.append((events, calls))
    assert len(ids[0][0]) == 4 and len(ids[0][1]) == 2
    assert ids[0] == ids[1]


# --------------------------------------------------------------------------- documents


def test_an_edited_document_replaces_its_rows(tmp_path: Path) -> None:
    home = _home("legacy_document", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _totals(catalog) == EXPECTED["legacy_document"][0]
    (path,) = (home / ".gemini" / "tmp").rglob("session-*.json")
    doc = json.loads(path.read_text())
    messages = {m["id"]: m for m in doc["messages"]}
    messages["m5"]["content"] = "Done: the server now listens on :9191."
    messages["m5"]["tokens"] = _tokens(7000, 300, 5000, 20)
    del messages["m6"]
    messages["m7"] = {"id": "m7", "timestamp": "2026-05-01T09:04:00.000Z", "type": "user",
                      "content": "thanks"}  # fmt: skip
    messages["m8"] = {"id": "m8", "timestamp": "2026-05-01T09:04:05.000Z", "type": "gemini",
                      "content": "You're welcome.", "model": "gemini-2.5-flash",
                      "tokens": _tokens(1000, 10)}  # fmt: skip
    doc["messages"] = list(messages.values())
    doc["lastUpdated"] = "2026-05-01T09:04:05.000Z"
    path.write_text(json.dumps(doc, indent=2))
    result = _import(home, catalog)
    assert [s.planned.continuity for s in result.sources] == ["updated"]
    # m2 1104/4096/450/310 + m5' 2000/5000/320/20 + m8 1000/0/10/0
    assert _totals(catalog) == (3, 4104, 0, 9096, 780, 330)
    texts = _texts(catalog)
    assert (
        "Request cancelled." not in texts and "Done: the server now listens on :9090." not in texts
    )
    assert {"Done: the server now listens on :9191.", "thanks", "You're welcome."} <= texts
    assert _kinds(catalog) == {"prompt": 3, "response": 3, "reasoning": 1, "tool_call": 2,
                               "tool_result": 2, "system": 1}  # fmt: skip
    assert _rows(catalog, "SELECT prompts, events, CAST(updated_at AS VARCHAR) FROM sessions") == [
        (3, 12, "2026-05-01 09:04:05+00")
    ]


def test_document_repeated_ids_last_copy_wins(tmp_path: Path) -> None:
    home = _home("legacy_document", tmp_path)
    (path,) = (home / ".gemini" / "tmp").rglob("session-*.json")
    doc = json.loads(path.read_text())
    doc["messages"].append({**doc["messages"][1], "tokens": _tokens(5200, 400, 4096, 310)})
    path.write_text(json.dumps(doc))
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    # m2's last copy: 1104/4096/710/310 (output 400 + 310) + m5 1050/5000/200/0
    assert _totals(catalog) == (2, 2154, 0, 9096, 910, 310)


# --------------------------------------------------------------------------- versions


def test_known_versions_import(tmp_path: Path) -> None:
    home = _home("jsonl_append_log", tmp_path)
    path = _log(home)
    first, rest = path.read_bytes().split(b"\n", 1)
    meta = orjson.loads(first)
    path.write_bytes(orjson.dumps({**meta, "version": "1.4"}) + b"\n" + rest)
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _totals(catalog) == EXPECTED["jsonl_append_log"][0]


def test_an_unknown_major_version_mid_log_refuses_the_rest(tmp_path: Path) -> None:
    home = _home("rewind", tmp_path)
    path = _log(home)
    lines = path.read_bytes().splitlines(keepends=True)
    meta = orjson.loads(lines[0])
    path.write_bytes(
        b"".join([*lines[:3], orjson.dumps({**meta, "version": 3}) + b"\n", *lines[3:]])
    )
    catalog = tmp_path / "c.duckdb"
    result = _import(home, catalog)
    assert result.exit_code == 1 and result.refused[0].code == "SCHEMA_DRIFT"
    # the clean prefix (m1, m2) is kept; nothing after the drifting line
    assert _totals(catalog) == (1, 1000, 0, 0, 10, 0)
    assert _rows(catalog, "SELECT status FROM sources") == [("refused",)]


def test_an_unknown_major_version_refuses_a_document(tmp_path: Path) -> None:
    home = _home("legacy_document", tmp_path)
    (path,) = (home / ".gemini" / "tmp").rglob("session-*.json")
    path.write_text(json.dumps({**json.loads(path.read_text()), "version": 2}))
    result = _import(home, tmp_path / "c.duckdb")
    assert result.exit_code == 1 and result.refused[0].code == "SCHEMA_DRIFT"


# --------------------------------------------------------------------------- sessions


def test_subagent_is_its_own_session_linked_to_its_parent(tmp_path: Path) -> None:
    home = _home("subagent", tmp_path)
    sub = next(s for s in _sources(home) if len(s.path.relative_to(s.root).parts) == 4)
    ctx = SPEC.format_of(sub).adapter.locate(sub)
    assert (ctx.session_id, ctx.parent_session_id) == (
        "8a9b0c1d-0000-4000-8000-000000002002",
        "2b3c4d5e-0000-4000-8000-000000002001",
    )
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _rows(catalog, "SELECT session_id, parent_session_id, project_path, tool_calls "
                          "FROM sessions ORDER BY started_at") == [
        ("2b3c4d5e-0000-4000-8000-000000002001", None, "/home/dev/api-gateway", 1),
        ("8a9b0c1d-0000-4000-8000-000000002002", "2b3c4d5e-0000-4000-8000-000000002001",
         "/home/dev/api-gateway", 1),
    ]  # fmt: skip
    per_session = _rows(catalog, "SELECT session_id, count(*), sum(input_tokens) FROM usage "
                                 "GROUP BY ALL ORDER BY 1")  # fmt: skip
    assert per_session == [
        ("2b3c4d5e-0000-4000-8000-000000002001", 2, 3600),
        ("8a9b0c1d-0000-4000-8000-000000002002", 2, 4452),
    ]


def test_project_paths_from_markers_projects_json_and_hashes(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(_home("project_root_and_projects_json", tmp_path), catalog)
    assert dict(_rows(catalog, "SELECT session_id, project_path FROM sessions")) == {
        "aaaa0001-0000-4000-8000-000000004001": "/home/dev/alpha",  # .project_root
        "bbbb0001-0000-4000-8000-000000004002": "/home/dev/beta",  # SHA-256 dir, projects.json
        "cccc0001-0000-4000-8000-000000004003": "/home/dev/gamma",  # slug in projects.json
        "dddd0001-0000-4000-8000-000000004004": None,  # a hash nobody lists
    }


def test_project_resolver_precedence(tmp_path: Path) -> None:
    root = tmp_path / ".gemini" / "tmp"
    (root / "app").mkdir(parents=True)
    (tmp_path / ".gemini" / "projects.json").write_text(
        json.dumps({"projects": {"/home/dev/listed": "app", "/home/dev/hashed": "other"}})
    )
    resolver = gemini.ProjectResolver()
    assert resolver.resolve(root, "app") == "/home/dev/listed"
    (root / "app" / ".project_root").write_text("/home/dev/marked\n")
    assert resolver.resolve(root, "app") == "/home/dev/marked"  # the marker wins
    (root / "app" / ".project_root").write_text("relative/path\n")
    assert resolver.resolve(root, "app") == "/home/dev/listed"  # not absolute: ignored
    hashed = hashlib.sha256(b"/home/dev/hashed").hexdigest()
    assert resolver.resolve(root, hashed) == "/home/dev/hashed"
    assert resolver.resolve(root, "unlisted", hashed) == "/home/dev/hashed"  # projectHash
    assert resolver.resolve(root, "unlisted") is None
    (tmp_path / ".gemini" / "projects.json").write_text("{not json")
    assert resolver.resolve(root, "unlisted", hashed) is None
    outside = tmp_path / "elsewhere"
    outside.write_text("/home/dev/escaped\n")
    (root / "linked").mkdir()
    (root / "linked" / ".project_root").symlink_to(outside)
    assert resolver.resolve(root, "linked") is None  # a symlinked marker is not followed


# --------------------------------------------------------------------------- demo


def _reference_messages(home: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Gemini CLI's loader semantics replayed independently of the adapter: a map of
    message id → last copy (first position kept), ``$rewindTo`` deletes that id and all
    after it; ``$set.messages`` adds unseen ids; a document whose log exists is skipped.
    Returns the surviving messages by (session id, message id)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    tmp = home / ".gemini" / "tmp"
    for path in sorted(tmp.rglob("*.jsonl")):
        msgs: dict[str, dict[str, Any]] = {}
        sid = ""
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if isinstance(rec.get("$rewindTo"), str):
                order = list(msgs)
                for mid in order[order.index(rec["$rewindTo"]) :]:
                    del msgs[mid]
            elif isinstance(rec.get("id"), str):
                msgs[rec["id"]] = rec
            elif isinstance(rec.get("$set"), dict):
                for m in rec["$set"].get("messages", []):
                    msgs.setdefault(m["id"], m)
            elif "sessionId" in rec:
                sid = rec["sessionId"]
        latest.update({(sid, mid): m for mid, m in msgs.items()})
    for path in sorted(tmp.rglob("session-*.json")):
        if not path.with_name(path.name + "l").exists():
            doc = json.loads(path.read_text())
            latest.update({(doc["sessionId"], m["id"]): m for m in doc["messages"]})
    return latest


def _reference_totals(home: Path) -> tuple[int, int, int, int, int, int]:
    """The DESIGN §4 rule over :func:`_reference_messages`."""
    calls = [m["tokens"] for m in _reference_messages(home).values() if m.get("tokens")]
    return (
        len(calls),
        sum(max(t["input"] - t["cached"], 0) + t["tool"] for t in calls),
        0,
        sum(t["cached"] for t in calls),
        sum(t["output"] + t["thoughts"] for t in calls),
        sum(t["thoughts"] for t in calls),
    )


def _digest(home: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(home)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_demo_home_is_deterministic_and_imports_exactly(tmp_path: Path) -> None:
    stats = generate_gemini_home(tmp_path / "a")
    again = generate_gemini_home(tmp_path / "b")
    assert stats == again and _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert stats.sessions == 7  # 6 sessions + 1 subagent
    home = tmp_path / "a"
    files = [p.relative_to(home / ".gemini" / "tmp") for p in (home / ".gemini" / "tmp").rglob("*")]
    assert any(p.suffix == ".json" for p in files) and any(len(p.parts) == 4 for p in files)
    raw = b"".join(p.read_bytes() for p in (home / ".gemini" / "tmp").rglob("*.jsonl"))
    assert b'"$rewindTo"' in raw and b'"$set"' in raw and b'"messages"' in raw
    catalog = tmp_path / "c.duckdb"
    result = _import(home, catalog)
    assert result.exit_code == 0 and result.totals()["rejected"] == 0
    assert _totals(catalog) == _reference_totals(home)
    days = {d for (d,) in _rows(catalog, "SELECT DISTINCT CAST(day AS VARCHAR) FROM usage_daily")}
    assert len(days) >= 3
    assert _rows(catalog, "SELECT count(*) FROM sessions WHERE project_path IS NULL") == [(0,)]
    assert _rows(catalog, "SELECT count(*) FROM sessions WHERE parent_session_id IS NOT NULL") == [
        (1,)
    ]


def test_demo_corpus_reaches_its_target_and_imports_exactly(tmp_path: Path) -> None:
    stats = generate_gemini_corpus(tmp_path / "a", seed=3, target_lines=3_000)
    assert stats.lines >= 3_000 and stats.sessions > 1
    lines = sum(len(p.read_bytes().splitlines()) for p in (tmp_path / "a").rglob("*.jsonl"))
    assert lines == stats.lines
    assert generate_gemini_corpus(tmp_path / "b", seed=3, target_lines=3_000) == stats
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    catalog = tmp_path / "c.duckdb"
    assert _import(tmp_path / "a", catalog).exit_code == 0
    assert _totals(catalog) == _reference_totals(tmp_path / "a")


@pytest.mark.slow
def test_withdrawals_sharing_a_commit_give_the_catalog_of_one_commit_per_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece that withdraws rows joins the pieces queued before it, even those with
    rows of the sessions it withdraws from (the withdrawal is applied to their queued
    rows), and the pieces after it share its commit too: the catalog equals one where
    every piece is committed alone."""
    from agentlake.ingest import committer as running

    home = tmp_path / "home"
    generate_gemini_home(home, sessions=5)  # every kind of withdrawal: sessions 1, 3 and 4
    commits: list[list[bool]] = []  # per commit, whether each of its pieces withdraws
    submit, init = running.Committer.submit, running.Committer.__init__
    unbounded = False  # commits without a size limit: only withdrawals end them

    def recorded(self: Any) -> None:
        if self.pending:
            commits.append([bool(raw and raw.retracts) for _, raw, _, _ in self.pending])
        submit(self)

    def made(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if unbounded:
            self.max_records, self.max_bytes = 1 << 60, None

    monkeypatch.setattr(running.Committer, "submit", recorded)
    monkeypatch.setattr(running.Committer, "__init__", made)
    catalogs = {}
    for name, limits in (
        ("alone", ExtractLimits(batch_lines=1)),  # one line per piece and per commit
        ("files", ExtractLimits()),  # whole files
        ("lines", ExtractLimits(batch_lines=1)),  # one line per piece, commits unbounded
    ):
        commits.clear()
        unbounded = name == "lines"
        catalogs[name] = tmp_path / f"{name}.duckdb"
        import_with(home, catalogs[name], limits)
        if name == "files":  # withdrawing files shared commits with files before and after
            assert any(True in c[:-1] for c in commits)
            assert any(True in c[1:] for c in commits)
        if name == "lines":  # withdrawals of the lines queued before them end no commit
            assert len(commits) == 1 and any(commits[0][1:])
    tables = ("sessions", "events", "usage", "search_postings", "search_terms")
    for name in ("files", "lines"):
        assert snapshot(catalogs[name], tables) == snapshot(catalogs["alone"], tables), name
    assert _totals(catalogs["files"]) == _reference_totals(home)


def test_a_withdrawal_reaching_another_queued_file_gives_the_catalog_of_separate_commits(
    tmp_path: Path,
) -> None:
    """A log that rewinds messages a document of the same session also holds, read in
    the same commit as that document: the withdrawal takes the document's queued rows
    of those messages and its time hints (its later ``lastUpdated``), as committing the
    document first and then recomputing the session would; the catalog equals the one
    of a commit per line."""
    sid, t = "7c1f0d9e-0000-4000-8000-00000000c001", "2026-05-01T09:00:%02d.000Z"
    chats = tmp_path / "home" / ".gemini" / "tmp" / ("ab" * 32) / "chats"
    chats.mkdir(parents=True)
    m1 = {"id": "m1", "timestamp": t % 1, "type": "user", "content": "explain main.go"}
    m2 = {"id": "m2", "timestamp": t % 2, "type": "gemini", "content": "It serves HTTP.",
          "model": "gemini-2.5-pro", "tokens": _tokens(900, 40)}  # fmt: skip
    document = {"sessionId": sid, "projectHash": "ab" * 32, "startTime": t % 0,
                "lastUpdated": "2026-05-01T18:00:00.000Z", "messages": [m1, m2]}  # fmt: skip
    (chats / "session-2026-05-01T09-00-7c1f0d9e.json").write_bytes(orjson.dumps(document))
    log = [{"sessionId": sid, "projectHash": "ab" * 32, "startTime": t % 0, "lastUpdated": t % 0},
           m1, m2, {"$rewindTo": "m2"},
           {"id": "m3", "timestamp": t % 5, "type": "user", "content": "explain util.go"},
           {"$set": {"lastUpdated": t % 6}}]  # fmt: skip
    (chats / "session-2026-05-01T09-05-7c1f0d9e.jsonl").write_bytes(
        b"".join(orjson.dumps(r) + b"\n" for r in log)
    )
    catalogs = {name: tmp_path / f"{name}.duckdb" for name in ("alone", "files")}
    import_with(tmp_path / "home", catalogs["alone"], ExtractLimits(batch_lines=1))
    import_with(tmp_path / "home", catalogs["files"], ExtractLimits())
    tables = ("sessions", "events", "usage")
    assert snapshot(catalogs["files"], tables) == snapshot(catalogs["alone"], tables)
    assert _rows(catalogs["files"], "SELECT DISTINCT native_id FROM events ORDER BY 1") == [
        ("m1",), ("m3",)
    ]  # fmt: skip
    (updated,) = _rows(catalogs["files"], "SELECT CAST(updated_at AS VARCHAR) FROM sessions")
    assert not updated[0].startswith("2026-05-01 18:")


# --------------------------------------------------------------------------- property


def _random_log(rng: random.Random) -> list[dict[str, Any]]:
    """A random but well-formed session log: new messages, additive and changing
    re-writes of the latest and of older messages, rewinds and $set records."""
    records: list[dict[str, Any]] = [
        {"sessionId": "ffff0000-0000-4000-8000-000000009001", "projectHash": "0" * 64,
         "startTime": "2026-05-20T10:00:00.000Z", "lastUpdated": "2026-05-20T10:00:00.000Z"}
    ]  # fmt: skip
    alive: list[str] = []
    copies: dict[str, dict[str, Any]] = {}
    for n in range(40):
        ts = f"2026-05-20T10:{n:02d}:00.000Z"
        roll = rng.random()
        if roll < 0.45 or not alive:
            mid = f"m{n}"
            msg: dict[str, Any] = {"id": mid, "timestamp": ts, "type": rng.choice(("user", "gemini", "info")),
                                   "content": f"text {n}", "model": "gemini-2.5-flash"}  # fmt: skip
            if msg["type"] == "gemini" and rng.random() < 0.7:
                msg["tokens"] = _tokens(rng.randint(100, 900), rng.randint(1, 50), rng.choice((0, 64)),
                                        rng.randint(0, 9), rng.randint(0, 5))  # fmt: skip
            alive.append(mid)
        elif roll < 0.75:
            mid = alive[-1] if rng.random() < 0.7 else rng.choice(alive)
            msg = dict(copies[mid])
            change = rng.random()
            if change < 0.3 and msg["type"] == "gemini":
                msg["tokens"] = _tokens(rng.randint(100, 900), rng.randint(1, 50))
            elif change < 0.6:
                msg["toolCalls"] = [*msg.get("toolCalls", []), {
                    "id": f"c{n}", "name": "read_file", "args": {"n": n}, "status": "success",
                    "result": [{"functionResponse": {"response": {"output": f"out {n}"}}}]}]  # fmt: skip
            elif change < 0.8:
                msg["content"] = f"edited {n}"
        elif roll < 0.85:
            target = rng.choice(alive)
            records.append({"$rewindTo": target})
            del alive[alive.index(target) :]
            continue
        else:
            records.append({"$set": {"lastUpdated": ts, "summary": f"title {n}"}})
            continue
        copies[msg["id"]] = msg
        records.append(msg)
    return records


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_logs_split_anywhere_equal_one_import_and_the_reference(
    seed: int, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    home = tmp_path / "home"
    path = home / ".gemini" / "tmp" / "prop" / "chats" / "session-2026-05-20T10-00-ffff0000.jsonl"
    path.parent.mkdir(parents=True)
    data = b"".join(orjson.dumps(r) + b"\n" for r in _random_log(rng))
    path.write_bytes(data)
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    assert _totals(clean) == _reference_totals(home)
    lines = data.splitlines(keepends=True)
    cuts = sorted(rng.sample(range(1, len(lines)), 4))
    stepwise = tmp_path / "stepwise.duckdb"
    for cut in [*cuts, len(lines)]:
        path.write_bytes(b"".join(lines[:cut]))
        assert _import(home, stepwise).exit_code == 0
    assert snapshot(stepwise, TABLES) == snapshot(clean, TABLES)
    # the surviving messages' latest text and tool calls, nothing else
    survivors = _reference_messages(home).values()
    content = _rows(
        clean, "SELECT native_id, text FROM events WHERE kind IN ('prompt', 'response', 'system')"
    )
    assert sorted(content) == sorted((m["id"], m["content"]) for m in survivors)
    calls = _rows(clean, "SELECT count(*) FROM events WHERE kind = 'tool_call'")[0][0]
    assert calls == sum(len(m.get("toolCalls", [])) for m in survivors if m["type"] == "gemini")
