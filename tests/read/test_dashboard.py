"""`report html`: the dashboard's numbers equal the reports', its filters mean theirs, and
its page is one self-contained file (the browser tests draw it: test_dashboard_browser)."""

from __future__ import annotations

import json
import math
import re
import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from agentlake.cli import app
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.manage.authz import Authorization
from agentlake.manage.lifecycle import change_lifecycle
from agentlake.read.dashboard import write_dashboard
from agentlake.read.dashboard.data import TOP, dashboard_data
from agentlake.read.dashboard.page import bokeh_js
from agentlake.read.reports import ReportFilter, report
from tests.lakes import catalog_of, lake_url

TZ = "America/New_York"


@pytest.fixture
def demo_catalog(demo_home_catalog: tuple[Path, Path]) -> Path:
    """The demo home, imported once (read only)."""
    return demo_home_catalog[1]


@pytest.fixture
def catalog_copy(demo_catalog: Path, tmp_path: Path) -> Path:
    """A copy of the demo catalog a test may change."""
    copy = tmp_path / "catalog.duckdb"
    shutil.copy(demo_catalog, copy)
    return copy


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    )


def test_days_sum_to_the_daily_report(demo_catalog: Path) -> None:
    flt = ReportFilter(tz=TZ)
    data = dashboard_data(demo_catalog, "default", flt)
    daily = report(demo_catalog, "default", "daily", flt).rows.to_pylist()
    by_day: dict[date, list[float]] = {}
    for row in data.days.to_pylist():
        sums = by_day.setdefault(row["day"], [0, 0, 0.0, 0])
        sums[0] += row["calls"]
        sums[1] += row["total_tokens"]
        sums[2] += row["cost_usd"] or 0.0
        sums[3] += row["cache_read_tokens"]
    assert sorted(by_day) == [row["period"] for row in daily]
    for row in daily:
        calls, tokens, cost, cache_read = by_day[row["period"]]
        assert (calls, tokens, cache_read) == (
            row["calls"], row["total_tokens"], row["cache_read_tokens"],
        )  # fmt: skip
        assert _close(cost, row["cost_usd"])
    assert data.calls == sum(row["calls"] for row in daily) > 0


def test_hours_count_every_call_but_session_totals(demo_catalog: Path) -> None:
    data = dashboard_data(demo_catalog, "default", ReportFilter(tz=TZ))
    with duckdb.connect(str(demo_catalog), read_only=True) as con:
        row = con.execute(
            "SELECT count(*) FROM usage WHERE NOT coalesce(per_session, false)"
        ).fetchone()
        local = con.execute(
            "SELECT isodow(timezone(?, ts)) AS d, hour(timezone(?, ts)) AS h, count(*) "
            "FROM usage WHERE NOT coalesce(per_session, false) GROUP BY ALL",
            [TZ, TZ],
        ).fetchall()
    assert row is not None
    hours = data.hours.to_pylist()
    assert sum(r["calls"] for r in hours) == row[0]
    cells: dict[tuple[int, int], int] = {}
    for r in hours:
        cells[(r["weekday"], r["hour"])] = cells.get((r["weekday"], r["hour"]), 0) + r["calls"]
    assert cells == {(d, h): n for d, h, n in local}


def test_top_sessions_are_the_costliest_rolled_up_sessions(demo_catalog: Path) -> None:
    flt = ReportFilter(tz=TZ)
    data = dashboard_data(demo_catalog, "default", flt)
    rolled = report(demo_catalog, "default", "session", flt, rollup=True).rows.to_pylist()
    costliest = sorted(rolled, key=lambda r: (-(r["cost_usd"] or 0), -r["total_tokens"]))
    top = data.sessions.to_pylist()
    ids = [(r["provider"], r["session_id"]) for r in top[:TOP]]
    assert ids == [(r["provider"], r["session_id"]) for r in costliest[:TOP]]
    for shown, row in zip(top[:TOP], costliest, strict=False):
        assert _close(shown["cost_usd"], row["cost_usd"])
        assert shown["calls"] == row["calls"]
    # Every provider's own costliest sessions are there too (the page filters by provider).
    for provider in {r["provider"] for r in rolled}:
        own = [r for r in costliest if r["provider"] == provider][:TOP]
        listed = {r["session_id"] for r in top if r["provider"] == provider}
        assert {r["session_id"] for r in own} <= listed


def test_subagents_are_counted_under_their_root(demo_catalog: Path) -> None:
    data = dashboard_data(demo_catalog, "default", ReportFilter())
    with duckdb.connect(str(demo_catalog), read_only=True) as con:
        children = {
            (provider, root): n
            for provider, root, n in con.execute(
                "SELECT provider, root_session_id, count(*) FILTER (depth > 0) "
                "FROM session_rollup GROUP BY ALL"
            ).fetchall()
        }
    top = data.sessions.to_pylist()
    assert any(r["subagents"] for r in top), "the demo home has a session with subagents"
    for row in top:
        assert row["subagents"] == children.get((row["provider"], row["session_id"]), 0)


def test_projects_cost_what_the_project_report_says(demo_catalog: Path) -> None:
    flt = ReportFilter(tz=TZ)
    data = dashboard_data(demo_catalog, "default", flt)
    projects = report(demo_catalog, "default", "project", flt).rows.to_pylist()
    summed: dict[str, float] = {}
    for row in data.projects.to_pylist():
        summed[row["project_path"]] = summed.get(row["project_path"], 0.0) + (row["cost_usd"] or 0)
    for row in projects[:TOP]:
        assert _close(summed[row["project_path"]], row["cost_usd"] or 0.0)


