"""Import a generated home in process, then time what a nightly user sees — a quick
loop for profiling the importer (``python -m cProfile``), without subprocesses.

    python -m benchmarks.import_and_search --events 1000000 --dir /tmp/bench

Phases (printed one per line): full import, no-change re-run, search over the drawn
queries (see ``benchmarks.search_latency``), a 1 % append re-run, and a full
search-index rebuild for comparison with the incremental maintenance. The home is the
benchmark's (``benchmarks.corpus``) and is reused when ``--dir`` already holds one.
``python -m benchmarks`` is the benchmark of record.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from agentlake.ingest.run import ImportOptions, run_import

from .corpus import PROVIDERS, append_new_records, generate_corpus, parse_providers, plan_corpus
from .measure import percentile, remove_catalog
from .search_latency import draw_queries, sample_texts, time_search


def main() -> None:
    """Run the phases and print their figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.import_and_search")
    parser.add_argument("--events", "--lines", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--providers", type=parse_providers, default=PROVIDERS)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--memory-limit", default="1GiB")
    args = parser.parse_args()
    home, catalog = args.dir / "home", args.dir / "catalog.duckdb"
    plan = plan_corpus(args.events, args.seed, args.providers)
    if not home.exists():
        generate_corpus(home, plan)
    lines = {p: plan.targets[p] for p in plan.providers}
    remove_catalog(catalog)
    options = ImportOptions(
        catalog=catalog, workspace="default", home=home, env={}, memory_limit=args.memory_limit
    )
    started = time.perf_counter()
    result = run_import(options)
    full = time.perf_counter() - started
    records = result.totals()["records"]
    print(f"full import: {full:.1f} s, {records} records = {records / full:,.0f}/s, "
          f"index {result.index_seconds}, peak RSS {result.peak_rss_bytes / 2**20:.0f} MiB")  # fmt: skip
    started = time.perf_counter()
    run_import(options)
    print(f"no-change re-run: {time.perf_counter() - started:.2f} s")
    queries = draw_queries(sample_texts(catalog, args.seed), args.seed)
    samples = time_search(catalog, queries, rounds=1)["samples_s"]
    print(f"search, {len(queries)} queries: p50 {percentile(samples, 50) * 1000:.0f} ms, "
          f"p95 {percentile(samples, 95) * 1000:.0f} ms")  # fmt: skip
    added = append_new_records(home, args.dir / "append-donors", plan, lines).lines
    started = time.perf_counter()
    result = run_import(options)
    append = time.perf_counter() - started
    print(f"1 % append: {added} lines in {append:.1f} s ({append / full * 100:.1f} % of the full "
          f"import), index {result.index_seconds}")  # fmt: skip
    result = run_import(replace(options, reindex=True))
    print(f"full index rebuild: {result.index_seconds:.1f} s")


if __name__ == "__main__":
    main()
