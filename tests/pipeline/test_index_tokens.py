"""The token figure of Codex's thread index (``threads.tokens_used``): kept on the session,
never a call; listings, ``sessions show`` and ``report session`` show it, marked, for a
thread whose rollout is gone, and no report total includes it."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from agentlake.cli import app
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.read.reports import ReportFilter, report
from agentlake.read.sessions import list_sessions, show_session
from tests.conftest import FIXTURES

HOME = FIXTURES / "codex" / "index_only_thread"
PARENT = "019e1a00-0000-7000-8000-c0de00000020"
GONE = "019e15d0-0000-7000-8000-c0de00000022"  # its rollout is not in the home


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("index") / "c.duckdb"
    result = run_import(
        ImportOptions(catalog=path, workspace="default", home=HOME, env={}, build_index=False)
    )
    assert result.exit_code == 0
    return path


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, [*args], env={"COLUMNS": "160"})


def test_the_figure_is_on_the_session_and_never_a_call(catalog: Path) -> None:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        rows = con.execute(
            "SELECT s.session_id, s.index_tokens, s.total_tokens, count(u.call_id) "
            "FROM sessions s LEFT JOIN usage u USING (workspace, provider, session_id) "
            "GROUP BY ALL ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert rows == [
        (GONE, 48210, 0, 0),
        (PARENT, 47200, 47200, 2),
        ("019e1a05-0000-7000-8000-c0de00000021", 9300, 9300, 1),
    ]


def test_listing_shows_it_marked_where_there_are_no_calls(catalog: Path) -> None:
    page = {s["session_id"]: s for s in list_sessions(catalog, "default").sessions.to_pylist()}
    assert (page[GONE]["total_tokens"], page[GONE]["index_tokens"]) == (0, 48210)
    assert (page[PARENT]["total_tokens"], page[PARENT]["index_tokens"]) == (47200, 47200)
    listed = _cli("sessions", "list", "--catalog", str(catalog))
    assert listed.exit_code == 0, listed.output
    assert "48,210*" in listed.stdout and "47,200*" not in listed.stdout
    assert "* from the provider's thread index" in listed.stdout
    doc = json.loads(_cli("sessions", "list", "--json", "--catalog", str(catalog)).stdout)
    assert {s["session_id"]: s["index_tokens"] for s in doc["sessions"]}[GONE] == 48210


def test_show_says_where_the_figure_comes_from(catalog: Path) -> None:
    detail = show_session(catalog, "default", GONE)
    assert detail.session.index_tokens == 48210 and detail.session.total_tokens == 0
    assert detail.tree is not None and detail.tree.own.calls == 0
    shown = _cli("sessions", "show", GONE, "--catalog", str(catalog))
    assert "48,210 from the thread index (no calls" in shown.stdout
    assert "tokens by model" not in shown.stdout
    doc = json.loads(_cli("sessions", "show", GONE, "--json", "--catalog", str(catalog)).stdout)
    assert doc["session"]["index_tokens"] == 48210 and doc["totals"]["own"]["total_tokens"] == 0
    # with calls, the calls count; the index figure is printed only when it differs
    same = _cli("sessions", "show", PARENT, "--catalog", str(catalog)).stdout
    assert "thread index" not in same and "47,200 in 2 calls" in same


def test_show_compares_a_differing_figure_with_the_calls(catalog: Path, tmp_path: Path) -> None:
    copy = tmp_path / "c.duckdb"
    shutil.copy(catalog, copy)
    con = duckdb.connect(str(copy))
    con.execute("UPDATE sessions SET index_tokens = 51000 WHERE session_id = ?", [PARENT])
    con.close()
    shown = " ".join(_cli("sessions", "show", PARENT, "--catalog", str(copy)).stdout.split())
    assert "thread index 51,000 tokens (differs; the calls count)" in shown
    assert "47,200 in 2 calls" in shown


def test_session_report_lists_it_apart_and_never_in_a_total(catalog: Path) -> None:
    result = report(catalog, "default", "session", ReportFilter())
    assert result.totals["total_tokens"] == 47200 + 9300  # the calls only
    assert GONE not in result.rows.column("session_id").to_pylist()
    assert result.index_only is not None
    (row,) = result.index_only.to_pylist()
    assert (row["session_id"], row["index_tokens"], row["title"]) == (
        GONE, 48210, "Rate limiter burst option",
    )  # fmt: skip
    doc = json.loads(_cli("report", "session", "--json", "--catalog", str(catalog)).stdout)
    assert [r["session_id"] for r in doc["index_only"]] == [GONE]
    assert doc["totals"]["total_tokens"] == 56500
    rolled = json.loads(
        _cli("report", "session", "--rollup", "--json", "--catalog", str(catalog)).stdout
    )
    assert rolled["index_only"] == doc["index_only"] and rolled["totals"] == doc["totals"]
    human = _cli("report", "session", "--catalog", str(catalog)).stdout
    assert "token totals from the thread index (in no total above)" in human
    assert "48,210" in human


@pytest.mark.parametrize(
    ("flt", "listed"),
    [
        ({"provider": "claude"}, False),
        ({"since": date(2026, 5, 9)}, False),  # the thread was last active on 05-08
        ({"until": date(2026, 5, 8)}, True),
        ({"project": "gateway"}, True),
        ({"project": "webshop"}, False),
        ({"model": "mini"}, False),  # the index names its model gpt-5-codex
    ],
)
def test_the_report_filters_apply_to_it(catalog: Path, flt: dict[str, Any], listed: bool) -> None:
    result = report(catalog, "default", "session", ReportFilter(**flt))
    assert result.index_only is not None
    assert (GONE in result.index_only.column("session_id").to_pylist()) is listed


def test_other_reports_and_csv_keep_their_shape(catalog: Path) -> None:
    assert report(catalog, "default", "daily", ReportFilter()).index_only is None
    doc = json.loads(_cli("report", "daily", "--json", "--catalog", str(catalog)).stdout)
    assert "index_only" not in doc and doc["totals"]["total_tokens"] == 56500
    csv = _cli("report", "session", "--csv", "--catalog", str(catalog)).stdout
    assert GONE not in csv and len(csv.strip().splitlines()) == 3
