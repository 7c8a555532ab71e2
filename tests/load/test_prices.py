"""Prices materialized from genai-prices (load/prices.py) and the per-call cost of the
``usage_costed`` view (sql/), with parity against ccusage's costs.

Expected costs come from genai-prices itself (``calc_price`` or the snapshot's Decimal
prices), never from our SQL."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple, TypedDict

import duckdb
import pytest
from genai_prices import Usage, calc_price
from genai_prices.data import providers
from genai_prices.types import ModelPrice, TieredPrices

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.catalog import open_for_write
from agentlake.load.prices import build_snapshot, refresh_prices, snapshot_version
from agentlake.read.reports import ReportFilter
from agentlake.read.reports import unpriced as unpriced_report
from fixtures.synth import generate_claude_home, generate_codex_home
from tests.conftest import FIXTURES
from tests.test_token_parity import DAILY_QUIRK
from tests.test_token_parity_codex import DIVERGENCE

GOLDEN = FIXTURES / "golden" / "ccusage"
PROVIDERS = ("claude", "codex")
TOLERANCE = 0.005
CALL_TIME = datetime(2025, 10, 1, 12, tzinfo=UTC)


class Rates(NamedTuple):
    """USD per million tokens of each kind; None where the source has no such kind."""

    input: float
    output: float
    cache_write: float | None  # 5-minute cache writes
    cache_write_1h: float | None
    cache_read: float


class Tokens(TypedDict, total=False):
    input: int
    output: int
    cache_write: int
    cache_write_1h: int
    cache_read: int


RATE_LABELS = ("input", "output", "cache write (5m)", "cache write (1h)", "cache read")

# ccusage 20.0.24's prices (--offline, its embedded table) for every model of the golden
# files, measured with one probe call per model and token kind (100,000 tokens, below any
# threshold tier). Its Codex report has no cache writes. A golden file naming a model
# missing here fails test_ccusage_prices_cover_the_golden_models; the parity test checks
# that these prices reproduce every golden cost it compares.
CCUSAGE_PRICES: dict[str, Rates] = {
    "claude-haiku-4-5-20251001": Rates(1.0, 5.0, 1.25, 2.0, 0.1),
    "claude-opus-4-1-20250805": Rates(15.0, 75.0, 18.75, 30.0, 1.5),
    "claude-sonnet-4-5-20250929": Rates(3.0, 15.0, 3.75, 6.0, 0.3),
    "gpt-5": Rates(1.25, 10.0, None, None, 0.125),
    "gpt-5-codex": Rates(1.25, 10.0, None, None, 0.125),
    # Not listed by genai-prices 0.2.3; ccusage charges gpt-5's prices for it.
    "gpt-5-codex-mini": Rates(1.25, 10.0, None, None, 0.125),
}

# Models the two price sources (ccusage 20.0.24's embedded LiteLLM table vs genai-prices
# 0.2.3) price differently, with both per-Mtok prices; a day using one is not compared.
# gpt-5-codex-mini has no entry of its own in genai-prices; the view prices it as
# gpt-5-mini, as genai-prices prices gpt-5-codex as gpt-5.
PRICE_SOURCE_DIFFERENCES: dict[str, str] = {
    "gpt-5-codex-mini": (
        "input $1.25 (ccusage) vs $0.25 (genai-prices); "
        "output $10 (ccusage) vs $2 (genai-prices); "
        "cache read $0.125 (ccusage) vs $0.025 (genai-prices) per Mtok"
    ),
}


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with open_for_write(tmp_path / "c.duckdb") as connection:
        yield connection


def add_call(
    con: duckdb.DuckDBPyConnection,
    model: str | None,
    *,
    ts: str = CALL_TIME.isoformat(),
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
    rows = con.execute("SELECT cost_usd FROM usage_costed WHERE call_id = ?", [call_id]).fetchall()
    assert len(rows) == 1, f"{call_id} has {len(rows)} price rows"
    return None if rows[0][0] is None else float(rows[0][0])


def priced(con: duckdb.DuckDBPyConnection, call_id: str) -> float:
    value = cost(con, call_id)
    assert value is not None, f"{call_id} has no price"
    return value


def reference_cost(
    model_ref: str,
    provider_id: str,
    *,
    ts: datetime = CALL_TIME,
    input: int = 0,
    output: int = 0,
    cache_write: int = 0,
    cache_write_1h: int = 0,
    cache_read: int = 0,
) -> float:
    """genai-prices' own price of one call (its ``input_tokens`` include cached ones)."""
    usage = Usage(
        input_tokens=input + cache_write + cache_read,
        cache_write_tokens=cache_write,
        cache_write_1h_tokens=cache_write_1h,
        cache_read_tokens=cache_read,
        output_tokens=output,
    )
    result = calc_price(usage, model_ref, provider_id=provider_id, genai_request_timestamp=ts)
    return float(result.total_price)


