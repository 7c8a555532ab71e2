"""`agentlake doctor`: roots, environment, continuity, refusals, rejects, imports and
catalog integrity; `agentlake doctor SESSION_ID`: why a session is (not) in the catalog.
Everything runs through the real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from fixtures.synth import generate_demo_home
from tests.conftest import FIXTURES, CliRunner, cli_env

from .helpers import scalar

SID = "5d0c8e1e-0000-4000-8000-00000000d001"
SID2 = "5d0c8e1e-0000-4000-8000-00000000e002"
PROJECT = Path(".claude") / "projects" / "-home-dev-demo"


def _line(n: int, sid: str = SID, text: str = "hello") -> bytes:
    rec = {
        "type": "user",
        "sessionId": sid,
        "version": "2.1.40",
        "cwd": "/home/dev/demo",
        "uuid": f"{sid[-4:]}-{n}",
        "timestamp": f"2026-05-01T09:00:{n % 60:02d}.000Z",
        "message": {"role": "user", "content": f"{text} {n}"},
    }
    return json.dumps(rec, separators=(",", ":")).encode() + b"\n"


def _transcript(home: Path, sid: str) -> Path:
    return home / PROJECT / f"{sid}.jsonl"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A Claude Code home with two small sessions."""
    home = tmp_path / "home"
    (home / PROJECT).mkdir(parents=True)
    for sid in (SID, SID2):
        _transcript(home, sid).write_bytes(b"".join(_line(i, sid) for i in range(6)))
    return home


def _doctor(
    cli: CliRunner, *args: str | Path, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], str]:
    proc = cli("doctor", *args, "--json", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _import(cli: CliRunner, home: Path, catalog: Path, *extra: str | Path) -> int:
    proc = cli("import", "--home", home, "--catalog", catalog, *extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode


def _provider(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in doc["providers"] if p["provider"] == name)


# -- the whole-catalog report ------------------------------------------------------------
def test_healthy_demo_import_exits_0_with_its_counts(
    cli: CliRunner, tmp_path: Path, catalog: Path
) -> None:
    home = tmp_path / "home"
    generate_demo_home(home)
    assert _import(cli, home, catalog) == 0
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog)
    assert code == 0, doc["problems"]
    assert doc["verdict"] == "healthy" and doc["problems"] == [] and doc["version"] == 1
    receipt = doc["catalog"]["imports"][0]
    assert receipt["status"] == "ok" and doc["catalog"]["abandoned_imports"] == 0
    assert sum(p["sources"] for p in doc["providers"]) == receipt["sources_seen"]
    for p in doc["providers"]:  # nothing changed since the import
        assert p["continuity"]["unchanged"] + p["continuity"]["superseded"] == p["sources"]
        assert p["refused"] == 0 and all(not r["warnings"] for r in p["roots"])
        assert all(e["value"] is None and not e["in_force"] for e in p["env"])
    tables = doc["catalog"]["tables"]
    for table in ("sources", "sessions", "events", "usage", "imports", "rejects"):
        assert tables[table] == scalar(catalog, f"SELECT count(*) FROM {table}"), table
    assert tables["events"] == receipt["events"] and tables["usage"] == receipt["usage_rows"]
    index = doc["catalog"]["search_index"]
    with_text = scalar(
        catalog, "SELECT count(*) FROM events WHERE text IS NOT NULL OR tool_input IS NOT NULL"
    )
    # Without --deep the index is checked by its counters: no event is read.
    assert index["state"] == "ok" and index["indexed"] == with_text > 0
    assert index["events_with_text"] is None and index["missing"] is None
    assert doc["catalog"]["orphans"] is None
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog, "--deep")
    assert code == 0, doc["problems"]
    index = doc["catalog"]["search_index"]
    assert index["state"] == "ok" and index["events_with_text"] == with_text > 0
    assert index["indexed"] == with_text and index["missing"] == 0
    assert set(doc["catalog"]["orphans"].values()) == {0}
    assert doc["catalog"]["schema_version"] == doc["catalog"]["expected_schema_version"]

    human = cli("doctor", "--home", home, "--catalog", catalog, env=cli_env(COLUMNS="200"))
    assert human.returncode == 0
    assert "provider roots" in human.stdout and "recent imports" in human.stdout
    assert human.stdout.strip().splitlines()[-1].startswith("healthy: ")


