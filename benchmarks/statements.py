"""Where an import's time goes, statement by statement: import a home into a fresh
catalog in process, timing every statement the catalog writer runs.

    python -m benchmarks.statements HOME CATALOG [--top 25] [--overlap]

Prints the whole import's seconds, the seconds spent in DuckDB statements, then the
``--top`` statements by total time (seconds, how many times it ran, its first words).
The rest of the import is Python: the adapters, the Arrow and polars work
(``python -m cProfile -m agentlake import ...`` splits that further). Then how long the
commits took, and the CPU seconds each thread used (reading: the calling thread; the
publish step's tokenizer runs on it after the commits). By default each
commit is written before the next is read, so the two add up to the import; with
``--overlap`` they run side by side as in a real import, and the seconds reading waited
for the loader say which side bounds it.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load import load
from agentlake.load.catalog import split_script, statement_body
from agentlake.load.terms import BatchTokenizer

from .measure import remove_catalog

__all__ = ["StatementTimes", "home_and_catalog_parser", "timed_statements"]


class StatementTimes:
    """Seconds and calls per statement (keyed by its first 90 characters); the seconds
    the loader spent in commits; and the CPU seconds of the threads that committed and
    tokenized."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: Counter[str] = Counter()
        self.committing = 0.0
        self.cpu: dict[str, float] = {}  # thread role -> CPU seconds up to its last call

    def add(self, statement: str, seconds: float) -> None:
        """Count one run of ``statement``."""
        key = " ".join(statement.split())[:90]
        self.seconds[key] = self.seconds.get(key, 0.0) + seconds
        self.calls[key] += 1

    @property
    def total(self) -> float:
        """Seconds in every statement."""
        return sum(self.seconds.values())


class _TimedConnection:
    """A connection whose ``execute`` adds to :class:`StatementTimes`."""

    def __init__(self, con: Any, times: StatementTimes) -> None:
        self._con, self._times = con, times

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)

    def execute(self, statement: str, *args: Any) -> Any:
        # A script (``run_script`` runs one in a call) is run and timed statement by
        # statement, so that each is ranked on its own.
        parts = [p for p in split_script(statement) if statement_body(p).strip()]
        result = None
        for part in parts or [statement]:
            started = time.perf_counter()
            result = self._con.execute(part, *args)
            self._times.add(part, time.perf_counter() - started)
        return result


@contextmanager
def timed_statements() -> Iterator[StatementTimes]:
    """While open, every catalog writer created times its statements into the yielded
    :class:`StatementTimes`."""
    times = StatementTimes()
    original = load.CatalogWriter.__init__
    commit = load.CatalogWriter.commit
    tokenize = BatchTokenizer.terms

    def init(self: load.CatalogWriter, con: Any, *args: Any, **kwargs: Any) -> None:
        original(self, _TimedConnection(con, times), *args, **kwargs)  # type: ignore[arg-type]

    def timed_commit(self: load.CatalogWriter, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return commit(self, *args, **kwargs)
        finally:
            times.committing += time.perf_counter() - started
            times.cpu["loader"] = time.thread_time()

    def timed_terms(self: BatchTokenizer, events: Any) -> Any:
        try:
            return tokenize(self, events)
        finally:
            times.cpu["publish"] = time.thread_time()

    load.CatalogWriter.__init__ = init  # type: ignore[method-assign]
    load.CatalogWriter.commit = timed_commit  # type: ignore[method-assign]
    BatchTokenizer.terms = timed_terms  # type: ignore[method-assign]
    try:
        yield times
    finally:
        load.CatalogWriter.__init__ = original  # type: ignore[method-assign]
        load.CatalogWriter.commit = commit  # type: ignore[method-assign]
        BatchTokenizer.terms = tokenize  # type: ignore[method-assign]


def home_and_catalog_parser(module: str) -> argparse.ArgumentParser:
    """The command line of a benchmark that imports HOME into a fresh CATALOG and ranks
    the top statements (``--top``), under the import's ``--memory-limit``."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}")
    parser.add_argument("home", type=Path)
    parser.add_argument("catalog", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--memory-limit", default="1GiB")
    return parser


def main() -> None:
    """Import HOME into a fresh CATALOG and print the statements' times."""
    parser = home_and_catalog_parser("benchmarks.statements")
    parser.add_argument(
        "--overlap", action="store_true",
        help="write commits in the loader thread as an import does (statements then "
        "share the cores with reading, and their times include that contention)",
    )  # fmt: skip
    args = parser.parse_args()
    remove_catalog(args.catalog)
    options = ImportOptions(catalog=args.catalog, workspace="default", home=args.home, env={},
                            memory_limit=args.memory_limit, overlap_load=args.overlap)  # fmt: skip
    with timed_statements() as times:
        started = time.perf_counter()
        result = run_import(options)
        seconds = time.perf_counter() - started
        times.cpu["reading"] = time.thread_time()
    records = result.totals()["records"]
    print(f"import: {seconds:.1f} s, {records:,} records = {records / seconds:,.0f}/s; "
          f"DuckDB statements {times.total:.1f} s; reading waited "
          f"{result.load_wait_seconds:.1f} s for the loader")  # fmt: skip
    print(
        f"commits: {times.committing:.1f} s; CPU seconds per thread: "
        + ", ".join(f"{role} {cpu:.1f}" for role, cpu in sorted(times.cpu.items()))
    )
    ranked = sorted(times.seconds.items(), key=lambda item: -item[1])
    for key, spent in ranked[: args.top]:
        print(f"{spent:8.2f} s {times.calls[key]:5d}  {key}")


if __name__ == "__main__":
    main()