def test_the_filters_are_the_reports(demo_catalog: Path) -> None:
    flt = ReportFilter(tz=TZ, provider="codex", since=date(2020, 1, 1))
    data = dashboard_data(demo_catalog, "default", flt)
    assert set(data.days["provider"].to_pylist()) == {"codex"}
    assert set(data.sessions["provider"].to_pylist()) == {"codex"}
    assert data.calls == report(demo_catalog, "default", "daily", flt).totals["calls"]
    future = dashboard_data(demo_catalog, "default", ReportFilter(since=date(2100, 1, 1)))
    assert future.calls == 0 and future.sessions.num_rows == 0


def test_hidden_sessions_are_left_out_unless_asked(catalog_copy: Path) -> None:
    before = dashboard_data(catalog_copy, "default", ReportFilter())
    costliest = before.sessions.to_pylist()[0]
    change_lifecycle(catalog_copy, Authorization("test", "default", "hide"),
                     costliest["session_id"])  # fmt: skip
    after = dashboard_data(catalog_copy, "default", ReportFilter())
    assert costliest["session_id"] not in after.sessions["session_id"].to_pylist()
    assert after.calls == before.calls - costliest["calls"]
    included = dashboard_data(catalog_copy, "default", ReportFilter(include_hidden=True))
    assert included.calls == before.calls


def test_a_lake_gives_the_dashboard_a_file_gives(
    demo_home_catalog: tuple[Path, Path], tmp_path: Path
) -> None:
    """The same home imported into a DuckLake (SQLite metadata) charts the same numbers,
    and the page names the snapshot it read."""
    home, file_catalog = demo_home_catalog
    lake = catalog_of(lake_url("sqlite", tmp_path, None), tmp_path)
    assert (
        run_import(ImportOptions(catalog=lake, workspace="default", home=home, env={})).exit_code
        == 0
    )
    flt = ReportFilter(tz=TZ)
    on_lake, on_file = (
        dashboard_data(lake, "default", flt),
        dashboard_data(file_catalog, "default", flt),
    )
    assert on_lake.snapshot is not None and on_file.snapshot is None
    for name in ("days", "hours", "sessions", "projects", "provider_sessions"):
        lake_rows, file_rows = (
            getattr(on_lake, name).to_pylist(),
            getattr(on_file, name).to_pylist(),
        )
        assert len(lake_rows) == len(file_rows), name
        for a, b in zip(lake_rows, file_rows, strict=True):
            # Sums of costs may differ in their last bits: the order of the additions.
            assert a.keys() == b.keys()
            for key in a:
                same = _close(a[key], b[key]) if isinstance(a[key], float) else a[key] == b[key]
                assert same, (name, key, a, b)
    written = write_dashboard(lake, "default", flt, tmp_path / "lake.html")
    assert written.snapshot == on_lake.snapshot
    assert f"lake snapshot {written.snapshot}" in (tmp_path / "lake.html").read_text()


def test_the_page_is_one_file_with_everything_inline(demo_catalog: Path, tmp_path: Path) -> None:
    out = tmp_path / "usage.html"
    written = write_dashboard(demo_catalog, "default", ReportFilter(tz=TZ), out)
    text = out.read_text(encoding="utf-8")
    assert written.bytes == out.stat().st_size < 2 * 1024 * 1024
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=|<link[^>]*\shref=", text)
    assert all(js[:2000] in text.replace("<\\/", "</") for js in bokeh_js())
    data = json.loads(re.search(r'id="agentlake-data">(.*?)</script>', text, re.S)[1])  # type: ignore[index]
    assert sum(data["days"]["calls"]) == written.calls
    assert data["providers"] == sorted(written.providers)
    assert not list(tmp_path.glob(".*partial")), "no temporary file is left behind"
    assert not list(tmp_path.glob(".*.export-*")), "no temporary file is left behind"
    assert out.stat().st_mode & 0o777 == 0o600, "private, like the catalog"


def test_text_from_transcripts_cannot_end_the_page_script(
    catalog_copy: Path, tmp_path: Path
) -> None:
    hostile = "</script><script>document.title='owned'</script>"
    with duckdb.connect(str(catalog_copy)) as con:
        con.execute("UPDATE sessions SET title = ?", [hostile])
    out = tmp_path / "usage.html"
    write_dashboard(catalog_copy, "default", ReportFilter(), out)
    text = out.read_text(encoding="utf-8")
    assert hostile not in text
    # The data element ends at the first "</": the whole JSON is inside it.
    body = text.split('id="agentlake-data">', 1)[1].split("</", 1)[0]
    labels = {s["label"] for s in json.loads(body)["sessions"]}
    assert labels == {hostile}


def test_the_python_facade_writes_it_too(demo_catalog: Path, tmp_path: Path) -> None:
    import agentlake

    written = agentlake.open(demo_catalog).dashboard(tmp_path / "d.html", provider="codex")
    assert written.providers == ("codex",) and written.path.stat().st_size == written.bytes


def test_report_html_through_the_cli(demo_catalog: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "d.html"
    result = runner.invoke(app, ["report", "html", str(out), "--catalog", str(demo_catalog),
                                 "--tz", TZ, "--provider", "claude", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["path"] == str(out) and doc["bytes"] == out.stat().st_size
    assert doc["providers"] == ["claude-code"] and doc["calls"] > 0
    human = runner.invoke(app, ["report", "html", str(out), "--catalog", str(demo_catalog)])
    assert human.exit_code == 0 and f"wrote {out}" in human.stdout
    missing = runner.invoke(app, ["report", "html", str(tmp_path / "no" / "d.html"),
                                  "--catalog", str(demo_catalog)])  # fmt: skip
    assert missing.exit_code == 2
    assert "is not a folder" in missing.output
