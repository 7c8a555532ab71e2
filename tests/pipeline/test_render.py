"""Human output at 80 and 120 columns: every table rendered from one realistic catalog
(the demo home of all four providers, plus calls of unpriced and long-named models) is
pinned by a snapshot file in tests/pipeline/snapshots/render/ (regenerate deliberately
with ``AGENTLAKE_UPDATE_SNAPSHOTS=1``), and checked for the column rules: every line fits,
no header is cut, no session id is shown shorter than 8 characters, every model name
appears whole or elided at a boundary, beside its provider. Empty results say so in one
line. Nothing in the snapshots depends on the machine, the temporary directory or now."""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

from agentlake.cli import app
from agentlake.cli.render import tables
from agentlake.cli.render.doctor import render_report as render_doctor
from agentlake.cli.render.doctor import render_session as render_diagnosis
from agentlake.cli.render.imports import render_plan, render_providers, render_summary
from agentlake.cli.render.reports import render_limits, render_report, render_unpriced
from agentlake.cli.render.rows import render_prices, render_rows
from agentlake.cli.render.search import render_hits
from agentlake.cli.render.sessions import render_detail, render_page
from agentlake.extract.providers import REGISTRY
from agentlake.ingest.run import ImportOptions, plan_import, run_import
from agentlake.load.catalog import open_for_write
from agentlake.load.price_overrides import load_price_overrides
from agentlake.read.doctor import CatalogCheck, ImportReceipt, diagnose, explain_session
from agentlake.read.limits import limits_report
from agentlake.read.pricing import list_prices
from agentlake.read.queries import scoped_sql
from agentlake.read.reports import ReportFilter, report, unpriced
from agentlake.read.search import search_page
from agentlake.read.sessions import list_sessions, show_session
from fixtures.synth import generate_demo_home
from tests.conftest import cli_env

SNAPSHOTS = Path(__file__).parent / "snapshots" / "render"
UPDATE = os.environ.get("AGENTLAKE_UPDATE_SNAPSHOTS") == "1"
WIDTHS = (80, 120)
BASE = "/work/demo"  # stands for the temporary directory in every rendered path
NOW = datetime(2026, 5, 5, 2, 0, tzinfo=UTC)  # the demo's last block is active then
IMPORTED_AT = datetime(2026, 5, 5, 1, 30, 0)
# Calls added to the demo: an unpriced model sold by two providers, a long model id
# with slashes, and a session of a long project path.
EXTRA_SESSION = "019e0000-aaaa-7000-8000-00000000beef"
LONG_PROJECT = "/home/dev/src/github.example/platform-team/inventory-service"
LONG_MODEL = "accounts/fireworks/models/llama-v3p1-405b-instruct"
LATE_SESSION = "5a1e0000-0000-4000-8000-000000000001"  # a file discovered, not imported
SUBAGENT = "agent-abcc12d7c325118b0"
PRICES = '[models."house-model-7"]\ninput = 1.25\noutput = 10.0\n\n[models."house-model-long-context-2026-preview"]\ninput = 2.5\noutput = 20.0\ncache_read = 0.25\nsince = 2026-04-01\n'


@dataclasses.dataclass(frozen=True)
class Demo:
    """The rendered catalog and the values every view is fed."""

    root: Path
    home: Path
    catalog: Path
    options: ImportOptions
    result: Any
    models: frozenset[tuple[str, str]]  # (model, provider) of every call
    session_ids: frozenset[str]