def test_missing_catalog_exits_4_after_the_discovery_part(
    cli: CliRunner, home: Path, catalog: Path
) -> None:
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog)
    assert code == 4 and doc["verdict"] == "no-catalog" and not doc["catalog"]["exists"]
    claude = _provider(doc, "claude-code")
    assert claude["sources"] == 2 and claude["continuity"]["new"] == 2
    human = cli("doctor", "--home", home, "--catalog", catalog, env=cli_env(COLUMNS="250"))
    assert human.returncode == 4
    assert "provider roots" in human.stdout and str(home / ".claude" / "projects") in human.stdout
    assert "no catalog at" in human.stdout.strip().splitlines()[-1]
    assert not catalog.exists()  # doctor never creates a catalog


def test_truncated_source_needs_attention(cli: CliRunner, home: Path, catalog: Path) -> None:
    assert _import(cli, home, catalog) == 0
    path = _transcript(home, SID)
    path.write_bytes(path.read_bytes()[: len(_line(0)) * 2])
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog)
    assert code == 1 and doc["verdict"] == "needs-attention"
    assert _provider(doc, "claude-code")["continuity"]["truncated"] == 1
    [refused] = doc["refused"]
    assert refused["path"] == str(path) and refused["code"] == "SOURCE_TRUNCATED"
    assert refused["seen_in"] == "plan" and "--restart-drifted" in refused["remedy"]
    assert any("1 refused source" in p for p in doc["problems"])
    # the session is in the catalog; the planner would refuse its source now
    code, diag, _ = _doctor(cli, SID, "--home", home, "--catalog", catalog)
    assert code == 1 and diag["status"] == "found"
    assert diag["sources"][0]["status"] == "ok"
    assert diag["sources"][0]["now"]["continuity"] == "truncated"
    assert diag["sources"][0]["now"]["code"] == "SOURCE_TRUNCATED"
    # an import records the refusal; the session keeps its data and its refused source
    assert _import(cli, home, catalog) == 1
    code, diag, _ = _doctor(cli, SID, "--home", home, "--catalog", catalog)
    assert code == 1 and diag["status"] == "found"
    [source] = diag["sources"]
    assert source["status"] == "refused" and source["continuity"] == "truncated"
    assert "shrank" in source["refusal"] and "--restart-drifted" in source["remedy"]


def test_symlink_out_of_a_root_is_refused_and_explained(
    cli: CliRunner, home: Path, catalog: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "copy.jsonl"
    outside.parent.mkdir()
    outside.write_bytes(_line(0, "5d0c8e1e-0000-4000-8000-00000000d003"))
    link = _transcript(home, "5d0c8e1e-0000-4000-8000-00000000d003")
    link.symlink_to(outside)
    assert _import(cli, home, catalog) == 1
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog)
    assert code == 1
    assert _provider(doc, "claude-code")["continuity"]["outside-root"] == 1
    [refused] = doc["refused"]
    assert refused["code"] == "SOURCE_OUTSIDE_ROOT" and refused["path"] == str(link)
    assert "symlink" in refused["remedy"]

    code, diag, _ = _doctor(cli, link.stem, "--home", home, "--catalog", catalog)
    assert code == 4 and diag["status"] == "not-found"
    [candidate] = diag["candidates"]
    assert candidate["state"] == "outside-root" and candidate["matched_by"] == "path"
    assert candidate["path"] == str(link) and "symlink" in candidate["remedy"]


