"""Rate-limit snapshots in catalog shape: UTC times, absolute resets, one row per window.

Pure: raw rows (:data:`agentlake.extract.schema.RAW_RATE_LIMIT_SCHEMA`) in, the rows of
the catalog's ``rate_limits`` table out (``workspace`` and ``import_id`` are bound by the
load stage).
"""

from __future__ import annotations

from typing import Final

import polars as pl
import pyarrow as pa

# Epoch seconds beyond this (the year 5138) are no reset time anyone wrote.
_MAX_EPOCH_S: Final = 10**11

RATE_LIMIT_SCHEMA: Final = pa.schema(
    [
        ("provider", pa.string()),
        ("session_id", pa.string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("limit_id", pa.string()),
        ("window_kind", pa.string()),
        ("used_percent", pa.float64()),
        ("window_minutes", pa.int32()),
        ("resets_at", pa.timestamp("us", tz="UTC")),
        ("plan_type", pa.string()),
        ("source_id", pa.string()),
        ("source_offset", pa.int64()),
    ]
)

# A snapshot's identity: a re-read or an archived copy of a transcript writes the same.
RATE_LIMIT_KEY: Final = ("provider", "session_id", "ts", "limit_id", "window_kind")


def normalize_rate_limits(raw: pa.Table, provider: str, source_id: str = "") -> pa.Table:
    """Rate-limit windows with a UTC ``ts``, the reset as an absolute UTC time (epoch
    seconds as written, else ``ts`` plus the countdown), one row per
    :data:`RATE_LIMIT_KEY` (the first copy). A snapshot without a parsable time cannot be
    ordered against the others and is dropped."""
    if not raw.num_rows:
        return RATE_LIMIT_SCHEMA.empty_table()
    from .transform import utc_timestamp  # the stage's one ISO-8601 rule (it imports us)

    frame = pl.from_arrow(raw)
    assert isinstance(frame, pl.DataFrame)
    ts = utc_timestamp(pl.col("ts"))
    epoch = pl.col("resets_at")
    absolute = (
        pl.when((epoch > 0) & (epoch < _MAX_EPOCH_S))
        .then(pl.from_epoch(epoch, time_unit="s"))
        .dt.replace_time_zone("UTC")
        .dt.cast_time_unit("us")
    )
    countdown = pl.when(pl.col("resets_in") >= 0).then(
        ts + pl.duration(seconds=pl.col("resets_in"))
    )
    source = pl.col("source_id") if "source_id" in frame.columns else pl.lit(source_id)
    out = (
        frame.select(
            pl.lit(provider).alias("provider"),
            "session_id",
            ts.alias("ts"),
            "limit_id",
            "window_kind",
            "used_percent",
            pl.col("window_minutes").clip(0, 2**31 - 1).cast(pl.Int32),
            pl.coalesce(absolute, countdown).alias("resets_at"),
            "plan_type",
            source.cast(pl.String).alias("source_id"),
            "source_offset",
        )
        .filter(pl.col("ts").is_not_null())
        .unique(list(RATE_LIMIT_KEY), keep="first", maintain_order=True)
    )
    return out.to_arrow().cast(RATE_LIMIT_SCHEMA)
