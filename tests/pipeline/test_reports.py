"""Reports (pipeline/reports.py): periods, sessions, models, projects, breakdowns, filters,
time zones, totals, and the ``--json`` documents, which are pinned by snapshot files in
tests/pipeline/snapshots/ (regenerate deliberately with ``AGENTLAKE_UPDATE_SNAPSHOTS=1``)."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from agentlake.cli import app
from agentlake.errors import ConfigurationError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.catalog import open_for_write
from agentlake.read.reports import (
    REPORT_KINDS,
    ROWS_KEY,
    TOKEN_COLUMNS,
    ReportFilter,
    report,
    unpriced,
)
from fixtures.synth import generate_demo_home

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("AGENTLAKE_UPDATE_SNAPSHOTS") == "1"
MEASURES = ("calls", *TOKEN_COLUMNS, "unpriced_calls")


@pytest.fixture
def demo_catalog(demo_home_catalog: tuple[Path, Path]) -> Path:
    """The demo home of all four providers, imported once (read-only for tests)."""
    return demo_home_catalog[1]


def scalar(catalog: Path, query: str) -> Any:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        row = con.execute(query).fetchone()
    finally:
        con.close()
    assert row is not None
    return row[0]


# -- a hand-built catalog for exact expectations -----------------------------------------


class Calls:
    """Usage rows (and their sessions) for a fresh catalog, written when it is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pending: list[dict[str, Any]] = []

    def add(
        self,
        ts: str,
        *,
        model: str | None = "claude-sonnet-4-5-20250929",
        provider: str = "claude-code",
        session: str = "s1",
        project: str | None = "/work/alpha",
        input: int = 100,
        output: int = 10,
        workspace: str = "default",
        per_session: bool = False,
    ) -> None:
        self.pending.append(dict(locals(), self=None))

    @property
    def catalog(self) -> Path:
        with open_for_write(self.path) as con:
            for i, c in enumerate(self.pending):
                con.execute(
                    "INSERT INTO usage (call_id, workspace, provider, session_id, ts, model, "
                    "input_tokens, cache_write_tokens, cache_write_1h_tokens, cache_read_tokens, "
                    "output_tokens, reasoning_tokens, total_tokens, source_id, source_offset, "
                    "import_id, per_session) VALUES (?, ?, ?, ?, CAST(? AS TIMESTAMPTZ), ?, ?, "
                    "0, 0, 0, ?, 0, ?, 'src', 0, 1, ?)",
                    [f"c{i}", c["workspace"], c["provider"], c["session"], c["ts"], c["model"],
                     c["input"], c["output"], c["input"] + c["output"], c["per_session"]],
                )  # fmt: skip
                con.execute(
                    "INSERT INTO sessions (workspace, provider, session_id, project_path, title) "
                    "SELECT ?, ?, ?, ?, 'a title' WHERE NOT EXISTS (SELECT 1 FROM sessions "
                    "WHERE workspace = ? AND provider = ? AND session_id = ?)",
                    [c["workspace"], c["provider"], c["session"], c["project"],
                     c["workspace"], c["provider"], c["session"]],
                )  # fmt: skip
        self.pending.clear()
        return self.path


@pytest.fixture
def calls(tmp_path: Path) -> Calls:
    return Calls(tmp_path / "c.duckdb")


def rows(catalog: Path, kind: Any, **flt: Any) -> list[dict[str, Any]]:
    table: list[dict[str, Any]] = report(
        catalog, "default", kind, ReportFilter(**flt)
    ).rows.to_pylist()
    return table


def test_tz_moves_a_call_across_midnight(calls: Calls) -> None:
    calls.add("2026-03-01 23:30:00+00")
    calls.add("2026-03-02 00:30:00+00")
    catalog = calls.catalog
    utc = rows(catalog, "daily")
    assert [(r["period"], r["calls"]) for r in utc] == [
        (date(2026, 3, 1), 1),
        (date(2026, 3, 2), 1),
    ]
    berlin = rows(catalog, "daily", tz="Europe/Berlin")  # UTC+1 in March
    assert [(r["period"], r["calls"]) for r in berlin] == [(date(2026, 3, 2), 2)]
    la = rows(catalog, "daily", tz="America/Los_Angeles")  # UTC-8
    assert [(r["period"], r["calls"]) for r in la] == [(date(2026, 3, 1), 2)]
    # the bounds are days in the zone too
    assert rows(catalog, "daily", tz="Europe/Berlin", until=date(2026, 3, 1)) == []
    assert len(rows(catalog, "daily", since=date(2026, 3, 2))) == 1


