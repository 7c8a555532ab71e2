"""Codex token totals per (UTC day, model) equal ccusage 20.0.24 on every Codex token
fixture and on the demo home (golden files in fixtures/golden/ccusage/codex; see
fixtures/codex/README.md). ccusage's codex ``inputTokens`` excludes cached input, which
is also what our ``input_tokens`` holds, so the columns compare one to one."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.lake import LakeCatalog
from fixtures.synth import generate_codex_home
from tests.conftest import FIXTURES
from tests.lakes import read_connection
from tests.pipeline.helpers import snapshot

GOLDEN = FIXTURES / "golden" / "ccusage" / "codex"
CODEX = FIXTURES / "codex"
# (input without cached, cache read, output, reasoning)
FIELDS = ("inputTokens", "cacheReadTokens", "outputTokens", "reasoningOutputTokens")
Totals = dict[tuple[str, str], tuple[int, int, int, int]]

# One deliberate divergence from ccusage, documented in fixtures/codex/README.md:
# `fork_parent_missing` holds a fork (`forked_from_id`) whose parent rollout is not in
# the home, and whose replayed parent history contains a single token_count (9,000 input
# of which 6,000 cached, 300 output, 100 reasoning), stamped at the fork's first second.
# ccusage can anchor a replay only on the parent's own usage stream or on at least two
# usage events within that first second; with neither, it counts the replayed call again.
# Our rule (DESIGN §4) never re-counts replayed parent history: we keep only the fork's
# own call (12,000 input, 11,000 cached, 200 output, 50 reasoning).
DIVERGENCE: dict[str, Totals] = {
    "fork_parent_missing": {("2026-05-06", "gpt-5-codex"): (1000, 11000, 200, 50)},
}


def _golden(name: str) -> tuple[Totals, dict[str, int]]:
    doc = json.loads((GOLDEN / f"{name}.daily.json").read_text())
    per_model: Totals = {}
    per_day: dict[str, int] = {}
    for day in doc["daily"]:
        per_day[day["date"]] = day["totalTokens"]
        for model, counts in day["models"].items():
            per_model[(day["date"], model)] = (
                counts[FIELDS[0]],
                counts[FIELDS[1]],
                counts[FIELDS[2]],
                counts[FIELDS[3]],
            )
    return per_model, per_day


def _import(home: Path, catalog: Path | LakeCatalog) -> None:
    result = run_import(
        ImportOptions(
            catalog=catalog,
            workspace="default",
            home=home,
            env={},
            providers=("codex",),
            build_index=False,
        )
    )
    assert result.exit_code == 0


def _totals(catalog: Path | LakeCatalog) -> tuple[Totals, dict[str, int]]:
    con = read_connection(catalog)
    rows = con.execute(
        "SELECT strftime(timezone('UTC', ts), '%Y-%m-%d'), coalesce(model, ''), "
        "sum(input_tokens), sum(cache_read_tokens), sum(output_tokens), sum(reasoning_tokens), "
        "sum(total_tokens), sum(cache_write_tokens) FROM usage WHERE provider = 'codex' GROUP BY ALL"
    ).fetchall()
    con.close()
    per_model: Totals = {}
    per_day: dict[str, int] = defaultdict(int)
    for day, model, i, cr, o, r, total, cw in rows:
        assert cw == 0  # Codex reports no cache writes
        per_day[day] += int(total)
        per_model[(day, model)] = (int(i), int(cr), int(o), int(r))
    return per_model, dict(per_day)


def _imported(home: Path, catalog: Path | LakeCatalog) -> tuple[Totals, dict[str, int]]:
    _import(home, catalog)
    return _totals(catalog)


def _fixture_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".daily.json")
        for p in GOLDEN.glob("*.daily.json")
        if p.name != "demo.daily.json"
    )


def _day_totals(per_model: Totals) -> dict[str, int]:
    days: dict[str, int] = defaultdict(int)
    for (day, _), (i, cr, o, _r) in per_model.items():
        days[day] += i + cr + o
    return dict(days)


@pytest.mark.parametrize("name", _fixture_names())
def test_fixture_matches_ccusage(name: str, file_or_lake: Path | LakeCatalog) -> None:
    expected, expected_days = _golden(name)
    got, got_days = _imported(CODEX / name, file_or_lake)
    if name in DIVERGENCE:
        assert got != expected  # the divergence is real: ccusage counts the replay
        expected = {**expected, **DIVERGENCE[name]}
        expected_days = _day_totals(expected)
    assert got == expected
    assert got_days == expected_days
    assert sum(got_days.values()) > 0


def test_every_token_fixture_has_a_golden_file() -> None:
    not_token_fixtures = {
        "legacy_pre_envelope",  # no usage at all: ccusage reports nothing
        "contract_drift",
        "contract_canaries",
        "contract_lookalikes",
    }
    homes = {p.name for p in CODEX.iterdir() if (p / ".codex").is_dir()}
    assert homes - not_token_fixtures == set(_fixture_names())


def test_fork_divergence_is_exactly_the_replayed_call() -> None:
    (key,) = DIVERGENCE["fork_parent_missing"]
    ccusage = _golden("fork_parent_missing")[0][key]
    ours = DIVERGENCE["fork_parent_missing"][key]
    replayed = (9000 - 6000, 6000, 300, 100)
    assert tuple(c - o for c, o in zip(ccusage, ours, strict=True)) == replayed


def test_demo_home_matches_ccusage(tmp_path: Path, any_catalog: Path | LakeCatalog) -> None:
    """On every backend: the DuckDB file and DuckLakes on SQLite and PostgreSQL."""
    home = tmp_path / "home"
    generate_codex_home(home)
    expected, expected_days = _golden("demo")
    got, got_days = _imported(home, any_catalog)
    assert got == expected
    assert got_days == expected_days


@pytest.mark.parametrize("name", ["archived_duplicate", "fork_replays_parent"])
def test_totals_do_not_depend_on_file_order_or_reimport(name: str, tmp_path: Path) -> None:
    """Call identity comes from the session and its cumulative totals, not the path:
    importing the rollouts one at a time, newest first (an archived copy before its
    active twin, a fork before its parent), then again, gives the very same usage rows
    as one import of everything."""
    source = CODEX / name
    files = sorted(source.rglob("*.jsonl"), key=lambda p: p.name, reverse=True)
    home = tmp_path / "home"
    catalog = tmp_path / "c.duckdb"
    for f in files:
        target = home / f.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)
        _import(home, catalog)
    _import(home, catalog)
    together = tmp_path / "together.duckdb"
    _import(home, together)
    assert _totals(catalog) == _totals(together)
    assert snapshot(catalog, ("usage",)) == snapshot(together, ("usage",))
    expected, _ = _golden(name)
    assert _totals(catalog)[0] == expected
