"""Latency of ``agentlake.read.sessions.list_sessions`` on an imported catalog.

    python -m benchmarks.sessions_listing CATALOG [--rounds 3]

Each round makes 50 calls: first pages with varied filters, then cursor pages of four
listings, on one open read-only connection (after three warm-up calls), and prints
p50/p95 in milliseconds; a last round opens the catalog for every call. The dates fit
the benchmark corpus (``benchmarks.corpus``: March–April 2026).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb

from agentlake.load.catalog import CatalogRef
from agentlake.read.sessions import list_sessions

from .measure import percentile

NOW = datetime(2026, 5, 1, tzinfo=UTC)
FIRST_PAGES: list[dict[str, Any]] = [
    {}, {"provider": "claude"}, {"project": "web"}, {"text": "cache"},
    {"since": date(2026, 4, 1)}, {"max_age": "30d", "now": NOW},
    {"text": "rate limiter", "project": "gateway"}, {"limit": 100}, {"limit": 5},
    {"provider": "codex"},
]  # fmt: skip
PAGED: list[dict[str, Any]] = [
    {},
    {"text": "cache"},
    {"project": "web"},
    {"since": date(2026, 4, 15)},
]


def calls(source: CatalogRef) -> Iterator[dict[str, Any]]:
    """The 50 calls of a round (cursor pages need the previous page to exist)."""
    yield from FIRST_PAGES
    for filters in PAGED:
        cursor: str | None = None
        for _ in range(10):
            call = {**filters, "cursor": cursor} if cursor else dict(filters)
            yield call
            cursor = list_sessions(source, "default", **call).next_cursor
            if not cursor:
                break


def round_of(source: CatalogRef) -> list[float]:
    """One round's call latencies in milliseconds."""
    plan = list(calls(source))
    for _ in range(3):
        list_sessions(source, "default")
    samples = []
    for call in plan:
        started = time.perf_counter()
        list_sessions(source, "default", **call)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def time_listing(catalog: Path, rounds: int = 3) -> dict[str, Any]:
    """``rounds`` rounds on one open read-only connection (the budgeted figure) and one
    round opening the catalog per call (as the CLI does), in seconds."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        samples = [ms / 1000 for _ in range(rounds) for ms in round_of(con)]
    finally:
        con.close()
    per_call = [ms / 1000 for ms in round_of(catalog)]
    return {
        "samples_s": samples, "p50_s": percentile(samples, 50), "p95_s": percentile(samples, 95),
        "calls_per_round": len(samples) // max(1, rounds),
        "opened_per_call": {"samples_s": per_call, "p50_s": percentile(per_call, 50),
                            "p95_s": percentile(per_call, 95)},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("catalog", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    con = duckdb.connect(str(args.catalog), read_only=True)
    for n in range(args.rounds):
        s = round_of(con)
        print(f"open connection, round {n + 1}: {len(s)} calls, "
              f"p50 {percentile(s, 50):.2f} ms, p95 {percentile(s, 95):.2f} ms")  # fmt: skip
    con.close()
    s = round_of(args.catalog)
    print(f"catalog opened per call: {len(s)} calls, "
          f"p50 {percentile(s, 50):.2f} ms, p95 {percentile(s, 95):.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
