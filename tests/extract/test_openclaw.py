"""The OpenClaw provider: discovery (state dir, legacy dir, env override, what is a
transcript), every record shape of provider-formats-more §5 and the pi shapes OpenClaw
inherits, the token rule, identity across live, reset and deleted copies, drift and bad
lines, resume, and the conformance fixtures (skipped when absent).

Expected totals are computed by hand from the fixtures (fixtures/openclaw/README.md) with
the rule: one call per assistant message with usage, keyed by (session, record id);
``input = input``, ``cache_read = cacheRead``, ``cache_write = cacheWrite``,
``output = output`` (else ``totalTokens`` minus the parts), ``reasoning = 0``.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from agentlake.extract.adapter import FormatDrift, InvalidRecord
from agentlake.extract.providers import by_id, openclaw, openclaw_store, resolve
from agentlake.extract.providers.openclaw_records import RecordMapper, session_id_of
from agentlake.extract.rows import RowSink
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportResult
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import import_provider

SPEC = by_id("openclaw")
HERE = FIXTURES / "openclaw"
TABLES = ("events", "usage", "sessions", "rejects")
A = "0f8e2c4a-1b3d-4e5f-9a7b-6c5d4e3f2a10"
B = "5d4c3b2a-9e8f-4a7b-8c6d-1e2f3a4b5c60"
C = "9c8b7a6d-5e4f-4d3c-9b2a-0f1e2d3c4b70"
D = "2b1a0f9e-8d7c-4b6a-9e5f-4d3c2b1a0f80"  # only in the SQLite store
AGENT_SESSIONS = CONFORMANCE / "jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/openclaw"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide/test/fixtures/sessions/openclaw"

# --------------------------------------------------------------------------- helpers


def _home(name: str, tmp: Path) -> Path:
    """A private copy of a fixture home (tests mutate it)."""
    target = tmp / name
    shutil.copytree(HERE / name, target, symlinks=True)
    return target


def _import(home: Path, catalog: Path, env: dict[str, str] | None = None) -> ImportResult:
    return import_provider("openclaw", home, catalog, env)


def _rows(catalog: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _kinds(catalog: Path) -> dict[str, int]:
    return dict(_rows(catalog, "SELECT kind, count(*) FROM events GROUP BY ALL"))


def _rejects(catalog: Path) -> dict[str, int]:
    return dict(_rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL"))


def _sessions_dir(home: Path, agent: str = "main") -> Path:
    path = home / ".openclaw" / "agents" / agent / "sessions"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write(path: Path, records: list[dict[str, Any]], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records) + tail)
    return path


def _header(sid: str, version: Any = 3, **extra: Any) -> dict[str, Any]:
    return {"type": "session", "version": version, "id": sid,
            "timestamp": "2026-04-01T10:00:00.000Z", "cwd": "/home/dev/app", **extra}  # fmt: skip


def _reply(rid: str, usage: dict[str, Any] | None, **message: Any) -> dict[str, Any]:
    msg = {"role": "assistant", "content": [{"type": "text", "text": f"reply {rid}"}], **message}
    if usage is not None:
        msg["usage"] = usage
    return {"type": "message", "id": rid, "parentId": None,
            "timestamp": "2026-04-01T10:00:05.000Z", "message": msg}  # fmt: skip


def _map(record: dict[str, Any], state: dict[str, Any] | None = None) -> RowSink:
    sink = RowSink()
    RecordMapper().map(record, "s", 0, {} if state is None else state, sink)
    return sink


@pytest.fixture(scope="module")
def positive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The contract home imported once (read-only for the tests using it)."""
    tmp = tmp_path_factory.mktemp("openclaw")
    catalog = tmp / "c.duckdb"
    assert _import(_home("all_record_types", tmp), catalog).exit_code == 0
    return catalog


# --------------------------------------------------------------------------- registry


def test_registry_row() -> None:
    assert resolve("clawdbot") is SPEC and SPEC.id == "openclaw"
    assert SPEC.env_overrides == ("OPENCLAW_STATE_DIR",)
    assert [(f.name, f.position_kind) for f in SPEC.formats] == [
        ("openclaw-jsonl", "byte-offset"),
        ("openclaw-sqlite", "sqlite"),
        ("openclaw-consistent-snapshot-jsonl", "byte-offset"),
    ]
    assert SPEC.capabilities == {"discover", "stream", "tokens"}
    assert SPEC.fixtures == ("fixtures/openclaw",)
    assert "tests/extract/test_openclaw.py" in SPEC.tests


