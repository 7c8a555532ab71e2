"""The two sides of an import, each alone: read and transform every commit of a home as
a first import would, keeping the commits; then write them into a fresh catalog one
after the other, on one DuckDB thread as an import does, and publish the search index,
every statement timed.

    python -m benchmarks.commits HOME CATALOG [--top 25] [--memory-limit 1GiB]

Prints the producing side's wall and CPU seconds, the tokenizer's alone (every commit's
events tokenized, one after the other), then the loader's seconds, its statements by
total time and the publish step's. In an import the two sides share the two cores
(and slow each other by more than the GIL explains, see the README); apart, a change to
one side is measurable on a machine whose speed drifts by more from one import to the
next than the change itself.
Every commit of the home is held in memory at once: about a gigabyte for the benchmark's
million records.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentlake.extract.extract import ExtractLimits
from agentlake.ingest.budget import memory_budget
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.catalog import open_for_write
from agentlake.load.load import CatalogWriter, CommitResult, Piece, batch_events
from agentlake.load.publish import publish
from agentlake.load.terms import BatchTokenizer
from agentlake.transform.transform import CatalogRows

from .measure import remove_catalog
from .statements import home_and_catalog_parser, timed_statements

__all__ = ["Commit", "produce", "tokenize", "write"]


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit as the loader receives it."""

    pieces: list[Piece]
    data: list[CatalogRows]


@dataclass(slots=True)
class Produced:
    """The commits of a home and what making them took."""

    commits: list[Commit] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0


@contextmanager
def _kept_commits(produced: Produced) -> Iterator[None]:
    """While open, a catalog writer keeps each commit in ``produced`` instead of
    writing it."""
    commit = CatalogWriter.commit

    def keep(
        self: CatalogWriter,
        import_id: int,
        pieces: list[Piece],
        data: list[CatalogRows],
    ) -> dict[str, CommitResult]:
        produced.commits.append(Commit(pieces, data))
        return {p.state.source.source_id: CommitResult(0, 0, len(p.rejects)) for p in pieces}

    CatalogWriter.commit = keep  # type: ignore[method-assign]
    try:
        yield
    finally:
        CatalogWriter.commit = commit  # type: ignore[method-assign]


def produce(home: Path, scratch: Path, memory_limit: str) -> Produced:
    """Every commit a first import of ``home`` would make (``scratch``: the catalog the
    import plans against, left without rows)."""
    produced = Produced()
    remove_catalog(scratch)
    options = ImportOptions(catalog=scratch, workspace="default", home=home, env={},
                            memory_limit=memory_limit, build_index=False)  # fmt: skip
    with _kept_commits(produced):
        started, cpu = time.perf_counter(), time.process_time()
        run_import(options)
        produced.seconds = time.perf_counter() - started
        produced.cpu_seconds = time.process_time() - cpu
    return produced


def tokenize(commits: list[Commit], memory_limit: str) -> tuple[float, float]:
    """Tokenize the events of ``commits``, one commit after the other, with the
    publish step's tokenizer; returns the wall and CPU seconds."""
    duckdb_limit, _ = memory_budget(memory_limit, ExtractLimits())
    tokenizer = BatchTokenizer(duckdb_limit)
    try:
        started, cpu = time.perf_counter(), time.process_time()
        for commit in commits:
            if commit.data:
                tokenizer.terms(batch_events(commit.data))
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        tokenizer.close()


def write(commits: list[Commit], catalog: Path, memory_limit: str, top: int) -> None:
    """Write ``commits`` into a fresh ``catalog`` as an import's loader would, and print
    the seconds they and their statements took."""
    remove_catalog(catalog)
    duckdb_limit, _ = memory_budget(memory_limit, ExtractLimits())
    with timed_statements() as times, open_for_write(catalog, memory_limit=duckdb_limit) as con:
        writer = CatalogWriter(con, "default")
        import_id = writer.begin_import()
        writer.con.execute("SET threads = 1")
        writer.drop_bulk_indexes()
        started, cpu = time.perf_counter(), time.thread_time()
        for commit in commits:
            writer.commit(import_id, commit.pieces, commit.data)
        seconds, cpu_seconds = time.perf_counter() - started, time.thread_time() - cpu
        writer.con.execute("RESET threads")
        started = time.perf_counter()
        writer.ensure_bulk_indexes()
        publish(writer.con, "default")
        final = time.perf_counter() - started
    print(f"loader: {len(commits)} commits in {seconds:.1f} s ({cpu_seconds:.1f} s of CPU); "
          f"then the bulk indexes and the publish step {final:.1f} s")  # fmt: skip
    ranked = sorted(times.seconds.items(), key=lambda item: -item[1])
    for key, spent in ranked[:top]:
        print(f"{spent:8.2f} s {times.calls[key]:5d}  {key}")


def main() -> None:
    """Produce HOME's commits, then write them into a fresh CATALOG; print the times."""
    args = home_and_catalog_parser("benchmarks.commits").parse_args()
    scratch = args.catalog.with_name(args.catalog.name + ".plan")
    produced = produce(args.home, scratch, args.memory_limit)
    print(f"producing: {len(produced.commits)} commits in {produced.seconds:.1f} s "
          f"({produced.cpu_seconds:.1f} s of CPU, tokenizing included)")  # fmt: skip
    seconds, cpu = tokenize(produced.commits, args.memory_limit)
    print(f"tokenizing alone: {seconds:.1f} s ({cpu:.1f} s of CPU)")
    write(produced.commits, args.catalog, args.memory_limit, args.top)
    remove_catalog(scratch)


if __name__ == "__main__":
    main()
