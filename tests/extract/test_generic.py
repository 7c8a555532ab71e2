"""The generic session interchange (aiwg.session-interchange 1.x), read from files the
user names: ``agentlake import --file PATH [--format NAME]``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentlake.errors import ConfigurationError
from agentlake.ingest.files import NamedFile, guess_format, plan_files
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES, CliRunner
from tests.extract.catalogs import catalog_rows

HOME = FIXTURES / "generic" / "all_record_shapes"
LAPTOP = HOME / "laptop-export.jsonl"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide" / "test" / "fixtures" / "sessions" / "generic"


def _import(catalog: Path, *paths: Path, fmt: str | None = None) -> ImportResult:
    files = tuple(NamedFile(p, fmt) for p in paths)
    return run_import(ImportOptions(catalog=catalog, workspace="default", home=Path("/nonexistent"),
                                    env={}, build_index=False, files=files))  # fmt: skip


_rows = catalog_rows


def test_every_kind_maps_to_its_event(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, LAPTOP).exit_code == 0
    events = _rows(catalog, "SELECT session_id, native_id, kind, role, text, tool_name, "
                            "tool_call_id, CAST(tool_input AS VARCHAR), is_error FROM events "
                            "ORDER BY session_id, source_offset")  # fmt: skip
    by_id = {(e[0], e[1]): e[2:] for e in events}
    s1, s2 = "laptop-export-1/s1", "laptop-export-1/s2"
    assert by_id[(s1, "e1")][:3] == ("prompt", "user", "plan the migration of the orders table")
    assert by_id[(s1, "e2")][0] == "reasoning"
    assert by_id[(s1, "e3")] == ("tool_call", "assistant", None, "read_file", "c1",
                                 '{"path":"/home/dev/demo-app/schema.sql"}', None)  # fmt: skip
    assert by_id[(s1, "e4")][0] == "tool_result" and by_id[(s1, "e4")][-1] is False
    assert by_id[(s1, "e6")][0] == "summary"
    assert by_id[(s1, "e7")][:2] == ("system", "system")
    assert by_id[(s1, "e8")][:3] == ("system", None, "saved a restore point")  # unknown kind
    assert by_id[(s2, "e10")][3:5] == ("grep", "c2")  # the name from extensions.toolName
    assert by_id[(s2, "e11")][-1] is True
    sessions = _rows(catalog, "SELECT session_id, project_path, git_branch, cli_version "
                              "FROM sessions ORDER BY ALL")  # fmt: skip
    assert sessions == [(s1, "/home/dev/demo-app", "main", "0.3.0"),
                        (s2, "/home/dev/demo-app", "main", "0.3.0")]  # fmt: skip


def test_calls_come_from_extensions_usage_per_session_and_event(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(catalog, *sorted(HOME.iterdir()))
    calls = _rows(catalog, "SELECT session_id, model, input_tokens, cache_write_tokens, "
                           "cache_read_tokens, output_tokens, reasoning_tokens, per_session "
                           "FROM usage ORDER BY ALL")  # fmt: skip
    # two files' event ids "e2" are two calls: ids are unique within a file only
    assert calls == [
        ("desktop-export-7/s1", "demo-model-2", 900, 0, 0, 45, 0, False),
        ("laptop-export-1/s1", "demo-model-1", 1200, 0, 300, 80, 40, False),
        ("laptop-export-1/s1", "demo-model-1", 1500, 64, 1200, 120, 0, False),
    ]


def test_duplicates_and_ambiguous_times_are_rejected_with_receipts(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(catalog, LAPTOP)
    rejects = _rows(catalog, 'SELECT reason, detail FROM rejects ORDER BY "offset"')
    assert rejects == [
        ("DUPLICATE_ID", "event id 'e1' was given before"),
        ("DUPLICATE_ID", "sequence 3 of session 's2' was given before"),
        ("INVALID_RECORD", "'occurredAt' is not a time with a UTC offset (ambiguous)"),
        ("UNKNOWN_RECORD", "unknown record type 'bookmark'"),
    ]
    # the first copy of a repeated id stands
    first = "SELECT text FROM events WHERE native_id = 'e1' AND session_id = 'laptop-export-1/s1'"
    assert _rows(catalog, first) == [("plan the migration of the orders table",)]


def test_a_duplicate_is_found_across_a_resumed_read(tmp_path: Path) -> None:
    """The ids read are kept with the checkpoint: an appended line repeating an id of the
    part imported before is rejected like one in the same run."""
    path = tmp_path / "export.jsonl"
    lines = LAPTOP.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]))
    catalog = tmp_path / "c.duckdb"
    _import(catalog, path)
    with path.open("ab") as fh:
        fh.write(lines[1].replace(b'"sequence":0', b'"sequence":9'))  # e1 again
    result = _import(catalog, path)
    assert [s.planned.continuity for s in result.sources] == ["validated-append"]
    assert _rows(catalog, "SELECT reason FROM rejects") == [("DUPLICATE_ID",)]


@pytest.mark.parametrize(
    ("first_line", "why"),
    [
        ('{"type":"event","sessionId":"s","eventId":"e","sequence":0,"kind":"message",'
         '"text":"no header","lifecycle":"complete"}', "is not an aiwg.session-interchange header"),
        ('{"type":"aiwg.session-interchange","schemaVersion":"1.0.0","product":"p",'
         '"sourceId":"x"}', "the header lacks exportedAt"),
        ('{"type":"aiwg.session-interchange","schemaVersion":"1.0.0","product":"p",'
         '"sourceId":"x","exportedAt":"2026-07-26T12:00:00"}', "exportedAt has no UTC offset"),
    ],
)  # fmt: skip
def test_a_file_that_is_not_an_interchange_export_is_refused_whole(
    tmp_path: Path, first_line: str, why: str
) -> None:
    path = tmp_path / "export.jsonl"
    events = LAPTOP.read_text().splitlines(keepends=True)[1:4]
    path.write_text(first_line + "\n" + "".join(events))
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, path, fmt="aiwg.session-interchange")
    assert result.exit_code == 1
    [refused] = result.refused
    assert refused.code == "SOURCE_CORRUPT" and why in (refused.message or "")
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]


def test_formats_are_named_or_guessed_and_bad_names_are_usage_errors(tmp_path: Path) -> None:
    assert guess_format(LAPTOP)[1].name == "aiwg.session-interchange"
    plan = plan_files({}, workspace="w", files=[NamedFile(LAPTOP)])
    assert plan.guesses == ((str(LAPTOP.resolve()), "aiwg.session-interchange"),)
    assert (
        plan_files({}, workspace="w", files=[NamedFile(LAPTOP, "aiwg.session-interchange")]).guesses
        == ()
    )
    with pytest.raises(
        ConfigurationError, match=r"unknown export format 'nope'.*aiwg\.session-interchange"
    ):
        plan_files({}, workspace="w", files=[NamedFile(LAPTOP, "nope")])
    with pytest.raises(ConfigurationError, match="no export format recognizes its content"):
        guess_format(FIXTURES / "generic" / "contract_lookalikes" / "near-miss.jsonl")
    with pytest.raises(ConfigurationError, match="no such file"):
        plan_files({}, workspace="w", files=[NamedFile(tmp_path / "missing.jsonl")])
    # a directory: refused under the format it is named in, a usage error without one
    [refused] = plan_files(
        {}, workspace="w", files=[NamedFile(tmp_path, "aiwg.session-interchange")]
    ).sources
    assert (refused.provider, refused.action, refused.code) == ("generic", "refuse", "NOT_A_FILE")
    with pytest.raises(ConfigurationError, match="a directory, not a regular file"):
        plan_files({}, workspace="w", files=[NamedFile(tmp_path)])


def test_import_file_through_the_cli_prints_the_guess(cli: CliRunner, tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    proc = cli("import", "--file", LAPTOP, "--catalog", catalog, "--no-index", "--json")
    assert proc.returncode == 0, proc.stderr
    receipt = json.loads(proc.stdout)
    assert receipt["guessed_formats"] == [
        {"path": str(LAPTOP.resolve()), "format": "aiwg.session-interchange"}
    ]
    assert receipt["sources"][0]["format"] == "aiwg.session-interchange"
    assert "read as aiwg.session-interchange, recognized from its content" in proc.stderr
    again = cli("import", "--file", LAPTOP, "--format", "aiwg.session-interchange",
                "--catalog", catalog, "--no-index", "--json")  # fmt: skip
    assert json.loads(again.stdout)["sources"][0]["continuity"] == "unchanged"
    assert "recognized from its content" not in again.stderr
    for args, message in [
        (("--format", "aiwg.session-interchange"), "--format names the format of --file files"),
        (("--file", LAPTOP, "--provider", "claude"), "give one or the other"),
        (("--file", LAPTOP, "--format", "nope"), "unknown export format"),
    ]:
        proc = cli("import", *args, "--catalog", catalog)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


@pytest.mark.skipif(not AIWG.is_dir(), reason="the shared conformance corpus is absent")
def test_the_negative_interchange_fixtures_of_the_ingestion_project(tmp_path: Path) -> None:
    """Unknown major and an ambiguous export time: refused whole, nothing written; a
    repeated event id: the first stands, the repeat has a receipt; a record cut short
    (this file ends the cut line with a newline): rejected as malformed, the complete
    lines imported; without the newline it stays pending until the exporter finishes
    it."""
    work = tmp_path / "aiwg"
    shutil.copytree(AIWG, work)
    cases = {p.name: p for p in work.iterdir()}
    for name, code in [("unknown-major-v2.jsonl", "SCHEMA_DRIFT"),
                       ("ambiguous-time-v1.jsonl", "SOURCE_CORRUPT")]:  # fmt: skip
        catalog = tmp_path / f"{name}.duckdb"
        result = _import(catalog, cases[name])
        assert [s.code for s in result.refused] == [code]
        assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]
    catalog = tmp_path / "dup.duckdb"
    _import(catalog, cases["duplicate-id-v1.jsonl"])
    assert _rows(catalog, "SELECT text FROM events") == [("one",)]
    assert _rows(catalog, "SELECT reason FROM rejects") == [("DUPLICATE_ID",)]
    torn = cases["truncated-v1.jsonl"]
    catalog = tmp_path / "torn.duckdb"
    assert _import(catalog, torn).exit_code == 0
    assert _rows(catalog, "SELECT text FROM events") == [("complete record",)]
    assert _rows(catalog, "SELECT reason FROM rejects") == [("MALFORMED",)]
    torn.write_bytes(torn.read_bytes().rstrip(b"\n"))
    catalog = tmp_path / "pending.duckdb"
    result = _import(catalog, torn)
    assert result.exit_code == 0 and result.sources[0].pending_bytes > 0
    assert _rows(catalog, "SELECT count(*) FROM rejects") == [(0,)]


def _agentlake_file(path: Path, fmt: object, *, product: str = "agentlake") -> Path:
    header = json.loads(LAPTOP.read_text().splitlines()[0])
    header["product"] = product
    header["extensions"] = {"agentlake": {"format": fmt}}
    line = {"type": "event", "sessionId": "codex:t1", "eventId": "e1", "sequence": 1,
            "kind": "message", "role": "user", "text": "hello", "lifecycle": "complete",
            "occurredAt": "2026-05-01T10:00:00Z",
            "extensions": {"agentlake": {"provider": "codex", "sessionId": "t1",
                                         "kind": "prompt", "role": "user", "seq": 42}}}  # fmt: skip
    path.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    return path


def test_an_agentlake_export_keeps_the_rows_identity(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, _agentlake_file(tmp_path / "x.jsonl", 1), fmt="generic").exit_code == 0
    assert _rows(catalog, "SELECT event_id, provider, session_id, seq, kind FROM events") == [
        ("e1", "codex", "t1", 42, "prompt")
    ]


def test_another_products_agentlake_members_are_plain_interchange(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    plain = _agentlake_file(tmp_path / "x.jsonl", 1, product="someone-else")
    assert _import(catalog, plain).exit_code == 0
    assert _rows(catalog, "SELECT provider, session_id, kind FROM events") == [
        ("generic", "laptop-export-1/codex:t1", "prompt")
    ]


def test_a_newer_agentlake_export_format_is_drift(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, _agentlake_file(tmp_path / "x.jsonl", 2))
    assert result.exit_code == 1
    assert _rows(catalog, "SELECT count(*) FROM events") == [(0,)]
    assert (
        "agentlake export format 2 is unknown"
        in _rows(catalog, "SELECT refusal FROM sources")[0][0]
    )