# --------------------------------------------------------------------------- discovery


def test_roots_state_dir_then_legacy_then_override(tmp_path: Path) -> None:
    def root(env: dict[str, str]) -> tuple[Path, str, str | None]:
        (only,) = SPEC.roots(tmp_path, env)
        return only.path, only.origin, only.warning

    assert root({}) == (tmp_path / ".openclaw" / "agents", "default", None)
    (tmp_path / ".clawdbot").mkdir()  # only the legacy name exists
    assert root({})[0] == tmp_path / ".clawdbot" / "agents"
    (tmp_path / ".openclaw").mkdir()  # both: the current name wins
    assert root({})[0] == tmp_path / ".openclaw" / "agents"
    assert root({"OPENCLAW_STATE_DIR": "/srv/claw"}) == (
        Path("/srv/claw/agents"),
        "OPENCLAW_STATE_DIR",
        None,
    )
    assert root({"OPENCLAW_STATE_DIR": "~/claw-state"})[0] == tmp_path / "claw-state" / "agents"
    path, _, warning = root({"OPENCLAW_STATE_DIR": "relative/dir"})
    assert path == tmp_path / ".openclaw" / "agents" and warning and "relative" in warning


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        (f"main/sessions/{A}.jsonl", True),
        (f"main/sessions/{A}.jsonl.deleted.2026-03-05T08-00-00.000Z", True),
        (f"main/sessions/{A}.jsonl.reset.2026-03-03T09-59-59.000Z", True),
        (f"main/sessions/{A}-topic-42.jsonl", True),
        (f"main/sessions/{A}.jsonl.lock", False),
        (f"main/sessions/{A}.trajectory.jsonl", False),
        (f"main/sessions/{A}.trajectory.jsonl.reset.1", False),
        (f"main/sessions/{A}.jsonl.bak", False),
        ("main/sessions/sessions.json", False),
        ("main/sessions/.jsonl", False),
        (f"main/sessions/archive/{A}.jsonl", False),
        (f"main/{A}.jsonl", False),
        (f"main/agent/{A}.jsonl", False),
        ("main/agent/openclaw-agent.sqlite", False),
    ],
)
def test_predicate_owns_only_transcripts(rel: str, owned: bool) -> None:
    assert openclaw.owns_transcript(tuple(rel.split("/"))) is owned


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        ("main/agent/openclaw-agent.sqlite", True),
        ("ops/agent/openclaw-agent.sqlite", True),
        ("main/agent/openclaw-agent.sqlite-wal", False),
        ("main/agent/openclaw-agent.sqlite-shm", False),
        ("main/agent/other.sqlite", False),
        ("main/openclaw-agent.sqlite", False),
        ("main/sessions/openclaw-agent.sqlite", False),
        ("main/agent/x/openclaw-agent.sqlite", False),
    ],
)
def test_predicate_owns_only_agent_stores(rel: str, owned: bool) -> None:
    assert openclaw_store.owns_store(tuple(rel.split("/"))) is owned


def test_session_id_is_the_name_before_jsonl() -> None:
    assert session_id_of(f"{A}.jsonl") == A
    assert session_id_of(f"{A}.jsonl.reset.2026-03-03T09-59-59.000Z") == A
    assert session_id_of(f"{A}.jsonl.deleted.1772700000000") == A


def test_discovery_under_an_env_override(tmp_path: Path) -> None:
    state = tmp_path / "elsewhere"
    shutil.copytree(HERE / "all_record_types" / ".openclaw", state)
    env = {"OPENCLAW_STATE_DIR": str(state)}
    plan = make_plan({}, workspace="w", home=tmp_path / "empty", env=env, providers=(SPEC,))
    names = sorted(s.path.name for s in plan.sources)
    assert names == sorted([
        f"{A}.jsonl", f"{B}.jsonl", f"{B}.jsonl.reset.2026-03-03T09-59-59.000Z",
        f"{C}.jsonl.deleted.2026-03-05T08-00-00.000Z", "openclaw-agent.sqlite",
    ])  # fmt: skip


# --------------------------------------------------------------------------- the positive home


