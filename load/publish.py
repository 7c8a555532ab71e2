"""The publish step: it brings the search index up to date after the load commits
(DESIGN §1).

Load commits write events and record the events they withdraw (``search_withdrawn``);
they never touch the index. :func:`publish` then brings the index of a workspace up to
its stored watermark's end: it drops the postings of withdrawn events (indexing again
those that still exist at or below the watermark) in one transaction with the removal
of their withdrawal rows, then indexes the events above the watermark slice by slice,
each slice in its own transaction with the watermark's move. A killed publish step
therefore resumes from the watermark, and the index never holds postings for events
that are gone once their withdrawal is applied (search leaves pending ones out).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, TypeVar

import duckdb

from agentlake import sql
from agentlake.load.lake import cursor, is_lake

from .catalog import load_fts, run_script
from .lease import committed
from .search_index import DuckDBSearchIndex, Prepared
from .vectors import EmbedResult, publish_vectors

if TYPE_CHECKING:
    import pyarrow as pa

# Text indexed per slice (and per transaction when publishing): its tokens and their
# aggregation fit DuckDB's share of a 1 GiB ceiling with room to spare.
SLICE_BYTES: Final = 16 << 20
COMPACT_MIN_TAIL: Final = 200_000  # postings; smaller tails are cheap to scan

# Told ("slice", n) once slice n is written and ("committed", n) once it is committed.
Progress = Callable[[Literal["slice", "committed"], int], None]
FaultHook = Callable[[Literal["index", "embed"]], None]  # tests: may raise in a transaction
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Lag:
    """How far a workspace's index lags: events above its watermark, and withdrawn
    events still in the catalog whose postings are not yet replaced."""

    unindexed: int
    withdrawn: int
    pending: int  # withdrawals not yet applied (of events gone or still there)

    @property
    def events(self) -> int:
        """Events that search does not find yet."""
        return self.unindexed + self.withdrawn


def lag(con: duckdb.DuckDBPyConnection, workspace: str) -> Lag:
    """The index's :class:`Lag` for ``workspace``."""
    params = {"workspace": workspace}
    mark = above(watermark(con, workspace))
    statement = sql.query("search_lag").replace("/* above */", mark)
    row = con.execute(sql.inline(statement, params)).fetchone()
    assert row is not None
    unindexed, pending = int(row[0]), int(row[1])
    withdrawn = 0
    if pending:
        statement = sql.query("search_lag_withdrawn").replace("/* above */", mark)
        found = con.execute(sql.inline(statement, params)).fetchone()
        withdrawn = int(found[0]) if found else 0
    return Lag(unindexed, withdrawn, pending)


@dataclass(frozen=True, slots=True)
class PublishResult:
    """What a publish step did: events indexed, withdrawals applied, slices committed,
    seconds taken (compaction and vectors included), whether it stopped before the end,
    and what its semantic part did."""

    indexed: int
    withdrawn: int
    slices: int
    seconds: float
    stopped: bool = False  # asked to stop: the slices after the watermark wait
    vectors: EmbedResult = field(default_factory=EmbedResult)

    def to_json(self, *, workspace: str | None = None) -> dict[str, Any]:
        """The step's counts and seconds; led by ``workspace`` when given, as
        ``agentlake index --json`` prints it (an import's receipt names it already)."""
        lead: dict[str, Any] = {} if workspace is None else {"workspace": workspace}
        return {
            **lead,
            "indexed": self.indexed,
            "withdrawn": self.withdrawn,
            "slices": self.slices,
            "seconds": round(self.seconds, 3),
            "vectors": self.vectors.to_json(),
        }


