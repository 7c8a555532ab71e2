"""Bounded runs that fail closed: per-source ceilings (records and bytes over a
generation), the ceiling of one document and the cap of an adapter's join state each
refuse the source with ``RESOURCE_LIMIT_EXCEEDED``, keep what was committed before, say
so in a receipt, and are checked again on every run, so raising the ceiling lets the
source continue from its checkpoint."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import orjson
import pytest

from agentlake.cli.render.imports import receipt_line
from agentlake.config import import_ceilings_from_config
from agentlake.errors import REMEDIES, ConfigurationError
from agentlake.extract.adapter import SourceContext, StateLimitExceeded
from agentlake.extract.extract import ExtractLimits
from agentlake.extract.providers import copilot
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.ingest.committer import SourceOutcome
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from agentlake.read.doctor import diagnose
from tests.conftest import FIXTURES, CliRunner

from .helpers import scalar

SESSION = "c0ffee00-0000-4000-8000-000000000001"
CODE = "RESOURCE_LIMIT_EXCEEDED"


def _line(i: int) -> bytes:
    return orjson.dumps(
        {"type": "user", "sessionId": SESSION, "uuid": f"c0ffee00-0000-4000-8000-{i:012d}",
         "cwd": "/home/dev/ceil", "timestamp": f"2026-05-01T12:00:{i:02d}.000Z",
         "message": {"role": "user", "content": f"line {i}"}}
    ) + b"\n"  # fmt: skip


def _claude(home: Path, first: int, count: int) -> Path:
    """Append records ``first .. first+count-1`` to one Claude transcript of ``home``."""
    path = home / ".claude" / "projects" / "-home-dev-ceil" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as out:
        out.write(b"".join(_line(i) for i in range(first, first + count)))
    return path


def _run(home: Path, catalog: Path, provider: str = "claude", **limits: Any) -> ImportResult:
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      providers=(provider,), build_index=False, limits=ExtractLimits(**limits))
    )  # fmt: skip


def _only(result: ImportResult) -> SourceOutcome:
    (outcome,) = result.sources
    return outcome


def _events(catalog: Path) -> int:
    return int(scalar(catalog, "SELECT count(*) FROM events"))


def _checkpoint(catalog: Path) -> tuple[Any, ...]:
    row = scalar(
        catalog,
        "SELECT [committed_offset, records, generation]::VARCHAR || status || "
        "coalesce(continuity, '') FROM sources",
    )
    return (row,)


def _source_row(catalog: Path, column: str) -> Any:
    return scalar(catalog, f"SELECT {column} FROM sources")


# -- the records ceiling of an append-only file ---------------------------------------


@pytest.mark.parametrize("batch_lines", [2, 50_000])  # the ceiling on a batch boundary, or in one
def test_the_records_ceiling_refuses_with_the_prefix_kept(tmp_path: Path, batch_lines: int) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    path = _claude(home, 0, 10)
    result = _run(home, catalog, source_records=4, batch_lines=batch_lines)
    outcome = _only(result)
    assert (outcome.status, outcome.code, result.exit_code) == ("refused", CODE, 1)
    assert "ceiling of 4 records" in (outcome.message or "")
    assert "--source-records-ceiling" in (outcome.message or "")
    prefix = len(b"".join(_line(i) for i in range(4)))
    assert _events(catalog) == 4 and outcome.records == 4
    assert _source_row(catalog, "committed_offset") == prefix
    assert _source_row(catalog, "records") == 4
    assert _source_row(catalog, "status") == "refused"
    receipt = outcome.receipt()
    assert receipt == {
        "code": CODE,
        "generation": 1,
        "committed": {"batches": 2 if batch_lines == 2 else 1, "records": 4, "events": 4,
                      "bytes": prefix},
        "checkpoint": {"offset": prefix, "records": 4},
        "remedy": REMEDIES[CODE],
    }  # fmt: skip
    assert path.stat().st_size > prefix


def test_a_source_at_its_ceiling_with_nothing_past_it_is_not_refused(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 4)
    result = _run(home, catalog, source_records=4)
    assert _only(result).status == "imported" and result.exit_code == 0
    _claude(home, 4, 1)  # one more record: now past it
    again = _only(_run(home, catalog, source_records=4))
    assert (again.status, again.code, again.records) == ("refused", CODE, 0)
    assert _events(catalog) == 4


def test_the_records_ceiling_counts_the_whole_generation(tmp_path: Path) -> None:
    """Records committed by earlier runs count: the ceiling is of the source's life in
    its generation, not of one run."""
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 3)
    assert _only(_run(home, catalog, source_records=5)).status == "imported"
    _claude(home, 3, 4)
    outcome = _only(_run(home, catalog, source_records=5))
    assert (outcome.status, outcome.records) == ("refused", 2)
    receipt = outcome.receipt()
    assert receipt is not None and receipt["checkpoint"]["records"] == 5
    assert receipt["committed"]["records"] == 2
    assert _events(catalog) == 5 and _source_row(catalog, "records") == 5


def test_a_refusal_repeats_until_the_ceiling_is_raised_then_continues(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 10)
    first = _run(home, catalog, source_records=4)
    offset = _source_row(catalog, "committed_offset")
    # Nightly with the same ceiling: still refused, reported once, nothing read.
    second = _run(home, catalog, source_records=4)
    outcome = _only(second)
    assert (outcome.status, outcome.code, outcome.records, outcome.bytes) == ("refused", CODE, 0, 0)
    assert first.exit_code == 1 and second.exit_code == 0 and not second.newly_refused
    assert outcome.message == _only(first).message
    [refused] = diagnose(catalog, "default", home=home, env={}).refused
    assert refused.code == CODE and refused.remedy == REMEDIES[CODE]
    assert _source_row(catalog, "committed_offset") == offset and _events(catalog) == 4
    # Raised: it continues from its checkpoint, nothing read twice.
    third = _only(_run(home, catalog, source_records=100))
    assert (third.status, third.records, third.planned.continuity) == ("imported", 6, "retry")
    assert third.planned.start == offset
    assert _events(catalog) == 10 and _source_row(catalog, "records") == 10
    assert _source_row(catalog, "status") == "ok"
    whole = tmp_path / "whole.duckdb"
    _run(home, whole)
    assert _events(whole) == 10


def test_a_lowered_ceiling_refuses_before_reading(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 6)
    _run(home, catalog)
    _claude(home, 6, 2)
    outcome = _only(_run(home, catalog, source_records=3))  # below what it already holds
    assert (outcome.status, outcome.records) == ("refused", 0)
    assert _events(catalog) == 6 and _source_row(catalog, "records") == 6


# -- the bytes ceiling ----------------------------------------------------------------


def test_the_bytes_ceiling_refuses_at_the_last_line_within_it(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 8)
    three = len(b"".join(_line(i) for i in range(3)))
    outcome = _only(_run(home, catalog, source_bytes=three + 10))
    assert (outcome.status, outcome.code) == ("refused", CODE)
    assert f"ceiling of {three + 10:,} bytes" in (outcome.message or "")
    assert "--source-bytes-ceiling" in (outcome.message or "")
    assert _events(catalog) == 3 and _source_row(catalog, "committed_offset") == three
    receipt = outcome.receipt()
    assert receipt is not None
    assert receipt["committed"]["bytes"] == three and receipt["checkpoint"]["offset"] == three
    raised = _only(_run(home, catalog, source_bytes=1 << 20))
    assert raised.status == "imported" and _events(catalog) == 8


def test_a_torn_tail_past_the_bytes_ceiling_is_not_a_refusal(tmp_path: Path) -> None:
    """A last line without its newline is not a record yet: nothing is past the ceiling."""
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    path = _claude(home, 0, 3)
    with path.open("ab") as out:
        out.write(_line(3)[:-5])
    three = len(b"".join(_line(i) for i in range(3)))
    assert _only(_run(home, catalog, source_bytes=three + 1)).status == "imported"


def test_the_per_run_budget_leaves_bytes_pending_not_refused(tmp_path: Path) -> None:
    """The per-run ceilings (--max-records-per-source) still stop quietly."""
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 10)
    outcome = _only(_run(home, catalog, source_records=8, max_records_per_source=3))
    assert (outcome.status, outcome.records) == ("imported", 3) and outcome.pending_bytes > 0


# -- one document ---------------------------------------------------------------------


def _gemini(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "gemini" / "legacy_document", home)
    (doc,) = home.rglob("session-*.json")
    return home, doc


def test_a_document_over_its_ceiling_is_refused_unparsed(tmp_path: Path) -> None:
    home, doc = _gemini(tmp_path)
    catalog = tmp_path / "c.duckdb"
    size = doc.stat().st_size
    result = _run(home, catalog, "gemini", max_document_bytes=size - 1)
    outcome = _only(result)
    assert (outcome.status, outcome.code, result.exit_code) == ("refused", CODE, 1)
    assert "--max-document-bytes" in (outcome.message or "")
    assert "not parsed" in (outcome.message or "")
    assert _events(catalog) == 0 and scalar(catalog, "SELECT count(*) FROM rejects") == 0
    receipt = outcome.receipt()
    assert receipt is not None and receipt["committed"] == {
        "batches": 0, "records": 0, "events": 0, "bytes": 0,
    }  # fmt: skip
    # The next run checks it again (stat only), then reads it once the ceiling allows.
    assert _only(_run(home, catalog, "gemini", max_document_bytes=size - 1)).status == "refused"
    assert _only(_run(home, catalog, "gemini", max_document_bytes=size)).status == "imported"
    assert _events(catalog) > 0


def test_a_document_that_grows_past_its_ceiling_keeps_its_imported_rows(tmp_path: Path) -> None:
    home, doc = _gemini(tmp_path)
    catalog = tmp_path / "c.duckdb"
    size = doc.stat().st_size
    _run(home, catalog, "gemini", max_document_bytes=size)
    events = _events(catalog)
    assert events > 0
    grown = json.loads(doc.read_text())
    grown["messages"].append(dict(grown["messages"][0], id="m-more", content="more " * 20))
    doc.write_text(json.dumps(grown, indent=2))
    outcome = _only(_run(home, catalog, "gemini", max_document_bytes=size))
    assert (outcome.status, outcome.code) == ("refused", CODE)
    assert _events(catalog) == events  # the version imported before is kept
    receipt = outcome.receipt()
    assert receipt is not None and receipt["generation"] == 1


def test_the_records_ceiling_of_a_document_writes_nothing_of_it(tmp_path: Path) -> None:
    home, _ = _gemini(tmp_path)
    catalog = tmp_path / "c.duckdb"
    outcome = _only(_run(home, catalog, "gemini", source_records=0))
    assert (outcome.status, outcome.code) == ("refused", CODE)
    assert "one read of it holds more than its ceiling of 0 records" in (outcome.message or "")
    assert _events(catalog) == 0


@pytest.mark.parametrize("limits", [{"max_document_bytes": 1}, {"source_records": 0}])
def test_a_jsonl_document_past_a_ceiling_is_refused_whole(
    tmp_path: Path, limits: dict[str, int]
) -> None:
    """A JSONL file its agent rewrites in place is read whole, like a JSON document."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "openhuman" / "contract_all_record_types", home)
    catalog = tmp_path / "c.duckdb"
    result = _run(home, catalog, "openhuman", **limits)
    assert result.sources and {(s.status, s.code) for s in result.sources} == {("refused", CODE)}
    assert _events(catalog) == 0 and scalar(catalog, "SELECT count(*) FROM rejects") == 0


