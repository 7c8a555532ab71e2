"""The Codex CLI adapter: every rollout shape maps to events and calls, is known and
ignored, or is counted unknown; dual-written messages import once; token deltas,
re-emits, forks and appends follow DESIGN §4; the thread index enriches sessions."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from agentlake.extract.adapter import FormatDrift, SourceContext
from agentlake.extract.extract import extract_source
from agentlake.extract.providers import by_id, resolve
from agentlake.extract.providers.codex import (
    RolloutAdapter,
    owns_rollout,
    owns_state_index,
    roots,
    tool_output,
)
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile, walk_root
from agentlake.ingest.run import ImportOptions, run_import
from tests.conftest import FIXTURES
from tests.pipeline.helpers import snapshot

SPEC = by_id("codex")
CODEX = FIXTURES / "codex"
Row = dict[str, Any]


def _sources(home: Path) -> list[SourceFile]:
    out: list[SourceFile] = []
    for root in SPEC.roots(home, {}):
        out += [s for s in walk_root(root, SPEC.formats) if isinstance(s, SourceFile)]
    return out


def _rollouts(home: Path) -> list[SourceFile]:
    return [s for s in _sources(home) if s.format == "codex-rollout"]


class Extracted:
    """Everything extraction produced for a set of sources."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.rejects: Counter[str] = Counter()
        self.events: list[Row] = []
        self.usage: list[Row] = []
        self.sessions: list[Row] = []


def _extract(sources: list[SourceFile]) -> Extracted:
    got = Extracted()
    for src in sources:
        for batch in extract_source(SPEC, src, start=0, stop=src.size):
            got.outcomes.update(batch.outcomes)
            got.rejects.update(r.reason for r in batch.rejects)
            got.events += batch.tables.events.to_pylist()
            got.usage += batch.tables.usage.to_pylist()
            got.sessions += batch.tables.sessions.to_pylist()
    return got


def _usage_tuple(u: Row) -> tuple[Any, ...]:
    return (
        u["model"],
        u["input_tokens"],
        u["cache_read_tokens"],
        u["output_tokens"],
        u["reasoning_tokens"],
    )


def _import(home: Path, catalog: Path) -> None:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      providers=("codex",), build_index=False)
    )  # fmt: skip
    assert result.exit_code == 0


def _query(catalog: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


SID = "019e0000-0000-7000-8000-0000000000aa"


def _rollout_home(tmp: Path, records: list[dict[str, Any]], sid: str = SID) -> Path:
    home = tmp / "home"
    name = f"rollout-2026-05-01T09-00-00-{sid}.jsonl"
    _write(home / ".codex" / "sessions" / "2026" / "05" / "01" / name, records)
    return home


def _meta(sid: str = SID, **extra: Any) -> dict[str, Any]:
    payload = {"id": sid, "timestamp": "2026-05-01T09:00:00.000Z", "cwd": "/home/dev/demo",
               "originator": "codex_cli_rs", "cli_version": "0.130.0", **extra}  # fmt: skip
    return {"timestamp": "2026-05-01T09:00:00.000Z", "type": "session_meta", "payload": payload}


def _ev(ts: str, payload: dict[str, Any], kind: str = "event_msg") -> dict[str, Any]:
    return {"timestamp": f"2026-05-01T{ts}Z", "type": kind, "payload": payload}


def _usage(i: int, c: int, o: int, r: int) -> dict[str, int]:
    return {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o,
            "reasoning_output_tokens": r, "total_tokens": i + o}  # fmt: skip


# --------------------------------------------------------------------------- discovery


def test_roots_default_absolute_and_relative_codex_home(tmp_path: Path) -> None:
    default = roots(tmp_path, {})
    assert [r.path for r in default] == [
        tmp_path / ".codex" / "sessions",
        tmp_path / ".codex" / "archived_sessions",
        tmp_path / ".codex",
    ]
    assert {r.origin for r in default} == {"default"} and {r.provider for r in default} == {"codex"}
    custom = roots(tmp_path, {"CODEX_HOME": "/srv/codex-home"})
    assert [r.path for r in custom] == [
        Path("/srv/codex-home/sessions"),
        Path("/srv/codex-home/archived_sessions"),
        Path("/srv/codex-home"),
    ]
    assert {r.origin for r in custom} == {"CODEX_HOME"}
    relative = roots(tmp_path, {"CODEX_HOME": "codex-home"})
    assert [r.path for r in relative] == [r.path for r in default]
    assert all("relative CODEX_HOME 'codex-home' ignored" in r.origin for r in relative)
    assert resolve("codex-cli") is SPEC and SPEC.env_overrides == ("CODEX_HOME",)


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        ("2026/05/01/rollout-2026-05-01T09-00-00-019e0000-0000-7000-8000-000000000001.jsonl", True),
        ("rollout-2026-05-01T09-00-00-019e0000-0000-7000-8000-000000000001.jsonl", True),
        ("rollout-55555555-5555-4555-8555-555555555555.jsonl", True),
        ("2026/05/01/rollout-x.json", False),
        ("2026/05/01/rollout-x.jsonl.bak", False),
        ("2026/05/01/other-x.jsonl", False),
        ("2026/5/1/rollout-x.jsonl", False),
        ("2026/05/01/nested/rollout-x.jsonl", False),
        ("notes.jsonl", False),
        ("history.jsonl", False),
    ],
)
def test_rollout_predicate(rel: str, owned: bool) -> None:
    assert owns_rollout(Path(rel).parts) is owned