def test_every_record_shape_maps_to_its_events(positive: Path) -> None:
    rows = _rows(
        positive,
        "SELECT kind, role, model, text, tool_name, tool_call_id, tool_input, is_error "
        "FROM events WHERE session_id = ? ORDER BY seq",
        [A],
    )
    assert rows == [
        ("system", "system", "claude-sonnet-4-5", "model: anthropic/claude-sonnet-4-5",
         None, None, None, None),
        ("system", "system", None, "thinking level: high", None, None, None, None),
        ("prompt", "user", None, "the coupon total is wrong when a gift card is used",
         None, None, None, None),
        ("reasoning", "assistant", "claude-sonnet-4-5",
         "The discount is probably applied twice.", None, None, None, None),
        ("response", "assistant", "claude-sonnet-4-5", "Reading the cart service first.",
         None, None, None, None),
        ("tool_call", "assistant", "claude-sonnet-4-5", None, "read", "call_read1",
         '{"path":"src/cart/service.py"}', None),
        ("tool_result", "toolResult", None, "def total(cart):\n    return apply(cart)",
         "read", "call_read1", None, False),
        ("prompt", "user", None, "here is the screenshot", None, None, None, None),
        ("prompt", "user", None, "[image image/png]", None, None, None, None),
        ("response", "assistant", "claude-sonnet-4-5", "Applying the fix.", None, None, None,
         None),
        ("tool_call", "assistant", "claude-sonnet-4-5", None, "edit", "call_edit1",
         '{"path":"src/cart/service.py","oldText":"apply(cart)","newText":"apply_once(cart)"}',
         None),
        ("tool_result", "toolResult", None, "oldText not found", "edit", "call_edit1", None,
         True),
        ("system", "system", None, "Runtime context: the repository uses pytest.", None, None,
         None, None),
        ("response", "assistant", "gpt-5.2", "Switched models; the totals now round once.",
         None, None, None, None),
        ("tool_call", "user", None, None, "bash", "b1c2d3e4:bash", '{"command":"pytest -q"}',
         None),
        ("tool_result", "user", None, "3 passed", "bash", "b1c2d3e4:bash", None, False),
        ("summary", "system", None,
         "The coupon total applied the discount twice; fixed and tested.", None, None, None,
         None),
        ("summary", "system", None, "An abandoned branch tried rounding per line.", None, None,
         None, None),
        ("system", "assistant", "gpt-5.2", "429 rate limited, retry later", None, None, None,
         True),
        ("summary", "compactionSummary", None, "Earlier turns fixed the coupon total.", None,
         None, None, None),
        ("system", "custom", None, "Remember to update the changelog.", None, None, None,
         None),
    ]  # fmt: skip
    assert _rejects(positive) == {"UNKNOWN_RECORD": 1}


def test_calls_per_session_exact(positive: Path) -> None:
    rows = _rows(
        positive,
        "SELECT session_id, strftime(ts, '%Y-%m-%dT%H:%M:%S'), model, input_tokens, "
        "cache_write_tokens, cache_read_tokens, output_tokens, reasoning_tokens, total_tokens "
        "FROM usage ORDER BY ts",
    )
    assert rows == [
        # model from the message; then from model_change (the message has none), with
        # output = totalTokens 9420 − 300 − 9000; then from the model-snapshot
        (A, "2026-03-02T09:00:05", "claude-sonnet-4-5", 1200, 2000, 8000, 150, 0, 11350),
        (A, "2026-03-02T09:01:04", "claude-sonnet-4-5", 300, 0, 9000, 120, 0, 9420),
        (A, "2026-03-02T09:04:00", "gpt-5.2", 500, 0, 0, 80, 0, 580),
        # the reset history's two calls (one also in the live file) and the live one
        (B, "2026-03-03T08:00:02", "gpt-5.2", 1000, 0, 0, 50, 0, 1050),
        (B, "2026-03-03T08:00:03", "gpt-5.2", 2000, 0, 4000, 300, 0, 6300),
        (B, "2026-03-03T10:00:09", "gpt-5.2", 700, 0, 3000, 40, 0, 3740),
        # the id-less line written twice
        (C, "2026-03-04T12:00:02", "gpt-5.2", 10, 0, 0, 20, 0, 30),
        # the store's own session: model from its model_change, time from created_at
        (D, "2026-03-05T07:00:08", "deepseek-v4-flash", 400, 0, 1000, 60, 0, 1460),
    ]


