"""Token totals per (UTC day, model) equal ccusage 20.0.24 on every Claude fixture and on
the demo home (golden files in fixtures/golden/ccusage; see fixtures/README.md)."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.lake import LakeCatalog
from fixtures.synth import generate_claude_home
from tests.conftest import CONFORMANCE, FIXTURES
from tests.lakes import Backend, catalog_of, lake_url, read_connection
from tests.pipeline.helpers import snapshot

GOLDEN = FIXTURES / "golden" / "ccusage" / "claude"
FIELDS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")
Totals = dict[tuple[str, str], tuple[int, int, int, int]]

# Two deliberate divergences from ccusage, each documented in fixtures/README.md:
# * its `daily` (unlike its `monthly`/`session`) does not dedupe streamed chunks that lack
#   a requestId; we key them as (message.id, none), as its other reports do;
# * it skips any line without the literal bytes `"usage":{` (a byte prefilter), so a
#   pretty-printed but otherwise valid usage line is dropped; we count it (+900 input,
#   9,000 output, 90,000 cache write, 900,000 cache read).
DAILY_QUIRK = {
    "missing_request_id": {("2026-05-04", "claude-sonnet-4-5-20250929"): (10, 129, 1200, 26000)},
    "ccusage_drop_rules": {
        ("2026-05-05", "claude-sonnet-4-5-20250929"): (906, 9150, 91300, 911000)
    },
}


def _golden(name: str) -> tuple[Totals, dict[str, int]]:
    doc = json.loads((GOLDEN / f"{name}.daily.json").read_text())
    per_model: Totals = {}
    per_day: dict[str, int] = {}
    for day in doc["daily"]:
        per_day[day["date"]] = day["totalTokens"]
        for m in day["modelBreakdowns"]:
            per_model[(day["date"], m["modelName"])] = (
                m[FIELDS[0]],
                m[FIELDS[1]],
                m[FIELDS[2]],
                m[FIELDS[3]],
            )
    return per_model, per_day


def _imported(home: Path, catalog: Path | LakeCatalog) -> tuple[Totals, dict[str, int]]:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={}, build_index=False)
    )
    assert result.exit_code == 0
    con = read_connection(catalog)
    rows = con.execute(
        "SELECT strftime(timezone('UTC', ts), '%Y-%m-%d'), coalesce(model, ''), sum(input_tokens), "
        "sum(output_tokens), sum(cache_write_tokens), sum(cache_read_tokens), sum(total_tokens) "
        "FROM usage GROUP BY ALL"
    ).fetchall()
    con.close()
    per_model: Totals = {}
    per_day: dict[str, int] = defaultdict(int)
    for day, model, i, o, cw, cr, total in rows:
        per_day[day] += int(total)
        if model != "<synthetic>":  # ccusage lists <synthetic> under no model
            per_model[(day, model)] = (int(i), int(o), int(cw), int(cr))
    return per_model, dict(per_day)


def _fixture_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".daily.json")
        for p in GOLDEN.glob("*.daily.json")
        if p.name != "demo.daily.json"
    )


@pytest.mark.parametrize("name", _fixture_names())
def test_fixture_matches_ccusage(name: str, file_or_lake: Path | LakeCatalog) -> None:
    expected, expected_days = _golden(name)
    got, got_days = _imported(FIXTURES / "claude" / name, file_or_lake)
    if name in DAILY_QUIRK:
        expected.update(DAILY_QUIRK[name])
        expected_days = {
            day: sum(sum(v) for (d, _), v in expected.items() if d == day) for day in expected_days
        }
    assert got == expected
    assert got_days == expected_days
    assert sum(got_days.values()) > 0


def test_demo_home_matches_ccusage(tmp_path: Path, any_catalog: Path | LakeCatalog) -> None:
    """On every backend: the DuckDB file and DuckLakes on SQLite and PostgreSQL."""
    home = tmp_path / "home"
    generate_claude_home(home)
    expected, expected_days = _golden("demo")
    got, got_days = _imported(home, any_catalog)
    assert got == expected
    assert got_days == expected_days


@pytest.mark.parametrize("backend", ["duckdb", "postgres"])
def test_fixture_tokens_do_not_depend_on_file_order_or_reimport(
    tmp_path: Path, backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Dedup is global across files and runs: importing files one at a time gives the
    same totals as importing them together (in a DuckDB file and in a lake)."""
    server = request.getfixturevalue("postgres") if backend == "postgres" else None
    any_catalog = catalog_of(lake_url(backend, tmp_path, server), tmp_path)
    source = FIXTURES / "claude" / "resumed_session_copies"
    home = tmp_path / "home"
    files = sorted(source.rglob("*.jsonl"))
    catalog = any_catalog
    for f in reversed(files):  # newest copy first, then the original
        target = home / f.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)
        run_import(
            ImportOptions(
                catalog=catalog, workspace="default", home=home, env={}, build_index=False
            )
        )
    expected, _ = _golden("resumed_session_copies")
    got, _ = _imported(home, catalog)
    assert got == expected
    # Not only the totals: the very same call rows (which copy owns a verbatim
    # duplicate does not depend on which file came first).
    together = tmp_path / "together.duckdb"
    run_import(
        ImportOptions(catalog=together, workspace="default", home=home, env={}, build_index=False)
    )
    assert snapshot(catalog, ("usage",)) == snapshot(together, ("usage",))


SNIFFLY = CONFORMANCE / "chiphuyen__sniffly" / "tests" / "mock-data"


@pytest.mark.skipif(not SNIFFLY.is_dir(), reason="conformance data not present")
def test_real_captured_transcripts_match_ccusage(tmp_path: Path) -> None:
    """Real Claude Code 1.0.17 captures: ccusage 20.0.24 reports 293 / 19,313 / 206,624 /
    4,302,385 (shared/conformance/MANIFEST.md)."""
    home = tmp_path / "home"
    shutil.copytree(
        SNIFFLY / "-Users-chip-dev-ai-music",
        home / ".claude" / "projects" / "-Users-chip-dev-ai-music",
    )
    got, days = _imported(home, tmp_path / "c.duckdb")
    assert got == {
        ("2025-06-08", "claude-sonnet-4-20250514"): (205, 19035, 190624, 4257841),
        ("2025-06-10", "claude-sonnet-4-20250514"): (88, 278, 16000, 44544),
    }
    assert sum(days.values()) == 4_528_615