def test_state_index_predicate() -> None:
    assert owns_state_index(Path("state_5.sqlite").parts)
    assert not owns_state_index(Path("state_4.sqlite").parts)
    assert not owns_state_index(Path("worktrees/x/state_5.sqlite").parts)
    assert not owns_state_index(Path("state_5.sqlite-wal").parts)


def test_discovery_admits_rollouts_archives_and_the_index() -> None:
    found = _sources(CODEX / "state_index")
    assert Counter(s.format for s in found) == {"codex-rollout": 3, "codex-state": 1}
    assert {s.root.name for s in found} == {"sessions", "archived_sessions", ".codex"}
    (index,) = [s for s in found if s.format == "codex-state"]
    assert index.position_kind == "sqlite" and index.path.name == "state_5.sqlite"


# --------------------------------------------------------------------------- identity


def test_session_id_comes_from_the_header_then_the_file_name(tmp_path: Path) -> None:
    adapter = RolloutAdapter()
    home = _rollout_home(tmp_path, [_meta("header-id-wins")])
    (src,) = _rollouts(home)
    assert adapter.locate(src).session_id == "header-id-wins"
    src.path.write_bytes(b'{"timestamp":"2026-05-01T09:00:00.000Z","type":"session_meta","pay')
    assert adapter.locate(src).session_id == SID  # torn header: the uuid in the name
    # a header longer than the 64 KiB window is searched for its leading id
    big = _meta("long-header-id", base_instructions={"text": "x" * 100_000})
    src.path.write_bytes(orjson.dumps(big) + b"\n")
    assert adapter.locate(src).session_id == "long-header-id"


def test_legacy_header_id_and_timestamp_fallback() -> None:
    got = _extract(_rollouts(CODEX / "legacy_pre_envelope"))
    assert not got.rejects and got.outcomes["unknown"] == 0
    assert got.outcomes["ignored"] == 3  # {"record_type": "state"} markers
    assert {e["session_id"] for e in got.events} == {"5f1d2c3b-4a59-4e68-8f7a-0b1c2d3e4f50"}
    assert {e["ts"] for e in got.events} == {"2025-08-14T16:20:05.311Z"}  # the header's
    kinds = Counter((e["block_type"], e["role"]) for e in got.events)
    assert kinds == {
        ("system", "user"): 2,  # <user_instructions>, <environment_context>
        ("text", "user"): 1,
        ("thinking", "assistant"): 1,
        ("tool_use", "assistant"): 2,
        ("tool_result", "tool"): 2,
        ("text", "assistant"): 1,
    }
    results = [e for e in got.events if e["block_type"] == "tool_result"]
    assert [(r["text"][:2], r["is_error"]) for r in results] == [("F.", True), ("9f", False)]
    assert not got.usage


