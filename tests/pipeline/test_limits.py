"""How close the plan is to its limits: ``report limits`` (the latest snapshot per provider,
limit and window, in --tz, with its age and reset) and a session's latest snapshot in
``sessions show``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from agentlake.cli import app
from agentlake.errors import ConfigurationError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.catalog import open_for_write
from agentlake.read.limits import LIMIT_COLUMNS, limits_report
from agentlake.read.sessions import show_session
from tests.conftest import FIXTURES

HOME = FIXTURES / "codex" / "index_only_thread"
PARENT = "019e1a00-0000-7000-8000-c0de00000020"
CHILD = "019e1a05-0000-7000-8000-c0de00000021"
NOW = datetime(2026, 5, 10, 10, 0, tzinfo=UTC)  # an hour after the last snapshot


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("limits") / "c.duckdb"
    result = run_import(
        ImportOptions(catalog=path, workspace="default", home=HOME, env={}, build_index=False)
    )
    assert result.exit_code == 0
    return path


def test_the_latest_snapshot_of_each_window(catalog: Path) -> None:
    result = limits_report(catalog, "default", tz="Europe/Berlin", now=NOW)
    assert result.rows.column_names == list(LIMIT_COLUMNS)
    got = [{k: v for k, v in row.items() if k != "session_id"} for row in result.rows.to_pylist()]
    assert got == [
        {"provider": "codex", "limit_id": "codex", "window_kind": "primary", "window_minutes": 300,
         "plan_type": "plus", "used_percent": 23.5,
         "resets_at": datetime(2026, 5, 10, 13, 0), "resets_in_seconds": 3600,
         "reset_passed": False, "observed_at": datetime(2026, 5, 10, 11, 6), "age_seconds": 54 * 60},
        {"provider": "codex", "limit_id": "codex", "window_kind": "secondary",
         "window_minutes": 10080, "plan_type": "plus", "used_percent": 63.0,
         "resets_at": datetime(2026, 5, 13, 12, 0), "resets_in_seconds": 3 * 86400,
         "reset_passed": False, "observed_at": datetime(2026, 5, 10, 11, 6), "age_seconds": 54 * 60},
    ]  # fmt: skip
    assert {r["session_id"] for r in result.rows.to_pylist()} == {PARENT}


def test_a_window_that_has_reset_since_says_so(catalog: Path) -> None:
    later = datetime(2026, 5, 10, 12, 30, tzinfo=UTC)  # 90 minutes past the 5-hour reset
    rows = {
        r["window_minutes"]: r
        for r in limits_report(catalog, "default", now=later).rows.to_pylist()
    }
    assert rows[300]["reset_passed"] is True and rows[300]["resets_in_seconds"] == -90 * 60
    assert rows[10080]["reset_passed"] is False


def test_windows_are_known_by_their_length_and_limits_by_their_id(tmp_path: Path) -> None:
    """Codex moved the weekly window into the primary slot; a snapshot that names no
    limit is of the provider's general one; a model's own limit stays apart."""
    path = tmp_path / "c.duckdb"
    with open_for_write(path) as con:
        rows = [
            ("01:00", None, "primary", 10.0, 300), ("01:00", None, "secondary", 40.0, 10080),
            ("02:00", "codex", "primary", 45.0, 10080),  # weekly, now in the primary slot
            ("03:00", "codex_other", "primary", 80.0, 300),  # a model's own limit
        ]  # fmt: skip
        for n, (at, limit, kind, used, minutes) in enumerate(rows):
            con.execute(
                "INSERT INTO rate_limits VALUES ('default', 'codex', 's', "
                "CAST(? AS TIMESTAMPTZ), ?, ?, ?, ?, NULL, NULL, 'src', ?, 1)",
                [f"2026-05-01 {at}:00+00", limit, kind, used, minutes, n],
            )
    got = limits_report(path, "default", now=datetime(2026, 5, 1, 4, tzinfo=UTC)).rows
    assert [(r["limit_id"], r["window_minutes"], r["used_percent"]) for r in got.to_pylist()] == [
        ("codex", 300, 10.0),
        ("codex", 10080, 45.0),
        ("codex_other", 300, 80.0),
    ]


def test_cli_json_shape_and_human_table(catalog: Path) -> None:
    args = ["report", "limits", "--tz", "America/New_York", "--provider", "codex-cli"]
    result = CliRunner().invoke(app, [*args, "--json", "--catalog", str(catalog)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"version", "report", "filters", "now", "limits"}
    assert doc["report"] == "limits" and doc["filters"] == {
        "tz": "America/New_York", "provider": "codex",
    }  # fmt: skip
    assert [r["resets_at"] for r in doc["limits"]] == ["2026-05-10T07:00:00", "2026-05-13T06:00:00"]
    assert all(set(r) == set(LIMIT_COLUMNS) for r in doc["limits"])
    human = CliRunner().invoke(app, ["report", "limits", "--catalog", str(catalog)])
    assert human.exit_code == 0, human.output
    assert "rate limits, as last reported (UTC)" in human.stdout
    assert "codex plus" in human.stdout and "23.5%" in human.stdout and "5h" in human.stdout
    assert "7d" in human.stdout and "63%" in human.stdout


def test_no_snapshots_and_bad_options(catalog: Path, tmp_path: Path) -> None:
    empty = limits_report(catalog, "default", provider="claude", now=NOW)
    assert empty.rows.num_rows == 0
    human = CliRunner().invoke(app, ["report", "limits", "--provider", "gemini",
                                     "--catalog", str(catalog)])  # fmt: skip
    assert human.exit_code == 0 and "no rate-limit snapshots" in human.stdout
    with pytest.raises(ConfigurationError):
        limits_report(catalog, "default", tz="Mars/Olympus")
    refused = CliRunner().invoke(app, ["report", "limits", "--provider", "nope",
                                       "--catalog", str(catalog)])  # fmt: skip
    assert refused.exit_code == 2 and "unknown provider" in refused.output


def test_show_gives_the_sessions_own_latest_snapshot(catalog: Path) -> None:
    parent = show_session(catalog, "default", PARENT).rate_limits
    child = show_session(catalog, "default", CHILD).rate_limits
    assert parent is not None and child is not None
    assert [(r["window_minutes"], r["used_percent"]) for r in parent.to_pylist()] == [
        (300, 23.5), (10080, 63.0),
    ]  # fmt: skip
    assert [(r["window_minutes"], r["used_percent"]) for r in child.to_pylist()] == [
        (300, 21.0), (10080, 62.0),
    ]  # fmt: skip
    doc = json.loads(
        CliRunner()
        .invoke(app, ["sessions", "show", CHILD, "--json", "--catalog", str(catalog)])
        .stdout
    )
    assert doc["rate_limits"][0]["resets_at"] == "2026-05-10T11:00:00+00:00"
    assert doc["rate_limits"][0]["observed_at"] == "2026-05-10T09:01:30+00:00"
    human = CliRunner().invoke(app, ["sessions", "show", CHILD, "--catalog", str(catalog)])
    assert "rate limits (its latest snapshot, UTC)" in human.stdout and "21%" in human.stdout
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        (count,) = con.execute("SELECT count(*) FROM rate_limits").fetchone() or (0,)
    finally:
        con.close()
    assert count == 8  # 2 windows × (3 snapshots of the parent + 1 of the child)