def test_weeks_start_on_monday_and_months_on_the_first(
    calls: Calls,
) -> None:
    for ts in ("2026-03-01 12:00:00+00", "2026-03-02 12:00:00+00", "2026-03-08 12:00:00+00"):
        calls.add(ts)  # a Sunday, the next Monday and Sunday
    catalog = calls.catalog
    weeks = rows(catalog, "weekly")
    assert [(r["period"], r["calls"]) for r in weeks] == [
        (date(2026, 2, 23), 1),
        (date(2026, 3, 2), 2),
    ]
    assert [(r["period"], r["calls"]) for r in rows(catalog, "monthly")] == [(date(2026, 3, 1), 3)]


def test_filters_by_provider_model_and_project(calls: Calls) -> None:
    calls.add("2026-03-01 10:00:00+00", model="claude-opus-4-1-20250805", project="/w/Alpha")
    calls.add("2026-03-01 11:00:00+00", model="gpt-5-codex", provider="codex", session="x",
             project="/w/beta")  # fmt: skip
    calls.add("2026-03-01 12:00:00+00", model=None, session="s2", project=None)
    catalog = calls.catalog
    assert [r["calls"] for r in rows(catalog, "daily", model="OPUS")] == [1]
    assert [r["calls"] for r in rows(catalog, "daily", provider="codex")] == [1]
    assert [r["calls"] for r in rows(catalog, "daily", project="alpha")] == [1]
    assert rows(catalog, "daily", project="gamma") == []
    projects = {r["project_path"]: r["calls"] for r in rows(catalog, "project")}
    assert projects == {"/w/Alpha": 1, "/w/beta": 1, "<unknown>": 1}
    models = {(r["provider"], r["model"]) for r in rows(catalog, "model")}
    assert ("claude-code", "<unknown>") in models and ("codex", "gpt-5-codex") in models


def test_unknown_model_costs_null_and_is_listed_as_unpriced(
    calls: Calls,
) -> None:
    calls.add("2026-03-01 10:00:00+00", model="claude-sonnet-4-5-20250929", input=1000, output=0)
    calls.add("2026-03-01 11:00:00+00", model="house-model-7", input=500, output=5)
    catalog = calls.catalog
    result = report(catalog, "default", "daily", ReportFilter(), breakdown=True)
    (day,) = result.rows.to_pylist()
    assert day["unpriced_calls"] == 1 and day["cost_usd"] == pytest.approx(1000 * 3 / 1e6)
    assert result.breakdown is not None
    parts = {r["model"]: r["cost_usd"] for r in result.breakdown.to_pylist()}
    assert parts["house-model-7"] is None
    listed = unpriced(catalog, "default", ReportFilter()).to_pylist()
    assert [(r["model"], r["calls"], r["total_tokens"]) for r in listed] == [
        ("house-model-7", 1, 505)
    ]
    only_unpriced = report(catalog, "default", "model", ReportFilter(model="house"))
    assert only_unpriced.totals["cost_usd"] is None  # not 0


def test_reports_name_the_providers_whose_rows_are_session_totals(calls: Calls) -> None:
    """A provider that records only session totals has rows that are not calls: the
    report says which of its providers those are, in JSON and on the terminal."""
    calls.add("2026-03-01T10:00:00Z")
    calls.add("2026-03-01T11:00:00Z", provider="copilot", model="gpt-5-mini", per_session=True)
    calls.add("2026-04-01T11:00:00Z", provider="factory", model="gpt-5-mini", per_session=True)
    catalog = calls.catalog
    daily = report(catalog, "default", "daily", ReportFilter())
    assert daily.per_session == ("copilot", "factory")
    assert daily.to_json()["per_session_providers"] == ["copilot", "factory"]
    march = report(catalog, "default", "daily", ReportFilter(until=date(2026, 3, 31)))
    assert march.per_session == ("copilot",)  # factory's row is outside the filter
    only_claude = report(catalog, "default", "model", ReportFilter(provider="claude-code"))
    assert only_claude.per_session == () and "per_session_providers" not in only_claude.to_json()
    result = CliRunner().invoke(app, ["report", "monthly", "--catalog", str(catalog)],
                                env={"COLUMNS": "120"})  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "copilot, factory: tokens are per-session totals" in result.output