def model_price(provider_id: str, model_id: str) -> ModelPrice:
    """The snapshot's (single-period) price of one model."""
    provider = next(p for p in providers if p.id == provider_id)
    model = next(m for m in provider.models if m.id == model_id)
    assert isinstance(model.prices, ModelPrice), f"{model_id} has several price periods"
    return model.prices


def rate(price: Decimal | TieredPrices | None, *, above: bool) -> Decimal:
    """Per-Mtok rate of one token kind below or above its threshold tier."""
    if price is None:
        return Decimal(0)
    if isinstance(price, TieredPrices):
        return price.tiers[0].price if above and price.tiers else price.base
    return price


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
    snap = build_snapshot()
    rows = {
        (r["provider_id"], r["model"]): r
        for r in snap.prices.to_pylist()
        if r["valid_from"] is None and r["valid_to"] is None
    }
    opus = model_price("anthropic", "claude-opus-4-1")
    row = rows[("anthropic", "claude-opus-4-1")]
    assert isinstance(opus.input_mtok, Decimal)
    assert isinstance(opus.output_mtok, Decimal)
    assert row["input_per_mtok"] == float(opus.input_mtok)
    assert row["output_per_mtok"] == float(opus.output_mtok)


def test_refresh_is_skipped_when_the_version_matches(con: duckdb.DuckDBPyConnection) -> None:
    assert refresh_prices(con) is False
    con.execute("UPDATE prices SET snapshot_version = 'old'")
    assert refresh_prices(con) is True
    row = con.execute("SELECT DISTINCT snapshot_version FROM prices").fetchall()
    assert row == [(snapshot_version(),)]


# -- cost rules -------------------------------------------------------------------------


def test_each_token_kind_has_its_own_rate(con: duckdb.DuckDBPyConnection) -> None:
    # ccusage's documented example: Sonnet 4, 100 in / 50 out / 1,000 write / 2,000 read.
    tokens = Tokens(input=100, output=50, cache_write=1000, cache_read=2000)
    call = add_call(con, "claude-sonnet-4-20250514", **tokens)
    assert priced(con, call) == pytest.approx(0.0054)
    assert priced(con, call) == pytest.approx(
        reference_cost("claude-sonnet-4", "anthropic", **tokens)
    )