def test_the_records_ceiling_of_a_database_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "cursor" / "state_vscdb_blob_values", home)
    catalog = tmp_path / "c.duckdb"
    result = _run(home, catalog, "cursor", source_records=0)
    (state,) = [s for s in result.sources if s.planned.path.name == "state.vscdb"]
    assert (state.status, state.code) == ("refused", CODE)


# -- join state -----------------------------------------------------------------------


def _cursor(home: Path, lines: list[dict[str, Any]]) -> Path:
    sid = "c0ffee00-0000-4000-8000-0000000000c1"
    path = home / ".cursor" / "projects" / "home-dev-ceil" / "agent-transcripts" / sid
    path.mkdir(parents=True, exist_ok=True)
    file = path / f"{sid}.jsonl"
    file.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return file


def _calls(n: int) -> dict[str, Any]:
    tools = [{"type": "tool_use", "name": "Shell", "input": {"command": f"c{i}"}} for i in range(n)]
    return {"role": "assistant", "message": {"content": tools}}


def test_a_full_join_state_refuses_instead_of_forgetting(tmp_path: Path) -> None:
    """Cursor remembers the tool calls of an open turn to fail them with the turn: the
    line that would overflow the cap refuses the source, before any row of it."""
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    user = {"role": "user", "message": {"content": [{"type": "text", "text": "go"}]}}
    first = [user, _calls(2), _calls(1)]
    _cursor(home, [*first, _calls(2), {"type": "turn_ended", "status": "error"}])
    result = _run(home, catalog, "cursor", max_open_ids=4)
    outcome = _only(result)
    assert (outcome.status, outcome.code, result.exit_code) == ("refused", CODE, 1)
    assert "more than 4 open tool calls" in (outcome.message or "")
    assert "--max-open-ids" in (outcome.message or "")
    prefix = sum(len(orjson.dumps(line)) + 1 for line in first)
    assert _source_row(catalog, "committed_offset") == prefix
    assert _events(catalog) == 4  # the text and the three calls before the line
    receipt = outcome.receipt()
    assert receipt is not None and receipt["checkpoint"] == {"offset": prefix, "records": 3}
    # Raised: the turn's five calls are all failed by its end, none forgotten.
    assert _only(_run(home, catalog, "cursor", max_open_ids=5)).status == "imported"
    failed = scalar(catalog, "SELECT count(*) FROM events WHERE kind = 'tool_result' AND is_error")
    assert failed == 5