def _add_calls(catalog: Path) -> None:
    """Unpriced and long-named models on a codex session of a long project path, and
    the unpriced model on a cursor session too (rows name real sources: no orphans)."""
    with open_for_write(catalog) as con:
        codex = con.execute(
            "SELECT source_id FROM usage WHERE provider = 'codex' ORDER BY source_id LIMIT 1"
        ).fetchone()
        cursor = con.execute(
            "SELECT session_id, source_id FROM usage WHERE provider = 'cursor' "
            "ORDER BY session_id LIMIT 1"
        ).fetchone()
        assert codex is not None and cursor is not None
        con.execute(
            "INSERT INTO sessions (workspace, provider, session_id, project_path, title, "
            "started_at, updated_at, prompts, events, tool_calls) VALUES ('default', 'codex', "
            "?, ?, 'Port the inventory sync job to the new queue client', "
            "TIMESTAMPTZ '2026-05-03 08:00:00+00', TIMESTAMPTZ '2026-05-03 08:40:00+00', 2, 0, 0)",
            [EXTRA_SESSION, LONG_PROJECT],
        )
        calls = [
            ("codex", EXTRA_SESSION, codex[0], "house-model-7", "2026-05-03 08:10:00+00"),
            ("codex", EXTRA_SESSION, codex[0], LONG_MODEL, "2026-05-03 08:20:00+00"),
            ("cursor", cursor[0], cursor[1], "house-model-7", "2026-05-02 10:00:00+00"),
        ]
        for i, (provider, session, source, model, ts) in enumerate(calls):
            con.execute(
                "INSERT INTO usage (call_id, workspace, provider, session_id, ts, model, "
                "input_tokens, cache_write_tokens, cache_write_1h_tokens, cache_read_tokens, "
                "output_tokens, reasoning_tokens, total_tokens, source_id, source_offset, "
                "import_id) VALUES (?, 'default', ?, ?, CAST(? AS TIMESTAMPTZ), ?, 12000, 0, 0, "
                "34000, 900, 0, 46900, ?, 0, 1)",
                [f"extra-{i}", provider, session, ts, model, source],
            )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("render")
    home, catalog = root / "home", root / "catalog.duckdb"
    generate_demo_home(home)
    options = ImportOptions(catalog=catalog, workspace="default", home=home, env={})
    result = run_import(options)
    assert result.exit_code == 0
    # A second import rejects a malformed line appended to a transcript; then a new
    # transcript appears and a codex rollout shrinks (the planner refuses it): doctor
    # and the plan have every section to show.
    notes = sorted((home / ".claude" / "projects" / "-home-dev-notes-cli").glob("*.jsonl"))[0]
    with notes.open("a") as f:
        f.write('{"type": "user", "message": {broken\n')
    assert run_import(options).exit_code == 0
    _add_calls(catalog)
    projects = home / ".claude" / "projects" / "-home-dev-api-gateway"
    first = sorted(projects.glob("*.jsonl"))[0]
    shutil.copyfile(first, projects / f"{LATE_SESSION}.jsonl")
    rollout = sorted((home / ".codex" / "sessions").rglob("*.jsonl"))[0]
    rollout.write_bytes(rollout.read_bytes()[: rollout.stat().st_size // 2])
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        models = frozenset(
            con.execute("SELECT DISTINCT coalesce(model, '<unknown>'), provider FROM usage")
            .fetchall()
        )  # fmt: skip
        ids = frozenset(r[0] for r in con.execute("SELECT session_id FROM sessions").fetchall())
    finally:
        con.close()
    return Demo(root, home, catalog, options, result, models, ids)


def rebase(value: Any, old: str) -> Any:
    """``value`` with the temporary directory ``old`` in every path and string replaced
    by :data:`BASE`, import times set to :data:`IMPORTED_AT` and the count of bundled
    prices (which moves with the genai-prices package) fixed, so renderings do not
    depend on the machine or the day."""
    if isinstance(value, Path):
        return Path(str(value).replace(old, BASE))
    if isinstance(value, str):
        return value.replace(old, BASE)
    if isinstance(value, tuple):
        return tuple(rebase(v, old) for v in value)
    if isinstance(value, list):
        return [rebase(v, old) for v in value]
    if isinstance(value, Mapping):
        return {k: rebase(v, old) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: rebase(getattr(value, f.name), old) for f in dataclasses.fields(value) if f.init
        }
        if isinstance(value, ImportReceipt):
            changes.update(started_at=IMPORTED_AT, ended_at=IMPORTED_AT)
        if isinstance(value, CatalogCheck):
            changes["tables"] = {**changes["tables"], "prices": 2_000}
        return dataclasses.replace(value, **changes)
    return value


# -- every human output, as a function of a console --------------------------------------
Render = Callable[[Console, Demo], None]


def _report(kind: Any, breakdown: bool = False, rollup: bool = False, **flt: Any) -> Render:
    def render(console: Console, d: Demo) -> None:
        made = report(
            d.catalog, "default", kind, ReportFilter(**flt), breakdown=breakdown, rollup=rollup,
            now=NOW,
        )  # fmt: skip
        render_report(console, made, workspace="default")

    return render


def _limits(console: Console, d: Demo) -> None:
    render_limits(console, limits_report(d.catalog, "default", now=NOW))


def _unpriced(console: Console, d: Demo) -> None:
    render_unpriced(console, unpriced(d.catalog, "default", ReportFilter()))


def _sessions_list(console: Console, d: Demo) -> None:
    render_page(console, list_sessions(d.catalog, "default", limit=12), workspace="default")


def _sessions_show(console: Console, d: Demo) -> None:
    render_detail(console, show_session(d.catalog, "default", SUBAGENT))


def _sessions_show_extra(console: Console, d: Demo) -> None:
    render_detail(console, show_session(d.catalog, "default", EXTRA_SESSION))


def _search(console: Console, d: Demo) -> None:
    page = search_page(d.catalog, "default", "cache expiry", limit=6)
    render_hits(console, page, query="cache expiry", workspace="default")


def _doctor(deep: bool) -> Render:
    def render(console: Console, d: Demo) -> None:
        found = diagnose(d.catalog, "default", home=d.home, env={}, deep=deep)
        render_doctor(console, rebase(found, str(d.root)))

    return render


def _doctor_session(session: str) -> Render:
    def render(console: Console, d: Demo) -> None:
        found = explain_session(d.catalog, "default", session, home=d.home, env={})
        render_diagnosis(console, rebase(found, str(d.root)))

    return render


def _plan(console: Console, d: Demo) -> None:
    plan = rebase(plan_import(d.options), str(d.root))
    render_plan(console, plan, errors=console)


def _import_summary(console: Console, d: Demo) -> None:
    render_summary(console, dataclasses.replace(d.result, seconds=2.5))


def _providers(console: Console, d: Demo) -> None:
    render_providers(console, REGISTRY, home=Path("/home/user"), env={})


def _prices(console: Console, d: Demo) -> None:
    path = d.root / "prices.toml"
    path.write_text(PRICES)
    table = list_prices(d.catalog, model="house-model", prices=load_price_overrides(path))
    render_prices(console, table)


def _sql(statement: str) -> Render:
    def render(console: Console, d: Demo) -> None:
        render_rows(console, scoped_sql(d.catalog, "default", statement))

    return render


RENDERS: dict[str, Render] = {
    "report_daily": _report("daily"),
    "report_daily_breakdown": _report("daily", breakdown=True),
    "report_weekly_breakdown": _report("weekly", breakdown=True, tz="America/New_York"),
    "report_monthly": _report("monthly"),
    "report_session": _report("session"),
    "report_session_breakdown": _report("session", breakdown=True, since=date(2026, 5, 3)),
    "report_session_rollup": _report("session", rollup=True),
    "report_limits": _limits,
    "report_model": _report("model"),
    "report_project_breakdown": _report("project", breakdown=True),
    "report_blocks": _report("blocks"),
    "report_unpriced": _unpriced,
    "sessions_list": _sessions_list,
    "sessions_show": _sessions_show,
    "sessions_show_long_names": _sessions_show_extra,
    "search": _search,
    "doctor": _doctor(deep=False),
    "doctor_deep": _doctor(deep=True),
    "doctor_session": _doctor_session(SUBAGENT),
    "doctor_session_not_imported": _doctor_session(LATE_SESSION),
    "plan": _plan,
    "import_summary": _import_summary,
    "providers": _providers,
    "prices_list": _prices,
    "sql_calls": _sql(
        "SELECT provider, session_id, model, count(*) AS calls, sum(total_tokens) AS tokens "
        "FROM usage GROUP BY ALL ORDER BY tokens DESC, session_id, model LIMIT 8"
    ),
    "sql_wide_rows": _sql("SELECT * FROM sessions ORDER BY session_id, provider LIMIT 3"),
    "sql_no_rows": _sql("SELECT session_id, model FROM usage WHERE false"),
}
# The renders that show models, and which models they must show (with their providers).
MODEL_TABLES = {"report_model", "report_daily_breakdown", "report_project_breakdown"}


def rendered(name: str, width: int, demo: Demo) -> str:
    """What ``name`` prints on a ``width``-column console without colour, each line's
    trailing blanks removed."""
    console = Console(
        file=io.StringIO(), width=width, color_system=None, legacy_windows=False, _environ={}
    )
    RENDERS[name](console, demo)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    # A cursor is signed with the catalog's own secret: the same page reads differently
    # in every catalog (the line is never wrapped, so nothing else moves).
    text = re.sub(r"(--cursor )\S+", r"\1CURSOR", str(text))
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(RENDERS))
def test_rendering_matches_its_snapshot(demo: Demo, name: str, width: int) -> None:
    text = rendered(name, width, demo)
    assert str(demo.root) not in text, "a temporary path leaked into the rendering"
    path = SNAPSHOTS / f"{name}.{width}.txt"
    if UPDATE:
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: run with AGENTLAKE_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text()


# -- the column rules, on every rendering ------------------------------------------------
_RULE = re.compile(r"^─+$")
_IDISH = re.compile(r"^(?:agent-)?[0-9a-f]{4,}(?:-[0-9a-f]*)*$")


def header_lines(text: str) -> Iterator[str]:
    """The header line of each table (the line above its rule)."""
    lines = text.splitlines()
    for above, line in itertools.pairwise(lines):
        if _RULE.match(line.strip()):
            yield above


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(RENDERS))
def test_every_table_follows_the_column_rules(demo: Demo, name: str, width: int) -> None:
    text = rendered(name, width, demo)
    for line in text.splitlines():
        if not line.startswith("more: "):  # a cursor stays whole, to be copied
            assert cell_len(line) <= width, line
    for header in header_lines(text):
        assert "…" not in header, header
    for token in (t.rstrip("…") for t in text.split()):
        if _IDISH.match(token) and any(i.startswith(token) for i in demo.session_ids):
            assert len(token) >= tables.MIN_ID, f"id cut to {token!r}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(MODEL_TABLES))