def test_uncached_cost_bills_the_cache_as_fresh_input(con: duckdb.DuckDBPyConnection) -> None:
    # Sonnet 4: $3 input, $15 output a million tokens. Without the cache, the 1,000
    # written and 2,000 read tokens are 3,000 more input tokens: 3,100 in, 50 out.
    call = add_call(con, "claude-sonnet-4-20250514", input=100, output=50, cache_write=1000,
                    cache_read=2000)  # fmt: skip
    row = con.execute(
        "SELECT cost_usd, uncached_cost_usd FROM usage_costed WHERE call_id = ?", [call]
    ).fetchone()
    assert row is not None
    assert row[1] == pytest.approx((3_100 * 3.0 + 50 * 15.0) / 1e6)
    assert row[1] - row[0] == pytest.approx((2000 * (3.0 - 0.3) - 1000 * (3.75 - 3.0)) / 1e6)
    unpriced = add_call(con, "no-such-model", input=10)
    empty = add_call(con, "no-such-model")
    rows = con.execute(
        "SELECT call_id, cost_usd, uncached_cost_usd FROM usage_costed WHERE call_id IN (?, ?)",
        [unpriced, empty],
    ).fetchall()
    assert sorted(rows) == sorted([(unpriced, None, None), (empty, 0, 0)])


@pytest.mark.parametrize(
    ("name", "model_id"),
    [("claude-opus-4-1-20250805", "claude-opus-4-1"), ("claude-haiku-4-5", "claude-haiku-4-5")],
)
def test_one_hour_cache_writes_have_their_own_rate(
    con: duckdb.DuckDBPyConnection, name: str, model_id: str
) -> None:
    price = model_price("anthropic", model_id)
    five_minutes = rate(price.cache_write_mtok, above=False)
    one_hour = rate(price.cache_write_1h_mtok, above=False)
    assert one_hour > five_minutes > 0  # so a call priced at the wrong rate shows
    only_1h = add_call(con, name, cache_write=100_000, cache_write_1h=100_000)
    only_5m = add_call(con, name, cache_write=100_000)
    assert priced(con, only_1h) == pytest.approx(float(100_000 * one_hour / 1_000_000))
    assert priced(con, only_5m) == pytest.approx(float(100_000 * five_minutes / 1_000_000))
    mixed_tokens = Tokens(input=50, output=70, cache_write=100_000, cache_write_1h=30_000)
    mixed = add_call(con, name, **mixed_tokens)
    assert priced(con, mixed) == pytest.approx(
        reference_cost(model_id, "anthropic", **mixed_tokens)
    )


def test_one_hour_rate_defaults_to_twice_the_input_price(con: duckdb.DuckDBPyConnection) -> None:
    # A price row without an explicit 1h price: Anthropic's rule, 2x input.
    con.execute(
        "INSERT INTO prices (model, provider_id, input_per_mtok, output_per_mtok) "
        "VALUES ('synthetic-x', 'test', 4, 8)"
    )
    con.execute(
        "INSERT INTO price_aliases VALUES ('synthetic-x', 'exact', 'test', 'synthetic-x', 0)"
    )
    call = add_call(con, "synthetic-x", cache_write=1_000_000, cache_write_1h=1_000_000)
    assert priced(con, call) == pytest.approx(8.0)