def test_other_workspaces_are_invisible(calls: Calls) -> None:
    calls.add("2026-03-01 10:00:00+00")
    calls.add("2026-03-01 10:00:00+00", workspace="other", session="s9")
    catalog = calls.catalog
    for kind in ("daily", "session", "model", "project"):
        assert report(catalog, "default", kind, ReportFilter()).totals["calls"] == 1, kind


def test_breakdown_is_refused_where_it_means_nothing(demo_catalog: Path) -> None:
    with pytest.raises(ConfigurationError, match="--breakdown"):
        report(demo_catalog, "default", "model", ReportFilter(), breakdown=True)


def test_bad_filters_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="time zone"):
        ReportFilter(tz="Mars/Olympus")
    with pytest.raises(ConfigurationError, match="after"):
        ReportFilter(since=date(2026, 3, 2), until=date(2026, 3, 1))


# -- the demo catalog: consistency between reports ---------------------------------------


@pytest.mark.parametrize("kind", ["daily", "weekly", "monthly", "session", "model", "project"])
def test_every_report_accounts_for_every_call(demo_catalog: Path, kind: Any) -> None:
    result = report(demo_catalog, "default", kind, ReportFilter())
    table = result.rows.to_pylist()
    for measure in MEASURES:
        assert result.totals[measure] == sum(r[measure] for r in table), measure
    assert result.totals["calls"] == scalar(demo_catalog, "SELECT count(*) FROM usage")
    assert result.totals["total_tokens"] == scalar(
        demo_catalog, "SELECT sum(total_tokens) FROM usage"
    )
    cost = scalar(demo_catalog, "SELECT sum(cost_usd) FROM usage_costed")
    assert result.totals["cost_usd"] == pytest.approx(cost, rel=1e-12)


@pytest.mark.parametrize("kind", ["daily", "weekly", "monthly", "session", "project"])
def test_breakdown_rows_add_up_to_their_row(demo_catalog: Path, kind: Any) -> None:
    result = report(demo_catalog, "default", kind, ReportFilter(), breakdown=True)
    doc = result.to_json()
    for row in doc[ROWS_KEY[kind]]:
        parts = row["breakdown"]
        assert parts, row
        for measure in MEASURES:
            assert row[measure] == sum(p[measure] for p in parts), (kind, measure)
        assert row["models"] == sorted({p["model"] for p in parts})
        priced = [p["cost_usd"] for p in parts if p["cost_usd"] is not None]
        assert row["cost_usd"] == pytest.approx(sum(priced) if priced else None)


def test_sessions_are_most_recent_first_and_projects_most_expensive_first(
    demo_catalog: Path,
) -> None:
    sessions = rows(demo_catalog, "session")
    last = [r["last_activity"] for r in sessions]
    assert last == sorted(last, reverse=True)
    costs = [r["cost_usd"] or 0 for r in rows(demo_catalog, "project")]
    assert costs == sorted(costs, reverse=True)


# -- the JSON documents ------------------------------------------------------------------

SNAPSHOT_CASES = {
    "daily": ["report", "daily"],
    "daily_breakdown": ["report", "daily", "--breakdown"],
    "weekly": ["report", "weekly", "--tz", "America/New_York"],
    "monthly": ["report", "monthly", "--provider", "codex"],
    "session": ["report", "session", "--since", "2026-05-04"],
    "session_rollup": ["report", "session", "--rollup", "--since", "2026-05-03"],
    "model": ["report", "model"],
    "project_breakdown": ["report", "project", "--breakdown", "--model", "claude"],
    "blocks": ["report", "blocks", "--tz", "Asia/Kolkata", "--provider", "claude"],
}


@pytest.mark.parametrize("case", sorted(SNAPSHOT_CASES))
def test_json_document_matches_its_snapshot(demo_catalog: Path, case: str) -> None:
    args = [*SNAPSHOT_CASES[case], "--catalog", str(demo_catalog), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    path = SNAPSHOTS / f"report_{case}.json"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())
    assert doc == expected


