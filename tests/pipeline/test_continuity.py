"""Continuity outcomes (DESIGN §5) and their exit statuses, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.lakes import Backend, catalog_of, lake_url, write_connection

from .helpers import scalar, snapshot

SID = "5d0c8e1e-0000-4000-8000-00000000a001"


def _line(n: int, *, version: str = "2.1.40", text: str = "hello") -> bytes:
    rec = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/demo",
        "sessionId": SID,
        "version": version,
        "gitBranch": "main",
        "type": "user",
        "message": {"role": "user", "content": f"{text} {n}"},
        "uuid": f"u-{n}",
        "timestamp": f"2026-05-01T09:00:{n % 60:02d}.000Z",
    }
    return json.dumps(rec, separators=(",", ":")).encode() + b"\n"


@pytest.fixture(params=["duckdb", "postgres"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The catalog of each backend in turn: a DuckDB file, a DuckLake on PostgreSQL (the
    outcomes are the planner's and the checkpoints', the same on both)."""
    backend: Backend = request.param
    server = request.getfixturevalue("postgres") if backend == "postgres" else None
    url = lake_url(backend, tmp_path, server)
    write_connection(catalog_of(url, tmp_path)).close()  # made, with its data path
    return url


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-dev-demo"
    project.mkdir(parents=True)
    (project / f"{SID}.jsonl").write_bytes(b"".join(_line(i) for i in range(10)))
    other = project / "5d0c8e1e-0000-4000-8000-00000000a002.jsonl"
    other.write_bytes(
        b"".join(_line(i, text="other") for i in range(5)).replace(
            SID.encode(), other.stem.encode()
        )
    )
    return home


def _transcript(home: Path) -> Path:
    return home / ".claude" / "projects" / "-home-dev-demo" / f"{SID}.jsonl"


def _import(
    cli: CliRunner, home: Path, catalog: str, *extra: str
) -> tuple[int, dict[str, object], str]:
    # Continuity is the checkpoints' business: the publish step is left out.
    proc = cli("import", "--home", home, "--catalog", catalog, "--json", "--no-index", *extra)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else {}, proc.stderr


def _outcome(doc: dict[str, object], name: str) -> dict[str, object]:
    sources = doc["sources"]
    assert isinstance(sources, list)
    return next(s for s in sources if s["path"].endswith(name))


def _append_other(home: Path) -> None:
    other = (
        home
        / ".claude"
        / "projects"
        / "-home-dev-demo"
        / "5d0c8e1e-0000-4000-8000-00000000a002.jsonl"
    )
    with other.open("ab") as fh:
        fh.write(_line(99, text="later").replace(SID.encode(), other.stem.encode()))


def test_truncated_source_is_refused_and_keeps_its_data(
    cli: CliRunner, home: Path, catalog: str
) -> None:
    assert _import(cli, home, catalog)[0] == 0
    events = scalar(catalog, "SELECT count(*) FROM events")
    path = _transcript(home)
    path.write_bytes(path.read_bytes()[: len(_line(0)) * 3])
    _append_other(home)
    code, doc, stderr = _import(cli, home, catalog)
    assert code == 1
    assert _outcome(doc, f"{SID}.jsonl")["continuity"] == "truncated"
    assert "SOURCE_TRUNCATED" in stderr and str(path) in stderr
    assert (
        scalar(catalog, "SELECT count(*) FROM events") == events + 1
    )  # the other source still imported
    # the refusal repeats until resolved (reported once, then counted: exit 0), then
    # --restart-drifted re-reads it as a new generation
    code, doc, stderr = _import(cli, home, catalog)
    assert code == 0 and "1 source still refused as reported before" in stderr
    assert "SOURCE_TRUNCATED" not in stderr
    assert _outcome(doc, f"{SID}.jsonl")["status"] == "refused"
    code, doc, _ = _import(cli, home, catalog, "--restart-drifted")
    assert code == 0
    assert scalar(catalog, "SELECT generation FROM sources WHERE path = ?", [str(path)]) == 2
    assert scalar(catalog, "SELECT count(*) FROM events WHERE session_id = ?", [SID]) == 3
    # the session's aggregates were recomputed, not added to
    assert scalar(catalog, "SELECT events FROM sessions WHERE session_id = ?", [SID]) == 3
    assert scalar(catalog, "SELECT prompts FROM sessions WHERE session_id = ?", [SID]) == 3


