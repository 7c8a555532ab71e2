"""Prices materialized from genai-prices (load/prices.py) and the per-call cost of the
``usage_costed`` view (sql/007_price_tiers.sql), with parity against ccusage's costs."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from agentlake.demo import generate_claude_home
from agentlake.load.catalog import open_for_write
from agentlake.load.prices import build_snapshot, refresh_prices, snapshot_version
from agentlake.queries import unpriced_models
from agentlake.run import ImportOptions, run_import
from tests.conftest import FIXTURES
from tests.test_token_parity import DAILY_QUIRK

GOLDEN = FIXTURES / "golden" / "ccusage" / "claude"
TOLERANCE = 0.005

# Models the two price sources (ccusage 20.0.24's embedded LiteLLM table vs genai-prices
# 0.2.3) price differently, with both per-Mtok prices; a day using one is not compared.
PRICE_SOURCE_DIFFERENCES: dict[str, str] = {}


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with open_for_write(tmp_path / "c.duckdb") as connection:
        yield connection


def add_call(
    con: duckdb.DuckDBPyConnection,
    model: str | None,
    *,
    ts: str = "2025-10-01 12:00:00+00",
    input: int = 0,
    output: int = 0,
    cache_write: int = 0,
    cache_write_1h: int = 0,
    cache_read: int = 0,
    workspace: str = "default",
) -> str:
    row = con.execute("SELECT count(*) FROM usage").fetchone()
    assert row is not None
    call_id = f"call-{row[0]}"
    con.execute(
        "INSERT INTO usage (call_id, workspace, provider, session_id, ts, model, input_tokens, "
        "cache_write_tokens, cache_write_1h_tokens, cache_read_tokens, output_tokens, "
        "reasoning_tokens, total_tokens, source_id, source_offset, import_id) "
        "VALUES (?, ?, 'claude', 's', CAST(? AS TIMESTAMPTZ), ?, ?, ?, ?, ?, ?, 0, ?, 'src', 0, 1)",
        [call_id, workspace, ts, model, input, cache_write, cache_write_1h, cache_read, output,
         input + cache_write + cache_read + output],
    )  # fmt: skip
    return call_id


def cost(con: duckdb.DuckDBPyConnection, call_id: str) -> float | None:
    row = con.execute("SELECT cost_usd FROM usage_costed WHERE call_id = ?", [call_id]).fetchone()
    assert row is not None
    return None if row[0] is None else float(row[0])


# -- materialization --------------------------------------------------------------------


def test_snapshot_is_materialized_from_the_installed_package(
    con: duckdb.DuckDBPyConnection,
) -> None:
    counts = con.execute(
        "SELECT count(*), count(DISTINCT model), min(snapshot_version), max(snapshot_version) "
        "FROM prices"
    ).fetchone()
    assert counts is not None
    assert counts[0] > 100 and counts[1] > 100
    assert counts[2] == counts[3] == snapshot_version()
    aliases = con.execute("SELECT count(*) FROM price_aliases").fetchone()
    assert aliases is not None and aliases[0] > counts[1]
    sonnet = con.execute(
        "SELECT input_per_mtok, output_per_mtok, cache_write_per_mtok, cache_write_1h_per_mtok, "
        "cache_read_per_mtok, tier_threshold, input_above_per_mtok, output_above_per_mtok "
        "FROM prices WHERE provider_id = 'anthropic' AND model = 'claude-sonnet-4-5'"
    ).fetchall()
    assert sonnet == [(3.0, 15.0, 3.75, 6.0, 0.3, 200_000, 6.0, 22.5)]
    gpt5 = con.execute(
        "SELECT input_per_mtok, output_per_mtok, cache_read_per_mtok "
        "FROM prices WHERE provider_id = 'openai' AND model = 'gpt-5'"
    ).fetchall()
    assert gpt5 == [(1.25, 10.0, 0.125)]


def test_materialized_prices_agree_with_the_package() -> None:
    from genai_prices.data import providers
    from genai_prices.types import ModelPrice

    snap = build_snapshot()
    rows = {
        (r["provider_id"], r["model"]): r
        for r in snap.prices.to_pylist()
        if r["valid_from"] is None and r["valid_to"] is None
    }
    anthropic = next(p for p in providers if p.id == "anthropic")
    opus = next(m for m in anthropic.models if m.id == "claude-opus-4-1")
    assert isinstance(opus.prices, ModelPrice)
    row = rows[("anthropic", "claude-opus-4-1")]
    assert isinstance(opus.prices.input_mtok, Decimal)
    assert isinstance(opus.prices.output_mtok, Decimal)
    assert row["input_per_mtok"] == float(opus.prices.input_mtok)
    assert row["output_per_mtok"] == float(opus.prices.output_mtok)


def test_refresh_is_skipped_when_the_version_matches(con: duckdb.DuckDBPyConnection) -> None:
    assert refresh_prices(con) is False
    con.execute("UPDATE prices SET snapshot_version = 'old'")
    assert refresh_prices(con) is True
    row = con.execute("SELECT DISTINCT snapshot_version FROM prices").fetchall()
    assert row == [(snapshot_version(),)]


# -- cost rules -------------------------------------------------------------------------


def test_each_token_kind_has_its_own_rate(con: duckdb.DuckDBPyConnection) -> None:
    # Sonnet 4: $3 in, $15 out, $3.75 5m write, $6 1h write, $0.30 read (per Mtok).
    call = add_call(
        con, "claude-sonnet-4-20250514", input=100, output=50, cache_write=1000, cache_read=2000
    )
    assert cost(con, call) == pytest.approx(0.0054)


def test_one_hour_cache_writes_cost_twice_the_input_price(con: duckdb.DuckDBPyConnection) -> None:
    # claude-opus-4-1: $15 input, $18.75 5-minute writes, $30 1-hour writes.
    only_1h = add_call(
        con, "claude-opus-4-1-20250805", cache_write=1_000_000, cache_write_1h=1_000_000
    )
    only_5m = add_call(con, "claude-opus-4-1-20250805", cache_write=1_000_000)
    assert cost(con, only_1h) == pytest.approx(30.0)
    assert cost(con, only_5m) == pytest.approx(18.75)
    # A price row without an explicit 1h price falls back to 2x input too.
    con.execute(
        "INSERT INTO prices (model, provider_id, input_per_mtok, output_per_mtok) "
        "VALUES ('synthetic-x', 'test', 4, 8)"
    )
    con.execute(
        "INSERT INTO price_aliases VALUES ('synthetic-x', 'exact', 'test', 'synthetic-x', 0)"
    )
    call = add_call(con, "synthetic-x", cache_write=1_000_000, cache_write_1h=1_000_000)
    assert cost(con, call) == pytest.approx(8.0)


def test_tier_applies_per_call_above_the_input_side_threshold(
    con: duckdb.DuckDBPyConnection,
) -> None:
    # claude-sonnet-4-5: the tier decides on input + cache_write + cache_read > 200,000.
    model = "claude-sonnet-4-5-20250929"
    at = add_call(con, model, input=100_000, cache_write=50_000, cache_read=50_000, output=1000)
    over = add_call(con, model, input=100_001, cache_write=50_000, cache_read=50_000, output=1000)
    big_output = add_call(con, model, input=1000, output=300_000)
    base = (100_000 * 3 + 50_000 * 3.75 + 50_000 * 0.3 + 1000 * 15) / 1e6
    above = (100_001 * 6 + 50_000 * 7.5 + 50_000 * 0.6 + 1000 * 22.5) / 1e6
    assert cost(con, at) == pytest.approx(base)
    assert cost(con, over) == pytest.approx(above)
    assert cost(con, big_output) == pytest.approx((1000 * 3 + 300_000 * 15) / 1e6)


def test_price_valid_at_the_call_date(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        "INSERT INTO prices (model, provider_id, valid_from, valid_to, input_per_mtok, "
        "output_per_mtok) VALUES "
        "('dated-model', 'test', NULL, TIMESTAMPTZ '2025-06-01 00:00:00+00', 1, 2), "
        "('dated-model', 'test', TIMESTAMPTZ '2025-06-01 00:00:00+00', NULL, 10, 20)"
    )
    con.execute(
        "INSERT INTO price_aliases VALUES ('dated-model', 'exact', 'test', 'dated-model', 0)"
    )
    before = add_call(con, "dated-model", ts="2025-05-31 23:59:59+00", input=1_000_000)
    after = add_call(con, "dated-model", ts="2025-06-01 00:00:00+00", input=1_000_000)
    assert cost(con, before) == pytest.approx(1.0)
    assert cost(con, after) == pytest.approx(10.0)


def test_unknown_model_costs_null_not_zero(con: duckdb.DuckDBPyConnection) -> None:
    unknown = add_call(con, "gpt-7-codex", input=1000, output=10)
    synthetic = add_call(con, "<synthetic>")
    missing = add_call(con, None, input=5)
    assert cost(con, unknown) is None
    assert cost(con, synthetic) is None
    assert cost(con, missing) is None
    daily = con.execute("SELECT cost_usd FROM usage_daily WHERE model = 'gpt-7-codex'").fetchone()
    assert daily == (None,)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-4.5-sonnet", "claude-sonnet-4-5"),
        ("claude-4.5-sonnet-thinking", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-thinking", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("Claude-Opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-4.1-opus", "claude-opus-4-1"),
        ("claude-4-sonnet", "claude-sonnet-4"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("gpt-5-codex", "gpt-5"),
        ("gpt-5-2025-08-07", "gpt-5"),
        ("openai/gpt-5", "gpt-5"),
    ],
)
def test_names_map_to_priced_models(
    con: duckdb.DuckDBPyConnection, name: str, canonical: str
) -> None:
    call = add_call(con, name, input=1000, output=100, cache_write=2000, cache_read=3000)
    reference = add_call(con, canonical, input=1000, output=100, cache_write=2000, cache_read=3000)
    assert cost(con, call) is not None
    assert cost(con, call) == pytest.approx(cost(con, reference))


def test_unpriced_models_lists_calls_and_tokens(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        add_call(con, "gpt-7-codex", input=10, output=5)
        add_call(con, "gpt-7-codex", input=1, output=1)
        add_call(con, "claude-sonnet-4-5", input=10)
        add_call(con, "gpt-7-codex", input=99, workspace="other")
    table = unpriced_models(catalog, "default")
    assert table.to_pylist() == [
        {"model": "gpt-7-codex", "provider": "claude", "calls": 2, "tokens": 17}
    ]


# -- parity with ccusage ----------------------------------------------------------------


def _golden_costs(name: str) -> dict[str, tuple[float, set[str]]]:
    doc = json.loads((GOLDEN / f"{name}.daily.json").read_text())
    return {
        day["date"]: (float(day["totalCost"]), {m["modelName"] for m in day["modelBreakdowns"]})
        for day in doc["daily"]
    }


def _our_costs(home: Path, catalog: Path) -> dict[str, float]:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={}, build_index=False)
    )
    assert result.exit_code == 0
    con = duckdb.connect(str(catalog), read_only=True)
    rows = con.execute(
        "SELECT strftime(day, '%Y-%m-%d'), sum(cost_usd) FROM usage_daily GROUP BY ALL"
    ).fetchall()
    con.close()
    out: dict[str, float] = defaultdict(float)
    for day, value in rows:
        out[day] += float(value or 0)
    return dict(out)


def _golden_names() -> list[str]:
    return sorted(p.name.removesuffix(".daily.json") for p in GOLDEN.glob("*.daily.json"))


def test_cache_write_1h_fixture_costs_what_ccusage_says(tmp_path: Path) -> None:
    got = _our_costs(FIXTURES / "claude" / "cache_write_1h", tmp_path / "c.duckdb")
    assert sum(got.values()) == pytest.approx(0.23646, rel=TOLERANCE)


@pytest.mark.parametrize("name", _golden_names())
def test_daily_cost_matches_ccusage(name: str, tmp_path: Path) -> None:
    if name == "demo":
        home = tmp_path / "home"
        generate_claude_home(home)
    else:
        home = FIXTURES / "claude" / name
    expected = _golden_costs(name)
    got = _our_costs(home, tmp_path / "c.duckdb")
    # Days where our token counts deliberately differ from ccusage's (DAILY_QUIRK in
    # tests/test_token_parity.py) cannot have its cost either.
    quirk_days = {day for day, _ in DAILY_QUIRK.get(name, {})}
    compared = 0
    for day, (want, models) in expected.items():
        if models & PRICE_SOURCE_DIFFERENCES.keys() or day in quirk_days:
            continue
        compared += 1
        assert got.get(day, 0.0) == pytest.approx(want, rel=TOLERANCE, abs=1e-9), day
    assert compared > 0 or quirk_days
