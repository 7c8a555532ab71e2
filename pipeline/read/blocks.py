"""The ``blocks`` report: token usage and cost per 5-hour billing window, the unit Claude
subscription plans are measured in, cut the way ccusage's ``blocks`` command cuts them.

Rules, over the calls inside the report's filter taken in time order:

* A block starts at its first call's time floored to the whole hour in the report's zone
  and ends 5 hours later (``block_end``, exclusive).
* The first call at or after ``block_end`` starts the next block, floored again. (A call
  more than 5 hours after the previous one starts a block too, but that needs no rule of
  its own: the previous call is at or after ``block_start``, so such a call is past
  ``block_end`` already.)
* A block is active when ``block_start <= now < block_end`` and its last call is less
  than 5 hours before ``now``; only the active block gets a burn rate and a projection.
  (ccusage does not ask ``block_start <= now``; it only matters when ``now`` is
  injected before some calls, and it keeps the active block unique.)

Blocks are cut from the calls grouped per cell of a UTC grid
(sql/queries/report_blocks.sql), so the per-call work stays inside one DuckDB scan and
Python steps once per block, never once per call. A cell never straddles a block
boundary when every block starts on the grid: block starts are whole local hours, so a
one-hour grid holds for zones with whole-hour offsets, and a 30- or 15-minute grid for
the others. The grid is chosen from the zone's offset at ``now`` and checked against the
blocks found; a block starting off the grid (an offset that changed since) makes the
report recount on a finer grid, down to single microseconds, which is exact by
construction.
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final
from zoneinfo import ZoneInfo

import polars as pl
import pyarrow as pa

from agentlake import sql
from agentlake.read.reports import TOKEN_COLUMNS, ReportFilter, report_connection

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides

_US_PER_MINUTE: Final = 60_000_000
_US_PER_HOUR: Final = 60 * _US_PER_MINUTE
_BLOCK_US: Final = 5 * _US_PER_HOUR
# Cell widths of report_blocks.sql, coarsest first; each divides 5 hours and the next
# coarser width, and a 1-microsecond cell holds the calls of one instant.
_CELL_WIDTHS_US: Final = (_US_PER_HOUR, 30 * _US_PER_MINUTE, 15 * _US_PER_MINUTE, 1_000_000, 1)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

BLOCKS_SCHEMA: Final = pa.schema(
    [
        ("block_start", pa.timestamp("us")),
        ("block_end", pa.timestamp("us")),
        ("first_activity", pa.timestamp("us")),
        ("last_activity", pa.timestamp("us")),
        ("is_active", pa.bool_()),
        ("calls", pa.int64()),
        *((column, pa.int64()) for column in TOKEN_COLUMNS),
        ("cost_usd", pa.float64()),
        ("unpriced_calls", pa.int64()),
        ("models", pa.list_(pa.string())),
        ("tokens_per_minute", pa.float64()),
        ("cost_per_hour", pa.float64()),
        ("projected_total_tokens", pa.int64()),
        ("projected_cost_usd", pa.float64()),
    ]
)
"""The columns of :func:`blocks_report`, in order. Timestamps are naive local times in
the report's zone."""


def blocks_report(
    catalog: Catalog,
    workspace: str,
    flt: ReportFilter,
    *,
    now: datetime | None = None,
    prices: PriceOverrides | None = None,
) -> pa.Table:
    """One row per 5-hour block of this workspace's calls inside ``flt``, oldest first,
    with the columns of :data:`BLOCKS_SCHEMA` (an empty table of that schema when no call
    matches).

    ``block_start``/``block_end`` bound the window and ``first_activity``/
    ``last_activity`` are its first and last call, as naive times in ``flt.tz``. Token
    columns are sums; ``cost_usd`` sums the priced calls and is NULL only when none is
    priced; ``unpriced_calls`` counts the others; ``models`` lists the distinct models,
    sorted, an unknown one as ``'<unknown>'``. Blocks are cut from the filtered calls, so
    ``--since``/``--until`` may cut a block short.

    ``now`` (default: the clock; a naive value is a wall time in ``flt.tz``) decides which
    block is active; at most one is. For the active block only: ``tokens_per_minute`` and
    ``cost_per_hour`` are its totals over the time from ``first_activity`` to ``now``,
    and ``projected_total_tokens``/``projected_cost_usd`` extend that rate linearly to
    ``block_end``; all four are NULL on other blocks, and also on the active one while
    ``now`` is not after its first call.

    ``prices`` (user price overrides) take precedence over the catalog's prices."""
    zone = ZoneInfo(flt.tz)
    moment = now if now is not None else datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    now_us = (moment - _EPOCH) // timedelta(microseconds=1)
    with report_connection(catalog, prices, per_session=False, scope=(workspace, flt)) as con:
        for cell_us in _cell_widths(moment.astimezone(zone).utcoffset()):
            params = {**flt.params(workspace), "cell_us": cell_us}
            cells = pl.from_arrow(con.execute(sql.query("report_blocks"), params).to_arrow_table())
            assert isinstance(cells, pl.DataFrame)
            rows = _cut_blocks(cells, tz=flt.tz, now_us=now_us, cell_us=cell_us)
            if rows is not None:
                return rows
    raise AssertionError("1-microsecond cells never straddle a block boundary")