def test_every_model_appears_whole_or_elided_at_a_boundary_beside_its_provider(
    demo: Demo, name: str, width: int
) -> None:
    lines = rendered(name, width, demo).splitlines()
    for model, provider in demo.models:
        shown = [line for line in lines if shows(line, model) and provider in line.split()]
        assert shown, (model, provider)


def shows(line: str, model: str) -> bool:
    """Whether ``line`` shows ``model`` whole, or its start up to a boundary then ``…``."""
    words = line.replace("└ ", "").split()
    if model in words:
        return True
    for word in words:
        kept = word.removesuffix("…")
        elided = word.endswith("…") and model.startswith(kept) and len(kept) < len(model)
        if elided and (kept[-1] in "-/. " or model[len(kept)] in "-/. "):
            return True
    return False


def test_a_model_sold_by_two_providers_is_on_two_lines(demo: Demo) -> None:
    for width in WIDTHS:
        lines = rendered("report_model", width, demo).splitlines()
        gpt5 = [line.split() for line in lines if line.split()[:1] == ["gpt-5"]]
        assert sorted(words[1] for words in gpt5) == ["codex", "cursor"]
        house = [line.split() for line in lines if line.split()[:1] == ["house-model-7"]]
        assert sorted(words[1] for words in house) == ["codex", "cursor"]