@pytest.mark.parametrize(
    ("name", "model_id", "provider_id"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "anthropic"),
        ("gemini-2.5-pro", "gemini-2.5-pro", "google"),
    ],
)
def test_tier_is_a_cliff_on_the_input_side(
    con: duckdb.DuckDBPyConnection, name: str, model_id: str, provider_id: str
) -> None:
    """genai-prices' rule: when input + cache_write + cache_read exceeds the threshold,
    every token of the call (output too) is charged at the tier price; at the threshold
    itself, none is."""
    price = model_price(provider_id, model_id)
    assert isinstance(price.input_mtok, TieredPrices)
    threshold = price.input_mtok.tiers[0].start
    threshold_row = con.execute(
        "SELECT DISTINCT tier_threshold FROM prices WHERE provider_id = ? AND model = ?",
        [provider_id, model_id],
    ).fetchall()
    assert threshold_row == [(threshold,)]
    writes = price.cache_write_mtok is not None
    cache_write = threshold // 4 if writes else 0
    cache_write_1h = cache_write // 2
    cache_read = threshold // 4
    input = threshold - cache_write - cache_read
    output = 5000

    def manual(i: int, cw: int, cw1h: int, cr: int, o: int, *, above: bool) -> float:
        total = (
            i * rate(price.input_mtok, above=above)
            + (cw - cw1h) * rate(price.cache_write_mtok, above=above)
            + cw1h * rate(price.cache_write_1h_mtok, above=above)
            + cr * rate(price.cache_read_mtok, above=above)
            + o * rate(price.output_mtok, above=above)
        )
        return float(total / 1_000_000)

    shapes = {
        "at": (input, cache_write, cache_write_1h, cache_read, output),
        "input+1": (input + 1, cache_write, cache_write_1h, cache_read, output),
        "cache_read+1": (input, cache_write, cache_write_1h, cache_read + 1, output),
        "big_output": (1000, 0, 0, 0, 2 * threshold),
    }
    if writes:
        shapes["cache_write+1"] = (input, cache_write + 1, cache_write_1h + 1, cache_read, output)
    for label, (i, cw, cw1h, cr, o) in shapes.items():
        call = add_call(
            con, name, input=i, cache_write=cw, cache_write_1h=cw1h, cache_read=cr, output=o
        )
        above = i + cw + cr > threshold
        assert above == (label not in ("at", "big_output"))
        expected = manual(i, cw, cw1h, cr, o, above=above)
        tokens = Tokens(input=i, output=o, cache_write=cw, cache_write_1h=cw1h, cache_read=cr)
        assert expected == pytest.approx(reference_cost(model_id, provider_id, **tokens))
        assert priced(con, call) == pytest.approx(expected, rel=1e-12), label
    # The cliff is real: one more input token raises the price of all of them.
    assert manual(*shapes["input+1"], above=True) > 1.4 * manual(*shapes["at"], above=False)


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


@pytest.mark.parametrize(
    ("model", "provider_id"),
    [
        ("deepseek-v4-flash", "deepseek"),  # three periods, each with other prices
        ("claude-sonnet-4-6", "anthropic"),  # its 200k tier ends on a date
    ],
)
def test_snapshot_price_changes_on_its_date(
    con: duckdb.DuckDBPyConnection, model: str, provider_id: str
) -> None:
    starts = [
        datetime.fromisoformat(str(r[0])).replace(tzinfo=UTC)
        for r in con.execute(
            "SELECT DISTINCT CAST(timezone('UTC', valid_from) AS VARCHAR) FROM prices "
            "WHERE provider_id = ? AND model = ? AND valid_from IS NOT NULL ORDER BY 1",
            [provider_id, model],
        ).fetchall()
    ]
    assert starts, f"{model} has a single price period in this snapshot"
    tokens = Tokens(input=230_000, output=10_000, cache_read=20_000)
    for start in starts:
        sides = []
        for ts in (start - timedelta(seconds=1), start):
            call = add_call(con, model, ts=ts.isoformat(), **tokens)
            expected = reference_cost(model, provider_id, ts=ts, **tokens)
            assert priced(con, call) == pytest.approx(expected, rel=1e-12), ts
            sides.append(expected)
        assert sides[0] != pytest.approx(sides[1]), start  # the boundary matters