# --------------------------------------------------------------------------- record shapes


def test_every_record_shape_is_mapped_ignored_or_counted_unknown() -> None:
    got = _extract([_kitchen_sink()])
    assert got.rejects == {"UNKNOWN_RECORD": 3}  # x_future_record / _item / _event
    assert got.outcomes["unknown"] == 3 and got.outcomes["ignored"] >= 15
    kinds = Counter(e["block_type"] for e in got.events)
    assert kinds == {
        "text": 7,  # 3 prompts + 3 replies + 1 inter-agent message
        "image": 1,
        "thinking": 1,
        "tool_use": 6,  # exec, local_shell, web_search, apply_patch, tool_search, image_gen
        "tool_result": 4,
        "summary": 1,
        "system": 5,  # developer, environment context, AGENTS.md, turn_aborted, error
    }
    tools = {e["tool_name"] for e in got.events if e["block_type"] == "tool_use"}
    assert tools == {"exec_command", "local_shell", "web_search", "apply_patch", "tool_search",
                     "image_generation"}  # fmt: skip
    for e in got.events:
        if e["tool_input"] is not None:
            json.loads(e["tool_input"])  # always JSON text
    errors = [e for e in got.events if e["block_type"] == "system" and e["is_error"]]
    assert len(errors) == 1 and "stream disconnected" in errors[0]["text"]
    (summary,) = [e for e in got.events if e["block_type"] == "summary"]
    assert summary["text"].startswith("Summary: fixed the coupon")
    reasoning = [e for e in got.events if e["block_type"] == "thinking"]
    assert reasoning[0]["text"].count("\n\n") == 1  # two summary parts, one event
    titles = [s for s in got.sessions if s.get("title")]
    assert titles and titles[-1]["title"] == "Coupon and gift card ordering"


def test_context_messages_are_system_events_not_prompts() -> None:
    got = _extract(_rollouts(CODEX / "token_count_last_and_total"))
    system = [e for e in got.events if e["block_type"] == "system"]
    assert len(system) == 1 and system[0]["text"].startswith("<environment_context>")
    prompts = [e["text"] for e in got.events if e["block_type"] == "text" and e["role"] == "user"]
    assert prompts == ["add a /health endpoint to the flask app", "also add a test for it"]


@pytest.mark.parametrize("order", ["event_first", "response_first"])
def test_dual_written_messages_import_once(order: str, tmp_path: Path) -> None:
    def pair(ts: str, role: str, text: str) -> list[dict[str, Any]]:
        if role == "user":
            event = {"type": "user_message", "message": text, "images": []}
            item = {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": text}]}  # fmt: skip
        else:
            event = {"type": "agent_message", "message": text, "phase": "final_answer"}
            item = {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}]}  # fmt: skip
        first, second = _ev(ts, event), _ev(ts, item, "response_item")
        return [first, second] if order == "event_first" else [second, first]

    records = [
        _meta(),
        *pair("09:00:01.000", "user", "continue"),
        *pair("09:00:02.000", "assistant", "ok"),
        *pair("09:00:03.000", "user", "continue"),  # the same text again: a new prompt
        *pair("09:00:04.000", "assistant", "done"),
    ]
    got = _extract(_rollouts(_rollout_home(tmp_path, records)))
    texts = [(e["role"], e["text"]) for e in got.events]
    assert texts == [("user", "continue"), ("assistant", "ok"), ("user", "continue"),
                     ("assistant", "done")]  # fmt: skip
    assert got.outcomes == {"mapped": 5, "ignored": 4}


def _kitchen_sink() -> SourceFile:
    (main,) = [
        s
        for s in _rollouts(CODEX / "contract_all_shapes")
        if s.path.name.endswith("c0de00000014.jsonl")
    ]
    return main