def test_session_rows(positive: Path) -> None:
    rows = _rows(
        positive,
        "SELECT session_id, parent_session_id, project_path, title, model, "
        "strftime(started_at, '%Y-%m-%dT%H:%M:%S'), prompts, tool_calls "
        "FROM sessions ORDER BY session_id <> ?, session_id <> ?, session_id <> ?",
        [A, B, C],
    )
    assert rows == [
        (A, None, "/home/dev/webshop", "Fix the coupon total", "gpt-5.2",
         "2026-03-02T09:00:00", 3, 3),
        (B, None, "/home/dev/infra", None, "gpt-5.2", "2026-03-03T08:00:00", 2, 0),
        (C, B, "/home/dev/infra", None, "gpt-5.2", "2026-03-04T12:00:00", 1, 0),
        (D, None, "/home/dev/infra", None, "deepseek-v4-flash", "2026-03-05T07:00:00", 1, 0),
    ]  # fmt: skip


def test_a_history_copy_of_a_live_session_adds_nothing(tmp_path: Path) -> None:
    home = _home("all_record_types", tmp_path)
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    ids = "SELECT (SELECT list(event_id ORDER BY event_id) FROM events), " \
          "(SELECT list(call_id ORDER BY call_id) FROM usage)"  # fmt: skip
    before = _rows(catalog, ids)
    live = _sessions_dir(home) / f"{A}.jsonl"
    shutil.copy2(live, live.with_name(f"{A}.jsonl.deleted.2026-03-09T00-00-00.000Z"))
    live.rename(live.with_name(f"{A}.jsonl.reset.2026-03-08T00-00-00.000Z"))
    result = _import(home, catalog)
    assert result.exit_code == 0 and result.totals()["sources_opened"] == 2
    assert _rows(catalog, ids) == before
    assert _rows(catalog, "SELECT count(*), sum(input_tokens) FROM usage") == [(8, 6110)]


# --------------------------------------------------------------------------- token rule


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # input, cache_write, cache_read, output
        (
            {"input": 5, "output": 7, "cacheRead": 11, "cacheWrite": 13, "totalTokens": 36},
            (5, 13, 11, 7),
        ),
        # output missing: totalTokens minus the parts is the output (ccusage's fallback)
        ({"totalTokens": 222}, (0, 0, 0, 222)),
        ({"input": 100, "cacheRead": 25, "totalTokens": 200}, (100, 0, 25, 75)),
        # output present: an excess of totalTokens is not a part of any column
        ({"input": 100, "output": 10, "totalTokens": 150}, (100, 0, 0, 10)),
        # strings, negatives and booleans count as 0
        ({"input": "9", "output": -3, "cacheRead": True, "cacheWrite": 2.9}, (0, 2, 0, 0)),
    ],
)
def test_token_rule(usage: dict[str, Any], expected: tuple[int, int, int, int]) -> None:
    built = _map(_reply("r1", usage, model="gpt-5.2")).build().usage.to_pylist()
    (call,) = built
    got = (call["input_tokens"], call["cache_write_tokens"], call["cache_read_tokens"],
           call["output_tokens"])  # fmt: skip
    assert got == expected and call["reasoning_tokens"] == 0 and call["native_id"] == "r1"


def test_no_call_without_usage_all_zero_or_not_an_assistant() -> None:
    assert _map(_reply("r", None)).build().usage.num_rows == 0
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    assert _map(_reply("r", zero)).build().usage.num_rows == 0
    user = {"type": "message", "id": "u", "message": {"role": "user", "content": "x",
                                                      "usage": {"input": 5}}}  # fmt: skip
    assert _map(user).build().usage.num_rows == 0


def test_call_time_prefers_the_message_epoch_ms_and_model_falls_back() -> None:
    state: dict[str, Any] = {}
    _map({"type": "model_change", "id": "m", "provider": "openai", "modelId": "gpt-5"}, state)
    record = _reply("r", {"input": 1, "output": 1}, timestamp=1772442005000)
    record["timestamp"] = "2026-03-02T09:00:07.000Z"
    (call,) = _map(record, state).build().usage.to_pylist()
    assert call["ts"] == "2026-03-02T09:00:05.000Z" and call["model"] == "gpt-5"
    # modelId on the message wins over the session's model
    record = _reply("r", {"input": 1}, modelId="x-1", model="x-0")
    (call,) = _map(record, state).build().usage.to_pylist()
    assert call["model"] == "x-1"