def test_wider_consoles_show_more(demo: Demo) -> None:
    narrow, wide = rendered("report_daily", 80, demo), rendered("report_daily", 120, demo)
    assert {"calls", "cache", "write", "read"} <= set(wide.splitlines()[1].split())
    assert narrow.splitlines()[1].split() == ["day", "input", "output", "cache", "total", "cost"]
    assert "provider" not in rendered("search", 80, demo).splitlines()[1]
    assert "provider" in rendered("search", 120, demo).splitlines()[1]
    # ids: the short form (at least 8) at 80, whole where the width holds them
    ids = re.compile(r"\b[0-9a-f]{8}-[0-9a-f-]*")
    assert {len(i) for i in ids.findall(rendered("sql_calls", 120, demo))} == {36}
    assert {len(i) for i in ids.findall(rendered("sql_calls", 80, demo))} == {10}  # header


# -- empty results -----------------------------------------------------------------------
EMPTY_CASES = {
    "report": (
        ["report", "daily", "--since", "2030-01-01", "--provider", "codex"],
        "no model calls in workspace 'default' match these filters "
        "(since 2030-01-01, provider codex)",
    ),
    "search": (
        ["search", "zyzzyva", "--kind", "prompt", "--mode", "lexical"],
        "no hits for 'zyzzyva' in workspace 'default' match these filters (kind prompt)",
    ),
    "sessions": (
        ["sessions", "list", "--workspace", "elsewhere"],
        "no sessions in workspace 'elsewhere'",
    ),
}


@pytest.mark.parametrize("case", sorted(EMPTY_CASES))
def test_an_empty_result_says_so_in_one_line(demo: Demo, case: str) -> None:
    args, said = EMPTY_CASES[case]
    result = CliRunner().invoke(app, [*args, "--catalog", str(demo.catalog)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{said}; {tables.DOCTOR_HINT}\n"
    as_json = CliRunner().invoke(app, [*args, "--catalog", str(demo.catalog), "--json"])
    assert as_json.exit_code == 0
    doc = json.loads(as_json.stdout)
    rows = {"report": "daily", "search": "hits", "sessions": "sessions"}[case]
    assert doc[rows] == []


def test_a_later_page_without_rows_says_there_is_no_more() -> None:
    console = Console(file=io.StringIO(), width=80, color_system=None)
    tables.say_nothing(console, "sessions", workspace="default", continued=True)
    assert console.file.getvalue() == "no more sessions in this listing\n"  # type: ignore[attr-defined]


# -- the width the CLI uses --------------------------------------------------------------


def test_the_cli_renders_at_the_terminal_width(demo: Demo) -> None:
    args = ["report", "model", "--catalog", str(demo.catalog)]
    for width, full in ((80, False), (120, True)):
        out = CliRunner().invoke(app, args, env={"COLUMNS": str(width)}).stdout
        table = out.split("\nTotal")[0].splitlines()
        assert max(map(cell_len, table)) == width
        assert ("cache write" in table[1]) is full


def test_a_pipe_gets_80_columns(demo: Demo) -> None:
    env = {k: v for k, v in cli_env().items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run(
        [sys.executable, "-m", "agentlake", "report", "model", "--catalog", str(demo.catalog)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stdout
        == CliRunner()
        .invoke(app, ["report", "model", "--catalog", str(demo.catalog)], env={"COLUMNS": "80"})
        .stdout
    )