def test_user_images_become_image_events() -> None:
    got = _extract([_kitchen_sink()])
    images = [e for e in got.events if e["block_type"] == "image"]
    assert len(images) == 1 and images[0]["text"] == "[image]" and images[0]["block_index"] == 1


# --------------------------------------------------------------------------- tools


def test_exit_codes_set_tool_result_status() -> None:
    got = _extract(_rollouts(CODEX / "exec_exit_codes"))
    results = [e for e in got.events if e["block_type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [
        False,  # Process exited with code 0
        True,  # Process exited with code 2
        True,  # exec_command header: Process exited with code 1
        False,  # {"output":..,"metadata":{"exit_code":0}}
        True,  # exit_code 127
        False,  # apply_patch "Exit code: 0"
        None,  # apply_patch failure text without a code: status unknown
        None,  # content items (an image): status unknown
        True,  # {"content":..,"success":false}
        False,  # code 0 in the header; a later "exit code: 9" is output, not status
    ]
    assert results[3]["text"] == "app.py\ntests\n"  # the JSON envelope is unwrapped
    assert results[7]["text"] == "attached image\n[image]"
    calls = {e["tool_call_id"] for e in got.events if e["block_type"] == "tool_use"}
    assert calls == {r["tool_call_id"] for r in results}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Process exited with code 0\nok", ("Process exited with code 0\nok", False)),
        ("exit code: 3\n", ("exit code: 3\n", True)),
        ("EXIT CODE -1", ("EXIT CODE -1", True)),
        ('{"output":"x","metadata":{"exit_code":0}}', ("x", False)),
        ('{"output":"x","metadata":{}}', ("x", None)),
        ('{"output": broken', ('{"output": broken', None)),
        ({"text": "y", "success": True}, ("y", False)),
        ({"other": 1}, ('{"other":1}', None)),
        ([], (None, None)),
        (None, (None, None)),
        (42, ("42", None)),
    ],
)
def test_tool_output_shapes(output: Any, expected: tuple[str | None, bool | None]) -> None:
    assert tool_output(output) == expected


# --------------------------------------------------------------------------- tokens


def test_last_usage_else_delta_of_the_cumulative_total() -> None:
    got = _extract(_rollouts(CODEX / "token_count_last_and_total"))
    assert [_usage_tuple(u) for u in got.usage] == [
        ("gpt-5-codex", 3000, 9000, 400, 128),  # last_token_usage
        ("gpt-5-codex", 500, 5500, 150, 64),  # no last: total minus the previous total
        ("gpt-5-codex", 200, 7800, 300, 0),
    ]
    assert all(u["message_id"] is None and u["cache_write_tokens"] == 0 for u in got.usage)
    assert len({u["native_id"] for u in got.usage}) == 3


def test_reemitted_token_counts_count_nothing() -> None:
    got = _extract(_rollouts(CODEX / "reemitted_token_count"))
    assert [_usage_tuple(u) for u in got.usage] == [
        ("gpt-5", 1000, 4000, 200, 50),
        ("gpt-5", 1000, 6000, 300, 100),
    ]


def test_info_null_and_empty_info_are_not_calls() -> None:
    got = _extract(_rollouts(CODEX / "info_null"))
    assert len(got.usage) == 2 and not got.rejects


def test_cached_is_clamped_to_input_and_zero_calls_are_dropped(tmp_path: Path) -> None:
    records = [
        _meta(),
        _ev("09:00:01.000", {"type": "token_count", "info": {"last_token_usage": _usage(100, 250, 5, 0)}}),
        _ev("09:00:02.000", {"type": "token_count", "info": {"last_token_usage": _usage(0, 0, 0, 0)}}),
    ]  # fmt: skip
    got = _extract(_rollouts(_rollout_home(tmp_path, records)))
    assert [_usage_tuple(u) for u in got.usage] == [("gpt-5", 0, 100, 5, 0)]
    assert got.usage[0]["native_id"].startswith("l2026-05-01T09:00:01.000Z/")