def test_relative_codex_home_and_missing_override_root_are_warnings(
    cli: CliRunner, home: Path, catalog: Path, tmp_path: Path
) -> None:
    assert _import(cli, home, catalog) == 0
    env = cli_env(CODEX_HOME="relative/codex", CLAUDE_CONFIG_DIR=str(tmp_path / "nowhere"))
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog, env=env)
    assert code == 1 and doc["verdict"] == "needs-attention"
    codex = _provider(doc, "codex")
    assert codex["env"] == [{"name": "CODEX_HOME", "value": "relative/codex", "in_force": False}]
    assert all(r["path"].startswith(str(home / ".codex")) for r in codex["roots"])
    assert any("relative" in w for r in codex["roots"] for w in r["warnings"])
    claude = _provider(doc, "claude-code")
    assert claude["env"][0]["in_force"] and claude["env"][0]["value"] == str(tmp_path / "nowhere")
    [root] = claude["roots"]
    assert root["origin"] == "CLAUDE_CONFIG_DIR" and not root["exists"]
    assert any("does not exist" in w for w in root["warnings"])
    # the default root it shadows is named, so a "missing" session can be found
    assert any("is not searched because CLAUDE_CONFIG_DIR is set" in n for n in claude["notes"])
    assert any(p.startswith("codex: CODEX_HOME='relative/codex'") for p in doc["problems"])
    # a default root that does not exist (Cursor on another OS) is no warning
    cursor = _provider(doc, "cursor")
    assert not any(r["exists"] for r in cursor["roots"])
    assert all(not r["warnings"] for r in cursor["roots"])


def test_stale_and_missing_search_index(cli: CliRunner, home: Path, catalog: Path) -> None:
    assert _import(cli, home, catalog) == 0
    con = duckdb.connect(str(catalog))
    con.execute(
        # below the index's watermark: an event the publish step has passed, not indexed
        "INSERT INTO events SELECT * REPLACE ('0-late-' || event_id AS event_id, 'added later' AS text) "
        "FROM events WHERE session_id = ? LIMIT 1",
        [SID],
    )
    con.close()
    # Only a deep check reads each event: the counters cannot tell.
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog, "--deep")
    assert code == 1
    index = doc["catalog"]["search_index"]
    assert index["state"] == "stale" and index["missing"] == 1
    assert "agentlake import" in index["remedy"]
    assert any("search index is stale" in p for p in doc["problems"])

    con = duckdb.connect(str(catalog))
    con.execute("DELETE FROM search_postings")
    con.execute("DELETE FROM search_state")
    con.close()
    for deep in ((), ("--deep",)):
        code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog, *deep)
        assert code == 1 and doc["catalog"]["search_index"]["state"] == "missing", deep


def test_an_index_that_lags_is_shown_with_its_lag(
    cli: CliRunner, home: Path, catalog: Path
) -> None:
    """An import without the publish step leaves every event unsearchable: the catalog
    is still correct, so doctor shows the lag and how to catch up without failing."""
    assert _import(cli, home, catalog, "--no-index") == 0
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog, "--deep")
    index = doc["catalog"]["search_index"]
    assert index["state"] == "lagging" and index["lag"] == 12 and index["missing"] == 0
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog)
    index = doc["catalog"]["search_index"]
    assert index["state"] == "lagging" and index["lag"] == 12 and index["missing"] is None
    assert "12 events are not searchable yet" in index["message"]
    assert "agentlake index" in index["remedy"]
    assert code == 0
    human = cli("doctor", "--home", home, "--catalog", catalog)
    assert "12 events are not searchable yet" in " ".join(human.stdout.split())

    assert cli("index", "--catalog", catalog).returncode == 0
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog)
    index = doc["catalog"]["search_index"]
    assert (code, index["state"], index["lag"]) == (0, "ok", 0)