def publish(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    *,
    slice_bytes: int | None = None,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
    faults: FaultHook | None = None,
) -> PublishResult:
    """Bring ``workspace``'s index up to date: apply the pending withdrawals, then index
    every event above the watermark, a slice of about ``slice_bytes`` (by default
    :data:`SLICE_BYTES`) of text per transaction, and fold the postings' unsorted tail
    in when it has grown. ``progress(point, slice)`` is told ``"slice"`` once a slice
    is written and ``"committed"`` once it is committed; when ``stop()`` says so after
    a slice, it returns at once (``stopped``), the watermark where that slice left it;
    ``faults`` (tests) is called at ``"index"`` inside each transaction."""
    started = time.perf_counter()
    slice_bytes = slice_bytes or SLICE_BYTES
    fault = faults or (lambda point: None)
    tell = progress or (lambda point, number: None)
    index = _index(con, workspace)
    params = {"workspace": workspace}
    # The slices are read and tokenized one ahead of their writes, on a connection of
    # their own: DuckDB and polars release the GIL, so the two overlap on two cores.
    reader = cursor(con)
    prepared: Generator[Prepared, None, None] | None = None
    try:
        withdrawn = _apply_withdrawals(index, slice_bytes, fault)
        through = _newest_import(con)
        slices = _make_slices(reader, workspace, above(watermark(con, workspace)), slice_bytes)
        ends = reader.execute(_SLICE_ENDS).fetchall()
        prepared = one_ahead(
            lambda number: index.prepare(_slice_events(reader, workspace, number)), slices
        )
        indexed = 0
        for number in range(slices + 1):
            # Asked to stop: the watermark stays where the last slice left it, and the
            # compaction (amortized) waits for the next run too.
            if stop is not None and stop():
                return PublishResult(
                    indexed, withdrawn, number, time.perf_counter() - started, stopped=True
                )
            if number == slices:
                break
            write = partial(_write_slice, index, next(prepared), ends[number], fault, tell, number)
            indexed += committed(con, write)
            tell("committed", number)
        committed(con, lambda: run_script(con, _COMPLETE_THROUGH, {**params, "through": through}))
    finally:
        if prepared is not None:
            prepared.close()  # waits for the slice in the reader's hands
        reader.close()
        index.close()
    compact(con, faults=faults)
    vectors = publish_vectors(con, workspace, stop=stop, faults=faults)
    return PublishResult(
        indexed, withdrawn, slices, time.perf_counter() - started, vectors.stopped, vectors
    )


def _write_slice(
    index: DuckDBSearchIndex,
    prepared: Prepared,
    end: tuple[Any, ...],
    fault: FaultHook,
    tell: Progress,
    number: int,
) -> int:
    """Index slice ``number`` (prepared) and move the watermark past it, in the caller's
    transaction; returns the events indexed."""
    index.rolled_back()  # an attempt that conflicted left nothing staged
    added = index.add_prepared(prepared)
    index.unstage()
    _move_watermark(index.con, index.workspace, end)
    fault("index")
    tell("slice", number)
    return added


def rebuild(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    *,
    slice_bytes: int | None = None,
    faults: FaultHook | None = None,
) -> PublishResult:
    """Index every event of ``workspace`` again from scratch (repairs an index that lost
    or kept rows it should not have), in one transaction, a slice of text at a time in
    the order :func:`publish` indexes them; the watermark ends at the newest event and
    no withdrawal is left pending."""
    started = time.perf_counter()
    slice_bytes = slice_bytes or SLICE_BYTES
    fault = faults or (lambda point: None)
    index = _index(con, workspace)
    params = {"workspace": workspace}

    def body() -> tuple[int, int]:
        index.rolled_back()
        index.clear()
        con.execute("DELETE FROM search_withdrawn WHERE workspace = $workspace", params)
        con.execute("DELETE FROM search_watermark WHERE workspace = $workspace", params)
        through = _newest_import(con)
        slices = _make_slices(con, workspace, "true", slice_bytes)
        indexed = 0
        for number in range(slices):
            indexed += index.add(_slice_events(con, workspace, number))
        ends = con.execute(_SLICE_ENDS).fetchall()
        if ends:
            _move_watermark(con, workspace, ends[-1])
        run_script(con, _COMPLETE_THROUGH, {**params, "through": through})
        index.unstage()
        con.execute("DROP TABLE IF EXISTS publish_slices")
        fault("index")
        return indexed, slices

    try:
        indexed, slices = committed(con, body)
    finally:
        index.close()
    # The deleted postings' versions stay in memory until a checkpoint: sorting the new
    # ones beside a million events' worth of them ran out of the ceiling. (A lake's
    # checkpoint is its maintenance, which `agentlake lake compact` runs.)
    if not is_lake(con):
        con.execute("CHECKPOINT")
    compact(con, min_tail=0, faults=faults)
    vectors = publish_vectors(con, workspace, faults=faults)
    return PublishResult(indexed, 0, slices, time.perf_counter() - started, vectors=vectors)