def test_model_follows_turn_context_and_falls_back_to_gpt_5() -> None:
    got = _extract(_rollouts(CODEX / "model_change_mid_session"))
    assert [u["model"] for u in got.usage] == ["gpt-5-codex", "gpt-5", "gpt-5-codex", "gpt-5"]
    # within a batch the latest session value wins: the model of the last turn_context
    assert [s["model"] for s in got.sessions if s.get("model")] == ["gpt-5-codex"]
    replies = [
        e["model"] for e in got.events if e["role"] == "assistant" and e["block_type"] == "text"
    ]
    assert replies == ["gpt-5-codex", "gpt-5", "gpt-5-codex", None]  # no turn_context: no model


def test_event_model_wins_over_turn_context(tmp_path: Path) -> None:
    records = [
        _meta(),
        _ev("09:00:01.000", {"model": "gpt-5-codex"}, "turn_context"),
        _ev("09:00:02.000", {"type": "token_count",
                             "info": {"model": "gpt-5.1", "last_token_usage": _usage(10, 0, 1, 0)}}),
    ]  # fmt: skip
    got = _extract(_rollouts(_rollout_home(tmp_path, records)))
    assert [u["model"] for u in got.usage] == ["gpt-5.1"]


# --------------------------------------------------------------------------- forks


def test_fork_skips_the_replayed_parent_history() -> None:
    home = CODEX / "fork_replays_parent"
    parent, fork = sorted(_rollouts(home), key=lambda s: s.path.name)
    got = _extract([fork])
    sid = SPEC.format_of(fork).adapter.locate(fork).session_id
    assert {e["session_id"] for e in got.events} == {sid}
    assert [(e["role"], e["text"]) for e in got.events] == [
        ("user", "now try a version that keeps a single function but extracts helpers"),
        ("assistant", "Kept `checkout` and extracted two private helpers."),
    ]
    assert [_usage_tuple(u) for u in got.usage] == [("gpt-5-codex", 1000, 30000, 900, 300)]
    parent_sid = SPEC.format_of(parent).adapter.locate(parent).session_id
    assert {s["parent_session_id"] for s in got.sessions} == {parent_sid}
    assert not got.rejects


def test_subagent_turn_in_the_replay_second_is_its_own() -> None:
    """The subagent's turn starts within the replay's second: its UUIDv7 turn id (not
    earlier than the fork) ends the replay, so its prompt and call are kept."""
    home = CODEX / "subagent_replays_parent"
    _, child = sorted(_rollouts(home), key=lambda s: s.path.name)
    got = _extract([child])
    assert [e["text"] for e in got.events if e["role"] == "user"] == [
        "review the checkout split for behaviour changes"
    ]
    assert [_usage_tuple(u) for u in got.usage] == [("gpt-5-codex-mini", 18000, 0, 400, 300)]


def test_fork_without_its_parent_still_skips_the_replay() -> None:
    got = _extract(_rollouts(CODEX / "fork_parent_missing"))
    assert [_usage_tuple(u) for u in got.usage] == [("gpt-5-codex", 1000, 11000, 200, 50)]


# --------------------------------------------------------------------------- drift, bad input


@pytest.mark.parametrize(("version", "drifts"), [("0.130.0", False), ("1.2.0", False),
                                                  ("2.0.0", True), ("7.0.0", True), ("dev", False)])  # fmt: skip
def test_unknown_major_cli_version_is_format_drift(version: str, drifts: bool) -> None:
    adapter = RolloutAdapter()
    src = _rollouts(CODEX / "info_null")[0]
    ctx = SourceContext(src, SID)
    record = _meta(cli_version=version)
    if drifts:
        with pytest.raises(FormatDrift):
            adapter.map_record(record, 0, ctx, RowSink())
    else:
        assert adapter.map_record(record, 0, ctx, RowSink()) == "mapped"


