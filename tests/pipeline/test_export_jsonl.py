"""``agentlake export jsonl``: a valid session-interchange file that ``import --file X
--format generic`` reads back into the same sessions, events, calls, reports and search
hits; with filters and hidden sessions; never doubling on a second import."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest

from agentlake.extract.providers import generic
from agentlake.load.lake import LakeCatalog
from agentlake.read.export_jsonl import export_jsonl
from agentlake.read.reports import ReportFilter
from agentlake.read.search import search
from tests.conftest import CliRunner
from tests.lakes import read_connection

from .export_homes import build_catalog, write_home
from .helpers import snapshot

# Columns that name where and when a row was imported, not what it is.
WHERE_FROM = ("source_id", "source_offset", "import_id", "last_import_id")
TABLES = ("sessions", "events", "usage")
QUERIES = ("cache bug", "config parser", "health endpoint", "rounding", "test")
REPORTS = ("daily", "session", "model", "monthly")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The shared catalog (one session tree hidden) and the hidden session's id."""
    root = tmp_path_factory.mktemp("jsonl-source")
    catalog = root / "catalog.duckdb"
    hidden = build_catalog(write_home(root / "home"), catalog)
    return catalog, hidden


@pytest.fixture(scope="module")
def full_export(source: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Everything, hidden sessions included, exported once."""
    target = tmp_path_factory.mktemp("jsonl-full") / "all.jsonl"
    export_jsonl(source[0], "default", target, ReportFilter(include_hidden=True))
    return target


def reimport(cli: CliRunner, export: Path, catalog: Path | str) -> None:
    done = cli("import", "--file", export, "--format", "generic", "--catalog", catalog)
    assert done.returncode == 0, done.stderr


def tables(catalog: Path | LakeCatalog, where: str = "true") -> dict[str, list[tuple[Any, ...]]]:
    """The rows of sessions, events and usage (without where they were imported from)
    whose (provider, session) pass ``where`` (a condition on ``sessions s``)."""
    snap = snapshot(catalog, TABLES, exclude=WHERE_FROM)
    con = read_connection(catalog)
    try:
        keep = {
            (str(p), str(i))
            for p, i in con.execute(
                f"SELECT provider, session_id FROM sessions s WHERE {where}"
            ).fetchall()
        }
    finally:
        con.close()
    # Each snapshot row starts (workspace, provider, session_id) for sessions, and has
    # provider and session_id at positions 2 and 3 for events and calls.
    at = {"sessions": (1, 2), "events": (2, 3), "usage": (2, 3)}
    return {t: [r for r in rows if (r[at[t][0]], r[at[t][1]]) in keep] for t, rows in snap.items()}


def reports(cli: CliRunner, catalog: Path, *options: str) -> list[Any]:
    docs = []
    for kind in REPORTS:
        done = cli("report", kind, "--json", "--catalog", catalog, *options)
        assert done.returncode == 0, done.stderr
        docs.append(json.loads(done.stdout))
    return docs


def hits(catalog: Path, *, include_hidden: bool = False) -> list[list[tuple[Any, ...]]]:
    from agentlake.read.search import SearchFilter

    flt = SearchFilter(include_hidden=include_hidden)
    return [
        [(h.event_id, h.session_id, h.provider, h.kind, round(h.score, 9), h.snippet)
         for h in search(catalog, "default", q, limit=50, mode="lexical", flt=flt)]
        for q in QUERIES
    ]  # fmt: skip


def test_round_trip_is_identical(
    source: tuple[Path, str], full_export: Path, tmp_path: Path, cli: CliRunner
) -> None:
    catalog, hidden = source
    copy = tmp_path / "copy.duckdb"
    reimport(cli, full_export, copy)
    assert tables(copy) == tables(catalog)
    titled = [r for r in tables(catalog)["sessions"] if r[5] is not None]  # 5: title
    assert len(titled) > 10
    assert reports(cli, copy) == reports(cli, catalog)
    assert reports(cli, copy, "--include-hidden") == reports(cli, catalog, "--include-hidden")
    assert hits(copy) == hits(catalog) and any(hits(catalog))
    assert hits(copy, include_hidden=True) == hits(catalog, include_hidden=True)
    con = read_connection(copy)
    try:
        hidden_now = con.execute(
            "SELECT count(*) FROM sessions WHERE lifecycle <> 'active' AND session_id = ?",
            [hidden],
        ).fetchone()
    finally:
        con.close()
    assert hidden_now == (1,)


def test_importing_twice_or_into_the_origin_doubles_nothing(
    source: tuple[Path, str], full_export: Path, tmp_path: Path, cli: CliRunner
) -> None:
    catalog, _ = source
    copy = tmp_path / "copy.duckdb"
    reimport(cli, full_export, copy)
    again = tmp_path / "again.jsonl"  # another file, the same rows
    shutil.copyfile(full_export, again)
    reimport(cli, again, copy)
    assert tables(copy) == tables(catalog)
    origin = tmp_path / "origin.duckdb"
    shutil.copyfile(catalog, origin)
    reimport(cli, full_export, origin)
    assert tables(origin) == tables(catalog)
    assert reports(cli, origin) == reports(cli, catalog)


def test_hidden_sessions_are_left_out_unless_asked(
    source: tuple[Path, str], tmp_path: Path, cli: CliRunner
) -> None:
    catalog, hidden = source
    export = tmp_path / "visible.jsonl"
    done = cli("export", "jsonl", export, "--catalog", catalog, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["lines"] == len(export.read_bytes().splitlines())
    assert hidden not in export.read_text()
    copy = tmp_path / "copy.duckdb"
    reimport(cli, export, copy)
    assert tables(copy) == tables(catalog, "s.lifecycle = 'active'")
    assert reports(cli, copy) == reports(cli, catalog)


@pytest.mark.parametrize(
    ("flt", "where"),
    [
        (ReportFilter(provider="claude"), "s.provider = 'claude-code' AND s.lifecycle = 'active'"),
        (ReportFilter(provider="codex", project="a"), "s.provider = 'codex'"),
    ],
)
def test_filters(
    source: tuple[Path, str], tmp_path: Path, cli: CliRunner, flt: ReportFilter, where: str
) -> None:
    catalog, _ = source
    export = tmp_path / "part.jsonl"
    export_jsonl(catalog, "default", export, flt)
    copy = tmp_path / "copy.duckdb"
    reimport(cli, export, copy)
    if flt.project:
        where += f" AND contains(lower(coalesce(s.project_path, '')), '{flt.project}')"
    assert tables(copy) == tables(catalog, where)


def test_since_until_keep_the_calls_of_those_days(
    source: tuple[Path, str], tmp_path: Path, cli: CliRunner
) -> None:
    catalog, _ = source
    con = read_connection(catalog)
    try:
        days = [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT CAST(ts AS DATE) FROM usage ORDER BY 1"
            ).fetchall()
        ]
    finally:
        con.close()
    since, until = days[1], days[-2]
    assert isinstance(since, date) and since < until
    export = tmp_path / "days.jsonl"
    export_jsonl(catalog, "default", export, ReportFilter(since=since, until=until))
    copy = tmp_path / "copy.duckdb"
    reimport(cli, export, copy)
    window = ("--since", since.isoformat(), "--until", until.isoformat())
    got, want = reports(cli, copy, *window), reports(cli, catalog, *window)
    for mine, theirs in zip(got, want, strict=True):
        assert mine["totals"] == theirs["totals"]
    assert got[0] == want[0]  # daily: the same days, calls and costs
    copy_events = tables(copy)["events"]
    assert copy_events and all(
        since.isoformat() <= str(r[5])[:10] <= until.isoformat() for r in copy_events
    )


_INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def test_a_foreign_reader_of_schema_1_accepts_it(full_export: Path) -> None:
    lines = full_export.read_bytes().splitlines()
    head = orjson.loads(lines[0])
    assert generic.sniff(lines[0] + b"\n")
    for key in ("schemaVersion", "product", "productVersion", "sourceId", "exportedAt"):
        assert isinstance(head[key], str) and head[key]
    assert head["schemaVersion"].startswith("1.") and _INSTANT.match(head["exportedAt"])
    assert head["consistency"] in ("provisional", "consistent-snapshot", "complete")
    assert head["lifecycle"] in ("active", "complete", "archived")
    assert set(head["provenance"]) == {"exporter", "exporterVersion", "sourceClass"}
    ids: set[str] = set()
    sequences: set[tuple[str, int]] = set()
    for raw in lines[1:]:
        line = orjson.loads(raw)
        assert line["type"] == "event" and isinstance(line["text"], str)
        assert line["lifecycle"] in ("active", "complete", "archived")
        assert isinstance(line["kind"], str) and isinstance(line["sessionId"], str)
        assert line["eventId"] not in ids
        ids.add(line["eventId"])
        seat = (line["sessionId"], line["sequence"])
        assert type(line["sequence"]) is int and line["sequence"] >= 0 and seat not in sequences
        sequences.add(seat)
        assert "occurredAt" not in line or _INSTANT.match(line["occurredAt"])
        assert isinstance(line.get("extensions", {}), dict)
    kinds = {orjson.loads(raw)["kind"] for raw in lines[1:]}
    assert {"message", "tool-call", "tool-result", "agentlake.session", "agentlake.usage"} <= kinds


def test_a_plain_interchange_reading_keeps_the_calls(
    full_export: Path, tmp_path: Path, cli: CliRunner, source: tuple[Path, str]
) -> None:
    """A reader that knows only the interchange and the extensions.usage agreement (an
    export whose header is not agentlake's) still sees every call's tokens."""
    lines = full_export.read_bytes().splitlines()
    head = orjson.loads(lines[0])
    head["product"] = "someone-else"
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"\n".join([orjson.dumps(head), *lines[1:]]) + b"\n")
    copy = tmp_path / "copy.duckdb"
    reimport(cli, plain, copy)
    want = reports(cli, source[0], "--include-hidden")[0]["totals"]
    got = reports(cli, copy)[0]["totals"]
    for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        assert got[key] == want[key]


def test_file_errors(source: tuple[Path, str], tmp_path: Path, cli: CliRunner) -> None:
    catalog, _ = source
    target = tmp_path / "x.jsonl"
    assert cli("export", "jsonl", target, "--catalog", catalog).returncode == 0
    again = cli("export", "jsonl", target, "--catalog", catalog)
    assert again.returncode == 2 and f"{target}: exists; pass --force" in again.stderr
    forced = cli("export", "jsonl", target, "--catalog", catalog, "--force", "--json")
    assert forced.returncode == 0 and json.loads(forced.stdout)["replaced"] is True
    missing = cli("export", "jsonl", tmp_path / "no" / "x.jsonl", "--catalog", catalog)
    assert missing.returncode == 4 and "no such folder" in missing.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]


def test_chunks_and_cut_sessions_give_the_same_file(
    source: tuple[Path, str], full_export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines come chunk by chunk, long sessions cut into ranges of their sequence
    numbers: the file is the one a single chunk gives."""
    import agentlake.read.export_jsonl as module

    monkeypatch.setattr(module, "_CHUNK_LINES", 60)
    monkeypatch.setattr(module, "_CHUNK_BYTES", 8_000)
    chunks: list[pa.Table] = []
    cut = module._chunks

    def recorded(sessions: pa.Table) -> Iterator[pa.Table]:
        for chunk in cut(sessions):
            chunks.append(chunk)
            yield chunk

    monkeypatch.setattr(module, "_chunks", recorded)
    small = tmp_path / "small.jsonl"
    export_jsonl(source[0], "default", small, ReportFilter(include_hidden=True))
    assert len(chunks) > 5 and any(c["lo"][0].as_py() > 0 for c in chunks)
    assert small.read_bytes().splitlines()[1:] == full_export.read_bytes().splitlines()[1:]
