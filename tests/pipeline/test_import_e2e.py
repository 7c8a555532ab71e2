"""End-to-end imports through the real CLI: idempotency, appends, receipts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentlake.extract.providers import REGISTRY
from fixtures.synth import ALL_PROVIDERS, generate_claude_home
from tests.conftest import REPO, CliRunner, cli_env

from .helpers import scalar, snapshot


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    generate_claude_home(home)
    return home


def _import(cli: CliRunner, home: Path, catalog: Path, *extra: str) -> dict[str, object]:
    proc = cli("import", "--home", home, "--catalog", catalog, "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def test_second_import_changes_nothing_and_opens_no_transcript(
    cli: CliRunner, demo_home: Path, catalog: Path
) -> None:
    first = _import(cli, demo_home, catalog)
    totals = first["totals"]
    assert isinstance(totals, dict)
    assert totals["events"] > 0 and totals["usage_rows"] > 0
    before = snapshot(catalog)
    second = _import(cli, demo_home, catalog)
    t2 = second["totals"]
    assert isinstance(t2, dict)
    assert t2["sources_opened"] == 0
    assert t2["sources_unchanged"] == t2["sources_seen"] == totals["sources_seen"]
    assert t2["records"] == t2["events"] == t2["usage_rows"] == 0
    assert snapshot(catalog) == before
    assert scalar(catalog, "SELECT count(*) FROM imports WHERE status = 'ok'") == 2


def test_a_run_with_nothing_new_imports_neither_polars_nor_arrow_compute(
    cli: CliRunner, run_cli: CliRunner, demo_home: Path, catalog: Path
) -> None:
    """A re-run with nothing new has one second, process start included (DESIGN §8): it
    never loads polars or pyarrow.compute (about 0.1 s and 30 ms), which only new rows
    need."""
    _import(cli, demo_home, catalog)
    env = {**cli_env(), "PYTHONPROFILEIMPORTTIME": "1"}
    proc = run_cli("import", "--home", demo_home, "--catalog", catalog, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "agentlake.ingest.run" in loaded  # the report lists the run's own modules
    assert not {"polars", "pyarrow.compute"} & loaded


def test_append_adds_exactly_the_new_lines(cli: CliRunner, demo_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(demo_home, home)
    catalog = tmp_path / "c.duckdb"
    files = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
    target = max(files, key=lambda p: p.stat().st_size)
    lines = target.read_bytes().splitlines(keepends=True)
    # Import the first half, then append the rest: the result must equal a clean import.
    half = len(lines) // 2
    target.write_bytes(b"".join(lines[:half]))
    _import(cli, home, catalog)
    events_before = scalar(catalog, "SELECT count(*) FROM events")
    with target.open("ab") as fh:
        fh.write(b"".join(lines[half:]))
    doc = _import(cli, home, catalog)
    totals = doc["totals"]
    assert isinstance(totals, dict)
    assert totals["sources_opened"] == 1
    assert totals["records"] == len(lines) - half
    assert scalar(catalog, "SELECT count(*) FROM events") == events_before + totals["events"]

    clean = tmp_path / "clean.duckdb"
    _import(cli, home, clean)
    assert snapshot(catalog, ("events", "usage", "rejects")) == snapshot(
        clean, ("events", "usage", "rejects")
    )
    sessions = (
        "SELECT session_id, started_at::VARCHAR, updated_at::VARCHAR, prompts, events, tool_calls, title, project_path "
        "FROM sessions ORDER BY 1"
    )
    assert _rows(catalog, sessions) == _rows(clean, sessions)


def _rows(catalog: Path, query: str) -> list[tuple[object, ...]]:
    import duckdb

    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_dry_run_writes_nothing(cli: CliRunner, demo_home: Path, catalog: Path) -> None:
    proc = cli("import", "--home", demo_home, "--catalog", catalog, "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["sources"] and all(s["continuity"] == "new" for s in plan["sources"])
    assert plan["bytes_to_read"] == sum(p.stat().st_size for p in demo_home.rglob("*.jsonl"))
    assert not catalog.exists()


def test_sources_lists_the_plan(cli: CliRunner, demo_home: Path, catalog: Path) -> None:
    _import(cli, demo_home, catalog)
    proc = cli("sources", "--home", demo_home, "--catalog", catalog, "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert {s["continuity"] for s in plan["sources"]} == {"unchanged"}
    subagents = [s for s in plan["sources"] if "/subagents/" in s["path"]]
    assert subagents, "the demo home has subagent transcripts"


def test_subagent_is_its_own_session_linked_to_its_parent(
    cli: CliRunner, demo_home: Path, catalog: Path
) -> None:
    _import(cli, demo_home, catalog)
    proc = cli(
        "sql",
        "SELECT session_id, parent_session_id FROM sessions WHERE session_id LIKE 'agent-%'",
        "--catalog",
        catalog,
        "--json",
    )
    rows = json.loads(proc.stdout)["rows"]
    assert rows and all(r["parent_session_id"] for r in rows)
    parents = json.loads(
        cli("sql", "SELECT session_id FROM sessions", "--catalog", catalog, "--json").stdout
    )["rows"]
    known = {r["session_id"] for r in parents}
    assert all(r["parent_session_id"] in known for r in rows)


def test_workspaces_are_separate(
    cli: CliRunner, demo_home: Path, catalog: Path, tmp_path: Path
) -> None:
    # The same sessions in two workspaces, from two copies of the home: a source is bound
    # to the workspace that first imported it (tests/pipeline/test_relocate.py).
    copy = tmp_path / "copy"
    shutil.copytree(demo_home, copy, symlinks=True)
    _import(cli, demo_home, catalog)
    _import(cli, copy, catalog, "--workspace", "other")
    for ws in ("default", "other"):
        proc = cli(
            "sql",
            "SELECT count(*) AS n, count(DISTINCT workspace) AS w FROM events",
            "--catalog",
            catalog,
            "--workspace",
            ws,
            "--json",
        )
        row = json.loads(proc.stdout)["rows"][0]
        assert row["w"] == 1 and row["n"] == scalar(
            catalog, "SELECT count(*) FROM events WHERE workspace = ?", [ws]
        )
    empty = cli(
        "sql",
        "SELECT count(*) AS n FROM usage",
        "--catalog",
        catalog,
        "--workspace",
        "nobody",
        "--json",
    )
    assert json.loads(empty.stdout)["rows"][0]["n"] == 0


def test_reports_and_search(cli: CliRunner, demo_home: Path, catalog: Path) -> None:
    _import(cli, demo_home, catalog)
    daily = json.loads(cli("report", "daily", "--catalog", catalog, "--json").stdout)["daily"]
    assert sum(r["total_tokens"] for r in daily) == scalar(
        catalog, "SELECT sum(total_tokens) FROM usage"
    )
    monthly = json.loads(cli("report", "monthly", "--catalog", catalog, "--json").stdout)["monthly"]
    assert sum(r["calls"] for r in monthly) == sum(r["calls"] for r in daily)
    tokyo = json.loads(
        cli("report", "daily", "--tz", "Asia/Tokyo", "--catalog", catalog, "--json").stdout
    )["daily"]
    assert sum(r["total_tokens"] for r in tokyo) == sum(r["total_tokens"] for r in daily)
    first_day = min(r["period"] for r in daily)
    bounded = json.loads(
        cli(
            "report",
            "daily",
            "--since",
            first_day,
            "--until",
            first_day,
            "--catalog",
            catalog,
            "--json",
        ).stdout
    )["daily"]
    assert bounded and {r["period"] for r in bounded} == {first_day}
    csv_out = cli("report", "session", "--catalog", catalog, "--csv").stdout.splitlines()
    assert csv_out[0].startswith("provider,session_id") and len(csv_out) > 1
    hits = json.loads(cli("search", "cache bug", "--catalog", catalog, "--json").stdout)["hits"]
    assert hits and "cache" in hits[0]["snippet"].lower()
    assert hits == sorted(hits, key=lambda h: -h["score"])
    bad = cli("report", "daily", "--tz", "Mars/Olympus", "--catalog", catalog)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_synthetic_home_of_make_demo_imports_all_seven_agents(
    cli: CliRunner, tmp_path: Path
) -> None:
    # `make demo`: the development-only generator writes the home, then the real CLI.
    home, catalog = tmp_path / "home", tmp_path / "catalog.duckdb"
    written = subprocess.run(
        [sys.executable, "-m", "fixtures.synth", "--home", str(home), "--seed", "7"],
        cwd=REPO, env=cli_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    for provider in ALL_PROVIDERS:
        assert f"synthetic {provider}:" in written.stdout
    _import(cli, home, catalog)
    daily = json.loads(cli("report", "daily", "--catalog", catalog, "--json").stdout)["daily"]
    assert {p for r in daily for p in r["providers"]} == set(ALL_PROVIDERS)
    found = cli("search", "cache bug", "--catalog", catalog)
    assert found.returncode == 0 and "fix the cache bug" in found.stdout
    # the home is importable again: nothing changes
    again = _import(cli, home, catalog)["totals"]
    assert isinstance(again, dict) and again["sources_opened"] == 0


def test_the_cli_has_no_demo_command(cli: CliRunner) -> None:
    proc = cli("demo")
    assert proc.returncode == 2 and "No such command" in proc.stderr


def test_providers_prints_the_conformance_matrix(cli: CliRunner) -> None:
    proc = cli("providers", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in json.loads(proc.stdout)["providers"]}
    assert list(rows) == [spec.id for spec in REGISTRY]
    assert {"claude-code", "codex", "gemini-cli", "cursor"} <= set(rows)
    for row in rows.values():
        assert row["formats"] and row["adapter_version"] and row["docs"]
        assert row["support"] in ("native", "export", "both")
        assert bool(row["roots"]) == (row["support"] != "export")  # exports are named, not found
        assert "tests/test_contract.py" in row["tests"]
        for path in [*row["fixtures"], *row["tests"], *row["docs"]]:
            assert (REPO / path).exists(), path
    kinds = {f["position_kind"] for r in rows.values() for f in r["formats"]}
    assert kinds == {"byte-offset", "document", "sqlite"}


def test_the_checked_in_conformance_matrix_is_the_registrys() -> None:
    """providers.json is generated from the registry; change one, regenerate the other
    with `make matrix`."""
    from agentlake.read.names import MATRIX_FILE, matrix_text

    assert (REPO / MATRIX_FILE).read_text() == matrix_text(), "stale: run 'make matrix'"


def test_a_failed_run_leaves_a_failed_receipt_and_its_committed_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlake.ingest import run as run_module
    from agentlake.ingest.committer import run_source as original
    from agentlake.ingest.run import ImportOptions, run_import

    home = tmp_path / "home"
    generate_claude_home(home, sessions=4)
    catalog = tmp_path / "c.duckdb"
    calls = {"n": 0}

    def failing(*args: object) -> object:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk went away")
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(run_module, "run_source", failing)
    with pytest.raises(RuntimeError):
        run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    assert scalar(catalog, "SELECT status FROM imports") == "failed"
    assert "disk went away" in scalar(catalog, "SELECT CAST(detail AS VARCHAR) FROM imports")
    monkeypatch.setattr(run_module, "run_source", original)
    result = run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    assert result.exit_code == 0
    clean = tmp_path / "clean.duckdb"
    run_import(ImportOptions(catalog=clean, workspace="default", home=home, env={}))
    assert snapshot(catalog, ("events", "usage", "rejects")) == snapshot(
        clean, ("events", "usage", "rejects")
    )


def test_colliding_native_ids_in_two_workspaces_stay_separate(
    cli: CliRunner, tmp_path: Path
) -> None:
    # The same session, message and request ids in two workspaces, with other tokens and
    # text in the second: dedup, sessions and search must never cross the workspace line.
    source = REPO / "fixtures" / "claude" / "streamed_duplicate_chunks"
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(source, home_a)
    shutil.copytree(source, home_b)
    (transcript,) = (home_b / ".claude" / "projects").rglob("*.jsonl")
    text = transcript.read_text()
    transcript.write_text(
        text.replace('"output_tokens":', '"output_tokens":1000').replace(
            '"type":"text","text":"', '"type":"text","text":"zebracolliding '
        )
    )
    catalog = tmp_path / "c.duckdb"
    for ws, home in (("a", home_a), ("b", home_b)):
        proc = cli("import", "--home", home, "--catalog", catalog, "--workspace", ws)
        assert proc.returncode == 0, proc.stderr
    totals = {
        ws: scalar(catalog, "SELECT sum(output_tokens) FROM usage WHERE workspace = ?", [ws])
        for ws in ("a", "b")
    }
    alone = tmp_path / "alone.duckdb"
    assert cli("import", "--home", home_a, "--catalog", alone).returncode == 0
    assert totals["a"] == scalar(alone, "SELECT sum(output_tokens) FROM usage")
    assert totals["b"] > totals["a"]
    assert scalar(catalog, "SELECT count(DISTINCT workspace) FROM sessions") == 2
    hits = cli("search", "zebracolliding", "--catalog", catalog, "--workspace", "a", "--json",
               "--mode", "lexical")  # fmt: skip
    assert json.loads(hits.stdout)["hits"] == []
    hits = cli("search", "zebracolliding", "--catalog", catalog, "--workspace", "b", "--json")
    assert json.loads(hits.stdout)["hits"]
    # an id that exists only in workspace a reads as unknown from workspace c
    session = scalar(catalog, "SELECT session_id FROM sessions WHERE workspace = 'a' LIMIT 1")
    for args in (("sessions", "show", session), ("doctor", session, "--home", tmp_path / "x")):
        proc = cli(*args, "--catalog", catalog, "--workspace", "c")
        assert proc.returncode == 4, (args, proc.stdout, proc.stderr)
    shown = cli("sessions", "show", session, "--catalog", catalog, "--workspace", "a")
    assert shown.returncode == 0