def test_copilot_pairs_a_calls_two_copies_and_refuses_past_its_cap() -> None:
    """Copilot writes a call twice (the request, its execution start): the first copy is
    emitted and its id kept until the second; past the cap, the record is refused before
    any of its rows instead of an id being forgotten (which would emit a call twice)."""
    ctx = SourceContext(cast(SourceFile, None), "s1", max_open_ids=2)
    ctx.memo.update({"model": None, "cwd": 0})
    adapter, sink = copilot.CopilotCliAdapter(), RowSink()

    def start(call: str, rid: str) -> dict[str, Any]:
        data = {"toolCallId": call, "toolName": "bash", "arguments": {}}
        return {"type": "tool.execution_start", "data": data, "id": rid}

    def request(calls: list[str], rid: str) -> dict[str, Any]:
        asks = [{"toolCallId": c, "name": "bash", "arguments": "{}"} for c in calls]
        return {"type": "assistant.message", "id": rid,
                "data": {"content": "ok", "toolRequests": asks}}  # fmt: skip

    adapter.map_record(request(["c1", "c2"], "e1"), 0, ctx, sink)
    adapter.map_record(start("c1", "e2"), 100, ctx, sink)  # paired: c1 is no longer open
    assert ctx.memo["calls"] == {"c2": 1}
    adapter.map_record(start("c3", "e3"), 200, ctx, sink)
    emitted = sink.event_count
    with pytest.raises(StateLimitExceeded, match="more than 2 tool calls"):
        adapter.map_record(request(["c2", "c4"], "e4"), 300, ctx, sink)
    assert sink.event_count == emitted and ctx.memo["calls"] == {"c2": 1, "c3": 1}
    adapter.map_record(request(["c2", "c3"], "e5"), 400, ctx, sink)  # both pair: fine
    assert ctx.memo["calls"] == {}