# --------------------------------------------------------------------------- drift and bad lines


@pytest.mark.parametrize("version", [None, 1, 2, 3, 3.0, "3", "3.1"])
def test_known_session_versions(version: Any) -> None:
    header = _header("s", version)
    if version is None:
        del header["version"]
    sink = _map(header)
    assert sink.build().sessions.to_pylist()[0]["project_path"] == "/home/dev/app"


@pytest.mark.parametrize("version", [4, 0, 99, 4.0, "4.0"])
def test_unknown_session_major_is_drift(version: Any) -> None:
    with pytest.raises(FormatDrift):
        _map(_header("s", version))


@pytest.mark.parametrize(
    "record",
    [
        _header("s", True),
        _header("s", "three"),
        _header("s", 3.5),
        {"type": "message", "id": "x", "message": "hello"},
        {"type": "message", "id": "x", "message": {"content": "no role"}},
        {"type": "message", "id": "x", "message": {"role": "user", "content": 42}},
        {"type": "message", "id": "x", "message": {"role": "assistant", "content": {"a": 1}}},
        {"type": "message", "id": "x", "message": {"role": "toolResult", "content": 7}},
        {"type": "message", "id": "x", "message": {"role": "bashExecution", "command": 1}},
        {"type": "compaction", "id": "x", "summary": None},
        {"type": "branch_summary", "id": "x", "summary": ["a"]},
        {"type": "session_info", "id": "x", "name": 5},
        {"type": "thinking_level_change", "id": "x", "thinkingLevel": 3},
        {"type": "custom_message", "id": "x", "content": {"text": "x"}},
        _reply("x", {"input": 2**60}),
    ],
)
def test_impossible_field_types_are_invalid(record: dict[str, Any]) -> None:
    with pytest.raises(InvalidRecord):
        _map(record)


def test_unknown_types_are_unknown_and_known_noise_is_ignored() -> None:
    mapper, sink = RecordMapper(), RowSink()
    assert mapper.map({"type": "compact", "id": "x"}, "s", 0, {}, sink) == "unknown"
    assert mapper.map({"id": "x"}, "s", 0, {}, sink) == "unknown"
    assert mapper.map({"type": "label", "id": "x", "label": "l"}, "s", 0, {}, sink) == "ignored"
    custom = {"type": "custom", "id": "x", "customType": "ui_state", "data": {}}
    assert mapper.map(custom, "s", 0, {}, sink) == "ignored"
    assert sink.event_count == 0


