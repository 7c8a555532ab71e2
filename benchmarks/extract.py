"""The reading side of an import alone: extract every source of a home as a first import
would (the same plan, the same batch ceilings), without a catalog.

    python -m benchmarks.extract HOME [--build] [--memory-limit 1GiB]

Prints the wall seconds and, per provider, the sources, records and CPU seconds of
reading, parsing and mapping their lines; with ``--build`` also of turning each batch's
rows into Arrow tables (which an import does once per commit, on the same thread).
Transforming and loading are left out: ``python -m benchmarks.statements`` times those.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from agentlake.extract.extract import ExtractLimits, extract_source
from agentlake.extract.providers import by_id
from agentlake.ingest.budget import memory_budget
from agentlake.ingest.plan import make_plan


def extract_home(home: Path, limits: ExtractLimits, *, build: bool) -> dict[str, Counter[str]]:
    """Extract every source of ``home`` in plan order; per provider, the sources and
    records read and the CPU seconds (as ``cpu_ms``) they took."""
    plan = make_plan({}, workspace="default", home=home, env={})
    figures: dict[str, Counter[str]] = {}
    for planned in plan.sources:
        if planned.action != "read" or planned.source is None:
            continue
        counts = figures.setdefault(planned.provider, Counter())
        spec, source = by_id(planned.provider), planned.source
        started = time.process_time()
        for batch in extract_source(
            spec, source, start=planned.start, stop=planned.stop, limits=limits
        ):
            counts["records"] += batch.records
            if build:
                batch.rows.build()
        counts["cpu_ms"] += round((time.process_time() - started) * 1000)
        counts["sources"] += 1
    return figures


def main() -> None:
    """Extract the home and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.extract")
    parser.add_argument("home", type=Path)
    parser.add_argument("--build", action="store_true", help="also build the Arrow tables")
    parser.add_argument("--memory-limit", default="1GiB", help="the import's ceiling (batches)")
    args = parser.parse_args()
    _, limits = memory_budget(args.memory_limit, ExtractLimits())
    started = time.perf_counter()
    figures = extract_home(args.home, limits, build=args.build)
    print(f"extract: {time.perf_counter() - started:.1f} s wall")
    for provider, counts in figures.items():
        print(
            f"  {provider:12} {counts['sources']:>7,} sources {counts['records']:>10,} records "
            f"{counts['cpu_ms'] / 1000:7.1f} s CPU"
        )
    total = sum(c["cpu_ms"] for c in figures.values()) / 1000
    print(f"  {'all':12} {total:45.1f} s CPU")


if __name__ == "__main__":
    main()