def test_replaced_source_is_refused(cli: CliRunner, home: Path, catalog: str) -> None:
    _import(cli, home, catalog)
    path = _transcript(home)
    data = path.read_bytes() + _line(50)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)  # new inode
    code, doc, stderr = _import(cli, home, catalog)
    assert code == 1 and _outcome(doc, f"{SID}.jsonl")["continuity"] == "replaced"
    assert "SOURCE_REPLACED" in stderr


def test_rewritten_source_is_refused(cli: CliRunner, home: Path, catalog: str) -> None:
    _import(cli, home, catalog)
    path = _transcript(home)
    data = bytearray(path.read_bytes())
    data[30:35] = b"XXXXX"  # same inode, the committed prefix changed
    with path.open("r+b") as fh:
        fh.write(bytes(data) + _line(60))
    before = snapshot(catalog, ("events", "usage"))
    code, doc, stderr = _import(cli, home, catalog)
    assert code == 1 and _outcome(doc, f"{SID}.jsonl")["continuity"] == "rewritten"
    assert "SOURCE_REWRITTEN" in stderr
    assert snapshot(catalog, ("events", "usage")) == before


def test_adapter_version_drift_is_refused(cli: CliRunner, home: Path, catalog: str) -> None:
    _import(cli, home, catalog)
    con = write_connection(catalog)
    con.execute("UPDATE sources SET adapter_version = '0.1'")
    con.close()
    with _transcript(home).open("ab") as fh:
        fh.write(_line(70))
    code, doc, stderr = _import(cli, home, catalog)
    assert code == 1 and "SCHEMA_DRIFT" in stderr
    sources = doc["sources"]
    assert isinstance(sources, list) and {s["continuity"] for s in sources} == {"drift"}


def test_unknown_major_format_version_refuses_the_rest(
    cli: CliRunner, home: Path, catalog: str
) -> None:
    path = _transcript(home)
    with path.open("ab") as fh:
        fh.write(_line(80, version="9.0.0") + _line(81))
    code, _, stderr = _import(cli, home, catalog)
    assert code == 1 and "SCHEMA_DRIFT" in stderr
    # the clean prefix is imported, nothing of or after the drifting line
    assert scalar(catalog, "SELECT count(*) FROM events WHERE session_id = ?", [SID]) == 10
    assert scalar(catalog, "SELECT status FROM sources WHERE path = ?", [str(path)]) == "refused"
    code, _, stderr = _import(cli, home, catalog)  # still refused, as reported: exit 0
    assert code == 0 and "1 source still refused" in stderr and "SCHEMA_DRIFT" not in stderr


def test_torn_tail_is_pending_until_completed(cli: CliRunner, home: Path, catalog: str) -> None:
    path = _transcript(home)
    whole = _line(90)
    with path.open("ab") as fh:
        fh.write(whole[:40])
    code, doc, _ = _import(cli, home, catalog)
    assert code == 0
    assert _outcome(doc, f"{SID}.jsonl")["pending_bytes"] == 40
    assert scalar(catalog, "SELECT count(*) FROM events WHERE session_id = ?", [SID]) == 10
    assert scalar(catalog, "SELECT count(*) FROM rejects") == 0
    code, doc, _ = _import(cli, home, catalog)  # nothing changed: not even opened
    assert doc["totals"]["sources_opened"] == 0  # type: ignore[index]
    with path.open("ab") as fh:
        fh.write(whole[40:])
    code, doc, _ = _import(cli, home, catalog)
    assert code == 0
    assert scalar(catalog, "SELECT count(*) FROM events WHERE session_id = ?", [SID]) == 11