def test_drift_refuses_the_source_and_bad_lines_are_rejected(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = _sessions_dir(home)
    _write(sessions / "drift.jsonl", [_header("drift", 4), _reply("r", {"input": 1})])
    bad = [_header("bad"), _reply("r1", {"input": 3, "output": 4})]
    _write(sessions / "bad.jsonl", bad, tail=b'{"not json\n[1, 2]\n\xff\xfe\n'
           + orjson.dumps({"type": "message", "id": "x", "message": "text"}) + b"\n"
           + orjson.dumps(_reply("r2", {"input": 5})) + b"\n"
           + b'{"type":"message","id":"torn"')  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    result = _import(home, catalog)
    assert result.exit_code == 1 and [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _rejects(catalog) == {"MALFORMED": 2, "BAD_ENCODING": 1, "INVALID_RECORD": 1}
    assert _rows(catalog, "SELECT session_id, native_id FROM usage ORDER BY 2") == [
        ("bad", "r1"), ("bad", "r2"),
    ]  # fmt: skip
    # the torn tail is pending, not rejected: once finished it imports
    with (sessions / "bad.jsonl").open("ab") as fh:
        fh.write(b',"message":{"role":"user","content":"done"}}\n')
    _import(home, catalog)
    assert ("done",) in _rows(catalog, "SELECT text FROM events WHERE session_id = 'bad'")


def test_resume_keeps_the_session_model_across_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _sessions_dir(home) / "s1.jsonl"
    change = {"type": "model_change", "id": "m", "provider": "openai", "modelId": "gpt-5.2",
              "timestamp": "2026-04-01T10:00:01.000Z"}  # fmt: skip
    _write(path, [_header("s1"), change])
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    with path.open("ab") as fh:
        fh.write(orjson.dumps(_reply("r1", {"input": 1, "output": 2})) + b"\n")
    result = _import(home, catalog)
    assert [s.planned.continuity for s in result.sources] == ["validated-append"]
    assert _rows(catalog, "SELECT model FROM usage") == [("gpt-5.2",)]


# --------------------------------------------------------------------------- conformance


def _conformance_home(tmp: Path, files: list[Path]) -> Path:
    home = tmp / "home"
    sessions = _sessions_dir(home)
    for file in files:
        shutil.copy(file, sessions / file.name)
    return home


@pytest.mark.skipif(not AGENT_SESSIONS.is_dir(), reason="conformance data not present")
def test_conformance_native_transcripts(tmp_path: Path) -> None:
    files = sorted(AGENT_SESSIONS.glob("*.jsonl"))
    assert [f.name for f in files] == ["large.jsonl", "schema_drift.jsonl", "small.jsonl"]
    catalog = tmp_path / "c.duckdb"
    assert _import(_conformance_home(tmp_path, files), catalog).exit_code == 0
    by_session = {
        (sid, kind): n
        for sid, kind, n in _rows(
            catalog, "SELECT session_id, kind, count(*) FROM events GROUP BY ALL"
        )
    }
    assert by_session == {
        ("small", "system"): 1, ("small", "prompt"): 1, ("small", "response"): 1,
        ("small", "tool_call"): 1, ("small", "tool_result"): 1,
        # model_change, thinking_level_change, custom_message (the ui_state custom is state)
        ("large", "system"): 3, ("large", "prompt"): 1, ("large", "response"): 3,
        ("large", "tool_call"): 2, ("large", "tool_result"): 2,
        # a system-role message; the unknown ``compact`` record is rejected
        ("schema_drift", "prompt"): 1, ("schema_drift", "response"): 1,
        ("schema_drift", "tool_call"): 1, ("schema_drift", "tool_result"): 1,
        ("schema_drift", "system"): 1,
    }  # fmt: skip
    assert _rejects(catalog) == {"UNKNOWN_RECORD": 1}
    assert _rows(catalog, "SELECT count(*) FROM usage") == [(0,)]  # no usage in these
    assert _rows(catalog, "SELECT session_id, project_path, model FROM sessions ORDER BY 1") == [
        ("large", "/tmp/large", "openclaw-large"),
        ("schema_drift", "/tmp/drift", None),
        ("small", "/tmp/repo", "openclaw-small"),
    ]


@pytest.mark.skipif(not AIWG.is_dir(), reason="conformance data not present")
def test_conformance_aiwg_projection_is_not_a_native_transcript(tmp_path: Path) -> None:
    """AIWG's ``openclaw-consistent-snapshot-jsonl`` is AIWG's own projection (no OpenClaw
    tool writes it): read in a transcript's place, every line is rejected as an unknown
    record, nothing is imported and nothing raises. Named in their own format they are
    read (tests/extract/test_openclaw_export.py::test_conformance_aiwg_snapshots)."""
    files = sorted(AIWG.glob("*.jsonl"))
    assert files
    catalog = tmp_path / "c.duckdb"
    assert _import(_conformance_home(tmp_path, files), catalog).exit_code == 0
    lines = sum(1 for f in files for line in f.read_bytes().splitlines() if line.strip())
    assert _rejects(catalog) == {"UNKNOWN_RECORD": lines}
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]


# --------------------------------------------------------------------------- the SQLite store


def _store(home: Path, rows: list[tuple[str, Any]], agent: str = "main") -> Path:
    """An agent store whose ``transcript_events`` holds ``rows`` (session id, record or
    raw text), seq counted per session, ``created_at`` one second apart."""
    path = home / ".openclaw" / "agents" / agent / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE IF NOT EXISTS transcript_events (session_id TEXT NOT NULL, "
        "seq INTEGER NOT NULL, event_json TEXT NOT NULL, created_at INTEGER NOT NULL, "
        "PRIMARY KEY (session_id, seq))"
    )
    for sid, record in rows:
        text = record if isinstance(record, str) else orjson.dumps(record).decode()
        con.execute(
            "INSERT INTO transcript_events SELECT ?, coalesce(max(seq) + 1, 0), ?, "
            "1775037600000 + 1000 * count(*) FROM transcript_events WHERE session_id = ?",
            (sid, text, sid),
        )
    con.commit()
    con.close()
    return path


def _ids(catalog: Path) -> list[tuple[Any, ...]]:
    return _rows(
        catalog,
        "SELECT (SELECT list(event_id ORDER BY event_id) FROM events), "
        "(SELECT list(call_id ORDER BY call_id) FROM usage), (SELECT count(*) FROM sessions)",
    )


def test_a_migrated_session_is_one_session_counted_once(tmp_path: Path) -> None:
    records = [
        _header("s1"),
        {"type": "model_change", "id": "m", "provider": "openai", "modelId": "gpt-5.2"},
        {"type": "message", "id": "u1", "message": {"role": "user", "content": "hi"}},
        _reply("r1", {"input": 10, "output": 5, "cacheRead": 100}),
        _reply("r2", {"input": 20, "output": 6}),
    ]
    both, store_first = tmp_path / "both", tmp_path / "store-first"
    _write(_sessions_dir(both) / "s1.jsonl", records)
    catalog = tmp_path / "c.duckdb"
    _import(both, catalog)
    jsonl_only = _ids(catalog)
    _store(both, [("s1", r) for r in records])  # `openclaw doctor --fix` keeps both copies
    assert _import(both, catalog).exit_code == 0
    assert _ids(catalog) == jsonl_only
    # the other way round: the store first, then the transcript
    _store(store_first, [("s1", r) for r in records])
    other = tmp_path / "o.duckdb"
    _import(store_first, other)
    _write(_sessions_dir(store_first) / "s1.jsonl", records)
    assert _import(store_first, other).exit_code == 0
    assert _ids(other) == jsonl_only
    assert _rows(other, "SELECT count(*), sum(input_tokens), max(model) FROM usage") == [
        (2, 30, "gpt-5.2")
    ]


def test_store_rows_bad_or_unknown_are_skipped_and_growth_is_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _store(home, [
        ("s1", _header("s1")),
        ("s1", "not json"),
        ("s1", "[1, 2]"),
        ("s1", {"type": "message", "id": "bad", "message": "text"}),
        ("s1", {"type": "branch-control", "id": "x"}),
        ("s1", _reply("r1", {"input": 3, "output": 4})),
        ("s2", {"type": "message", "id": "u", "message": {"role": "user", "content": "later"}}),
    ])  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _rows(catalog, "SELECT session_id, native_id FROM usage") == [("s1", "r1")]
    # a record without a time takes its row's created_at (the 1st row of s2: +0 s)
    assert _rows(catalog, "SELECT strftime(ts, '%H:%M:%S') FROM events WHERE session_id='s2'") == [
        ("10:00:00",)
    ]
    _store(home, [("s1", _reply("r2", {"input": 7, "output": 1}))])
    assert _import(home, catalog).exit_code == 0
    assert _rows(catalog, "SELECT count(*), sum(input_tokens) FROM usage") == [(2, 10)]
    assert _kinds(catalog) == {"prompt": 1, "response": 2}


def test_store_without_its_table_and_store_drift(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    path = _store(empty, [])
    con = sqlite3.connect(path)
    con.execute("DROP TABLE transcript_events")
    con.execute("CREATE TABLE kv (k TEXT)")
    con.commit()
    con.close()
    assert _import(empty, tmp_path / "e.duckdb").exit_code == 0
    drift = tmp_path / "drift"
    _store(drift, [("s1", _header("s1", 4)), ("s1", _reply("r1", {"input": 1}))])
    result = _import(drift, tmp_path / "d.duckdb")
    assert result.exit_code == 1 and [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _rows(tmp_path / "d.duckdb", "SELECT count(*) FROM usage") == [(0,)]


def test_setting_changes_name_only_what_they_carry() -> None:
    def text(record: dict[str, Any]) -> Any:
        return _map(record).build().events.column("text").to_pylist()

    assert text({"type": "model_change", "id": "m", "modelId": "gpt-5"}) == ["model: gpt-5"]
    assert text({"type": "model_change", "id": "m", "provider": "openai"}) == ["model: openai"]
    assert text({"type": "thinking_level_change", "id": "t"}) == [None]
