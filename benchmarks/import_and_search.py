"""Import a generated Claude corpus, then time what a nightly user sees.

    python -m benchmarks.import_and_search --lines 1000000 --dir /tmp/bench

Phases (in process, printed one per line): full import, no-change re-run, search over
60 queries (opening the catalog per query, as the CLI does), a 1 % append re-run, and a
full search-index rebuild for comparison with the incremental maintenance.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

from agentlake.demo import generate_claude_corpus
from agentlake.run import ImportOptions, run_import
from agentlake.search import search

from .__main__ import _append_one_percent

QUERIES = (
    "cache bug", "session loader", "retry", "parser", "health endpoint", "fix", "timeout",
    "rate limiter", '"structured logging"', "refactor*", "cache OR parser", "test -unit",
    "database migration", "memory leak", "error", "zeppelin", "webshop", "flaky", "ledger", "grpc",
)  # fmt: skip


def main() -> None:
    """Run the phases and print their figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.import_and_search")
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--memory-limit", default="1GiB")
    args = parser.parse_args()
    home, catalog = args.dir / "home", args.dir / "catalog.duckdb"
    if not home.exists():
        generate_claude_corpus(home, seed=args.seed, target_lines=args.lines)
    for stale in args.dir.glob("catalog.duckdb*"):
        stale.unlink()
    options = ImportOptions(
        catalog=catalog, workspace="default", home=home, env={}, memory_limit=args.memory_limit
    )
    started = time.perf_counter()
    result = run_import(options)
    full = time.perf_counter() - started
    records = result.totals()["records"]
    print(f"full import: {full:.1f} s, {records} records = {records / full:,.0f}/s, "
          f"compaction {result.index_seconds}, peak RSS {result.peak_rss_bytes / 2**20:.0f} MiB")  # fmt: skip
    started = time.perf_counter()
    run_import(options)
    print(f"no-change re-run: {time.perf_counter() - started:.2f} s")
    samples = []
    for i in range(60):
        started = time.perf_counter()
        search(catalog, "default", QUERIES[i % len(QUERIES)], limit=20)
        samples.append(time.perf_counter() - started)
    samples.sort()
    print(f"search, 60 queries: p50 {statistics.median(samples) * 1000:.0f} ms, "
          f"p95 {samples[int(len(samples) * 0.95) - 1] * 1000:.0f} ms")  # fmt: skip
    added = _append_one_percent(home)
    started = time.perf_counter()
    result = run_import(options)
    append = time.perf_counter() - started
    print(f"1 % append: {added} lines in {append:.1f} s ({append / full * 100:.1f} % of the full "
          f"import), compaction {result.index_seconds}")  # fmt: skip
    result = run_import(replace(options, reindex=True))
    print(f"full index rebuild: {result.index_seconds:.1f} s")


if __name__ == "__main__":
    main()