def test_impossible_fields_are_invalid_records_not_crashes(tmp_path: Path) -> None:
    records = [
        _meta(),
        {"timestamp": "2026-05-01T09:00:01.000Z", "type": "event_msg", "payload": "not an object"},
        _ev("09:00:02.000", {"type": "token_count", "info": [1, 2]}),
        _ev("09:00:03.000", {"type": "message", "role": "user", "content": 5}, "response_item"),
        {"no_type": True},
        {"type": 7},
        _ev("09:00:04.000", {"type": "user_message", "message": "still imported"}),
    ]
    got = _extract(_rollouts(_rollout_home(tmp_path, records)))
    assert got.rejects == {"INVALID_RECORD": 3, "UNKNOWN_RECORD": 2}
    assert [e["text"] for e in got.events] == ["still imported"]


# --------------------------------------------------------------------------- appends


def _rows(got: Extracted) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    events = sorted((tuple(sorted(e.items())) for e in got.events), key=repr)
    usage = sorted((tuple(sorted(u.items())) for u in got.usage), key=repr)
    return events, usage


@pytest.mark.parametrize("name", ["contract_all_shapes", "subagent_replays_parent"])
def test_every_split_point_resumes_like_one_pass(name: str) -> None:
    """Reading up to any line, then the rest with the saved memo, maps exactly what one
    pass maps: running totals, the model, a pending dual-written message and the fork
    replay window all survive the checkpoint."""
    for src in _rollouts(CODEX / name):
        whole = _extract([src])
        data = src.path.read_bytes()
        cuts = [i + 1 for i, byte in enumerate(data) if byte == 0x0A][:-1]
        for cut in cuts:
            got = Extracted()
            state = None
            for start, stop in ((0, cut), (cut, len(data))):
                for batch in extract_source(SPEC, src, start=start, stop=stop, state=state):
                    got.events += batch.tables.events.to_pylist()
                    got.usage += batch.tables.usage.to_pylist()
                    state = batch.state
            assert _rows(got) == _rows(whole), f"{src.path.name} split at byte {cut}"


def test_append_in_a_later_run_equals_a_one_shot_import(tmp_path: Path) -> None:
    source = CODEX / "token_count_last_and_total"
    home = tmp_path / "home"
    shutil.copytree(source, home)
    (path,) = [s.path for s in _rollouts(home)]
    data = path.read_bytes()
    # cut right after the first token_count: the next one only has a cumulative total,
    # so its delta needs the total remembered by the first run
    cut = data.index(b"\n", data.index(b'"token_count"')) + 1
    path.write_bytes(data[:cut])
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _query(catalog, "SELECT count(*) FROM usage")[0][0] == 1
    with path.open("ab") as fh:
        fh.write(data[cut:])
    _import(home, catalog)
    clean = tmp_path / "clean.duckdb"
    _import(source, clean)
    tables = ("events", "usage", "sessions")
    assert snapshot(catalog, tables, keep_paths=False, exclude=("source_id",)) == snapshot(
        clean, tables, keep_paths=False, exclude=("source_id",)
    )
    totals = "SELECT sum(input_tokens), sum(cache_read_tokens), sum(output_tokens) FROM usage"
    assert _query(catalog, totals) == [(3700, 22300, 850)]