def test_json_documents_share_one_shape(demo_catalog: Path) -> None:
    rollup = [("session", ["--rollup"])]
    for kind, extra in [*((k, []) for k in REPORT_KINDS), *rollup]:
        args = ["report", kind, *extra, "--catalog", str(demo_catalog), "--json"]
        doc = json.loads(CliRunner().invoke(app, args).stdout)
        members = {"version", "report", "filters", ROWS_KEY[kind], "totals"}
        assert set(doc) == (members | {"rollup"} if extra else members), kind
        assert doc["version"] == 1 and doc["report"] == kind
        assert set(doc["filters"]) == {
            "tz", "since", "until", "provider", "model", "project", "include_hidden", "tag"
        }  # fmt: skip
        assert set(doc["totals"]) == {*MEASURES, "cost_usd"}
        for row in doc[ROWS_KEY[kind]]:
            assert {*MEASURES, "cost_usd", "first_activity", "last_activity"} <= set(row), kind
            assert ("sessions" in row) is (kind in ("model", "project") or bool(extra)), kind


def test_rollup_folds_the_demo_subagents_and_keeps_every_total(demo_catalog: Path) -> None:
    plain = report(demo_catalog, "default", "session", ReportFilter())
    rolled = report(demo_catalog, "default", "session", ReportFilter(), rollup=True)
    assert rolled.totals == plain.totals
    assert rolled.rows.num_rows < plain.rows.num_rows
    assert sum(rolled.rows.column("sessions").to_pylist()) == plain.rows.num_rows
    folded = {r["provider"] for r in rolled.rows.to_pylist() if r["sessions"] > 1}
    assert folded == {"claude-code", "codex", "gemini-cli", "cursor"}


def test_session_breakdown_renders_as_a_table(demo_catalog: Path) -> None:
    for extra in ([], ["--rollup"]):
        for columns in ("80", "160"):
            args = ["report", "session", "--breakdown", *extra, "--catalog", str(demo_catalog)]
            result = CliRunner().invoke(app, args, env={"COLUMNS": columns})
            assert result.exit_code == 0, result.output
            assert "└ " in result.stdout and "Total" in result.stdout


def test_csv_with_breakdown_has_one_line_per_model(demo_catalog: Path) -> None:
    args = ["report", "daily", "--breakdown", "--csv", "--catalog", str(demo_catalog)]
    lines = CliRunner().invoke(app, args).stdout.splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["period", "provider", "model"]
    detail = report(demo_catalog, "default", "daily", ReportFilter(), breakdown=True).breakdown
    assert detail is not None and len(lines) - 1 == detail.num_rows


