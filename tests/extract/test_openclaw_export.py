"""The ``openclaw-consistent-snapshot-jsonl`` export of the OpenClaw provider: every
snapshot, session and event shape of provider-formats-more §5 (fixtures/openclaw/export),
the token rule shared with the native reader, refused and lossy snapshots, drift, a file
not in the format, one session read natively and from a snapshot without doubled rows,
the sniffer, AIWG's conformance files (skipped when absent), a fuzz of the export's bytes and
one of its fields' types.

Expected figures are computed by hand from the fixtures (fixtures/openclaw/README.md,
"Exports") with the native rule: one call per event with a ``usage`` object, keyed by
(session, event ``id``); ``input = input``, ``cache_write = cacheWrite``,
``cache_read = cacheRead``, ``output = output`` (else ``totalTokens`` minus the parts).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlake.errors import ConfigurationError
from agentlake.extract.adapter import FormatDrift, InvalidRecord, SourceContext
from agentlake.extract.providers import by_id, openclaw_export
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.ingest.files import NamedFile, guess_format
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows
from tests.extract.test_fuzz import EXPORT_FUZZ_EXAMPLES, MUTATION_LISTS, account_export

SPEC = by_id("openclaw")
FORMAT = openclaw_export.FORMAT
HERE = FIXTURES / "openclaw"
EXPORTS = HERE / "export"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide/test/fixtures/sessions/openclaw"
S1 = "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c21"
S2 = "4c3b2a19-0f8e-4d7c-8b6a-5f4e3d2c1b32"
S3 = "1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c43"
A = "0f8e2c4a-1b3d-4e5f-9a7b-6c5d4e3f2a10"  # session A of all_record_types (JSONL)
D = "2b1a0f9e-8d7c-4b6a-9e5f-4d3c2b1a0f80"  # session D of all_record_types (SQLite store)
_rows = catalog_rows
_USAGE = (
    "SELECT count(*), sum(input_tokens), sum(cache_write_tokens), sum(cache_read_tokens), "
    "sum(output_tokens), sum(reasoning_tokens), sum(total_tokens) FROM usage"
)

# --------------------------------------------------------------------------- helpers


def _import(catalog: Path, *files: Path, home: Path | None = None, named: bool = True
            ) -> ImportResult:  # fmt: skip
    """Import ``files`` (named in the snapshot format, else guessed) and, with ``home``,
    what the provider discovers there."""
    options: dict[str, Any] = {
        "files": tuple(NamedFile(f, FORMAT if named else None) for f in files)
    }
    if home is not None:
        options["providers"] = ("openclaw",)
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home or Path("/nonexistent"),
                      env={}, build_index=False, **options)
    )  # fmt: skip


def _kinds(catalog: Path, session: str | None = None) -> dict[str, int]:
    where = f"WHERE session_id = '{session}'" if session else ""
    return dict(_rows(catalog, f"SELECT kind, count(*) FROM events {where} GROUP BY ALL"))


def _rejects(catalog: Path) -> list[tuple[Any, ...]]:
    return _rows(catalog, 'SELECT reason, detail FROM rejects ORDER BY "offset"')


def _map(line: dict[str, Any]) -> RowSink:
    sink = RowSink()
    path = Path("/home/dev/snapshot.jsonl")
    source = SourceFile("openclaw", path, path.parent, "byte-offset", FORMAT, 0, 0, 0, 0)
    openclaw_export.SnapshotAdapter().map_record(line, 0, SourceContext(source, "f"), sink)
    return sink


def _line(*sessions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"schemaVersion": 16, "eventVersion": 3, "snapshotConsistency": "sqlite-backup",
            "sessions": list(sessions), **extra}  # fmt: skip


def _session(sid: str, *events: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": sid, "sessionKey": f"agent:main:{sid}", "events": list(events), **extra}


# --------------------------------------------------------------------------- registry


def test_registry_row_names_the_export() -> None:
    fmt = SPEC.formats[-1]
    assert (fmt.name, fmt.position_kind, fmt.origin) == (FORMAT, "byte-offset", "export")
    assert fmt.sniff is openclaw_export.sniff
    assert not fmt.owns(("main", "sessions", "snapshot.jsonl"))
    assert SPEC.support == "both"
    assert "tests/extract/test_openclaw_export.py" in SPEC.tests


# --------------------------------------------------------------------------- mapping


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    catalog = tmp_path_factory.mktemp("snapshot") / "c.duckdb"
    assert _import(catalog, EXPORTS / "snapshot.jsonl").exit_code == 0
    return catalog


def test_every_event_shape_maps_to_its_kind(snapshot: Path) -> None:
    assert _rows(snapshot, "SELECT count(*) FROM rejects") == [(0,)]
    # S1: header, 14 events (two tools each a call and a result), then e15 of line 2
    assert _kinds(snapshot, S1) == {
        "system": 5, "prompt": 2, "reasoning": 1, "response": 4, "tool_call": 2,
        "tool_result": 3, "summary": 1,
    }  # fmt: skip
    assert _kinds(snapshot, S2) == {"system": 3, "prompt": 1, "response": 1}
    assert _kinds(snapshot, S3) == {"system": 1, "prompt": 1}
    assert _kinds(snapshot) == {
        "prompt": 4, "response": 5, "reasoning": 1, "tool_call": 2, "tool_result": 3,
        "summary": 1, "system": 9,
    }  # fmt: skip
    tools = _rows(snapshot, "SELECT kind, tool_name, tool_call_id, tool_input, text, is_error "
                            "FROM events WHERE tool_name IS NOT NULL ORDER BY ALL")  # fmt: skip
    assert tools == [
        ("tool_call", "edit", "e05", None, None, None),
        ("tool_call", "exec", "e04", '{"command":"pytest -q tests/test_login.py"}', None, None),
        ("tool_result", "edit", "e05", None, "oldText not found", True),
        ("tool_result", "exec", "e04", None, "1 failed", False),
    ]
    texts = dict(_rows(snapshot, f"SELECT text, kind FROM events WHERE session_id = '{S1}'"))
    assert texts["[image image/png screenshot.png]"] == "prompt"
    assert texts["[file application/pdf spec.pdf]"] == "system"
    assert texts["Earlier turns fixed the login test."] == "summary"
    assert texts["rewind at checkpoint cp-1"] == "system"
    assert texts['trajectory: {"step":3,"action":"plan"}'] == "system"
    assert texts["3 passed"] == "tool_result"
    assert texts["Stopped early."] == "response"  # all-zero usage: no call
    lineage = _rows(snapshot, f"SELECT text FROM events WHERE session_id = '{S2}' "
                              "AND kind = 'system' ORDER BY ts")  # fmt: skip
    assert [t for (t,) in lineage][1:] == [
        f"fork from session {S1}",
        "reset from session ops-previous",
    ]


def test_tokens_per_call_exact(snapshot: Path) -> None:
    assert _rows(snapshot, _USAGE) == [(4, 1750, 500, 30100, 180, 0, 32530)]
    assert _rows(snapshot, "SELECT session_id, model, input_tokens, cache_write_tokens, "
                           "cache_read_tokens, output_tokens FROM usage ORDER BY ALL") == [
        (S2, "claude-sonnet-4-5", 50, 0, 100, 20),
        (S1, "gpt-5.2", 100, 0, 0, 10),  # e15, only in the later snapshot
        (S1, "gpt-5.2", 400, 0, 0, 60),  # output from totalTokens
        (S1, "gpt-5.2", 1200, 500, 30000, 90),  # also in the later snapshot: once
    ]  # fmt: skip


def test_session_rows_and_the_header_naming_the_agent(snapshot: Path) -> None:
    assert _rows(snapshot, "SELECT session_id, parent_session_id, model, archived, "
                           "CAST(started_at AS VARCHAR), CAST(updated_at AS VARCHAR) "
                           "FROM sessions ORDER BY started_at") == [
        (S1, None, "gpt-5.2", None, "2026-04-01 10:00:00+00", "2026-04-01 10:10:00+00"),
        (S2, S1, "claude-sonnet-4-5", True, "2026-04-01 10:01:00+00", "2026-04-01 10:02:00+00"),
        (S3, None, None, None, "2026-04-01 10:11:40+00", "2026-04-01 10:11:41+00"),
    ]  # fmt: skip
    headers = _rows(snapshot, "SELECT session_id, text FROM events WHERE text LIKE "
                              "'OpenClaw session %' ORDER BY session_id")  # fmt: skip
    assert headers == [
        (S3, "OpenClaw session agent:main:deleted; agent main; deleted by OpenClaw at "
             "2026-04-01T10:15:00.000Z"),
        (S2, "OpenClaw session agent:ops:fork; agent ops; state version 2; archived"),
        (S1, "OpenClaw session agent:main:main; agent main; conversation conv-login; "
             "state version 4; active"),
    ]  # fmt: skip


def test_lossy_projections_are_imported_and_say_so(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, EXPORTS / "degraded.jsonl").exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]
    assert _kinds(catalog) == {"system": 4, "prompt": 1, "response": 1}
    assert _rows(catalog, _USAGE) == [(1, 30, 0, 0, 5, 0, 35)]
    headers = [t for (t,) in _rows(catalog, "SELECT text FROM events WHERE text LIKE "
                                            "'OpenClaw session %' ORDER BY text")]  # fmt: skip
    assert headers == [
        "OpenClaw session agent:main:bounded; agent main; active; lossy bounded-history "
        "projection, incomplete: the gateway kept the last 20 turns; history before "
        "2026-04-01T10:00:00.000Z omitted; history gap (sequences 20–21 held)",
        "OpenClaw session agent:main:html; lossy html projection, incomplete: rendered HTML only",
        "OpenClaw session agent:main:trajectory; lossy trajectory projection, incomplete",
    ]


def test_refused_and_bad_lines_are_rejected_with_their_reason(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, EXPORTS / "refused.jsonl").exit_code == 0
    assert _rejects(catalog) == [
        ("INVALID_RECORD", "incognito snapshot: OpenClaw keeps incognito sessions inaccessible"),
        ("INVALID_RECORD", "remote gateway host 'gateway-other' is not the expected "
                           "'gateway-dev': a degraded snapshot, refused"),
        ("INVALID_RECORD", "not a consistent snapshot (no snapshotConsistency 'sqlite-backup'): "
                           "a copy of the live database may be torn"),
        ("INVALID_RECORD", "a snapshot session needs a string 'sessionKey'"),
        ("DUPLICATE_ID", "event 'x01' is given twice in one session"),
        ("INVALID_RECORD", "event 'text' has an impossible type"),
        ("INVALID_RECORD", "'lineage.kind' is not reset, fork, rewind or compaction"),
        ("INVALID_RECORD", "unknown projection kind 'pdf'"),
        ("INVALID_RECORD", "token count 1152921504606846976 out of range"),
        ("MALFORMED", "invalid JSON at column 50"),
    ]  # fmt: skip
    # only the good line is imported; nothing of a rejected line (checked whole first)
    assert _rows(catalog, "SELECT DISTINCT session_id FROM events") == [
        ("3f2e1d0c-9b8a-4c7d-8e6f-5a4b3c2d1e87",)
    ]
    assert _rows(catalog, "SELECT count(*) FROM usage") == [(0,)]


def test_drift_and_a_file_not_in_the_format(tmp_path: Path) -> None:
    result = _import(tmp_path / "major.duckdb", EXPORTS / "unknown_major.jsonl")
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _rows(tmp_path / "major.duckdb", "SELECT count(*) FROM events") == [(0,)]
    event = tmp_path / "event.duckdb"
    result = _import(event, EXPORTS / "unknown_event_major.jsonl")
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _kinds(event) == {"system": 1, "prompt": 1}  # the clean line before it
    result = _import(tmp_path / "corrupt.duckdb", EXPORTS / "not_a_snapshot.jsonl")
    assert [s.code for s in result.refused] == ["SOURCE_CORRUPT"]
    assert _rows(tmp_path / "corrupt.duckdb", "SELECT count(*) FROM events") == [(0,)]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("schemaVersion", "16.4.0", None), ("schemaVersion", 17, FormatDrift),
        ("eventVersion", "3.2", None), ("eventVersion", 4, FormatDrift),
        ("schemaVersion", None, InvalidRecord), ("eventVersion", [3], InvalidRecord),
        ("sessions", {}, InvalidRecord), ("gateway", {"mode": "cloud"}, InvalidRecord),
        ("projection", {"kind": "canonical", "complete": "yes"}, InvalidRecord),
        ("projection", {"kind": ["html"]}, InvalidRecord), ("gateway", {"mode": ["local"]}, InvalidRecord),
        ("providerDeletedAt", True, InvalidRecord),
    ],
)  # fmt: skip
def test_line_fields(field: str, value: Any, error: type[Exception] | None) -> None:
    line = _line(_session("s", {"id": "e", "type": "message", "role": "user", "text": "hi"}))
    line[field] = value
    if error is None:
        assert _map(line).event_count == 2
    else:
        with pytest.raises(error):
            _map(line)


@pytest.mark.parametrize(
    "bad",
    [
        {"startedAt": True}, {"window": {"historyGap": "no"}}, {"agentId": 7},
        {"events": [{"id": "e", "type": "tool", "tool": {"name": 1}}]},
        {"events": [{"id": "e", "type": "message", "usage": {"input": 2**60}}]},
        {"events": [{"id": "e", "type": "message", "model": "gpt"}]},
        {"events": [{"type": "message"}]}, {"events": ["e"]},
        {"events": [{"id": "e", "type": "lifecycle", "lineage": {"kind": ["fork"]}}]},
    ],
)  # fmt: skip
def test_impossible_session_and_event_fields_reject_the_line(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidRecord):
        _map(_line(_session("s", **bad)))


def test_a_session_twice_in_one_line_is_a_duplicate() -> None:
    with pytest.raises(InvalidRecord) as raised:
        _map(_line(_session("s"), _session("s")))
    assert raised.value.reason == "DUPLICATE_ID"


# --------------------------------------------------------------------------- identity


def test_a_session_read_natively_and_from_a_snapshot_is_one_session(tmp_path: Path) -> None:
    """overlap.jsonl holds three records of session A (JSONL: a prompt, a reply with
    usage, the compaction) and one record only it has, then the prompt and the reply with
    usage of session D (only in the agent's SQLite store): the native events and calls
    stand; the snapshot adds two headers and its new reply and call, whichever is read
    first."""
    home = tmp_path / "home"
    shutil.copytree(HERE / "all_record_types", home, symlinks=True)
    native = tmp_path / "native.duckdb"
    assert _import(native, home=home).exit_code == 0
    native_first, snapshot_first = tmp_path / "native-first.duckdb", tmp_path / "snap.duckdb"
    assert _import(native_first, home=home).exit_code == 0
    assert _import(native_first, EXPORTS / "overlap.jsonl").exit_code == 0
    assert _import(snapshot_first, EXPORTS / "overlap.jsonl").exit_code == 0
    assert _import(snapshot_first, home=home).exit_code == 0
    kinds_a, kinds_d = _kinds(native, A), _kinds(native, D)
    native_ids = set(_rows(native, "SELECT event_id FROM events"))
    native_calls = set(_rows(native, "SELECT call_id FROM usage"))
    sessions = _rows(native, "SELECT count(*) FROM sessions")
    n, inp, write, read, out, _, total = _rows(native, _USAGE)[0]
    for catalog in (native_first, snapshot_first):
        assert _kinds(catalog, A) == {**kinds_a, "system": kinds_a["system"] + 1,
                                      "response": kinds_a["response"] + 1}  # fmt: skip
        assert _kinds(catalog, D) == {**kinds_d, "system": kinds_d.get("system", 0) + 1}
        assert _rows(catalog, "SELECT count(*) FROM sessions") == sessions
        assert _rows(catalog, _USAGE) == [(n + 1, inp + 70, write, read, out + 9, 0, total + 79)]
        ids = set(_rows(catalog, "SELECT event_id FROM events"))
        assert native_ids < ids and len(ids) == len(native_ids) + 3
        calls = set(_rows(catalog, "SELECT call_id FROM usage"))
        assert native_calls < calls and len(calls) == len(native_calls) + 1


# --------------------------------------------------------------------------- sniffing


def test_format_is_guessed_for_snapshots_only() -> None:
    for name in ("snapshot.jsonl", "degraded.jsonl", "refused.jsonl", "unknown_major.jsonl",
                 "unknown_event_major.jsonl", "overlap.jsonl"):  # fmt: skip
        assert guess_format(EXPORTS / name)[1].name == FORMAT
    with pytest.raises(ConfigurationError):
        guess_format(EXPORTS / "not_a_snapshot.jsonl")
    head = (EXPORTS / "snapshot.jsonl").read_bytes()
    cut = head.index(b'"sessions":[') + 20
    assert openclaw_export.sniff(head[:cut])  # a first line cut by the sniffing window
    assert not openclaw_export.sniff(head[:40])  # no eventVersion or sessions in sight
    assert not openclaw_export.sniff(b'{"schemaVersion":16,"eventVersion":3,"sessions":{}}\n')
    assert not openclaw_export.sniff(b'{"id":"s","schemaVersion":16,"eventVersion":3,'
                                     b'"sessions":[]}\n')  # fmt: skip
    # other providers' files, native and exported, are not claimed
    for other in FIXTURES.rglob("*.json*"):
        if other.is_file() and other.parent != EXPORTS:
            assert not openclaw_export.sniff(other.read_bytes()[:65536]), other


def test_guessed_import_reads_the_snapshot(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, EXPORTS / "snapshot.jsonl", named=False).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM sessions") == [(3,)]


# --------------------------------------------------------------------------- conformance


@pytest.mark.skipif(not AIWG.is_dir(), reason="conformance data not present")
@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("complete", "ok"), ("active", "ok"), ("bounded-history", "lossy"), ("html", "lossy"),
        ("trajectory", "lossy"), ("incognito", "incognito snapshot"),
        ("remote-mismatch", "remote gateway host"), ("inconsistent-snapshot", "not a consistent"),
        ("malformed", "needs a string 'sessionKey'"), ("unknown-major", "SCHEMA_DRIFT"),
        ("unknown-event-major", "SCHEMA_DRIFT"),
    ],
)  # fmt: skip
def test_conformance_aiwg_snapshots(tmp_path: Path, name: str, outcome: str) -> None:
    """AIWG's snapshot fixtures named in the format (and guessed as it)."""
    path = AIWG / f"{name}.jsonl"
    assert guess_format(path)[1].name == FORMAT
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, path)
    if outcome == "SCHEMA_DRIFT":
        assert [s.code for s in result.refused] == [outcome]
        assert _rows(catalog, "SELECT count(*) FROM sessions") == [(0,)]
        return
    assert result.exit_code == 0
    if outcome not in ("ok", "lossy"):  # the line rejected with its reason, nothing kept
        assert [(r, outcome in d) for r, d in _rejects(catalog)] == [("INVALID_RECORD", True)]
        assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]
        return
    assert _rejects(catalog) == []
    header = _rows(catalog, "SELECT text FROM events WHERE text LIKE 'OpenClaw session %'")
    assert ("lossy" in header[0][0]) == (outcome == "lossy")
    if name == "complete":
        assert _kinds(catalog) == {"system": 5, "prompt": 2, "response": 1, "tool_call": 1,
                                   "tool_result": 1}  # fmt: skip
        assert _rows(catalog, _USAGE) == [(1, 10, 0, 0, 20, 0, 30)]
        assert _rows(catalog, "SELECT session_id, parent_session_id, model, archived "
                              "FROM sessions") == [
            ("openclaw-complete", "openclaw-parent", "model-a", True)
        ]  # fmt: skip
    if name == "active":
        assert _kinds(catalog) == {"system": 1, "prompt": 1}


# --------------------------------------------------------------------------- fuzz


@settings(max_examples=EXPORT_FUZZ_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(mutations=MUTATION_LISTS)
def test_mutated_snapshots_never_escape(mutations: list[tuple[str, float, int]]) -> None:
    """The export is not in the contract home (files are named, not found): the fuzz
    suite's mutations and byte accounting, applied to a snapshot file."""
    account_export(SPEC, FORMAT, (EXPORTS / "snapshot.jsonl").read_bytes(), mutations)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=5,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside a parsed line."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*path, i))
    return found


@settings(max_examples=50, deadline=None, derandomize=True)
@given(data=st.data())
def test_any_field_of_any_type_is_mapped_or_rejected(data: st.DataObject) -> None:
    """Each field of a snapshot line replaced by any JSON value: mapped, or a record
    error (never another exception)."""
    line = orjson.loads((EXPORTS / "snapshot.jsonl").read_bytes().split(b"\n", 1)[0])
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        path = data.draw(st.sampled_from(_paths(line)[1:]))
        target = line
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = data.draw(_JSON)
    with contextlib.suppress(InvalidRecord, FormatDrift):
        _map(line)
