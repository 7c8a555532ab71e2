"""The ``blocks`` report (pipeline/blocks.py): 5-hour billing windows floored to the local
hour, the block-end and gap rules, zones with non-whole-hour offsets and DST, filters,
the active block's burn rate and projection, unpriced calls, empty catalogs, workspaces,
and agreement with a call-by-call reading of the rules on random calls."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from agentlake.load.catalog import open_for_write
from agentlake.load.price_overrides import load_price_overrides
from agentlake.read.blocks import BLOCKS_SCHEMA, blocks_report
from agentlake.read.reports import ReportFilter

SONNET = "claude-sonnet-4-5-20250929"  # $3 input, $15 output per Mtok
T0 = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday, no DST change nearby
NOW = datetime(2030, 1, 1, tzinfo=UTC)  # long after every call: no block is active


@dataclass(frozen=True)
class Call:
    ts: datetime
    model: str | None = SONNET
    provider: str = "claude-code"
    input: int = 100
    output: int = 10
    cache_write: int = 0
    cache_write_1h: int = 0
    cache_read: int = 0
    reasoning: int = 0
    workspace: str = "default"
    project: str = "/work/alpha"


def at(hours: float = 0, minutes: float = 0, seconds: float = 0) -> datetime:
    return T0 + timedelta(hours=hours, minutes=minutes, seconds=seconds)


def catalog_with(path: Path, calls: list[Call]) -> Path:
    def session(c: Call) -> str:
        return f"{c.workspace}-{c.provider}-{c.project}"

    with open_for_write(path) as con:
        if not calls:
            return path
        con.executemany(
            "INSERT INTO usage (call_id, workspace, provider, session_id, ts, model, "
            "input_tokens, cache_write_tokens, cache_write_1h_tokens, cache_read_tokens, "
            "output_tokens, reasoning_tokens, total_tokens, source_id, source_offset, "
            "import_id) VALUES (?, ?, ?, ?, CAST(? AS TIMESTAMPTZ), ?, ?, ?, ?, ?, ?, ?, ?, "
            "'src', 0, 1)",
            [[f"c{i}", c.workspace, c.provider, session(c), c.ts.isoformat(), c.model,
              c.input, c.cache_write, c.cache_write_1h, c.cache_read, c.output, c.reasoning,
              c.input + c.cache_write + c.cache_read + c.output]
             for i, c in enumerate(calls)],
        )  # fmt: skip
        con.executemany(
            "INSERT INTO sessions (workspace, provider, session_id, project_path) "
            "VALUES (?, ?, ?, ?)",
            sorted({(c.workspace, c.provider, session(c), c.project) for c in calls}),
        )
    return path


def blocks(
    path: Path,
    calls: list[Call],
    *,
    now: datetime = NOW,
    **flt: Any,
) -> list[dict[str, Any]]:
    table = blocks_report(catalog_with(path, calls), "default", ReportFilter(**flt), now=now)
    assert table.schema == BLOCKS_SCHEMA
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def local(ts: datetime, tz: str = "UTC") -> datetime:
    """``ts`` as the naive wall time in ``tz``, the way the report shows times."""
    return ts.astimezone(ZoneInfo(tz)).replace(tzinfo=None)


def spans(rows: list[dict[str, Any]]) -> list[tuple[datetime, datetime, int]]:
    return [(r["block_start"], r["block_end"], r["calls"]) for r in rows]


# -- the block rules ----------------------------------------------------------------------


def test_block_starts_at_the_first_call_floored_to_the_hour(tmp_path: Path) -> None:
    first, last = at(10, 17, 42.5), at(13, 2)
    rows = blocks(tmp_path / "c.duckdb", [Call(last), Call(first)])
    assert spans(rows) == [(local(at(10)), local(at(15)), 2)]
    assert rows[0]["first_activity"] == local(first)
    assert rows[0]["last_activity"] == local(last)


def test_a_call_exactly_at_block_end_starts_a_new_block(tmp_path: Path) -> None:
    calls = [Call(at(10, 20)), Call(at(15) - timedelta(microseconds=1)), Call(at(15))]
    rows = blocks(tmp_path / "c.duckdb", calls)
    assert spans(rows) == [
        (local(at(10)), local(at(15)), 2),
        (local(at(15)), local(at(20)), 1),
    ]


def test_a_gap_over_five_hours_starts_a_new_floored_block(tmp_path: Path) -> None:
    calls = [Call(at(10, 5)), Call(at(10, 10)), Call(at(16, 20, 1)), Call(at(20, 59))]
    rows = blocks(tmp_path / "c.duckdb", calls)
    assert spans(rows) == [
        (local(at(10)), local(at(15)), 2),
        (local(at(16)), local(at(21)), 2),
    ]
    assert rows[1]["first_activity"] == local(at(16, 20, 1))


def test_a_call_past_block_end_starts_a_new_block_even_soon_after_the_previous(
    tmp_path: Path,
) -> None:
    # 4h59m after the previous call, but past the end of the block that call is in.
    calls = [Call(at(10, 50)), Call(at(15, 49)), Call(at(19, 59))]
    rows = blocks(tmp_path / "c.duckdb", calls)
    assert spans(rows) == [
        (local(at(10)), local(at(15)), 1),
        (local(at(15)), local(at(20)), 2),
    ]


def test_half_hour_offset_zone_floors_in_local_time(tmp_path: Path) -> None:
    # Asia/Kolkata is UTC+05:30: 04:45 UTC is 10:15 local, so the block is 10:00-15:00
    # local (04:30-09:30 UTC). Flooring in UTC would end it at 09:00 UTC instead.
    calls = [Call(at(4, 45)), Call(at(9, 29)), Call(at(9, 30))]
    rows = blocks(tmp_path / "c.duckdb", calls, tz="Asia/Kolkata")
    day = datetime(2026, 3, 2)
    assert spans(rows) == [
        (day.replace(hour=10), day.replace(hour=15), 2),
        (day.replace(hour=15), day.replace(hour=20), 1),
    ]
    assert rows[0]["first_activity"] == day.replace(hour=10, minute=15)


def test_quarter_hour_offset_zone_floors_in_local_time(tmp_path: Path) -> None:
    # Asia/Kathmandu is UTC+05:45: the block boundary falls at 09:15 UTC (15:00 local).
    calls = [Call(at(4, 20)), Call(at(9, 14, 59)), Call(at(9, 15))]
    rows = blocks(tmp_path / "c.duckdb", calls, tz="Asia/Kathmandu")
    day = datetime(2026, 3, 2)
    assert spans(rows) == [
        (day.replace(hour=10), day.replace(hour=15), 2),
        (day.replace(hour=15), day.replace(hour=20), 1),
    ]


def test_an_offset_that_changed_since_is_still_floored_exactly(tmp_path: Path) -> None:
    # America/Caracas was UTC-04:30 in 2010 and is UTC-04:00 now; Africa/Monrovia was
    # UTC-00:44:30 until 1972. Blocks then start on neither a whole UTC hour nor a quarter.
    caracas = [datetime(2010, 3, 2, h, m, s, tzinfo=UTC) for h, m, s in
               ((14, 45, 0), (19, 29, 59), (19, 30, 0))]  # fmt: skip
    rows = blocks(tmp_path / "a.duckdb", [Call(t) for t in caracas], tz="America/Caracas")
    assert spans(rows) == [
        (datetime(2010, 3, 2, 10), datetime(2010, 3, 2, 15), 2),
        (datetime(2010, 3, 2, 15), datetime(2010, 3, 2, 20), 1),
    ]
    monrovia = [datetime(1971, 6, 1, h, m, s, tzinfo=UTC) for h, m, s in
                ((12, 0, 0), (16, 44, 29), (16, 44, 30))]  # fmt: skip
    rows = blocks(tmp_path / "b.duckdb", [Call(t) for t in monrovia], tz="Africa/Monrovia")
    assert spans(rows) == [
        (datetime(1971, 6, 1, 11), datetime(1971, 6, 1, 16), 2),
        (datetime(1971, 6, 1, 16), datetime(1971, 6, 1, 21), 1),
    ]


def test_a_block_lasts_five_real_hours_across_a_dst_change(tmp_path: Path) -> None:
    # Europe/Berlin springs forward at 01:00 UTC on 2026-03-29 (02:00 CET -> 03:00 CEST).
    first = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # 01:30 CET
    calls = [Call(first + timedelta(minutes=m)) for m in (0, 4 * 60 + 29, 4 * 60 + 30)]
    rows = blocks(tmp_path / "c.duckdb", calls, tz="Europe/Berlin")
    assert spans(rows) == [
        (datetime(2026, 3, 29, 1), datetime(2026, 3, 29, 7), 2),
        (datetime(2026, 3, 29, 7), datetime(2026, 3, 29, 12), 1),
    ]


# -- filters and workspaces ---------------------------------------------------------------


def test_filters_apply_before_the_calls_are_cut_into_blocks(tmp_path: Path) -> None:
    calls = [
        Call(at(10, 10), provider="claude-code", model=SONNET, project="/work/alpha"),
        Call(at(14, 30), provider="codex", model="gpt-5", project="/work/beta"),
        Call(at(24 + 9, 5), provider="claude-code", model=SONNET, project="/work/alpha"),
    ]
    path = catalog_with(tmp_path / "c.duckdb", calls)

    def run(**flt: Any) -> list[tuple[datetime, datetime, int]]:
        return spans(blocks_report(path, "default", ReportFilter(**flt), now=NOW).to_pylist())

    assert run() == [
        (local(at(10)), local(at(15)), 2),
        (local(at(24 + 9)), local(at(24 + 14)), 1),
    ]
    # Without the 10:10 call the codex call opens its own block, floored to 14:00.
    codex = [(local(at(14)), local(at(19)), 1)]
    assert run(provider="codex") == codex
    assert run(model="GPT") == codex
    assert run(project="beta") == codex
    assert run(provider="claude-code") == [
        (local(at(10)), local(at(15)), 1),
        (local(at(24 + 9)), local(at(24 + 14)), 1),
    ]
    assert run(since=date(2026, 3, 3)) == [(local(at(24 + 9)), local(at(24 + 14)), 1)]
    assert run(until=date(2026, 3, 2)) == [(local(at(10)), local(at(15)), 2)]
    assert run(provider="gemini") == []


def test_other_workspaces_are_ignored(tmp_path: Path) -> None:
    calls = [
        Call(at(8, 59), workspace="other", input=5_000),  # would floor the block to 08:00
        Call(at(10, 10)),
        Call(at(11, 0), workspace="other", input=7_000),
    ]
    path = catalog_with(tmp_path / "c.duckdb", calls)
    mine = blocks_report(path, "default", ReportFilter(), now=NOW).to_pylist()
    assert spans(mine) == [(local(at(10)), local(at(15)), 1)]
    assert mine[0]["input_tokens"] == 100
    theirs = blocks_report(path, "other", ReportFilter(), now=NOW).to_pylist()
    assert spans(theirs) == [(local(at(8)), local(at(13)), 2)]
    assert theirs[0]["input_tokens"] == 12_000


def test_an_empty_catalog_gives_an_empty_table_with_the_schema(tmp_path: Path) -> None:
    path = catalog_with(tmp_path / "c.duckdb", [])
    table = blocks_report(path, "default", ReportFilter(tz="Asia/Kolkata"))
    assert table.num_rows == 0
    assert table.schema == BLOCKS_SCHEMA
    assert table.column_names[:5] == [
        "block_start", "block_end", "first_activity", "last_activity", "is_active",
    ]  # fmt: skip


# -- sums, models, costs ------------------------------------------------------------------


def test_sums_models_and_unpriced_calls(tmp_path: Path) -> None:
    calls = [
        # block 1: two priced calls and one of an unknown model
        Call(at(10, 0), input=1_000, output=100, cache_write=200, cache_write_1h=50,
             cache_read=3_000, reasoning=0),
        Call(at(10, 30), input=2_000, output=400, reasoning=40),
        Call(at(11, 0), model="acme-unpriced-1", input=7, output=3),
        # block 2: only calls nobody prices, one without a model
        Call(at(20, 0), model="zz-unpriced", input=5, output=5),
        Call(at(20, 5), model=None, input=1, output=1),
        Call(at(20, 10), model="mm-unpriced", input=1, output=1),
        Call(at(20, 15), model="acme-unpriced-1", input=1, output=1),
    ]  # fmt: skip
    first, second = blocks(tmp_path / "c.duckdb", calls)
    assert first["calls"] == 3
    assert first["input_tokens"] == 3_007
    assert first["output_tokens"] == 503
    assert first["cache_write_tokens"] == 200
    assert first["cache_write_1h_tokens"] == 50
    assert first["cache_read_tokens"] == 3_000
    assert first["reasoning_tokens"] == 40
    assert first["total_tokens"] == 3_007 + 503 + 200 + 3_000
    assert first["models"] == ["acme-unpriced-1", SONNET]
    assert first["unpriced_calls"] == 1
    # $3/Mtok input, $15 output, $3.75 5-minute and $6 1-hour cache writes, $0.30 reads.
    expected = (3_000 * 3 + 500 * 15 + 150 * 3.75 + 50 * 6 + 3_000 * 0.3) / 1e6
    assert first["cost_usd"] == pytest.approx(expected, rel=1e-12)
    assert second["calls"] == 4
    assert second["unpriced_calls"] == 4
    assert second["cost_usd"] is None
    assert second["models"] == ["<unknown>", "acme-unpriced-1", "mm-unpriced", "zz-unpriced"]


def test_user_price_overrides_price_the_blocks(tmp_path: Path) -> None:
    path = catalog_with(
        tmp_path / "c.duckdb", [Call(at(10), model="acme-unpriced-1", input=1_000, output=100)]
    )
    toml = tmp_path / "prices.toml"
    toml.write_text('[models."acme-unpriced-1"]\ninput = 2.0\noutput = 10.0\n')
    (plain,) = blocks_report(path, "default", ReportFilter(), now=NOW).to_pylist()
    assert plain["cost_usd"] is None
    overrides = load_price_overrides(toml)
    (priced,) = blocks_report(
        path, "default", ReportFilter(), now=NOW, prices=overrides
    ).to_pylist()
    assert priced["unpriced_calls"] == 0
    assert priced["cost_usd"] == pytest.approx((1_000 * 2 + 100 * 10) / 1e6)


# -- the active block ---------------------------------------------------------------------


def test_only_the_active_block_has_a_burn_rate_and_a_projection(tmp_path: Path) -> None:
    calls = [
        Call(at(2, 0), input=999, output=1),
        Call(at(10, 10), input=1_000, output=200),
        Call(at(10, 40), input=1_500, output=300),
    ]
    now = at(11, 10)  # 60 minutes after the block's first call, 230 before its end
    old, current = blocks(tmp_path / "c.duckdb", calls, now=now)
    assert old["is_active"] is False
    for column in ("tokens_per_minute", "cost_per_hour", "projected_total_tokens",
                   "projected_cost_usd"):  # fmt: skip
        assert old[column] is None
    assert current["is_active"] is True
    assert current["total_tokens"] == 3_000
    assert current["tokens_per_minute"] == pytest.approx(3_000 / 60)
    assert current["projected_total_tokens"] == 3_000 + 50 * 230
    cost = (2_500 * 3 + 500 * 15) / 1e6
    assert current["cost_usd"] == pytest.approx(cost)
    assert current["cost_per_hour"] == pytest.approx(cost)
    assert current["projected_cost_usd"] == pytest.approx(cost * 290 / 60)


def test_active_until_block_end_and_now_may_be_a_local_wall_time(tmp_path: Path) -> None:
    path = catalog_with(tmp_path / "c.duckdb", [Call(at(4, 45))])  # 10:15 in Kolkata
    flt = ReportFilter(tz="Asia/Kolkata")

    def active(now: datetime) -> bool:
        row = blocks_report(path, "default", flt, now=now).to_pylist()[0]
        return bool(row["is_active"])

    assert active(at(9, 29, 59))
    assert not active(at(9, 30))  # block_end, 15:00 local
    assert active(datetime(2026, 3, 2, 14, 59))  # naive: 14:59 in Kolkata
    assert not active(datetime(2026, 3, 2, 15, 0))


def test_a_block_after_now_is_not_active(tmp_path: Path) -> None:
    calls = [Call(at(10, 10)), Call(at(24 + 10, 10))]
    today, tomorrow = blocks(tmp_path / "c.duckdb", calls, now=at(11))
    assert today["is_active"] is True
    assert tomorrow["is_active"] is False
    assert tomorrow["tokens_per_minute"] is None


def test_the_rate_is_null_while_now_is_not_after_the_first_call(tmp_path: Path) -> None:
    (row,) = blocks(tmp_path / "c.duckdb", [Call(at(10, 10))], now=at(10, 10))
    assert row["is_active"] is True
    assert row["tokens_per_minute"] is None
    assert row["projected_total_tokens"] is None


# -- agreement with a call-by-call reading of the rules -----------------------------------


def reference_blocks(times: list[datetime], tz: str) -> list[tuple[datetime, datetime, int]]:
    """The rules read literally, one call at a time."""
    zone = ZoneInfo(tz)
    out: list[list[Any]] = []
    previous: datetime | None = None
    for ts in sorted(times):
        if (
            not out
            or ts >= out[-1][1]
            or (previous is not None and ts - previous > timedelta(hours=5))
        ):
            wall = ts.astimezone(zone)
            start = ts - timedelta(minutes=wall.minute, seconds=wall.second,
                                   microseconds=wall.microsecond)  # fmt: skip
            out.append([start, start + timedelta(hours=5), 0])
        out[-1][2] += 1
        previous = ts
    return [(local(s, tz), local(e, tz), n) for s, e, n in out]


@pytest.fixture(scope="module")
def random_calls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[datetime]]:
    """440 seeded calls over four days across Europe's DST change of 2026-03-29, with
    gaps from a second to six hours; 40 of them exactly on the hour."""
    rng = random.Random(20260329)
    times: list[datetime] = []
    ts = datetime(2026, 3, 27, tzinfo=UTC)
    for _ in range(400):
        ts += timedelta(seconds=rng.choice([1, 30, 300, 900, 3_600, 4 * 3_600, 6 * 3_600]) +
                        rng.randrange(0, 900))  # fmt: skip
        times.append(ts)
    times += [t.replace(minute=0, second=0, microsecond=0) for t in rng.sample(times, 40)]
    path = tmp_path_factory.mktemp("blocks") / "c.duckdb"
    return catalog_with(path, [Call(t) for t in times]), times


@pytest.mark.parametrize(
    "tz", ["UTC", "Europe/Berlin", "America/St_Johns", "Asia/Kolkata", "Asia/Kathmandu"]
)
def test_blocks_agree_with_a_call_by_call_reading(
    random_calls: tuple[Path, list[datetime]], tz: str
) -> None:
    path, times = random_calls
    rows = blocks_report(path, "default", ReportFilter(tz=tz), now=NOW).to_pylist()
    assert len(rows) > 20
    assert spans(rows) == reference_blocks(times, tz)
    assert sum(r["calls"] for r in rows) == len(times)
