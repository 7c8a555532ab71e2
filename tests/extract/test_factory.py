"""The Factory Droid provider: discovery of the session store, the hooks' transcripts and
the settings files; the record mapping (reminders split from the person's prompt, the
version drift rule, the per-record sniff); and the token rule of ``.settings.json``:
cumulative totals stored as one session-granularity call whose latest snapshot wins.

Expected totals are computed by hand from fixtures/factory (see its README).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentlake.extract.adapter import FormatDrift, InvalidRecord
from agentlake.extract.providers import by_id, factory, factory_settings, resolve
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportResult
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows, import_provider
from tests.pipeline.helpers import snapshot

SPEC = by_id("factory")
HERE = FIXTURES / "factory"
A = "f0a1b2c3-0000-4000-8000-00000000a001"
B = "f0a1b2c3-0000-4000-8000-00000000b002"
C = "f0a1b2c3-0000-4000-8000-00000000c003"
DROID = CONFORMANCE / "jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/droid"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide/test/fixtures/sessions"

# --------------------------------------------------------------------------- helpers


def _home(name: str, tmp: Path) -> Path:
    target = tmp / name
    shutil.copytree(HERE / name, target, symlinks=True)
    return target


def _import(home: Path, catalog: Path, env: dict[str, str] | None = None) -> ImportResult:
    return import_provider("factory", home, catalog, env)


_rows = catalog_rows


def _usage(catalog: Path) -> list[tuple[Any, ...]]:
    """(session, model, input, cache_write, cache_read, output, reasoning) per call."""
    return _rows(
        catalog,
        "SELECT session_id, model, input_tokens, cache_write_tokens, cache_read_tokens, "
        "output_tokens, reasoning_tokens FROM usage ORDER BY session_id",
    )


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _settings(**tokens: int) -> dict[str, Any]:
    return {"model": "Claude-Opus-4.1-[Anthropic]", "providerLock": "anthropic",
            "providerLockTimestamp": "2026-05-20T10:00:00.000Z", "tokenUsage": tokens}  # fmt: skip


def _store(home: Path) -> Path:
    return home / ".factory" / "sessions" / "-home-dev-shop"


# --------------------------------------------------------------------------- registry


def test_registry_row() -> None:
    assert resolve("droid") is SPEC and SPEC.id == "factory"
    assert SPEC.env_overrides == ("DROID_SESSIONS_DIR", "FACTORY_DIR")
    assert {(f.name, f.position_kind) for f in SPEC.formats} == {
        ("factory-session", "byte-offset"),
        ("factory-project", "byte-offset"),
        ("factory-settings", "document"),
        ("factory-droid-jsonl", "byte-offset"),
    }
    (export,) = [f for f in SPEC.formats if f.origin == "export"]
    assert export.name == "factory-droid-jsonl" and export.sniff is not None
    assert not export.owns(("-home-dev-x", f"{A}.jsonl")) and not export.owns((f"{A}.jsonl",))
    assert SPEC.support == "both"
    assert SPEC.capabilities == {"discover", "stream", "tokens"}
    assert SPEC.fixtures == ("fixtures/factory",)


def test_default_roots() -> None:
    roots = SPEC.roots(Path("/h"), {})
    assert [(r.path, r.formats, r.origin) for r in roots] == [
        (Path("/h/.factory/sessions"), ("factory-session", "factory-settings"), "default"),
        (Path("/h/.factory/projects"), ("factory-project",), "default"),
    ]
    assert all(r.warning is None for r in roots)


def test_peer_environment_overrides() -> None:
    env = {"FACTORY_DIR": "/data/factory", "DROID_SESSIONS_DIR": "/a/sessions, /b/old ,rel"}
    roots = SPEC.roots(Path("/h"), env)
    assert [(r.path, r.origin) for r in roots] == [
        (Path("/a/sessions"), "DROID_SESSIONS_DIR"),
        (Path("/b/old"), "DROID_SESSIONS_DIR"),
        (Path("/data/factory/projects"), "FACTORY_DIR"),
    ]
    assert roots[0].warning == "relative DROID_SESSIONS_DIR entries were ignored"
    relative = SPEC.roots(Path("/h"), {"FACTORY_DIR": "factory"})
    assert relative[0].path == Path("/h/.factory/sessions")
    assert relative[0].warning == "FACTORY_DIR='factory' is relative and was ignored"


@pytest.mark.parametrize(
    ("rel", "owners"),
    [
        (f"-home-dev-x/{A}.jsonl", ["factory-session", "factory-project"]),
        (f"{A}.jsonl", ["factory-session"]),
        (f"-home-dev-x/{A}.settings.json", ["factory-settings"]),
        (f"{A}.settings.json", ["factory-settings"]),
        (f"-home-dev-x/{A}.json", []),
        (f"-home-dev-x/{A}.jsonl.tmp", []),
        (f"-home-dev-x/.{A}.jsonl", []),
        ("-home-dev-x/.jsonl", []),
        ("-home-dev-x/.settings.json", []),
        (f".cache/{A}.jsonl", []),
        (f"-home-dev-x/nested/{A}.jsonl", []),
        ("-home-dev-x/notes.txt", []),
    ],
)
def test_predicates(rel: str, owners: list[str]) -> None:
    assert [f.name for f in SPEC.formats if f.owns(tuple(rel.split("/")))] == owners


def test_roots_admit_only_their_formats(tmp_path: Path) -> None:
    """A settings file under projects/ is not admitted; a transcript in projects/ is."""
    home = _home("contract_all_record_types", tmp_path)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(SPEC,))
    found = sorted((s.source.format, s.path.name) for s in plan.sources if s.source)
    assert found == [
        ("factory-project", "exec-run.jsonl"),
        ("factory-project", f"{C}.jsonl"),
        ("factory-session", f"{A}.jsonl"),
        ("factory-session", f"{B}.jsonl"),
        ("factory-settings", f"{A}.settings.json"),
        ("factory-settings", f"{B}.settings.json"),
    ]


# --------------------------------------------------------------------------- records


def test_reminders_are_split_from_the_prompt() -> None:
    split = factory.split_reminders
    assert split("plain") == (None, "plain")
    assert split("<system-reminder>\nbe brief\n</system-reminder>\n\nadd a check") == (
        "<system-reminder>\nbe brief\n</system-reminder>",
        "add a check",
    )
    two = "<system-reminder>a</system-reminder>\ndo it\n<system-reminder>b</system-reminder>"
    both = "<system-reminder>a</system-reminder>\n\n<system-reminder>b</system-reminder>"
    assert split(two) == (both, "do it")
    assert split("<system-reminder>only</system-reminder>") == (
        "<system-reminder>only</system-reminder>",
        None,
    )
    assert split("<system-reminder>unclosed") == (None, "<system-reminder>unclosed")


def test_version_drift_rule() -> None:
    assert factory.check_version(None) is None
    assert factory.check_version(2) is None
    assert factory.check_version("1") is None
    assert factory.check_version("0.81.0") == "0.81.0"  # the CLI's version, never drift
    assert factory.check_version("3.0.0") == "3.0.0"
    for unknown in (3, "3", 0):
        with pytest.raises(FormatDrift):
            factory.check_version(unknown)
    for impossible in (True, 2.5, {"major": 2}):
        with pytest.raises(InvalidRecord):
            factory.check_version(impossible)


def test_contract_home_sessions_and_events(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(_home("contract_all_record_types", tmp_path), catalog).exit_code == 0
    sessions = _rows(
        catalog,
        "SELECT session_id, project_path, title, cli_version, model, prompts, tool_calls "
        "FROM sessions ORDER BY session_id",
    )
    assert sessions == [
        (A, "/home/dev/shop", "Add a health check", None, "claude-sonnet-4-5", 3, 2),
        (B, "/home/dev/api", "API pagination", "0.81.0", "gpt-5", 1, 0),
        (C, "/home/dev/shop", "Hook transcript", None, None, 1, 0),
    ]
    first = _rows(
        catalog,
        f"SELECT kind, text FROM events WHERE session_id = '{A}' ORDER BY seq LIMIT 2",
    )
    assert first == [
        ("system", "<system-reminder>\nBe brief.\n</system-reminder>"),
        ("prompt", "add a health check endpoint"),
    ]
    errors = _rows(catalog, "SELECT tool_call_id, is_error FROM events WHERE kind = 'tool_result'")
    assert sorted(errors, key=str) == [("toolu_a1", None), ("toolu_a2", True)]
    call = _rows(catalog, "SELECT tool_name, tool_input FROM events WHERE kind = 'tool_call'")
    assert ("Execute", '{"command":"rg -n route src","riskLevel":"low"}') in call
    assert _rows(catalog, f"SELECT kind FROM events WHERE session_id = '{B}' ORDER BY seq") == [
        ("system",),  # the <environment_context> bootstrap message
        ("prompt",),
        ("response",),
    ]


def test_other_record_families_are_rejected_with_their_reason(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(_home("contract_all_record_types", tmp_path), catalog)
    details = [d for (d,) in _rows(catalog, "SELECT detail FROM rejects ORDER BY ALL")]
    assert len(details) == 5
    assert sum("droid exec stream-json record" in d for d in details) == 3
    assert sum("AIWG's synthetic factory-droid-jsonl family" in d for d in details) == 1
    assert "unknown record type 'todo_state'" in details
    # the stream-json log makes no session (its completion usage is not a call either)
    assert _rows(catalog, "SELECT count(*) FROM sessions WHERE session_id LIKE 'exec%'") == [(0,)]


def test_impossible_fields_are_invalid_and_a_changing_id_too(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write(_store(home) / f"{A}.jsonl", [
        {"type": "message", "id": "m1", "timestamp": "2026-05-20T10:00:00.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "first"}]}},
        {"type": "session_start", "id": "another-session", "version": 2},
        {"type": "message", "id": "m2", "message": {"role": 7, "content": "x"}},
        {"type": "message", "id": "m3", "message": {"role": "user", "content": 42}},
        {"type": "message", "id": "m3b", "message": "not an object"},
        {"type": "session_start", "id": A, "title": ["not", "text"]},
        {"type": "message", "id": "m4", "timestamp": 1779271201000,
         "message": {"role": "assistant", "content": "epoch-ms time, string content"}},
    ])  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL") == [
        ("INVALID_RECORD", 5)
    ]
    assert _rows(catalog, "SELECT session_id, kind, ts::VARCHAR FROM events ORDER BY seq") == [
        (A, "prompt", "2026-05-20 10:00:00+00"),
        (A, "response", "2026-05-20 10:00:01+00"),
    ]


def test_session_start_id_names_the_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write(_store(home) / "renamed-file.jsonl", [
        {"type": "session_start", "id": A, "title": "t", "version": 2, "cwd": "/home/dev/shop"},
        {"type": "message", "id": "m1", "timestamp": "2026-05-20T10:00:00.000Z",
         "message": {"role": "user", "content": "hi"}},
    ])  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _rows(catalog, "SELECT DISTINCT session_id FROM events") == [(A,)]
    # a later run reads the appended lines as the same session (the id is in the memo)
    with (_store(home) / "renamed-file.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "message", "id": "m2", "timestamp": "2026-05-20T10:00:02Z",
                             "message": {"role": "assistant", "content": "hello"}}) + "\n")  # fmt: skip
    assert _import(home, catalog).exit_code == 0
    assert _rows(catalog, "SELECT session_id, count(*) FROM events GROUP BY ALL") == [(A, 2)]
    assert _rows(catalog, "SELECT session_id FROM sessions") == [(A,)]


# --------------------------------------------------------------------------- tokens


def test_model_names_are_normalized_as_ccusage_does() -> None:
    norm = factory_settings.normalize_model
    assert norm("Claude-Sonnet-4-[Anthropic]") == "claude-sonnet-4"
    assert norm("custom:Claude-Opus-4.5-Thinking-[Anthropic]-0") == "claude-opus-4-5-thinking-0"
    assert norm("gemini-2.5-pro") == "gemini-2-5-pro"
    assert norm("GPT 5  Codex") == "gpt-5-codex"
    assert norm("[x]") is None


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        ({"inputTokens": 10, "outputTokens": 5, "cacheCreationTokens": 2, "cacheReadTokens": 3,
          "thinkingTokens": 4}, (10, 2, 0, 3, 9, 4)),
        ({"totalTokens": 456}, (0, 0, 0, 0, 456, 0)),  # parts missing: output
        ({"inputTokens": 100, "outputTokens": 10, "totalTokens": 150}, (100, 0, 0, 0, 50, 40)),
        ({"inputTokens": 100, "totalTokens": 50}, (100, 0, 0, 0, 0, 0)),  # total too small
    ],
)  # fmt: skip
def test_settings_token_rule(tokens: dict[str, int], expected: tuple[int, ...]) -> None:
    sink = RowSink()
    adapter = factory_settings.DroidSettingsAdapter()
    source = SourceFile("factory", Path(f"/s/{A}.settings.json"), Path("/s"), "document",
                        "factory-settings", 0, 0, 0, 0)  # fmt: skip
    ctx = adapter.locate(source)
    assert ctx.session_id == A
    assert adapter.map_document(_settings(**tokens), ctx, sink) == 1
    (row,) = sink.build().usage.to_pylist()
    identity = (row["message_id"], row["native_id"], row["model"], row["per_session"])
    assert identity == (None, "session-total", "claude-opus-4-1", True)
    got = tuple(row[k] for k in ("input_tokens", "cache_write_tokens", "cache_write_1h_tokens",
                                 "cache_read_tokens", "output_tokens", "reasoning_tokens"))  # fmt: skip
    assert got == expected
    assert row["rank"] == sum(got) - got[-1]  # the snapshot's total grows with the session


def test_settings_without_tokens_give_the_model_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = _store(home)
    store.mkdir(parents=True)
    (store / f"{A}.settings.json").write_text(json.dumps({"model": "gpt-5"}))
    (store / f"{B}.settings.json").write_text(json.dumps({"tokenUsage": {"inputTokens": 0}}))
    (store / f"{C}.settings.json").write_text(json.dumps({"tokenUsage": [1, 2]}))
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    assert _usage(catalog) == []
    assert _rows(catalog, "SELECT session_id, model FROM sessions ORDER BY ALL") == [
        (A, "gpt-5"),
        (B, None),
    ]
    assert _rows(catalog, "SELECT reason FROM rejects") == [("INVALID_RECORD",)]


def test_without_a_lock_time_the_snapshot_is_dated_by_the_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _store(home) / f"{A}.settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"model": "gpt-5", "tokenUsage": {"inputTokens": 7}}))
    os.utime(path, (1_779_000_000, 1_779_000_000))  # 2026-05-17T06:40:00Z
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert _rows(catalog, "SELECT ts::VARCHAR FROM usage") == [("2026-05-17 06:40:00+00",)]


def test_a_rewritten_settings_file_counts_only_its_latest_totals(tmp_path: Path) -> None:
    home = _home("contract_all_record_types", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    path = _store(home) / f"{A}.settings.json"
    first = ("claude-sonnet-4-5", 1200, 2000, 15000, 400, 100)
    assert _usage(catalog)[0] == (A, *first)
    doc = json.loads(path.read_text())
    doc["tokenUsage"] = {"inputTokens": 3000, "outputTokens": 900, "cacheCreationTokens": 2500,
                         "cacheReadTokens": 40000, "thinkingTokens": 300}  # fmt: skip
    path.write_text(json.dumps(doc, indent=2))
    assert _import(home, catalog).exit_code == 0
    latest = ("claude-sonnet-4-5", 3000, 2500, 40000, 1200, 300)
    assert _usage(catalog)[0] == (A, *latest)
    assert _rows(
        catalog, f"SELECT count(*), bool_and(per_session) FROM usage WHERE session_id = '{A}'"
    ) == [(1, True)]
    # the session's events and its settings file are one session, whose total follows
    totals = f"SELECT count(*), sum(total_tokens) FROM sessions WHERE session_id = '{A}'"
    assert _rows(catalog, totals) == [(1, 3000 + 2500 + 40000 + 1200)]


def test_an_older_copy_of_the_snapshot_changes_nothing(tmp_path: Path) -> None:
    """An earlier snapshot of the same session (an archived copy, directly in the store)
    read after the latest one, or before it, leaves the latest totals alone."""
    home = tmp_path / "home"
    later = _store(home) / f"{A}.settings.json"
    older = home / ".factory" / "sessions" / f"{A}.settings.json"
    later.parent.mkdir(parents=True)
    older.write_text(json.dumps(_settings(inputTokens=100, outputTokens=10)))
    later.write_text(json.dumps(_settings(inputTokens=500, outputTokens=90)))
    together = tmp_path / "together.duckdb"
    _import(home, together)
    assert _usage(together) == [(A, "claude-opus-4-1", 500, 0, 0, 90, 0)]
    # the older copy appearing after the latest was imported
    older.rename(tmp_path / "aside.json")
    one_by_one = tmp_path / "one_by_one.duckdb"
    _import(home, one_by_one)
    (tmp_path / "aside.json").rename(older)
    _import(home, one_by_one)
    assert _usage(one_by_one) == _usage(together)
    assert snapshot(one_by_one, ("usage", "sessions")) == snapshot(together, ("usage", "sessions"))


# --------------------------------------------------------------------------- conformance


def _conformance_home(tmp: Path, files: dict[Path, str]) -> Path:
    """A home holding conformance files (copied to a temporary directory only) under
    the names given, relative to ``~/.factory``."""
    home = tmp / "home"
    for source, name in files.items():
        target = home / ".factory" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return home


@pytest.mark.skipif(not DROID.is_dir(), reason="conformance data not present")
def test_conformance_session_store_and_stream_json(tmp_path: Path) -> None:
    home = _conformance_home(tmp_path, {
        DROID / "session_store_small.jsonl": "sessions/-tmp/small.jsonl",
        DROID / "session_store_large.jsonl": "sessions/-tmp-large/large.jsonl",
        DROID / "session_store_schema_drift.jsonl": "sessions/-tmp/drift.jsonl",
        DROID / "stream_json_small.jsonl": "projects/-tmp/stream-small.jsonl",
        DROID / "stream_json_large.jsonl": "projects/-tmp/stream-large.jsonl",
        DROID / "stream_json_schema_drift.jsonl": "projects/-tmp/stream-drift.jsonl",
    })  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    assert _import(home, catalog).exit_code == 0
    kinds = _rows(
        catalog,
        "SELECT session_id, kind, count(*) FROM events GROUP BY ALL ORDER BY ALL",
    )
    assert kinds == [
        ("droid_drift", "prompt", 1),
        ("droid_drift", "response", 1),
        ("droid_drift", "system", 1),  # the <system-reminder> split from "Do the thing"
        ("droid_large", "prompt", 2),
        ("droid_large", "response", 3),
        ("droid_large", "tool_call", 1),
        ("droid_large", "tool_result", 1),
        ("droid_s1", "prompt", 1),
        ("droid_s1", "tool_call", 1),
        ("droid_s1", "tool_result", 1),
    ]
    prompt = "SELECT text FROM events WHERE session_id = 'droid_drift' AND kind = 'prompt'"
    assert _rows(catalog, prompt) == [("Do the thing",)]
    assert _rows(catalog, "SELECT session_id, cli_version, title FROM sessions ORDER BY ALL") == [
        ("droid_drift", None, "Stage0 Droid Drift"),
        ("droid_large", "0.81.0", "Stage0 Droid Large"),
        ("droid_s1", "0.81.0", "Stage0 Droid Small"),
    ]
    # every stream-json line is rejected with its reason; none of their usage is a call
    streamed = sum(
        len([line for line in p.read_bytes().splitlines() if line.strip()])
        for p in DROID.glob("stream_json_*.jsonl")
    )
    assert _rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL") == [
        ("UNKNOWN_RECORD", streamed)
    ]
    assert _usage(catalog) == []


@pytest.mark.skipif(not AIWG.is_dir(), reason="conformance data not present")
def test_conformance_aiwg_fixtures(tmp_path: Path) -> None:
    """AIWG's current-shape files import; its synthetic ``schemaVersion`` family is
    rejected record by record (not drift: ``schemaVersion`` is AIWG's, not Droid's)."""
    files = {p: f"sessions/-synthetic/{p.stem}.jsonl" for p in (AIWG / "factory").glob("*.jsonl")}
    files[AIWG / "regression-v1/factory/current.jsonl"] = "sessions/-synthetic-r/current.jsonl"
    files[AIWG / "regression-v1/factory/malformed.jsonl"] = "sessions/-synthetic-r/malformed.jsonl"
    catalog = tmp_path / "c.duckdb"
    assert _import(_conformance_home(tmp_path, files), catalog).exit_code == 0
    assert _rows(
        catalog, "SELECT session_id, kind, count(*) FROM events GROUP BY ALL ORDER BY ALL"
    ) == [
        ("factory-current-session", "prompt", 1),
        ("shared-session", "prompt", 1),
        ("shared-session", "response", 1),
        ("shared-session", "system", 1),  # the <environment_context> bootstrap
    ]
    # complete 5 + active-incomplete 2 + malformed 1 + unknown-major 1 + the regression
    # files' session_end 1 and malformed 1; active-incomplete's torn tail ends with a
    # newline, so it is a MALFORMED line, not a pending one
    assert _rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL ORDER BY ALL") == [
        ("MALFORMED", 1),
        ("UNKNOWN_RECORD", 11),
    ]
