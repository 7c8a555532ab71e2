"""The copilot provider: Copilot CLI ``events.jsonl`` (every event type, the shutdown
snapshot token rule, drift, bad lines) and VS Code's persisted chat sessions.

Token rule (provider-formats-more §1.1): each ``session.shutdown`` snapshot is one usage
row per (session, model), the latest snapshot in the file replacing the earlier ones;
``input = inputTokens − cacheReadTokens − cacheWriteTokens``; per-message
``outputTokens`` are never calls.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, cast

import pytest

from agentlake.extract.adapter import FormatDrift, InvalidRecord, SourceContext
from agentlake.extract.providers import (
    by_id,
    copilot,
    copilot_discovery,
    copilot_fields,
    copilot_vscode,
    resolve,
)
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportResult
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows, import_provider

SPEC = by_id("copilot")
HOME = FIXTURES / "copilot" / "contract_all_record_types"
SESSION_A = "c0c0a111-2222-4333-8444-000000000001"
EVENTS_A = HOME / ".copilot" / "session-state" / SESSION_A / "events.jsonl"
WORKSPACE = ".config/Code/User/workspaceStorage/9f8e7d6c5b4a3f2e1d0c"
CHAT_C = HOME / WORKSPACE / "chatSessions" / "d0d0c333-2222-4333-8444-000000000003.json"

AGENT_SESSIONS = CONFORMANCE / "jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/copilot"
CCUSAGE = CONFORMANCE / "ccusage__ccusage/rust/adapters/copilot/tests/fixtures/session-state"
SPLITRAIL = CONFORMANCE / "Piebald-AI__splitrail/src/analyzers/tests/source_data/copilot.json"

# --------------------------------------------------------------------------- helpers


def _import(home: Path, catalog: Path, env: dict[str, str] | None = None) -> ImportResult:
    return import_provider("copilot", home, catalog, env)


_rows = catalog_rows


USAGE = (
    "SELECT model, input_tokens, cache_write_tokens, cache_read_tokens, output_tokens, "
    "reasoning_tokens FROM usage ORDER BY model"
)


def _ctx(session: str = "s1") -> SourceContext:
    return SourceContext(cast(SourceFile, None), session)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _map(records: list[dict[str, Any]], ctx: SourceContext | None = None) -> RowSink:
    """Map ``records`` with the CLI adapter at offsets 0, 100, 200, …"""
    ctx = ctx or _ctx()
    sink = RowSink()
    adapter = copilot.CopilotCliAdapter()
    for i, record in enumerate(records):
        adapter.map_record(record, i * 100, ctx, sink)
    return sink


def _events(sink: RowSink) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], sink.build().events.to_pylist())


def _record(kind: str, data: dict[str, Any], rid: str = "e1") -> dict[str, Any]:
    return {"type": kind, "data": data, "id": rid, "timestamp": "2026-04-02T10:00:00.000Z"}


# --------------------------------------------------------------------------- registry


def test_registry_row() -> None:
    assert resolve("github-copilot") is SPEC and SPEC.env_overrides == ("COPILOT_HOME",)
    assert [(f.name, f.position_kind) for f in SPEC.formats] == [
        ("copilot-cli-events", "byte-offset"),
        ("copilot-vscode-chat", "document"),
        ("copilot-chat-json-export", "document"),
    ]
    assert SPEC.capabilities == {"discover", "stream", "tokens"}


def test_roots_follow_copilot_home(tmp_path: Path) -> None:
    home = Path("/home/dev")
    default = copilot_discovery.roots(home, {})[0]
    assert default.path == home / ".copilot" / "session-state" and default.origin == "default"
    moved = copilot_discovery.roots(home, {"COPILOT_HOME": "/data/copilot"})[0]
    assert moved.path == Path("/data/copilot/session-state") and moved.origin == "COPILOT_HOME"
    relative = copilot_discovery.roots(home, {"COPILOT_HOME": "rel/copilot"})[0]
    assert relative.path == default.path and relative.warning
    vscode = {r.path for r in copilot_discovery.roots(home, {})[1:]}
    assert home / ".config/Code/User/workspaceStorage" in vscode
    assert home / ".config/VSCodium/User/globalStorage/emptyWindowChatSessions" in vscode
    assert home / "Library/Application Support/Code - Insiders/User/workspaceStorage" in vscode


def test_copilot_home_is_discovered(tmp_path: Path) -> None:
    data = tmp_path / "elsewhere"
    shutil.copytree(HOME / ".copilot", data)
    plan = make_plan({}, workspace="w", home=tmp_path / "empty", env={"COPILOT_HOME": str(data)},
                     providers=(SPEC,))  # fmt: skip
    assert sorted(s.path.name for s in plan.sources) == [
        "c0c0b222-2222-4333-8444-000000000002.jsonl",
        "events.jsonl",
    ]


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        (("abc", "events.jsonl"), True),
        (("abc.jsonl",), True),
        ((".jsonl",), False),
        (("abc", "workspace.yaml"), False),
        (("abc", "other.jsonl"), False),
        (("abc", "x", "events.jsonl"), False),
    ],
)
def test_cli_predicate(rel: tuple[str, ...], owned: bool) -> None:
    assert copilot_discovery.owns_events(rel) is owned


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        (("hash", "chatSessions", "id.json"), True),
        (("id.json",), True),
        (("hash", "chatSessions", "id.jsonl"), False),
        (("hash", "other", "id.json"), False),
        (("hash", "workspace.json", "x"), False),
    ],
)
def test_vscode_predicate(rel: tuple[str, ...], owned: bool) -> None:
    assert copilot_vscode.owns_session(rel) is owned


# --------------------------------------------------------------------------- CLI events


def test_every_event_type_of_the_fixture_session() -> None:
    """Each record of session A, by its id, maps to the rows the module docstring names."""
    records = _lines(EVENTS_A)
    ctx = _ctx("path-id")
    events = _events(_map(records, ctx))
    assert ctx.session_id == SESSION_A  # session.start's sessionId
    by_id: dict[str, list[tuple[Any, ...]]] = {}
    for e in events:
        by_id.setdefault(e["native_id"], []).append(
            (e["block_type"], e["role"], e["text"], e["tool_name"], e["tool_call_id"],
             e["is_error"], e["is_sidechain"])
        )  # fmt: skip
    assert by_id == {
        "a-02": [("system", "system", "Folder /home/dev/webshop has been added to trusted "
                  "folders.", None, None, None, False)],
        "a-03": [("system", "system", "You are the Copilot CLI. Work in /home/dev/webshop.",
                  None, None, None, False)],
        "a-04": [("text", "user", "Fix the failing cart test", None, None, None, False)],
        "a-06": [("thinking", "assistant", "The cart test fails; read the output first.",
                  None, None, None, False)],
        "a-07": [
            ("thinking", "assistant", "Check the test output before editing.", None, None,
             None, False),
            ("text", "assistant", "Running the tests first.", None, None, None, False),
            ("tool_use", "assistant", None, "bash", "call_a1", None, False),
        ],
        # a-08, the execution start of call_a1, is the same call: not a second event
        "a-09": [("system", "system", "preToolUse hook started", "preToolUse", None, None,
                  False)],
        "a-10": [("system", "system", "preToolUse hook ended", "preToolUse", None, False,
                  False)],
        "a-11": [("tool_result", "tool", "1 failing: cart total rounds down", None, "call_a1",
                  True, False)],
        "a-12": [("tool_use", "assistant", None, "task", "call_a2", None, False)],
        "a-13": [("system", "system", "Explore started: Explores the code base", "explore",
                  "call_a2", None, False)],
        "a-14": [("text", "user", "Find where the cart total is computed", None, None, None,
                  True)],
        "a-15": [
            ("text", "assistant", "The total is computed in cart.js.", None, None, None, True),
            ("tool_use", "assistant", None, "view", "call_s1", None, True),
        ],
        "a-16": [("tool_result", "tool", "export function total(items) { return "
                  "Math.floor(sum(items)); }", None, "call_s1", False, True)],
        "a-17": [("system", "system", "Explore completed", "explore", "call_a2", None, False)],
        "a-18": [("tool_result", "tool", "The total is computed in cart.js.", None, "call_a2",
                  False, False)],
        "a-19": [("text", "assistant", "Fixed the rounding in cart.js.", None, None, None,
                  False)],
        "a-25": [("text", "user", "Now add a regression test", None, None, None, False)],
        "a-26": [("text", "assistant", "Added a regression test for the rounding.", None,
                  None, None, False)],
        "a-27": [("system", "system", "context truncated: 1500 tokens removed", None, None,
                  None, False)],
        "a-28": [("system", "system", "Background agent explore finished", None, None, None,
                  False)],
        "a-29": [("system", "system", "Rate limited, retrying", None, None, True, False)],
        "a-30": [("system", "system", "user cancelled the turn", None, None, None, False)],
    }  # fmt: skip
    models = {e["native_id"]: e["model"] for e in events if e["role"] == "assistant"}
    assert models["a-07"] == "gpt-5-mini" and models["a-15"] == "claude-haiku-4.5"
    assert models["a-26"] == "claude-sonnet-4.5"


def test_outcomes_of_records_without_rows() -> None:
    adapter, sink, ctx = copilot.CopilotCliAdapter(), RowSink(), _ctx()
    outcome = adapter.map_record
    assert outcome(_record("assistant.turn_start", {"model": "gpt-5"}), 0, ctx, sink) == "ignored"
    assert ctx.memo["model"] == "gpt-5"
    assert outcome(_record("assistant.turn_end", {}), 1, ctx, sink) == "ignored"
    assert outcome(_record("session.usage_checkpoint", {"totalNanoAiu": 1}), 2, ctx, sink) == (
        "ignored"
    )
    assert outcome(_record("x.future", {}), 3, ctx, sink) == "unknown"
    assert outcome({"data": {}}, 4, ctx, sink) == "unknown"
    assert sink.event_count == 0


def test_session_fields() -> None:
    sink = _map(_lines(EVENTS_A), _ctx())
    (row,) = sink.build().sessions.to_pylist()
    assert row["project_path"] == "/home/dev/webshop"  # the resume's cwd does not move it
    assert row["git_branch"] == "fix-cart" and row["cli_version"] == "1.0.40"
    assert row["model"] == "claude-sonnet-4.5" and row["started_at"] == "2026-04-02T10:00:00.000Z"
    legacy = HOME / ".copilot/session-state/c0c0b222-2222-4333-8444-000000000002.jsonl"
    (row,) = _map(_lines(legacy)).build().sessions.to_pylist()
    assert row["project_path"] == "/home/dev/notes" and row["cli_version"] == "0.0.420"


def test_execution_start_before_the_request_is_still_one_call() -> None:
    args = {"command": "ls"}
    events = _events(_map([
        _record("tool.execution_start", {"toolCallId": "c1", "toolName": "bash",
                                         "arguments": args}, "e1"),
        _record("assistant.message", {"content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "bash", "arguments": json.dumps(args)}]}, "e2"),
        _record("tool.execution_start", {"toolCallId": "c2", "toolName": "view",
                                         "arguments": {"path": "a"}}, "e3"),
    ]))  # fmt: skip
    assert [(e["native_id"], e["tool_call_id"], e["tool_input"]) for e in events] == [
        ("e1", "c1", '{"command":"ls"}'),
        ("e3", "c2", '{"path":"a"}'),
    ]


@pytest.mark.parametrize(
    ("arguments", "stored"),
    [({"a": 1}, '{"a":1}'), ('{"a":1}', '{"a":1}'), ("not json", '"not json"'), (None, None)],
)
def test_tool_arguments_object_or_json_string(arguments: Any, stored: str | None) -> None:
    assert copilot_fields.tool_input(arguments) == stored


def test_tool_result_falls_back_to_the_error_message() -> None:
    (event,) = _events(_map([_record("tool.execution_complete", {
        "toolCallId": "c1", "success": False, "error": {"message": "denied"}})]))  # fmt: skip
    assert (event["text"], event["is_error"]) == ("denied", True)


@pytest.mark.parametrize(
    "record",
    [
        _record("user.message", {"content": 3}),
        _record("assistant.message", {"content": "x", "toolRequests": {}}),
        _record("assistant.reasoning", {"content": ["x"]}),
        _record("tool.execution_complete", {"success": "yes"}),
        _record("session.start", {"context": "here"}),
        _record("session.start", {"version": [1]}),
        _record("session.shutdown", {"modelMetrics": []}),
        _record("session.shutdown", {"modelMetrics": {"m": {"usage": 5}}}),
        _record("session.shutdown", {"modelMetrics": {"m": {"usage": {"inputTokens": 2**60}}}}),
        {"type": "user.message", "data": "text"},
    ],
)
def test_impossible_field_types_are_invalid_and_emit_nothing(record: dict[str, Any]) -> None:
    sink = RowSink()
    with pytest.raises(InvalidRecord):
        copilot.CopilotCliAdapter().map_record(record, 0, _ctx(), sink)
    tables = sink.build()
    assert tables.events.num_rows == tables.usage.num_rows == 0


@pytest.mark.parametrize("version", [2, "2.0.0", 0, "v3"])
def test_unknown_major_version_is_drift(version: Any) -> None:
    with pytest.raises(FormatDrift):
        _map([_record("session.start", {"version": version})])


@pytest.mark.parametrize("version", [1, "1.4.0", None])
def test_known_or_absent_version_is_accepted(version: Any) -> None:
    _map([_record("session.start", {"version": version})])


def test_drift_refuses_the_source_and_keeps_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "copilot" / "contract_drift", home)
    result = _import(home, tmp_path / "c.duckdb")
    assert result.exit_code == 1 and {s.code for s in result.refused} == {"SCHEMA_DRIFT"}
    assert len(result.refused) == 2  # the CLI log (version 2) and the chat document (4)
    assert _rows(tmp_path / "c.duckdb", "SELECT count(*) FROM events") == [(0,)]


def test_bad_lines_are_rejected_and_the_rest_imports(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / ".copilot" / "session-state" / "s-bad" / "events.jsonl"
    path.parent.mkdir(parents=True)
    good = [json.dumps(_record("user.message", {"content": f"p{i}"}, f"e{i}")) for i in range(3)]
    path.write_bytes(
        b"not json\n" + good[0].encode() + b"\n\xff\xfe\n[1, 2]\n"
        + json.dumps(_record("user.message", {"content": 7}, "bad")).encode() + b"\n"
        + good[1].encode() + b"\n" + good[2].encode()  # torn: no newline yet
    )  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert dict(_rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL")) == {
        "MALFORMED": 2, "BAD_ENCODING": 1, "INVALID_RECORD": 1,
    }  # fmt: skip
    assert _rows(catalog, "SELECT text FROM events ORDER BY seq") == [("p0",), ("p1",)]
    with path.open("ab") as fh:
        fh.write(b"\n")
    _import(home, catalog)
    assert _rows(catalog, "SELECT count(*) FROM events") == [(3,)]


# --------------------------------------------------------------------------- tokens


def test_a_resumed_session_counts_only_its_later_shutdown_totals(tmp_path: Path) -> None:
    """Session A shuts down, resumes and shuts down again: the second, cumulative snapshot
    replaces the first, in one run and across runs."""
    home = tmp_path / "home"
    path = home / ".copilot" / "session-state" / SESSION_A / "events.jsonl"
    path.parent.mkdir(parents=True)
    data = EVENTS_A.read_bytes()
    cut = data.index(b'"type":"session.resume"')
    cut = data.rindex(b"\n", 0, cut) + 1
    path.write_bytes(data[:cut])
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    first = [
        ("claude-haiku-4.5", 1200, 0, 0, 80, 0),
        ("gpt-5-mini", 1500, 500, 3000, 300, 100),
    ]
    assert _rows(catalog, USAGE) == first
    with path.open("ab") as fh:
        fh.write(data[cut:])
    _import(home, catalog)
    later = [
        ("claude-haiku-4.5", 1200, 0, 0, 80, 0),
        ("claude-sonnet-4.5", 500, 1000, 2500, 200, 0),  # "-1m-internal" stripped
        ("gpt-5-mini", 1900, 500, 3600, 350, 120),
    ]
    assert _rows(catalog, USAGE) == later
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    assert _rows(clean, USAGE) == later
    assert _rows(clean, "SELECT count(*) FROM usage WHERE session_id = "
                       f"'{SESSION_A}'") == [(3,)]  # fmt: skip


def test_totals_started_again_keep_the_earlier_segment() -> None:
    """A snapshot smaller than the one before cannot be cumulative: older builds started
    their totals again on resume, so each segment keeps a row (latest copy of each)."""
    snap = [
        {"inputTokens": 100, "outputTokens": 10},
        {"inputTokens": 150, "outputTokens": 12},  # grows: replaces the first
        {"inputTokens": 40, "outputTokens": 4},  # smaller: a new segment
        {"inputTokens": 60, "outputTokens": 9},  # grows: replaces the third
    ]
    sink = _map([_record("session.shutdown", {"modelMetrics": {"gpt-5": {"usage": u}}}, f"e{i}")
                 for i, u in enumerate(snap)])  # fmt: skip
    rows = [(r["native_id"], r["input_tokens"], r["rank"]) for r in sink.build().usage.to_pylist()]
    assert rows == [
        ("session-total:gpt-5", 100, 0),
        ("session-total:gpt-5", 150, 100),
        ("session-total:gpt-5#1", 40, 200),
        ("session-total:gpt-5#1", 60, 300),
    ]


def test_sessions_with_the_same_model_count_apart(tmp_path: Path) -> None:
    """Shutdown rows are flagged per session and identified within their session."""
    state = tmp_path / "home" / ".copilot" / "session-state"
    shutdown = _record("session.shutdown", {"modelMetrics": {
        "gpt-5": {"usage": {"inputTokens": 100, "outputTokens": 10}}}})  # fmt: skip
    for sid in ("s-one", "s-two"):
        (state / sid).mkdir(parents=True)
        (state / sid / "events.jsonl").write_text(json.dumps(shutdown) + "\n")
    catalog = tmp_path / "c.duckdb"
    _import(tmp_path / "home", catalog)
    assert _rows(catalog, "SELECT session_id, input_tokens, per_session FROM usage "
                          "ORDER BY 1") == [("s-one", 100, True), ("s-two", 100, True)]  # fmt: skip


def test_per_message_output_tokens_are_not_calls() -> None:
    records = [r for r in _lines(EVENTS_A) if r["type"] != "session.shutdown"]
    assert any("outputTokens" in r["data"] for r in records)
    assert _map(records).build().usage.num_rows == 0


def test_shutdown_row_shape() -> None:
    sink = _map([_record("session.shutdown", {"modelMetrics": {
        "gpt-5": {"usage": {"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 70,
                            "cacheWriteTokens": 40, "reasoningTokens": 50}},
        "gpt-4.1": {"requests": 3}}})])  # fmt: skip
    (row,) = sink.build().usage.to_pylist()
    assert (row["native_id"], row["message_id"], row["model"], row["rank"]) == (
        "session-total:gpt-5", None, "gpt-5", 0,
    )  # fmt: skip
    # input includes both cache kinds (clamped at 0); reasoning is part of output
    assert (row["input_tokens"], row["cache_read_tokens"], row["cache_write_tokens"]) == (0, 70, 40)
    assert (row["output_tokens"], row["reasoning_tokens"]) == (10, 10)


@pytest.mark.parametrize(
    ("name", "priced"),
    [("claude-opus-4.6-1m", "claude-opus-4.6"), ("x-1m-internal", "x"), ("gpt-5", "gpt-5")],
)
def test_internal_model_suffixes_are_stripped(name: str, priced: str) -> None:
    assert copilot_fields.pricing_model(name) == priced


# --------------------------------------------------------------------------- VS Code


def test_vscode_session_document() -> None:
    source = next(
        s.source
        for s in make_plan({}, workspace="w", home=HOME, env={}, providers=(SPEC,)).sources
        if s.source and s.source.path.name == CHAT_C.name
    )
    adapter = copilot_vscode.CHAT_ADAPTER
    ctx, sink = adapter.locate(source), RowSink()
    assert adapter.map_document(json.loads(CHAT_C.read_text()), ctx, sink) == 2
    tables = sink.build()
    assert tables.usage.num_rows == 0  # VS Code chat sessions record no tokens
    rows = [(e["native_id"], e["block_type"], e["role"], e["text"], e["tool_name"],
             e["tool_input"]) for e in tables.events.to_pylist()]  # fmt: skip
    assert rows == [
        ("request_c1:request", "text", "user", "Where is the config loaded?", None, None),
        ("request_c1:response", "thinking", "assistant", "Look for loadConfig call sites.",
         None, None),
        ("request_c1:response", "text", "assistant", "Searching for the loader. ", None, None),
        ("request_c1:response", "text", "assistant",
         "The config is loaded in `config.ts` at startup.", None, None),
        ("request_c1:call:toolu_c1__vscode-1", "tool_use", "assistant", None, "grep_search",
         '{"query":"loadConfig"}'),
        ("request_c1:call:toolu_c1__vscode-1", "tool_result", "tool",
         "1 match\nsrc/config.ts:3: export function loadConfig()", None, None),
        ("request_c2:request", "text", "user", "Thanks, that is all", None, None),
        ("request_c2:response", "text", "assistant", "Glad to help.", None, None),
        ("request_c2:error", "system", "system",
         "Response was cut short by the model's output limit", None, None),
    ]  # fmt: skip
    (session,) = tables.sessions.to_pylist()
    assert session["project_path"] == "/home/dev/api server"
    assert (session["title"], session["title_rank"]) == ("Config loading", 3)
    assert session["started_at"] == "2026-04-03T10:00:00.000Z"
    assert session["model"] == "copilot/gpt-4.1"


def test_vscode_without_rounds_keeps_the_invocations_as_tool_calls() -> None:
    doc = {"requests": [{"requestId": "r1", "message": "plain prompt", "response": [
        {"kind": "toolInvocationSerialized", "toolId": "copilot_readFile", "toolCallId": "t1",
         "invocationMessage": "Reading a.txt"}, {"value": "done"}]}]}  # fmt: skip
    root = Path("/home/dev/.config/Code/User/globalStorage/emptyWindowChatSessions")
    source = SourceFile("copilot", root / "file-stem.json", root, "document",
                        "copilot-vscode-chat", 0, 0, 0, 0)  # fmt: skip
    sink, adapter = RowSink(), copilot_vscode.CHAT_ADAPTER
    adapter.map_document(doc, adapter.locate(source), sink)
    events = sink.build().events.to_pylist()
    assert [(e["block_type"], e["text"], e["tool_name"], e["tool_call_id"]) for e in events] == [
        ("text", "plain prompt", None, None),
        ("tool_use", "Reading a.txt", "copilot_readFile", "t1"),
        ("text", "done", None, None),
    ]
    assert {e["session_id"] for e in events} == {"file-stem"}


@pytest.mark.parametrize(
    "document", [[], {"requests": {}}, {"requests": [1]}, {"version": "3", "requests": []}]
)
def test_vscode_not_a_session_is_invalid(document: Any) -> None:
    with pytest.raises(InvalidRecord):
        copilot_vscode.CHAT_ADAPTER.map_document(document, _ctx(), RowSink())


def test_vscode_unknown_version_is_drift() -> None:
    with pytest.raises(FormatDrift):
        copilot_vscode.CHAT_ADAPTER.map_document({"version": 4, "requests": []}, _ctx(), RowSink())


# --------------------------------------------------------------------------- conformance


@pytest.mark.skipif(not AGENT_SESSIONS.is_dir(), reason="conformance data not present")
def test_conformance_agent_sessions_cli_files(tmp_path: Path) -> None:
    """Copilot CLI 0.0.420–1.0.77 files (flat and directory layouts) import without a
    reject; ids come from session.start."""
    state = tmp_path / "home" / ".copilot" / "session-state"
    state.mkdir(parents=True)
    for name in ("small.jsonl", "large.jsonl", "schema_drift.jsonl"):
        shutil.copy(AGENT_SESSIONS / name, state / name)
    shutil.copytree(AGENT_SESSIONS / "subdir_v1", state, dirs_exist_ok=True)
    catalog = tmp_path / "c.duckdb"
    assert _import(tmp_path / "home", catalog).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]
    sessions = dict(_rows(catalog, "SELECT session_id, cli_version FROM sessions"))
    assert sessions == {
        "copilot_stage0_small": "1.0.77",
        "copilot_stage0_large": "0.0.420",
        "copilot_stage0_drift": "0.0.420",
        "aaaabbbb-1111-2222-3333-ccccddddeeee": "1.0.11",
    }
    kinds = dict(_rows(catalog, "SELECT kind, count(*) FROM events WHERE session_id = "
                                "'aaaabbbb-1111-2222-3333-ccccddddeeee' GROUP BY ALL"))  # fmt: skip
    assert kinds == {"prompt": 1, "tool_call": 1, "tool_result": 1, "response": 1}
    # only schema_drift.jsonl's shutdown carries usage; small.jsonl's has request counts
    assert _rows(catalog, USAGE) == [("gpt-4.1", 200, 0, 800, 50, 0)]


@pytest.mark.skipif(not CCUSAGE.is_dir(), reason="conformance data not present")
def test_conformance_ccusage_shutdown_snapshots(tmp_path: Path) -> None:
    """ccusage's fixtures: a non-JSON line is rejected; the later of two snapshots is
    the session's total (ccusage reports the same total as first + (second − first));
    session.start's private prompt is never imported."""
    state = tmp_path / "home" / ".copilot" / "session-state"
    shutil.copytree(CCUSAGE, state)
    catalog = tmp_path / "c.duckdb"
    assert _import(tmp_path / "home", catalog).exit_code == 0
    assert _rows(catalog, "SELECT reason FROM rejects") == [("MALFORMED",)]
    assert _rows(catalog, "SELECT session_id, model, input_tokens, cache_write_tokens, "
                          "cache_read_tokens, output_tokens, reasoning_tokens FROM usage "
                          "ORDER BY session_id") == [
        ("session-a", "claude-opus-4.6", 150, 30, 20, 80, 10),
        ("session-credits", "gpt-5.4", 40, 0, 0, 10, 0),
    ]  # fmt: skip
    assert _rows(catalog, "SELECT count(*) FROM events WHERE text LIKE '%private%'") == [(0,)]


@pytest.mark.skipif(not SPLITRAIL.is_file(), reason="conformance data not present")
def test_conformance_splitrail_vscode_chat_v3(tmp_path: Path) -> None:
    """A real VS Code chat session (v3): three requests, their tool rounds with results,
    the custom title, no tokens."""
    target = tmp_path / "home" / WORKSPACE / "chatSessions" / "session.json"
    target.parent.mkdir(parents=True)
    shutil.copy(SPLITRAIL, target)
    catalog = tmp_path / "c.duckdb"
    assert _import(tmp_path / "home", catalog).exit_code == 0
    kinds = dict(_rows(catalog, "SELECT kind, count(*) FROM events GROUP BY ALL"))
    assert kinds["prompt"] == 3 and kinds["tool_call"] == kinds["tool_result"] == 13
    assert kinds["response"] >= 3
    assert _rows(catalog, "SELECT session_id, title FROM sessions") == [
        ("f56f201a-672e-4cc5-ada9-4736258cc586", "Adding a debug option to the application")
    ]
    assert _rows(catalog, "SELECT count(*) FROM usage") == [(0,)]
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]