# -- receipts -------------------------------------------------------------------------


def test_receipts_in_the_json_and_the_imports_table(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 5)
    result = _run(home, catalog, source_records=2)
    (entry,) = result.to_json()["sources"]
    assert entry["code"] == CODE and entry["receipt"] == _only(result).receipt()
    detail = json.loads(scalar(catalog, "SELECT detail FROM imports ORDER BY import_id DESC"))
    (refused,) = detail["refused"]
    assert refused["code"] == CODE and refused["receipt"]["checkpoint"]["records"] == 2
    line = receipt_line(_only(result))
    assert line is not None and "generation 1" in line and "2 records" in line


def test_a_refusal_the_planner_repeats_has_a_receipt_too(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    path = _claude(home, 0, 4)
    _run(home, catalog)
    path.write_bytes(_line(0))  # truncated below its checkpoint
    outcome = _only(_run(home, catalog))
    receipt = outcome.receipt()
    assert outcome.code == "SOURCE_TRUNCATED" and receipt is not None
    offset = len(b"".join(_line(i) for i in range(4)))
    assert receipt["checkpoint"] == {"offset": offset, "records": 4}
    assert receipt["committed"]["records"] == 0 and receipt["generation"] == 1


def test_defaults_are_those_documented() -> None:
    limits = ExtractLimits()
    assert (limits.source_records, limits.source_bytes) == (1_000_000, 1 << 30)
    assert (limits.max_document_bytes, limits.max_open_ids) == (64 << 20, 10_000)
    assert replace(limits, source_records=None).source_records is None


# -- options --------------------------------------------------------------------------


def test_the_cli_options_and_the_config_file_set_the_ceilings(
    cli: CliRunner, tmp_path: Path
) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    _claude(home, 0, 6)
    config = tmp_path / "config.toml"
    config.write_text('[import]\nsource_records_ceiling = 2\nsource_bytes_ceiling = "1MiB"\n')
    env = {"AGENTLAKE_CONFIG": str(config)}
    first = cli("import", "--home", home, "--catalog", catalog, "--no-index", env=env)
    assert first.returncode == 1
    assert f"refused: {CODE}: " in first.stderr and "ceiling of 2 records" in first.stderr
    assert "generation 1: this run committed 1 batch, 2 records" in first.stderr
    assert "the next read starts at byte" in first.stderr
    # The option wins over the config file: raised, the source continues.
    raised = cli("import", "--home", home, "--catalog", catalog, "--no-index", "--json",
                 "--source-records-ceiling", "100", env=env)  # fmt: skip
    assert raised.returncode == 0
    (entry,) = json.loads(raised.stdout)["sources"]
    assert (entry["status"], entry["records"], entry["receipt"]) == ("imported", 4, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[import]\nsource_records_ceiling = 0\n", "import.source_records_ceiling = 0"),
        ('[import]\nmax_document_bytes = "lots"\n', "import.max_document_bytes: invalid size"),
        ("[import]\nrecords = 3\n", "unknown key 'records' in [import]"),
        ("import = 3\n", "import must be a table"),
    ],
)
def test_a_broken_import_table_names_the_config_file(
    tmp_path: Path, text: str, expected: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ConfigurationError) as caught:
        import_ceilings_from_config({"AGENTLAKE_CONFIG": str(config)})
    assert str(caught.value).startswith(f"{config}: ") and expected in str(caught.value)


def test_the_import_table_by_field(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[import]\nsource_records_ceiling = 5\nsource_bytes_ceiling = "2KiB"\n'
        "max_document_bytes = 4096\nmax_open_ids = 7\n"
    )
    assert import_ceilings_from_config({"AGENTLAKE_CONFIG": str(config)}) == {
        "source_records": 5, "source_bytes": 2048, "max_document_bytes": 4096, "max_open_ids": 7,
    }  # fmt: skip
    assert import_ceilings_from_config({"AGENTLAKE_CONFIG": str(tmp_path / "none.toml")}) == {}