def _cut_blocks(cells: pl.DataFrame, *, tz: str, now_us: int, cell_us: int) -> pa.Table | None:
    """The rows of :func:`blocks_report` from the per-(cell, model) usage of
    report_blocks.sql counted on a grid of ``cell_us`` microseconds, with ``now`` as
    epoch microseconds; ``None`` when a block starts off that grid, so that some cell
    may hold calls of two blocks. Pure: no I/O."""
    # Per cell in time order: its first call and that call's time floored to the local hour.
    firsts = (
        cells.group_by("cell")
        .agg(pl.col("first_us").min())
        .sort("cell")
        .with_columns(
            (pl.col("first_us") - _local_us(pl.col("first_us"), tz) % _US_PER_HOUR).alias(
                "floor_us"
            )
        )
    )
    cell_keys: list[int] = firsts["cell"].to_list()
    floors: list[int] = firsts["floor_us"].to_list()
    starts: list[int] = []
    start_cells: list[int] = []
    i = 0
    while i < len(cell_keys):
        start = floors[i]
        if start % cell_us:
            return None
        starts.append(start)
        start_cells.append(cell_keys[i])
        # The next block opens with the first cell at or after block_end, a cell boundary.
        i = bisect_left(cell_keys, (start + _BLOCK_US) // cell_us, i + 1)

    block = pl.Series(start_cells, dtype=pl.Int64).search_sorted(cells["cell"], side="right")
    per_block = (
        cells.with_columns(block=block.cast(pl.Int64) - 1)
        .group_by("block")
        .agg(
            pl.col("first_us").min(),
            pl.col("last_us").max(),
            pl.col("calls").sum(),
            *(pl.col(c).sum() for c in TOKEN_COLUMNS),
            pl.when(pl.col("cost_usd").is_not_null().any())
            .then(pl.col("cost_usd").sum())
            .alias("cost_usd"),
            pl.col("unpriced_calls").sum(),
            pl.col("model").unique().sort().alias("models"),
        )
        .sort("block")
        .with_columns(start_us=pl.Series(starts, dtype=pl.Int64))
        .with_columns(end_us=pl.col("start_us") + _BLOCK_US)
    )

    active = (
        (pl.col("start_us") <= now_us)
        & (pl.col("end_us") > now_us)
        & (now_us - pl.col("last_us") < _BLOCK_US)
    )
    elapsed_min = (now_us - pl.col("first_us")) / _US_PER_MINUTE
    remaining_min = (pl.col("end_us") - now_us) / _US_PER_MINUTE
    burning = active & (pl.col("first_us") < now_us)
    tokens_per_minute = pl.when(burning).then(pl.col("total_tokens") / elapsed_min)
    cost_per_minute = pl.when(burning).then(pl.col("cost_usd") / elapsed_min)
    rows = per_block.select(
        _local(pl.col("start_us"), tz).alias("block_start"),
        _local(pl.col("end_us"), tz).alias("block_end"),
        _local(pl.col("first_us"), tz).alias("first_activity"),
        _local(pl.col("last_us"), tz).alias("last_activity"),
        active.alias("is_active"),
        pl.col("calls"),
        *(pl.col(c) for c in TOKEN_COLUMNS),
        pl.col("cost_usd"),
        pl.col("unpriced_calls"),
        pl.col("models"),
        tokens_per_minute.alias("tokens_per_minute"),
        (cost_per_minute * 60).alias("cost_per_hour"),
        (pl.col("total_tokens") + tokens_per_minute * remaining_min)
        .round()
        .cast(pl.Int64)
        .alias("projected_total_tokens"),
        (pl.col("cost_usd") + cost_per_minute * remaining_min).alias("projected_cost_usd"),
    )
    return rows.to_arrow().cast(BLOCKS_SCHEMA)


def _cell_widths(offset: timedelta | None) -> tuple[int, ...]:
    """The cell widths to count on, coarsest first: the first one the zone's UTC
    ``offset`` is a multiple of, then every finer one."""
    offset_us = (offset or timedelta(0)) // timedelta(microseconds=1)
    first = next(i for i, width in enumerate(_CELL_WIDTHS_US) if offset_us % width == 0)
    return _CELL_WIDTHS_US[first:]


def _local(epoch_us: pl.Expr, tz: str) -> pl.Expr:
    """Epoch microseconds as the naive wall time in ``tz``."""
    return (
        pl.from_epoch(epoch_us, time_unit="us")
        .dt.replace_time_zone("UTC")
        .dt.convert_time_zone(tz)
        .dt.replace_time_zone(None)
    )


def _local_us(epoch_us: pl.Expr, tz: str) -> pl.Expr:
    """Epoch microseconds as the wall time in ``tz``, counted in microseconds from
    1970-01-01 00:00 wall time (so ``% hour`` is the time past the local hour)."""
    return _local(epoch_us, tz).dt.epoch("us")