def test_human_table_has_totals_and_an_unpriced_footnote(calls: Calls) -> None:
    calls.add("2026-03-01 10:00:00+00")
    calls.add("2026-03-02 10:00:00+00", model="house-model-7")
    args = ["report", "daily", "--catalog", str(calls.catalog)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0
    assert "Total" in result.stdout
    assert "1 call(s) of models without a price" in result.stdout
    assert "report --unpriced" in result.stdout


def test_provider_aliases_are_accepted_and_unknown_ones_refused(calls: Calls) -> None:
    calls.add("2026-03-01 10:00:00+00")
    calls.add("2026-03-01 10:00:00+00", provider="codex", model="gpt-5", session="x")
    catalog = calls.catalog
    assert [r["calls"] for r in rows(catalog, "daily", provider="claude")] == [1]
    with pytest.raises(ConfigurationError, match="unknown provider 'claud'"):
        ReportFilter(provider="claud")


def test_unpriced_json_document(calls: Calls) -> None:
    calls.add("2026-03-01 10:00:00+00")
    calls.add("2026-03-02 10:00:00+00", model="house-model-7", input=40, output=2)
    calls.add("2026-03-02 11:00:00+00", model="<synthetic>", input=0, output=0)
    args = ["report", "--unpriced", "--json", "--catalog", str(calls.catalog)]
    doc = json.loads(CliRunner().invoke(app, args).stdout)
    assert doc == {
        "version": 1,
        "unpriced": [
            {"model": "house-model-7", "provider": "claude-code",
             "first_activity": "2026-03-02T10:00:00", "last_activity": "2026-03-02T10:00:00",
             "calls": 1, "input_tokens": 40, "cache_write_tokens": 0, "cache_read_tokens": 0,
             "output_tokens": 2, "total_tokens": 42}
        ],
    }  # fmt: skip
    human = CliRunner().invoke(app, args[:2] + args[3:])
    assert "house-model-7" in human.stdout and "--prices FILE" in human.stdout


def test_reports_do_not_depend_on_where_the_home_lives(demo_catalog: Path, tmp_path: Path) -> None:
    # The demo has resumed-session copies: verbatim duplicate calls in two files. Which
    # session keeps such a call must not depend on the files' paths.
    home = tmp_path / "somewhere" / "else" / "home"
    generate_demo_home(home)
    catalog = tmp_path / "other.duckdb"
    options = ImportOptions(catalog=catalog, workspace="default", home=home, env={})
    assert run_import(options).exit_code == 0
    for kind in ("session", "project", "model"):
        here = report(demo_catalog, "default", kind, ReportFilter()).to_json()
        there = report(catalog, "default", kind, ReportFilter()).to_json()
        assert here == there, kind


# -- user prices on the command line -----------------------------------------------------


def test_prices_file_and_config_file_price_an_unknown_model(calls: Calls, tmp_path: Path) -> None:
    calls.add("2026-03-01 10:00:00+00", model="house-model-7", input=2_000_000, output=100_000)
    catalog = str(calls.catalog)
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."house-model"]\ninput = 1.0\noutput = 8.0\nmatch = "prefix"\n')
    base = ["report", "model", "--json", "--catalog", catalog]
    empty_env = {"AGENTLAKE_CONFIG": str(tmp_path / "none.toml")}
    unpriced_doc = json.loads(CliRunner().invoke(app, base, env=empty_env).stdout)
    assert unpriced_doc["totals"]["cost_usd"] is None
    doc = json.loads(CliRunner().invoke(app, [*base, "--prices", str(prices)]).stdout)
    assert doc["totals"]["cost_usd"] == pytest.approx(2.0 + 0.8)
    assert doc["totals"]["unpriced_calls"] == 0
    config = tmp_path / "config.toml"
    config.write_text('[prices.models."house-model-7"]\ninput = 2.0\noutput = 8.0\n')
    via_config = CliRunner().invoke(app, base, env={"AGENTLAKE_CONFIG": str(config)})
    assert json.loads(via_config.stdout)["totals"]["cost_usd"] == pytest.approx(4.0 + 0.8)
    # an explicit file replaces the config's prices
    both = CliRunner().invoke(
        app, [*base, "--prices", str(prices)], env={"AGENTLAKE_CONFIG": str(config)}
    )
    assert json.loads(both.stdout)["totals"]["cost_usd"] == pytest.approx(2.8)
    listed = CliRunner().invoke(
        app, ["prices", "list", "--model", "house", "--catalog", catalog, "--json",
              "--prices", str(prices)],
    )  # fmt: skip
    assert [(r["source"], r["model"]) for r in json.loads(listed.stdout)["prices"]] == [
        ("user", "house-model")
    ]


def test_a_broken_prices_file_is_one_line_and_exit_2(calls: Calls, tmp_path: Path) -> None:
    calls.add("2026-03-01 10:00:00+00")
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."x"]\ninput = -1\noutput = 2\n')
    args = ["report", "daily", "--catalog", str(calls.catalog), "--prices", str(prices)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(prices) in lines[0] and 'models."x"' in lines[0]


def test_prices_refresh_offline_materializes_the_bundled_snapshot(calls: Calls) -> None:
    calls.add("2026-03-01 10:00:00+00")
    args = ["prices", "refresh", "--offline", "--json", "--catalog", str(calls.catalog)]
    doc = json.loads(CliRunner().invoke(app, args).stdout)
    assert doc["refreshed"] is True and doc["source"] == "bundled"
    assert doc["models"] > 100 and doc["label"].startswith("genai-prices ")


def test_only_the_per_session_reports_define_their_macro(demo_catalog: Path) -> None:
    """The session roll-up macro is defined for the reports that read it (binding it is
    a few milliseconds of every other report), and they read it."""
    from agentlake.read.reports import report_connection

    per_session = (
        "SELECT count(*) FROM report_sessions('default', 'UTC', NULL, NULL, NULL, NULL, NULL, "
        "false, NULL)"
    )
    with report_connection(demo_catalog, per_session=False) as con:
        with pytest.raises(duckdb.CatalogException):
            con.execute(per_session)
        assert con.execute(per_session.replace("report_sessions", "report_calls")).fetchone()
    with report_connection(demo_catalog) as con:
        assert con.execute(per_session).fetchone()
    for kind in ("session", "project"):
        assert report(demo_catalog, "default", kind, ReportFilter()).rows.num_rows > 0