def compact(
    con: duckdb.DuckDBPyConnection,
    *,
    min_tail: int = COMPACT_MIN_TAIL,
    faults: FaultHook | None = None,
) -> float | None:
    """Fold the unsorted tail of the search postings into their sorted part when it has
    grown past a quarter of them (and ``min_tail``): amortized O(1) per posting.
    Returns the seconds taken, or ``None`` when nothing needed doing."""
    row = con.execute("SELECT sum(postings), sum(sorted_postings) FROM search_state").fetchone()
    postings, done = (int(row[0] or 0), int(row[1] or 0)) if row else (0, 0)
    tail = postings - done
    if tail <= 0 or tail < min_tail or (min_tail and tail * 4 < postings):
        return None
    started = time.perf_counter()

    def body() -> None:
        run_script(con, sql.query("search_index_compact"), {})
        if faults is not None:
            faults("index")

    committed(con, body)
    return time.perf_counter() - started


def _index(con: duckdb.DuckDBPyConnection, workspace: str) -> DuckDBSearchIndex:
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    # Stemming is known up front: the publish step tokenizes in a thread that must not
    # use the writer's connection.
    limit = str(row[0]) if row else None
    return DuckDBSearchIndex(con, workspace, memory_limit=limit, stemming=load_fts(con))


def _newest_import(con: duckdb.DuckDBPyConnection) -> int:
    """The newest import's id (-1: none): every event of it and of the imports before
    is in the slices made now (the writer's lock keeps any other import out until the
    publish step ends)."""
    return _count(con, "SELECT coalesce(max(import_id), -1) FROM imports")


def _move_watermark(con: duckdb.DuckDBPyConnection, workspace: str, end: tuple[Any, ...]) -> None:
    """Move the watermark to a slice's ``end`` (a row of :data:`_SLICE_ENDS`)."""
    params = {"workspace": workspace, "import_id": end[1], "event_id": end[2]}
    run_script(con, _SET_WATERMARK, params)


def _count(con: duckdb.DuckDBPyConnection, query: str) -> int:
    row = con.execute(query).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _apply_withdrawals(index: DuckDBSearchIndex, slice_bytes: int, fault: FaultHook) -> int:
    """Drop the postings of the workspace's withdrawn events and index again those still
    in the catalog at or below the watermark (a rewritten text), then forget the
    withdrawals: one transaction. Returns how many events were withdrawn."""
    con, params = index.con, {"workspace": index.workspace}
    gone = [
        str(event_id)
        for (event_id,) in con.execute(
            "SELECT DISTINCT event_id FROM search_withdrawn WHERE workspace = $workspace", params
        ).fetchall()
    ]
    if not gone:
        return 0

    def body() -> None:
        index.rolled_back()
        index.remove(gone)
        # gone_events (made by remove) names them; those above the watermark are
        # indexed with the other events above it.
        mark = above(watermark(con, index.workspace))
        again = f"e.event_id IN (SELECT event_id FROM gone_events) AND NOT {mark}"
        for number in range(_make_slices(con, index.workspace, again, slice_bytes)):
            index.add(_slice_events(con, index.workspace, number))
        index.unstage()
        con.execute("DROP TABLE publish_slices")
        con.execute("DELETE FROM search_withdrawn WHERE workspace = $workspace", params)
        fault("index")

    committed(con, body)
    return len(gone)


class Watermark(NamedTuple):
    """Where a workspace's index ends: the last event indexed, in (import_id, event_id)
    order, and the import through which every event is at or below it (-1: none)."""

    import_id: int
    event_id: str
    through_import: int = -1


def watermark(con: duckdb.DuckDBPyConnection, workspace: str) -> Watermark:
    """The workspace's :class:`Watermark`: (-1, '', -1) before any event was indexed."""
    row = con.execute(
        "SELECT import_id, event_id, coalesce(through_import, -1) FROM search_watermark "
        "WHERE workspace = $workspace",
        {"workspace": workspace},
    ).fetchone()
    return Watermark(int(row[0]), str(row[1]), int(row[2])) if row else Watermark(-1, "")