def test_orphan_rows_need_attention(cli: CliRunner, home: Path, catalog: Path) -> None:
    assert _import(cli, home, catalog) == 0
    con = duckdb.connect(str(catalog))
    con.execute("DELETE FROM sessions WHERE session_id = ?", [SID])
    con.close()
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog, "--deep")
    assert code == 1
    assert doc["catalog"]["orphans"]["events_without_session"] == 6
    assert any("orphan rows" in p for p in doc["problems"])
    code, diag, _ = _doctor(cli, SID, "--catalog", catalog, "--home", home)
    assert code == 1 and diag["status"] == "found" and not diag["session"]["in_sessions"]


def test_rejects_by_reason(cli: CliRunner, tmp_path: Path, catalog: Path) -> None:
    cases = {"malformed_json": "MALFORMED", "invalid_utf8": "BAD_ENCODING"}
    for case in cases:
        assert _import(cli, FIXTURES / "claude" / "bad_input" / case, catalog) == 0
    home = FIXTURES / "claude" / "bad_input" / "malformed_json"
    code, doc, _ = _doctor(cli, "--home", home, "--catalog", catalog)
    assert code == 0, doc["problems"]  # rejected lines are recorded, not a problem
    assert {(r["provider"], r["reason"], r["count"]) for r in doc["rejects"]} == {
        ("claude-code", "MALFORMED", 1),
        ("claude-code", "BAD_ENCODING", 1),
    }
    assert all(r["bytes"] > 0 for r in doc["rejects"])
    assert _provider(doc, "claude-code")["rejects"] == {"BAD_ENCODING": 1, "MALFORMED": 1}
    # a session's own sources carry their rejects (content-free: reason and count)
    code, diag, _ = _doctor(
        cli, "5d0c8e1e-000b-4000-8000-000000000001", "--catalog", catalog, "--home", home
    )
    assert code == 0 and diag["sources"][0]["rejects"] == {"MALFORMED": 1}


# -- one session ---------------------------------------------------------------------------
def test_imported_session_by_id_and_by_prefix(cli: CliRunner, home: Path, catalog: Path) -> None:
    assert _import(cli, home, catalog) == 0
    code, full, _ = _doctor(cli, SID, "--home", home, "--catalog", catalog)
    assert code == 0 and full["status"] == "found"
    assert full["session"]["session_id"] == SID and full["session"]["provider"] == "claude-code"
    assert full["rows"] == {"sessions": 1, "events": 6, "usage": 0}
    [source] = full["sources"]
    assert source["path"] == str(_transcript(home, SID)) and source["status"] == "ok"
    assert source["events"] == 6
    code, by_prefix, _ = _doctor(cli, SID[:-2], "--home", home, "--catalog", catalog)
    assert code == 0 and by_prefix["session"] == full["session"]
    assert full["sources"][0]["now"]["continuity"] == "unchanged"
    # lines appended since the import: in the catalog, with new data waiting
    with _transcript(home, SID).open("ab") as fh:
        fh.write(_line(7))
    code, grown, _ = _doctor(cli, SID, "--home", home, "--catalog", catalog)
    assert code == 0 and grown["sources"][0]["now"]["continuity"] == "validated-append"
    assert grown["sources"][0]["now"]["pending_bytes"] == len(_line(7))
    assert "not imported yet" in grown["message"]
    # a prefix of both sessions is ambiguous (usage error), a too short one is refused
    code, both, _ = _doctor(cli, "5d0c8e1e", "--home", home, "--catalog", catalog)
    assert code == 2 and both["status"] == "ambiguous" and set(both["matches"]) == {SID, SID2}
    assert cli("doctor", "5d0", "--catalog", catalog).returncode == 2
    human = cli("doctor", SID, "--home", home, "--catalog", catalog, env=cli_env(COLUMNS="200"))
    assert human.returncode == 0 and "its sources" in human.stdout
    assert human.stdout.strip().splitlines()[-1].startswith(f"session {SID} (claude-code) is in")