def test_unknown_model_costs_null_and_is_listed_unpriced(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        unknown = add_call(con, "gpt-7-codex", input=1000, output=10)
        add_call(con, "gpt-7-codex", input=1, output=1)
        known = add_call(con, "claude-sonnet-4-5", input=10)
        synthetic = add_call(con, "<synthetic>")
        missing = add_call(con, None, input=5)
        add_call(con, "gpt-7-codex", input=99, workspace="other")
        assert cost(con, unknown) is None
        assert cost(con, synthetic) == 0  # no tokens: nothing to pay, whatever the model
        assert cost(con, missing) is None
        assert cost(con, known) == pytest.approx(
            reference_cost("claude-sonnet-4-5", "anthropic", input=10)
        )
        daily = con.execute(
            "SELECT cost_usd FROM usage_daily WHERE model = 'gpt-7-codex' AND workspace = 'default'"
        ).fetchall()
        assert daily == [(None,)]
    listed = {
        row["model"]: row for row in unpriced_report(catalog, "default", ReportFilter()).to_pylist()
    }
    assert listed.keys() == {"gpt-7-codex", "<unknown>"}  # not <synthetic>: it costs 0
    assert (listed["gpt-7-codex"]["calls"], listed["gpt-7-codex"]["total_tokens"]) == (2, 1012)
    assert listed["gpt-7-codex"]["provider"] == "claude"
    other = unpriced_report(catalog, "other", ReportFilter()).to_pylist()
    assert [r["model"] for r in other] == ["gpt-7-codex"]


@pytest.mark.parametrize(
    ("name", "canonical", "provider_id"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "anthropic"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5", "anthropic"),
        ("claude-4.5-sonnet", "claude-sonnet-4-5", "anthropic"),
        ("claude-4.5-sonnet-thinking", "claude-sonnet-4-5", "anthropic"),
        ("claude-sonnet-4-5-thinking", "claude-sonnet-4-5", "anthropic"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "anthropic"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", "anthropic"),
        ("anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1", "anthropic"),
        ("eu.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5", "anthropic"),
        ("Claude-Opus-4-1-20250805", "claude-opus-4-1", "anthropic"),
        ("claude-4.1-opus", "claude-opus-4-1", "anthropic"),
        ("claude-4-sonnet", "claude-sonnet-4", "anthropic"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5", "anthropic"),
        ("gpt-5-codex", "gpt-5", "openai"),
        ("gpt-5-2025-08-07", "gpt-5", "openai"),
        ("openai/gpt-5", "gpt-5", "openai"),
    ],
)
def test_names_cost_what_their_canonical_model_costs(
    con: duckdb.DuckDBPyConnection, name: str, canonical: str, provider_id: str
) -> None:
    # A small call and one above the 200k tier tell apart models with equal base prices
    # (claude-sonnet-4-5 is tiered, claude-sonnet-4 is not). Only Claude writes caches.
    for tokens in (
        Tokens(input=1000, output=100, cache_write=2000, cache_write_1h=500, cache_read=3000),
        Tokens(input=150_000, output=2000, cache_write=40_000, cache_read=60_000),
    ):
        if provider_id != "anthropic":
            tokens["cache_write"] = tokens["cache_write_1h"] = 0
        call = add_call(con, name, **tokens)
        reference = add_call(con, canonical, **tokens)
        expected = reference_cost(canonical, provider_id, **tokens)
        assert priced(con, call) == pytest.approx(expected)
        assert priced(con, reference) == pytest.approx(expected)


# -- parity with ccusage ----------------------------------------------------------------


@dataclass(frozen=True)
class GoldenDay:
    cost: float
    models: frozenset[str]


@dataclass
class DayCalls:
    """Our calls of one (UTC day, model): token sums as ccusage prices them, and cost."""

    input: int = 0
    output: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    cache_read: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0


def _golden_names(provider: str) -> list[str]:
    return sorted(
        p.name.removesuffix(".daily.json") for p in (GOLDEN / provider).glob("*.daily.json")
    )


def _golden(provider: str, name: str) -> dict[str, GoldenDay]:
    doc = json.loads((GOLDEN / provider / f"{name}.daily.json").read_text())
    if provider == "claude":
        return {
            day["date"]: GoldenDay(
                float(day["totalCost"]), frozenset(m["modelName"] for m in day["modelBreakdowns"])
            )
            for day in doc["daily"]
        }
    return {
        day["date"]: GoldenDay(float(day["costUSD"]), frozenset(day["models"]))
        for day in doc["daily"]
    }


def _golden_models() -> dict[str, set[str]]:
    """Every model named in a golden file, with the days it is used on."""
    days: dict[str, set[str]] = defaultdict(set)
    for provider in PROVIDERS:
        for name in _golden_names(provider):
            for day, golden in _golden(provider, name).items():
                for model in golden.models:
                    days[model].add(day)
    return dict(days)


def _quirk_days(provider: str, name: str) -> set[str]:
    """Days whose token counts deliberately differ from ccusage's (DAILY_QUIRK in
    tests/test_token_parity.py, DIVERGENCE in tests/test_token_parity_codex.py): their
    cost cannot agree either."""
    table = DAILY_QUIRK if provider == "claude" else DIVERGENCE
    return {day for day, _model in table.get(name, {})}


def _home(provider: str, name: str, tmp_path: Path) -> Path:
    if name != "demo":
        return FIXTURES / provider / name
    home = tmp_path / "home"
    if provider == "claude":
        generate_claude_home(home)
    else:
        generate_codex_home(home)
    return home


def _imported(home: Path, provider: str, catalog: Path) -> dict[str, dict[str, DayCalls]]:
    result = run_import(
        ImportOptions(
            catalog=catalog,
            workspace="default",
            home=home,
            env={},
            providers=(provider,),
            build_index=False,
        )
    )
    assert result.exit_code == 0
    con = duckdb.connect(str(catalog), read_only=True)
    rows = con.execute(
        "SELECT strftime(timezone('UTC', ts), '%Y-%m-%d'), coalesce(model, ''), "
        "sum(input_tokens), sum(output_tokens), sum(cache_write_tokens - cache_write_1h_tokens), "
        "sum(cache_write_1h_tokens), sum(cache_read_tokens), coalesce(sum(cost_usd), 0), "
        "count(*) FILTER (WHERE cost_usd IS NULL) FROM usage_costed GROUP BY ALL"
    ).fetchall()
    con.close()
    days: dict[str, dict[str, DayCalls]] = defaultdict(dict)
    for day, model, i, o, cw5m, cw1h, cr, value, unpriced in rows:
        days[day][model] = DayCalls(
            int(i), int(o), int(cw5m), int(cw1h), int(cr), float(value), int(unpriced)
        )
    return dict(days)


def _ccusage_cost(model: str, calls: DayCalls) -> float:
    """What ccusage charges for these tokens at its own prices."""
    rates = CCUSAGE_PRICES[model]
    total = (
        calls.input * rates.input
        + calls.output * rates.output
        + calls.cache_read * rates.cache_read
    )
    for tokens, price in (
        (calls.cache_write_5m, rates.cache_write),
        (calls.cache_write_1h, rates.cache_write_1h),
    ):
        if price is None:
            assert tokens == 0, f"{model}: cache writes ccusage has no price for"
        else:
            total += tokens * price
    return total / 1_000_000


@pytest.mark.parametrize(
    ("provider", "name"),
    [(provider, name) for provider in PROVIDERS for name in _golden_names(provider)],
    ids=lambda value: str(value),
)
def test_daily_cost_matches_ccusage(provider: str, name: str, tmp_path: Path) -> None:
    """Per UTC day, our cost equals ccusage's within 0.5 % except on days whose tokens
    deliberately differ and days using a model the two price sources price differently.
    On those price-difference days, ccusage's own prices (CCUSAGE_PRICES) applied to our
    tokens must still give its cost, which pins the prices PRICE_SOURCE_DIFFERENCES
    names."""
    expected = _golden(provider, name)
    got = _imported(_home(provider, name, tmp_path), provider, tmp_path / "c.duckdb")
    assert set(got) == set(expected)  # the same UTC days
    quirk_days = _quirk_days(provider, name)
    assert quirk_days <= set(expected)
    checked = 0
    for day, golden in sorted(expected.items()):
        if day in quirk_days:
            continue
        calls = got[day]
        at_ccusage_prices = sum(_ccusage_cost(model, calls[model]) for model in golden.models)
        assert at_ccusage_prices == pytest.approx(golden.cost, rel=1e-9, abs=1e-12), day
        checked += 1
        if golden.models & PRICE_SOURCE_DIFFERENCES.keys():
            continue
        # ccusage lists <synthetic> under no model and charges nothing for it.
        unpriced = {m for m, c in calls.items() if c.unpriced_calls and m != "<synthetic>"}
        assert not unpriced, f"{day}: no price for {sorted(unpriced)}, which ccusage prices"
        ours = sum(c.cost for c in calls.values())
        assert ours == pytest.approx(golden.cost, rel=TOLERANCE, abs=1e-9), day
    assert checked > 0 or quirk_days == set(expected)


def test_cache_write_1h_fixture_costs_what_ccusage_says(tmp_path: Path) -> None:
    got = _imported(FIXTURES / "claude" / "cache_write_1h", "claude", tmp_path / "c.duckdb")
    calls = [c for models in got.values() for c in models.values()]
    assert sum(c.cache_write_1h for c in calls) > 0
    assert sum(c.cost for c in calls) == pytest.approx(0.23646, rel=TOLERANCE)


def _our_rates(con: duckdb.DuckDBPyConnection, model: str, day: str) -> Rates | None:
    """Our per-Mtok price of each token kind for ``model`` on ``day``, measured through
    ``usage_costed`` (100,000 tokens per call, below any threshold tier); None if the
    model has no price."""
    n = 100_000
    ts = f"{day} 12:00:00+00"
    calls = (
        add_call(con, model, ts=ts, input=n),
        add_call(con, model, ts=ts, output=n),
        add_call(con, model, ts=ts, cache_write=n),
        add_call(con, model, ts=ts, cache_write=n, cache_write_1h=n),
        add_call(con, model, ts=ts, cache_read=n),
    )
    values = [cost(con, call) for call in calls]
    if any(v is None for v in values):
        return None
    per_mtok = [round(v * 1_000_000 / n, 9) for v in values if v is not None]
    return Rates(*per_mtok)


def _describe(ccusage: Rates, ours: Rates) -> str:
    """Both per-Mtok prices of every token kind they differ on ('' if none)."""
    differences = [
        f"{label} ${theirs:g} (ccusage) vs ${mine:g} (genai-prices)"
        for label, theirs, mine in zip(RATE_LABELS, ccusage, ours, strict=True)
        if theirs is not None and mine is not None and abs(theirs - mine) > 1e-9
    ]
    return "; ".join(differences) + " per Mtok" if differences else ""


def test_ccusage_prices_cover_the_golden_models() -> None:
    assert set(CCUSAGE_PRICES) == set(_golden_models())
    assert set(PRICE_SOURCE_DIFFERENCES) <= set(CCUSAGE_PRICES)


def test_every_golden_model_is_priced(con: duckdb.DuckDBPyConnection) -> None:
    """ccusage prices every model of its golden files; a model we leave unpriced (NULL)
    is a name-mapping bug, never a price-source difference."""
    unpriced = {
        model
        for model, days in _golden_models().items()
        for day in days
        if _our_rates(con, model, day) is None
    }
    assert not unpriced, f"unpriced, though ccusage prices them: {sorted(unpriced)}"


def test_price_source_differences_name_every_differing_model(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """PRICE_SOURCE_DIFFERENCES lists exactly the golden models whose genai-prices price
    differs from ccusage's, each with both prices (unpriced models are left to
    test_every_golden_model_is_priced)."""
    found: dict[str, set[str]] = defaultdict(set)
    for model, days in _golden_models().items():
        for day in days:
            ours = _our_rates(con, model, day)
            if ours is not None:
                found[model].add(_describe(CCUSAGE_PRICES[model], ours))
    differing = {
        model: descriptions for model, descriptions in found.items() if descriptions != {""}
    }
    listed = {m: {text} for m, text in PRICE_SOURCE_DIFFERENCES.items() if m in found}
    assert differing == listed
