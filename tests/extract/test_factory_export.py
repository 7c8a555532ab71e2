"""Factory Droid's ``factory-droid-jsonl`` export, read from files the user names: the
store's records (one session with the store's copy, never counted twice) and AIWG's
synthetic ``schemaVersion`` family; bad lines, drift and foreign files; the sniffer
(claims these files, no other format's); AIWG's conformance files (skipped when
absent); mutated exports.

Expected figures are computed by hand from fixtures/factory/exports (see the README).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlake.errors import ConfigurationError
from agentlake.extract.providers import by_id, factory_export
from agentlake.ingest.files import NamedFile, guess_format
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows, import_provider
from tests.extract.test_fuzz import EXPORT_FUZZ_EXAMPLES, MUTATION_LISTS, account_export

SPEC = by_id("factory")
HERE = FIXTURES / "factory"
EXPORTS = HERE / "exports"
FORMAT = factory_export.FORMAT
A = "f0a1b2c3-0000-4000-8000-00000000a001"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide/test/fixtures/sessions"
NOWHERE = Path("/nonexistent")
USAGE = "SELECT call_id, session_id, model, total_tokens, source_id FROM usage ORDER BY ALL"

_rows = catalog_rows


def _import(catalog: Path, *files: Path, fmt: str | None = FORMAT) -> ImportResult:
    """Import ``files`` named in ``fmt`` (``None``: guessed from their content)."""
    return run_import(ImportOptions(
        catalog=catalog, workspace="default", home=NOWHERE, env={}, build_index=False,
        files=tuple(NamedFile(f, fmt) for f in files),
    ))  # fmt: skip


def _kinds(catalog: Path, session: str | None = None) -> dict[str, int]:
    where = f"WHERE session_id = '{session}'" if session else ""
    return dict(_rows(catalog, f"SELECT kind, count(*) FROM events {where} GROUP BY ALL"))


def _ids(catalog: Path, session: str) -> set[tuple[str, str]]:
    """(native id, event id) of a session's events."""
    sql = f"SELECT native_id, event_id FROM events WHERE session_id = '{session}'"
    return set(_rows(catalog, sql))