def above(mark: Watermark) -> str:
    """SQL over an event ``e`` that holds when it is above the watermark ``mark``, with
    the watermark as constants: the import-id comparisons prune the scan by the events'
    import ids (the events of the imports before, or through the complete one, are
    never read)."""
    import_id, event_id = sql.constant(mark.import_id), sql.constant(mark.event_id)
    through = sql.constant(mark.through_import)
    return (
        f"(e.import_id > {through} AND e.import_id >= {import_id} "
        f"AND (e.import_id > {import_id} OR e.event_id > {event_id}))"
    )


# The events `/* selection */` keeps, in (import_id, event_id) order, numbered by slice
# of about $slice bytes of indexed text. A slice's end is where the watermark moves.
_SLICES: Final = """
CREATE OR REPLACE TEMP TABLE publish_slices AS
WITH sized AS (
    SELECT e.import_id, e.event_id,
           least(strlen(coalesce(e.text, '')) + strlen(coalesce(CAST(e.tool_input AS VARCHAR), '')), $cap)
               AS bytes
    FROM events e
    WHERE e.workspace = $workspace AND /* selection */
)
SELECT import_id, event_id,
       (sum(bytes) OVER (ORDER BY import_id, event_id) - bytes) // $slice AS slice
FROM sized
"""

# Where each slice of publish_slices ends, in slice order: the watermark after it.
_SLICE_ENDS: Final = """
SELECT DISTINCT ON (slice) slice, import_id, event_id FROM publish_slices
ORDER BY slice, import_id DESC, event_id DESC
"""

_SET_WATERMARK: Final = """
INSERT INTO search_watermark (workspace, import_id, event_id)
VALUES ($workspace, $import_id, $event_id)
ON CONFLICT (workspace) DO UPDATE SET import_id = excluded.import_id, event_id = excluded.event_id
"""

# A publish step that reached the end: the index is complete through $through.
_COMPLETE_THROUGH: Final = """
INSERT INTO search_watermark (workspace, import_id, event_id, through_import)
VALUES ($workspace, -1, '', $through)
ON CONFLICT (workspace) DO UPDATE SET through_import = excluded.through_import
"""


def one_ahead(work: Callable[[int], T], count: int) -> Generator[T, None, None]:
    """``work(0) … work(count - 1)`` in order, each computed in a thread while the
    caller uses the one before; an error in ``work`` is raised where its result is
    taken. Closing the iterator early waits for the call in progress."""
    with ThreadPoolExecutor(1, thread_name_prefix="agentlake-publish") as pool:
        ahead = pool.submit(work, 0) if count else None
        for number in range(count):
            assert ahead is not None
            done = ahead.result()
            ahead = pool.submit(work, number + 1) if number + 1 < count else None
            yield done


def _make_slices(
    con: duckdb.DuckDBPyConnection, workspace: str, selection: str, slice_bytes: int
) -> int:
    """Make ``publish_slices`` of the events ``selection`` (SQL over ``e``, an event)
    holds; returns how many slices there are."""
    params = {"workspace": workspace, "cap": sql.INDEXED_CHARS, "slice": slice_bytes}
    con.execute(sql.inline(_SLICES.replace("/* selection */", selection), params))
    return _count(con, "SELECT coalesce(max(slice) + 1, 0) FROM publish_slices")


def _slice_events(con: duckdb.DuckDBPyConnection, workspace: str, number: int) -> pa.Table:
    """The events of slice ``number`` of ``publish_slices`` (event_id, text,
    tool_input as JSON text, each cut where the index stops reading); their order does
    not matter (the index numbers events by id), so their text is never sorted."""
    # Only the characters the index reads: a slice of 16 MiB of indexed text could
    # otherwise hold 64 tool outputs of 4 MiB each.
    cap = sql.INDEXED_CHARS
    return con.execute(
        f"SELECT e.event_id, left(e.text, {cap}) AS text, "
        f"left(CAST(e.tool_input AS VARCHAR), {cap}) AS tool_input FROM events e "
        f"SEMI JOIN (SELECT event_id FROM publish_slices WHERE slice = {number}) s "
        f"USING (event_id) WHERE e.workspace = {sql.constant(workspace)}"
    ).to_arrow_table()