def test_session_in_a_file_not_yet_imported(cli: CliRunner, home: Path, catalog: Path) -> None:
    assert _import(cli, home, catalog) == 0
    late = "5d0c8e1e-0000-4000-8000-00000000d004"
    _transcript(home, late).write_bytes(_line(0, late))
    # a file whose name says nothing but whose first lines mention the session
    (home / PROJECT / "5d0c8e1e-0000-4000-8000-00000000d005.jsonl").write_bytes(
        _line(0, "5d0c8e1e-0000-4000-8000-00000000d005", text=f"see {late}")
    )
    # a look-alike under the root that no predicate owns
    (home / PROJECT / f"{late}.jsonl.bak").write_bytes(b"backup\n")
    code, diag, _ = _doctor(cli, late, "--home", home, "--catalog", catalog)
    assert code == 4 and diag["status"] == "not-found"
    by_path = {Path(c["path"]).name: c for c in diag["candidates"]}
    assert by_path[f"{late}.jsonl"]["state"] == "not-imported"
    assert by_path[f"{late}.jsonl"]["matched_by"] == "path"
    assert "agentlake import" in by_path[f"{late}.jsonl"]["remedy"]
    mention = by_path["5d0c8e1e-0000-4000-8000-00000000d005.jsonl"]
    assert mention["matched_by"] == "content" and mention["state"] == "not-imported"
    assert by_path[f"{late}.jsonl.bak"]["state"] == "look-alike"
    assert [c["matched_by"] for c in diag["candidates"]][-1] == "content"  # path matches first
    human = cli("doctor", late, "--home", home, "--catalog", catalog, env=cli_env(COLUMNS="250"))
    assert human.returncode == 4 and "not-imported" in human.stdout
    assert human.stdout.strip().splitlines()[-1].startswith(f"session {late} not found")


def test_session_of_another_workspace_reads_like_an_unknown_id(
    cli: CliRunner, home: Path, catalog: Path, tmp_path: Path
) -> None:
    assert _import(cli, home, catalog, "--workspace", "elsewhere") == 0
    empty = tmp_path / "empty"  # nothing on disk mentions either id
    empty.mkdir()
    unknown = "5d0c8e1e-0000-4000-8000-0000000ffff1"
    code, other, _ = _doctor(cli, SID, "--home", empty, "--catalog", catalog)
    code2, nowhere, _ = _doctor(cli, unknown, "--home", empty, "--catalog", catalog)
    assert code == code2 == 4
    assert other["message"] == f"session {SID} not found in workspace 'default'; " + (
        "no provider-owned file under the searched roots mentions it"
    )
    assert json.dumps(other).replace(SID, unknown) == json.dumps(nowhere)
    assert "elsewhere" not in json.dumps(other)
    # in its own workspace it is found
    code, found, _ = _doctor(
        cli, SID, "--home", empty, "--catalog", catalog, "--workspace", "elsewhere"
    )
    assert code == 0 and found["rows"]["events"] == 6


def test_checkpoints_are_read_only_for_sources_it_discovers(
    cli: CliRunner, home: Path, catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """doctor on a home where no provider root holds a file (another machine than the
    imports') reads none of the catalog's checkpoints; where it discovers the imported
    files it finds them unchanged."""
    from agentlake.load.checkpoint import load_checkpoints
    from agentlake.read.doctor import catalog_health, diagnose

    assert _import(cli, home, catalog) == 0
    read: list[str] = []

    def counted(con: duckdb.DuckDBPyConnection, workspace: str) -> Any:
        read.append(workspace)
        return load_checkpoints(con, workspace)

    monkeypatch.setattr(catalog_health, "load_checkpoints", counted)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    report = diagnose(catalog, "default", home=empty, env={})
    assert read == [] and report.catalog.tables["sources"] == 2
    report = diagnose(catalog, "default", home=home, env={})
    assert read == ["default"]
    claude = next(p for p in report.providers if p.provider == "claude-code")
    assert claude.continuity["unchanged"] == 2