def _rejects(catalog: Path) -> dict[str, int]:
    return dict(_rows(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL"))


# --------------------------------------------------------------------------- the store's records


def test_an_export_of_a_store_session_is_the_same_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(HERE / "contract_all_record_types", home, symlinks=True)
    catalog = tmp_path / "c.duckdb"
    import_provider("factory", home, catalog)
    native = _ids(catalog, A)
    usage = _rows(catalog, USAGE)
    assert len(native) == 11
    assert _import(catalog, EXPORTS / "droid_session.jsonl", fmt=None).exit_code == 0
    after = _ids(catalog, A)
    assert native < after
    assert sorted(n for n, _ in after - native) == ["a8", "a9", "end-a", "session_start:1"]
    assert _rows(catalog, f"SELECT count(*) FROM sessions WHERE session_id = '{A}'") == [(1,)]
    texts = _rows(catalog, f"SELECT text, count(*) FROM events WHERE session_id = '{A}' "
                           "AND kind IN ('prompt', 'response') GROUP BY text")  # fmt: skip
    assert texts and all(n == 1 for _, n in texts)
    # the export adds no tokens: the store's settings totals stand alone
    assert _rows(catalog, USAGE) == usage
    # the same export from another path, and the export alone: the same events
    copy = tmp_path / "again" / "droid_session.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(EXPORTS / "droid_session.jsonl", copy)
    assert _import(catalog, copy).exit_code == 0
    assert _ids(catalog, A) == after
    alone = tmp_path / "alone.duckdb"
    _import(alone, EXPORTS / "droid_session.jsonl")
    assert _ids(alone, A) == after
    assert _rows(alone, "SELECT session_id, project_path, title, started_at::VARCHAR, "
                        "updated_at::VARCHAR FROM sessions") == [
        (A, "/home/dev/shop", "Add a health check", "2026-05-14 09:00:00+00",
         "2026-05-15 08:00:02+00"),
    ]  # fmt: skip
    assert _rows(alone, "SELECT reason, detail FROM rejects") == [
        ("UNKNOWN_RECORD", "unknown record type 'todo_state'")
    ]


def test_boundaries_are_system_events(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(catalog, EXPORTS / "droid_session.jsonl")
    assert _rows(catalog, "SELECT native_id, text, ts::VARCHAR FROM events "
                          "WHERE role = 'system' ORDER BY seq") == [
        ("session_start:1", "session_start: resume", "2026-05-15 07:59:59+00"),
        ("end-a", "session_end: completed", "2026-05-15 08:00:02+00"),
    ]  # fmt: skip


# --------------------------------------------------------------------------- AIWG's family


def test_every_shape_of_the_aiwg_family(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, EXPORTS / "aiwg_session.jsonl", fmt=None).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]
    rows = _rows(catalog, "SELECT native_id, kind, role, text, tool_name, tool_call_id, "
                          "is_error, model, ts::VARCHAR FROM events ORDER BY seq")  # fmt: skip
    assert [r[:3] for r in rows] == [
        ("u-1", "system", "user"), ("u-1", "prompt", "user"),
        ("a-1", "reasoning", "assistant"), ("a-1", "reasoning", "assistant"),
        ("a-1", "tool_call", "assistant"), ("a-1", "response", "assistant"),
        ("a-1", "system", "assistant"), ("a-1", "response", "assistant"),
        ("t-1", "tool_result", "tool"), ("t-1", "tool_result", "tool"),
        ("msg-a2", "response", "assistant"), ("u-2", "prompt", "user"),
        ("end-1", "system", "system"),
    ]  # fmt: skip
    assert rows[1][3] == "fix the rounding in invoices"
    assert rows[0][3] == "<system-reminder>\nUse cents.\n</system-reminder>"
    assert rows[4][4:6] == ("Read", "call-1")
    assert rows[5][3] == "[image]"
    assert rows[6][3] == 'factory.todo_list: {"type":"todo_list","items":["round half even"]}'
    assert rows[7][7:] == ("claude-sonnet-4-5", "2026-06-02 08:00:02+00")  # epoch ms
    assert [r[3:7] for r in rows[8:10]] == [
        ("def total(): ...", None, "call-1", None),
        ("permission denied", None, "call-2", True),
    ]
    assert rows[10][8] == "2026-06-02 08:00:04+00"  # createdAt
    assert rows[12][3] == "session_end: completed"
    assert _rows(catalog, "SELECT session_id, project_path, title, cli_version, model, "
                          "started_at::VARCHAR, updated_at::VARCHAR FROM sessions") == [
        ("aiwg-droid-1", "/home/dev/billing", "Fix rounding", "0.30.0", "claude-sonnet-4-5",
         "2026-06-02 08:00:00+00", "2026-06-02 08:05:00+00"),
    ]  # fmt: skip
    assert _rows(catalog, "SELECT count(*) FROM usage") == [(0,)]


def test_the_store_keeps_rejecting_the_aiwg_family(tmp_path: Path) -> None:
    """Only the export reads AIWG's family: in the store every line is a receipt."""
    home = tmp_path / "home"
    store = home / ".factory" / "sessions" / "-home-dev-billing"
    store.mkdir(parents=True)
    shutil.copyfile(EXPORTS / "aiwg_session.jsonl", store / "aiwg-droid-1.jsonl")
    catalog = tmp_path / "c.duckdb"
    assert import_provider("factory", home, catalog).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]
    details = [d for (d,) in _rows(catalog, "SELECT detail FROM rejects")]
    assert len(details) == 7
    assert all("AIWG's synthetic factory-droid-jsonl family" in d for d in details)


def test_appended_lines_continue_the_file(tmp_path: Path) -> None:
    """A later run reads only the new lines, with the memo's session and record ids."""
    export = tmp_path / "export.jsonl"
    shutil.copyfile(EXPORTS / "aiwg_session.jsonl", export)
    catalog = tmp_path / "c.duckdb"
    _import(catalog, export)
    with export.open("a") as fh:
        fh.write('{"type":"user","uuid":"u-3","role":"user","content":"one more"}\n')
        fh.write('{"type":"user","uuid":"u-1","role":"user","content":"u-1 again"}\n')
    assert _import(catalog, export).exit_code == 0
    assert _rows(catalog, "SELECT session_id, text FROM events WHERE native_id = 'u-3'") == [
        ("aiwg-droid-1", "one more")
    ]
    assert _rejects(catalog) == {"DUPLICATE_ID": 1}


# --------------------------------------------------------------------------- errors


def test_bad_lines_drift_and_foreign_files(tmp_path: Path) -> None:
    catalog = tmp_path / "bad.duckdb"
    assert _import(catalog, EXPORTS / "bad_lines.jsonl").exit_code == 0
    assert _rows(catalog, "SELECT native_id, kind FROM events ORDER BY seq") == [
        ("u-1", "prompt"), ("a-7", "response"),
    ]  # fmt: skip
    assert _rejects(catalog) == {
        "DUPLICATE_ID": 1, "INVALID_RECORD": 6, "UNKNOWN_RECORD": 2, "MALFORMED": 1,
    }  # fmt: skip
    details = [d for (d,) in _rows(catalog, "SELECT detail FROM rejects")]
    assert any("droid exec stream-json record" in d for d in details)
    assert "a record without a string 'type'" in details
    # an unknown major from the first line: refused, nothing of it written
    drift = tmp_path / "drift.duckdb"
    assert [s.code for s in _import(drift, EXPORTS / "unknown_major.jsonl").refused] == [
        "SCHEMA_DRIFT"
    ]
    assert _rows(drift, "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM sessions)"
                        ) == [(0, 0)]  # fmt: skip
    # two versions in one file: drift from the line of the second
    mixed = tmp_path / "mixed.duckdb"
    assert [s.code for s in _import(mixed, EXPORTS / "mixed_versions.jsonl").refused] == [
        "SCHEMA_DRIFT"
    ]
    assert _rows(mixed, "SELECT count(*) FROM events") == [(0,)]
    # a file of another shape: not guessed; named in the format, refused whole
    foreign = EXPORTS / "not_an_export.jsonl"
    with pytest.raises(ConfigurationError):
        guess_format(foreign)
    named = tmp_path / "named.duckdb"
    assert [s.code for s in _import(named, foreign).refused] == ["SOURCE_CORRUPT"]
    assert _rows(named, "SELECT count(*) FROM events") == [(0,)]


# --------------------------------------------------------------------------- sniffing


def test_the_sniffer_claims_these_files_and_no_other_formats() -> None:
    for name in ("droid_session", "aiwg_session", "bad_lines", "mixed_versions", "unknown_major"):
        assert guess_format(EXPORTS / f"{name}.jsonl")[1].name == FORMAT
    sniff = factory_export.sniff
    start = b'{"type":"session_start","id":"s1","version":2,"cwd":"/home/dev/x"}'
    assert sniff(start) and sniff(start + b"\n" + b"x" * 70_000)
    assert not sniff(b'{"type":"session_start","id":"x"}\n')  # too little to claim it by
    assert not sniff(start[:-5])  # a first line cut short
    assert sniff(b'{"type":"message","id":"m1","message":{"role":"user","content":"hi"}}\n')
    assert not sniff(b'{"type":"message","role":"assistant","text":"hi","id":"m1"}\n')
    claude = b'{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user"}}\n'
    assert not sniff(claude)  # Claude's records have no schemaVersion
    assert sniff(claude.replace(b"{", b'{"schemaVersion":"1.0.0",', 1))
    wrapped = b'{"schemaVersion":1,"recordType":"session_raw","type":"user","session_id":"s"}\n'
    assert not sniff(wrapped)
    # no file of another provider's fixtures is claimed
    others = [p for p in FIXTURES.rglob("*") if p.is_file() and HERE not in p.parents]
    assert len(others) > 100
    assert not [p for p in others if sniff(p.read_bytes()[:65536])]


# --------------------------------------------------------------------------- conformance


@pytest.mark.skipif(not AIWG.is_dir(), reason="conformance data not present")
@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("factory/complete", "ok"), ("factory/active-incomplete", "ok"),
        ("factory/current-session-start", "ok"), ("regression-v1/factory/current", "ok"),
        ("factory/malformed", "SOURCE_CORRUPT"), ("regression-v1/factory/malformed", "SOURCE_CORRUPT"),
        ("factory/unknown-major", "SCHEMA_DRIFT"),
    ],
)  # fmt: skip
def test_conformance_aiwg_exports(tmp_path: Path, name: str, outcome: str) -> None:
    """AIWG's files, named in the format: the complete ones import exactly what they
    hold; a file whose only line has no ``type`` is not in the format (refused whole, as
    AIWG refuses it); an unknown major is drift with nothing written."""
    path = AIWG / f"{name}.jsonl"
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, path)
    if outcome != "ok":
        assert [s.code for s in result.refused] == [outcome]
        assert _rows(catalog, "SELECT (SELECT count(*) FROM events), "
                              "(SELECT count(*) FROM sessions)") == [(0, 0)]  # fmt: skip
        if outcome == "SOURCE_CORRUPT":
            with pytest.raises(ConfigurationError):
                guess_format(path)
        return
    assert guess_format(path)[1].name == FORMAT
    assert result.exit_code == 0
    sessions = _rows(catalog, "SELECT session_id, project_path, cli_version, model FROM sessions")
    expected: dict[str, tuple[dict[str, int], dict[str, int], tuple[Any, ...]]] = {
        "factory/complete": (
            {"prompt": 1, "reasoning": 1, "tool_call": 1, "response": 2, "tool_result": 1,
             "system": 1},
            {}, ("factory-session", "/synthetic/workspace", "0.30.0", "synthetic-model"),
        ),
        # the torn last line ends with a newline: a MALFORMED receipt, not a pending tail
        "factory/active-incomplete": (
            {"prompt": 1}, {"MALFORMED": 1},
            ("factory-active", "/synthetic/workspace", "0.30.0", None),
        ),
        "factory/current-session-start": (
            {"prompt": 1}, {}, ("factory-current-session", "/synthetic/workspace", None, None),
        ),
        "regression-v1/factory/current": (
            {"prompt": 1, "response": 1, "system": 2}, {},
            ("shared-session", "/synthetic/workspace", None, None),
        ),
    }  # fmt: skip
    kinds, rejects, session = expected[name]
    assert _kinds(catalog) == kinds
    assert _rejects(catalog) == rejects
    assert sessions == [session]


# --------------------------------------------------------------------------- fuzz


@settings(max_examples=EXPORT_FUZZ_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(
    name=st.sampled_from(["droid_session", "aiwg_session"]),
    mutations=MUTATION_LISTS,
)
def test_mutated_exports_never_escape(name: str, mutations: list[tuple[str, float, int]]) -> None:
    """The fuzz suite's mutations and byte accounting, applied to both families' files
    (the export is not in the contract home: its files are named, not found)."""
    account_export(SPEC, FORMAT, (EXPORTS / f"{name}.jsonl").read_bytes(), mutations)
