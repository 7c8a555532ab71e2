"""What a run may spend: its memory ceiling split between DuckDB and the commits, the
cycle collector's pace while it runs, and the peak it reached."""

from __future__ import annotations

import contextlib
import gc
import resource
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agentlake.config import parse_size
from agentlake.errors import ConfigurationError

if TYPE_CHECKING:
    from agentlake.extract.extract import ExtractLimits

# The cycle collector's first-generation threshold while importing. An import allocates
# millions of short-lived, acyclic containers (parsed records, their rows), which
# CPython's default of 700 walks over and over (benchmarks/HISTORY.md has the figures).
GC_THRESHOLD = 100_000


def peak_rss_bytes() -> int:
    """Peak resident set size of this process: its ``VmHWM`` where ``/proc`` has it
    (``ru_maxrss`` takes in the RSS of the process that started this one, as it was
    at fork and exec), else the larger ``ru_maxrss`` of it and its waited-for
    children."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) * 1024


# The split of a whole-run memory ceiling (held by tests/pipeline/test_memory.py; the
# peaks it was sized by are in benchmarks/HISTORY.md): besides its buffer pool, DuckDB
# allocates outside its limit, and one commit's rows cost the Python side (raw lists,
# Arrow and polars copies, allocator slack) about _BYTES_PER_RECORD per record and a few
# copies of their source bytes. Two commits are in flight (one written, the next read).
# Commits cost the loader about as much per commit as per row, so they are as large as
# memory allows.
_DUCKDB_SHARE: Final = 1 / 5
# Below this DuckDB cannot checkpoint pages of multi-MiB strings and invalidates the
# database (a fatal error), so the floor wins over the share.
_DUCKDB_FLOOR: Final = 128 << 20
_BYTES_PER_RECORD: Final = 40 * 1024
_SOURCE_COPIES: Final = 40  # the rest divided by this = source bytes per commit
_MIN_BATCH: Final = 1_000


# The least ceiling an import can honour: the process with its libraries loaded holds
# about 175 MiB before reading a byte, and DuckDB needs its floor on top.
MIN_MEMORY_LIMIT: Final = 384 << 20


def check_memory_limit(limit: str | None) -> str | None:
    """Refuse a whole-run ceiling the import cannot honour (:class:`ConfigurationError`);
    return a warning when DuckDB's share of it has to be raised to its floor."""
    if limit is None:
        return None
    total = parse_size(limit)
    if total < MIN_MEMORY_LIMIT:
        raise ConfigurationError(
            f"--memory-limit {limit} is below the {MIN_MEMORY_LIMIT >> 20}MiB an import needs "
            f"(the process itself, and {_DUCKDB_FLOOR >> 20} MiB for DuckDB); give at least "
            f"{MIN_MEMORY_LIMIT >> 20}MiB"
        )
    if total * _DUCKDB_SHARE < _DUCKDB_FLOOR:
        return (
            f"--memory-limit {limit}: DuckDB gets its floor of {_DUCKDB_FLOOR >> 20} MiB, more "
            "than the usual fifth, so commits are smaller and the import slower; transcripts "
            f"with lines of several MiB may not fit under {_DUCKDB_FLOOR * 5 >> 20}MiB"
        )
    return None


def memory_budget(limit: str | None, limits: ExtractLimits) -> tuple[str | None, ExtractLimits]:
    """Split a whole-run memory ceiling into DuckDB's ``memory_limit`` (a fifth, at
    least 128 MiB) and the records and source bytes per commit, so that the Python side
    fits in the rest. ``None`` keeps DuckDB's default and ``limits`` as they are."""
    if limit is None:
        return None, limits
    total = parse_size(limit)
    duckdb_bytes = max(_DUCKDB_FLOOR, int(total * _DUCKDB_SHARE))
    rest = max(0, total - duckdb_bytes)
    return f"{duckdb_bytes // (1 << 20)}MiB", replace(
        limits,
        batch_lines=min(limits.batch_lines, max(_MIN_BATCH, rest // _BYTES_PER_RECORD)),
        batch_bytes=min(limits.batch_bytes, max(4 << 20, rest // _SOURCE_COPIES)),
    )


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the cycle collector's first threshold to :data:`GC_THRESHOLD` for the
    duration (the other generations' ratios stay), then restore it."""
    before = gc.get_threshold()
    gc.set_threshold(max(GC_THRESHOLD, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