def test_archived_duplicate_counts_once(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(CODEX / "archived_duplicate", catalog)
    assert _query(catalog, "SELECT count(*) FROM sources")[0][0] == 3
    assert _query(catalog, "SELECT count(*) FROM usage")[0][0] == 2
    rows = _query(
        catalog,
        "SELECT session_id, events, prompts, archived FROM sessions ORDER BY session_id",
    )
    assert [(r[1], r[2], r[3]) for r in rows] == [(4, 1, True), (2, 1, True)]
    per_session = _query(catalog, "SELECT session_id, count(*) FROM events GROUP BY ALL")
    assert sorted(n for _, n in per_session) == [2, 4]


# --------------------------------------------------------------------------- state index


def _sessions(catalog: Path) -> dict[str, tuple[Any, ...]]:
    rows = _query(
        catalog,
        "SELECT session_id, title, title_rank, preview, model, project_path, archived, "
        "parent_session_id, strftime(timezone('UTC', started_at), '%Y-%m-%d %H:%M:%S'), "
        "strftime(timezone('UTC', updated_at), '%Y-%m-%d %H:%M:%S') FROM sessions",
    )
    return {r[0]: r[1:] for r in rows}


def test_state_index_enriches_sessions(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(CODEX / "state_index", catalog)
    got = _sessions(catalog)
    a, b, c = sorted(got, key=lambda s: s[-6:])
    assert got[a] == ("Rate limiter burst option", 2, "add a burst option to the rate limiter",
                      "gpt-5", "/home/dev/api-gateway", False, None,
                      "2026-05-09 09:00:00", "2026-05-09 09:40:00")  # fmt: skip
    assert got[b][:7] == ("Remove unused JWT helpers", 2, "delete the unused jwt helpers",
                          "gpt-5-codex", "/home/dev/api-gateway", True, None)  # fmt: skip
    assert got[c][4:7] == ("/home/dev/api-gateway", False, a)  # spawn edge (and session_meta)


def test_sessions_import_without_an_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(CODEX / "state_index", home)
    (home / ".codex" / "state_5.sqlite").unlink()
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    got = _sessions(catalog)
    assert len(got) == 3
    assert all(row[0] is None and row[2] is None for row in got.values())  # no title/preview
    assert {row[3] for row in got.values()} == {"gpt-5", "gpt-5-codex", "gpt-5-codex-mini"}


def _old_schema_db(path: Path, sid: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, created_at INTEGER, "
        "updated_at INTEGER, source TEXT, model_provider TEXT, cwd TEXT, title TEXT, "
        "sandbox_policy TEXT, approval_mode TEXT, tokens_used INTEGER DEFAULT 0, "
        "archived INTEGER DEFAULT 0, archived_at INTEGER, git_sha TEXT, git_branch TEXT, "
        "git_origin_url TEXT)"
    )
    con.execute(
        "INSERT INTO threads (id, created_at, updated_at, cwd, title, archived) "
        "VALUES (?, 1777626000, 1777629600, '/home/dev/demo', 'Old schema title', 1)",
        (sid,),
    )
    con.commit()
    con.close()


def test_older_index_schema_gives_the_columns_it_has(tmp_path: Path) -> None:
    home = _rollout_home(tmp_path, [_meta(), _ev("09:00:01.000", {"type": "user_message",
                                                                  "message": "hi"})])  # fmt: skip
    _old_schema_db(home / ".codex" / "state_5.sqlite", SID)
    (db,) = [s for s in _sources(home) if s.format == "codex-state"]
    got = _extract([db])
    assert got.sessions == [
        {"session_id": SID, "parent_session_id": None, "project_path": "/home/dev/demo",
         "title": "Old schema title", "title_rank": 2, "git_branch": None, "cli_version": None,
         "model": None, "preview": None, "archived": True,
         "started_at": "2026-05-01T09:00:00.000Z", "updated_at": "2026-05-01T10:00:00.000Z",
         "index_tokens": None,  # tokens_used 0, the column's default, says nothing
         "given_provider": None, "hidden": None}  # only agentlake's own exports give these
    ]  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _sessions(catalog)[SID][:2] == ("Old schema title", 2)


def test_index_without_threads_table_yields_nothing(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".codex" / "state_5.sqlite"
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY)")
    con.commit()
    con.close()
    (db,) = _sources(tmp_path / "home")
    batches = list(extract_source(SPEC, db, start=0, stop=db.size))
    assert len(batches) == 1 and batches[0].tables.sessions.num_rows == 0
    assert not batches[0].rejects
    catalog = tmp_path / "c.duckdb"
    _import(tmp_path / "home", catalog)
    assert _query(catalog, "SELECT count(*), any_value(status) FROM sources") == [(1, "ok")]


def test_index_is_opened_read_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(CODEX / "state_index", home)
    db = home / ".codex" / "state_5.sqlite"
    before = db.read_bytes()
    db.chmod(0o444)
    try:
        _import(home, tmp_path / "c.duckdb")
    finally:
        db.chmod(0o644)
    assert db.read_bytes() == before
    assert not (home / ".codex" / "state_5.sqlite-wal").exists()
