# Over 500 lines: the import loop, its loader thread and the states they commit change together.
"""The import orchestration: plan, then extract → transform → load per source.

Stages are connected by iterators. Consecutive batches are grouped into commits, each
written with its sources' checkpoints in one transaction; a refused source is recorded
and the run goes on. The calling thread reads and transforms one commit while a loader
thread writes the one before (DuckDB releases the GIL), so two commits are in flight at
most. After the last commit the publish step (agentlake.load.search_index) brings the
search index up to date, unless told not to. The library returns an
:class:`ImportResult`; it never prints or exits.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import pyarrow as pa

from agentlake.config import parse_size
from agentlake.errors import ConfigurationError, ImportStopped, SourceError, SourceErrorCode
from agentlake.extract.extract import ExtractBatch, ExtractLimits, extract_source
from agentlake.extract.jsonl import Reject
from agentlake.extract.providers import ProviderSpec, by_id
from agentlake.extract.rows import RowSink, build_tagged
from agentlake.extract.sources import SourceFile
from agentlake.ingest.plan import Plan, PlannedSource, continuity_of, make_plan, select_providers
from agentlake.ingest.progress import NullReporter, Reporter
from agentlake.load.catalog import open_for_read, open_for_write
from agentlake.load.checkpoint import (
    Continuity,
    SourceStatus,
    document_digest,
    load_checkpoints,
    window_digest,
)
from agentlake.load.load import (
    CatalogWriter,
    CommitResult,
    FaultHook,
    Piece,
    SourceState,
)
from agentlake.load.refusals import Refusal, record_refusals
from agentlake.transform.redact import POLICY_VERSION

if TYPE_CHECKING:
    from agentlake.load.search_index import Progress, PublishResult

# From this many bytes to read, the largest indexes are dropped during the run and built
# again at its end (CatalogWriter.drop_bulk_indexes says why).
BULK_MIN_BYTES = 256 * 1024 * 1024
# The cycle collector's first-generation threshold while importing. An import allocates
# millions of short-lived, acyclic containers (parsed records, their rows), which
# CPython's default of 700 walks over and over (benchmarks/HISTORY.md has the figures).
GC_THRESHOLD = 100_000
REJECT_SAMPLES = 20  # rejects per source reported back line by line (all are in `rejects`)


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """Everything an import run needs to know."""

    catalog: Path
    workspace: str
    home: Path
    env: Mapping[str, str]
    providers: Sequence[str] = ()
    restart_drifted: bool = False
    # The whole run's memory ceiling (None: DuckDB's default and full-size batches): DuckDB
    # gets a fifth of it (see memory_budget), and commits shrink so the Python side's rows
    # fit in the rest.
    memory_limit: str | None = "1GiB"
    wait: bool = False
    limits: ExtractLimits = field(default_factory=ExtractLimits)
    # Run the publish step (the search index) after the commits; False: --no-index.
    build_index: bool = True
    reindex: bool = False  # rebuild the search index of the workspace from its events
    # Set (e.g. by a SIGINT/SIGTERM handler) to stop at the next batch boundary.
    stop: threading.Event | None = None
    # Whole-run time budget in seconds: past it, the run ends at the next batch boundary
    # as "partial" (not an error); what it did not read is pending for the next run.
    max_duration: float | None = None
    faults: FaultHook | None = None  # tests: fail at named points of the load stage
    # Write each commit in a loader thread while the next one is read and transformed
    # (False: one after the other, as when timing single statements).
    overlap_load: bool = True


#: What a run did with a source: read it (``imported``; ``empty`` when a new source held
#: nothing), found it ``unchanged``, left it out for a preferred copy (``superseded``),
#: ``refused`` it, or left its bytes ``pending`` for a later run.
SourceOutcomeStatus = Literal["imported", "unchanged", "superseded", "refused", "empty", "pending"]


@dataclass(slots=True)
class SourceOutcome:
    """What happened to one source in a run."""

    planned: PlannedSource
    status: SourceOutcomeStatus
    records: int = 0
    events: int = 0
    usage: int = 0
    rejected: int = 0
    bytes: int = 0
    committed_bytes: int = 0  # of ``bytes``, those whose transaction committed
    pending_bytes: int = 0
    message: str | None = None
    code: SourceErrorCode | None = None  # the refusal code when refused
    # Refused for the first time, or for another reason than last reported (a refusal
    # that stays as it was is "still refused" and does not fail the run again).
    new_refusal: bool = False
    reject_samples: list[Reject] = field(default_factory=list)

    def reject_lines(self) -> list[str]:
        """One line per sampled reject: file, offset, reason and remedy."""
        return [
            f"{self.planned.path}:{r.offset}: {r.reason}: {r.detail} ({r.length} bytes skipped; "
            "the rest of the file was imported)"
            for r in self.reject_samples
        ]


@dataclass(slots=True)
class ImportResult:
    """The receipt of one run, as returned to the caller."""

    import_id: int
    plan: Plan
    sources: list[SourceOutcome] = field(default_factory=list)
    seconds: float = 0.0
    index_seconds: float | None = None
    index: PublishResult | None = None  # the publish step, when it ran
    # Seconds reading waited for the loader: near the whole run, the catalog's writes
    # bound the import; near zero, reading and transforming do.
    load_wait_seconds: float = 0.0
    peak_rss_bytes: int = 0

    budget_spent: bool = False  # the run stopped early at its --max-duration
    warnings: list[str] = field(default_factory=list)  # about the options, for the user

    @property
    def status(self) -> Literal["ok", "partial", "refused"]:
        """The receipt's status: ``partial`` (time budget spent), ``refused`` (some
        sources refused) or ``ok``."""
        if self.budget_spent:
            return "partial"
        return "refused" if self.refused else "ok"

    @property
    def refused(self) -> list[SourceOutcome]:
        """Sources refused in this run."""
        return [s for s in self.sources if s.status == "refused"]

    @property
    def newly_refused(self) -> list[SourceOutcome]:
        """Sources this run is the first to refuse (or refuses for another reason)."""
        return [s for s in self.refused if s.new_refusal]

    @property
    def still_refused(self) -> list[SourceOutcome]:
        """Sources refused as an earlier run reported them, unchanged since."""
        return [s for s in self.refused if not s.new_refusal]

    @property
    def exit_code(self) -> int:
        """1 when the run met a new refusal, else 0 (sources still refused as already
        reported do not fail every nightly run again)."""
        return 1 if self.newly_refused else 0

    def totals(self) -> dict[str, int]:
        """Receipt counters (the columns of ``imports``)."""
        by_status = Counter(s.status for s in self.sources)
        return {
            "sources_seen": len(self.sources),
            "sources_imported": by_status["imported"] + by_status["empty"],
            "sources_unchanged": by_status["unchanged"],
            "sources_failed": by_status["refused"],
            "sources_opened": sum(1 for s in self.sources if s.planned.action == "read"),
            "records": sum(s.records for s in self.sources),
            "events": sum(s.events for s in self.sources),
            "usage_rows": sum(s.usage for s in self.sources),
            "rejected": sum(s.rejected for s in self.sources),
            "bytes": sum(s.bytes for s in self.sources),
            "pending_bytes": sum(s.pending_bytes for s in self.sources),
        }

    def to_json(self) -> dict[str, Any]:
        """The receipt as ``agentlake import --json`` prints it."""
        return {
            "import_id": self.import_id,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "index_seconds": self.index_seconds,
            "index": None if self.index is None else self.index.to_json(),
            "peak_rss_bytes": self.peak_rss_bytes,
            "totals": self.totals(),
            "sources": [
                {
                    "provider": s.planned.provider,
                    "path": str(s.planned.path),
                    "continuity": s.planned.continuity,
                    "status": s.status,
                    "records": s.records,
                    "events": s.events,
                    "usage": s.usage,
                    "rejected": s.rejected,
                    "bytes": s.bytes,
                    "pending_bytes": s.pending_bytes,
                    "message": s.message,
                }
                for s in self.sources
            ],
        }


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


def plan_import(options: ImportOptions) -> Plan:
    """The plan an import would execute, without writing anything."""
    specs = select_providers(options.providers)
    checkpoints = {}
    if options.catalog.is_file():
        with open_for_read(options.catalog, wait=options.wait) as con:
            checkpoints = load_checkpoints(con, options.workspace)
    return make_plan(
        checkpoints,
        workspace=options.workspace,
        home=options.home,
        env=options.env,
        providers=specs,
        restart_refused=options.restart_drifted,
    )


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


def run_import(options: ImportOptions, reporter: Reporter | None = None) -> ImportResult:
    """Plan and execute an import; returns its receipt."""
    with fewer_collections():
        return _run_import(options, reporter)


def _run_import(options: ImportOptions, reporter: Reporter | None) -> ImportResult:
    reporter = reporter or NullReporter()
    started = time.perf_counter()
    specs = select_providers(options.providers)
    memory_warning = check_memory_limit(options.memory_limit)
    duckdb_limit, limits = memory_budget(options.memory_limit, options.limits)
    with open_for_write(options.catalog, wait=options.wait, memory_limit=duckdb_limit) as con:
        writer = CatalogWriter(con, options.workspace, faults=options.faults)
        plan = make_plan(
            load_checkpoints(con, options.workspace),
            workspace=options.workspace,
            home=options.home,
            env=options.env,
            providers=specs,
            restart_refused=options.restart_drifted,
        )
        reporter.planned(plan)
        import_id = writer.begin_import()
        # Overlapped commits run on one DuckDB thread: the import's own threads (reading,
        # loading) keep both cores busy, and a second DuckDB worker for the commits' many
        # small statements only contends with them. The publish step gets every core.
        if options.overlap_load:
            con.execute("SET threads = 1")
        if plan.bytes_to_read >= BULK_MIN_BYTES:
            writer.drop_bulk_indexes()
        result = ImportResult(import_id, plan, warnings=[memory_warning] if memory_warning else [])
        deadline = None if options.max_duration is None else started + options.max_duration
        committer = _Committer(
            writer, import_id, reporter, limits.batch_lines, options.stop, deadline,
            max_bytes=limits.batch_bytes, overlap=options.overlap_load,
        )  # fmt: skip
        try:
            for index, planned in enumerate(plan.sources):
                batches: Iterator[ExtractBatch] = (
                    _extract(planned, limits) if planned.action == "read" else iter(())
                )
                try:
                    committer.check_stop()
                    result.sources.append(_run_source(committer, planned, batches))
                except BudgetSpent as spent:
                    result.budget_spent = True
                    if spent.outcome is not None:
                        result.sources.append(spent.outcome)
                    result.sources.extend(_left_pending(plan.sources[index + 1 :]))
                    if spent.outcome is None:
                        result.sources.extend(_left_pending([planned]))
                    break
            committer.flush()
            con.execute("RESET threads")
            if options.reindex or options.build_index:
                from agentlake.load.search_index import publish, rebuild

                reporter.phase("index")
                faults = options.faults
                stop = options.stop
                result.index = (
                    rebuild(writer.con, options.workspace, faults=faults)
                    if options.reindex
                    else publish(
                        writer.con,
                        options.workspace,
                        faults=faults,
                        stop=None if stop is None else stop.is_set,
                    )
                )
                result.index_seconds = result.index.seconds
                if result.index.stopped:
                    raise ImportStopped(
                        "import stopped on request while indexing for search; everything "
                        "read is committed; run 'agentlake index' or the import again to "
                        "finish the index"
                    )
            # After the publish step: it fills search_docs, whose index a bulk import
            # builds once at its end.
            writer.ensure_bulk_indexes()
        except BaseException as exc:
            # Committed batches stay; the receipt says the run did not finish and why.
            committer.close()
            if isinstance(exc, ImportStopped) and exc.outcome is not None:
                result.sources.append(exc.outcome)
            stopped = isinstance(exc, (KeyboardInterrupt, ImportStopped))
            if stopped:
                # A stopped run ends within seconds of the request (agentlake.ingest.signals):
                # the next open replays the write-ahead log instead of this close.
                con.execute("PRAGMA disable_checkpoint_on_shutdown")
            if isinstance(exc, ImportStopped):
                writer.ensure_bulk_indexes()
            failure = {
                "error": f"{type(exc).__name__}: {exc}"[:500],
                "committed": [
                    {"path": str(o.planned.path), "bytes": o.committed_bytes}
                    for o in committer.outcomes.values()
                    if o.committed_bytes
                ],
            }
            writer.finish_import(
                import_id, "interrupted" if stopped else "failed", result.totals(), failure
            )
            raise
        finally:
            committer.close()
        fresh = record_refusals(
            con, options.workspace, import_id, [_refusal(s) for s in result.refused],
            providers=[spec.id for spec in specs], complete=not result.budget_spent,
        )  # fmt: skip
        for s in result.refused:
            s.new_refusal = s.planned.source_id in fresh
        result.seconds = time.perf_counter() - started
        result.load_wait_seconds = committer.waited
        result.peak_rss_bytes = peak_rss_bytes()
        detail: dict[str, Any] = {
            "continuity": dict(Counter(s.planned.continuity for s in result.sources)),
            "refused": [
                {
                    "path": str(s.planned.path),
                    "code": s.code,
                    "message": s.message,
                    "new": s.new_refusal,
                }
                for s in result.refused
            ],
            "index_seconds": result.index_seconds,
            "load_wait_seconds": round(result.load_wait_seconds, 3),
        }
        writer.finish_import(
            import_id,
            result.status,
            {**result.totals(), "peak_rss_bytes": result.peak_rss_bytes},
            detail,
        )
    return result


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """What the publish step run alone (``agentlake index``) needs to know."""

    catalog: Path
    workspace: str
    memory_limit: str | None = "1GiB"  # the run's ceiling, split as an import's is
    wait: bool = False
    slice_bytes: int | None = None  # text indexed per transaction (None: the default)
    progress: Progress | None = None  # told of each slice written and committed
    faults: FaultHook | None = None  # tests: fail at named points


def run_index(options: IndexOptions) -> PublishResult:
    """Bring the workspace's search index up to date, under the writer lock (as an
    import takes it), without reading any source."""
    from agentlake.errors import NotFoundError
    from agentlake.load.search_index import publish

    if not options.catalog.is_file():
        raise NotFoundError(
            f"{options.catalog}: no catalog here; run 'agentlake import' first or pass --catalog"
        )
    check_memory_limit(options.memory_limit)
    duckdb_limit, _ = memory_budget(options.memory_limit, ExtractLimits())
    with open_for_write(options.catalog, wait=options.wait, memory_limit=duckdb_limit) as con:
        published = publish(
            con, options.workspace, slice_bytes=options.slice_bytes,
            progress=options.progress, faults=options.faults,
        )  # fmt: skip
        CatalogWriter(con, options.workspace).ensure_bulk_indexes()
    return published


def _refusal(outcome: SourceOutcome) -> Refusal:
    planned = outcome.planned
    assert outcome.code is not None, "every refusal has its code"
    return Refusal(
        planned.source_id, planned.provider, str(planned.path), outcome.code, outcome.message
    )


def _state(
    planned: PlannedSource,
    spec: ProviderSpec,
    offset: int,
    digest: str | None,
    *,
    status: SourceStatus = "ok",
    refusal: str | None = None,
    continuity: Continuity | None = None,
    adapter_state: str | None = None,
) -> SourceState:
    assert planned.source is not None
    return SourceState(
        source=planned.source,
        committed_offset=offset,
        prefix_digest=digest,
        generation=planned.generation,
        adapter_version=spec.adapter_version,
        policy_version=POLICY_VERSION,
        continuity=continuity or planned.continuity,
        status=status,
        refusal=refusal,
        adapter_state=adapter_state,
    )


_Queued = tuple[Piece, SourceOutcome, int]  # a piece in a commit, its outcome, its bytes


class _Committer:
    """Groups consecutive pieces (small sources together, large ones batch by batch)
    into commits of about ``max_records`` records. Each commit transforms its raw rows
    in one pass per provider and writes them in one transaction."""

    def __init__(
        self,
        writer: CatalogWriter,
        import_id: int,
        reporter: Reporter,
        max_records: int,
        stop: threading.Event | None = None,
        deadline: float | None = None,
        *,
        max_bytes: int | None = None,
        overlap: bool = True,
    ) -> None:
        self.writer, self.import_id, self.reporter = writer, import_id, reporter
        self.max_records, self.stop, self.deadline = max_records, stop, deadline
        self.max_bytes = max_bytes
        self.bytes = 0
        self.pending: list[tuple[Piece, RowSink | None, SourceOutcome, int]] = []
        self.records = 0
        self.progressed = False  # some bytes were read in this run
        self.outcomes: dict[str, SourceOutcome] = {}  # every source a piece was queued for
        # (provider, raw events) the next commit may continue: a message streamed as
        # several records can be cut between two commits.
        self.context: tuple[str, pa.Table] | None = None
        # The commit the loader thread is writing, with what to credit once it is done.
        self.loader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentlake-load")
        self.inflight: tuple[Future[dict[str, CommitResult]], list[_Queued]] | None = None
        self.overlap = overlap  # False: wait for each commit before reading on
        self.waited = 0.0  # seconds this thread waited for the loader

    def add(self, piece: Piece, raw: RowSink | None, outcome: SourceOutcome, nbytes: int) -> None:
        """Queue ``piece`` with its raw rows (covering ``nbytes`` of its source). A piece
        that withdraws rows of sessions the queued pieces touch starts a new commit: a
        commit withdraws from what the catalog holds before it inserts, so those pieces
        are committed first. Otherwise it joins them (a withdrawal names its sessions,
        so it cannot reach their rows), and the pieces after it may share its commit
        too (their rows are inserted after the withdrawal, as they would be in a commit
        of their own)."""
        if raw is not None and raw.retracts and self._touched(raw):
            self.submit()
        self.pending.append((piece, raw, outcome, nbytes))
        self.outcomes[piece.state.source.source_id] = outcome
        self.records += piece.records
        self.bytes += nbytes
        self.progressed = self.progressed or nbytes > 0
        full = self.records >= self.max_records or (
            self.max_bytes is not None and self.bytes >= self.max_bytes
        )
        if full:
            self.submit()

    def _touched(self, raw: RowSink) -> bool:
        """Whether a queued piece has rows (events, calls, session fields or withdrawals)
        of a session that ``raw`` withdraws from. On the benchmark home a third of all
        commits started at a Gemini rewind before this was asked."""
        sessions = raw.sessions_withdrawn_from()
        return any(
            not sessions.isdisjoint(queued.sessions_touched())
            for _, queued, _, _ in self.pending
            if queued is not None
        )

    def should_stop(self) -> bool:
        """Whether a stop was requested or the time budget is spent (a budget only counts
        once the run has read something, so every run makes progress)."""
        return (self.stop is not None and self.stop.is_set()) or (
            self.deadline is not None and self.progressed and time.perf_counter() >= self.deadline
        )

    def check_stop(self, outcome: SourceOutcome | None = None) -> None:
        """At a batch boundary: when a stop was requested (or the time budget is spent),
        commit what is queued and raise :class:`ImportStopped` (:class:`BudgetSpent`),
        carrying the source in progress, if any."""
        if not self.should_stop():
            return
        self.flush()
        if self.stop is None or not self.stop.is_set():
            raise BudgetSpent(outcome)
        raise ImportStopped(
            "import stopped at a batch boundary on request; everything read so far is "
            "committed; run the import again to resume",
            outcome,
        )

    def flush(self) -> None:
        """Transform and commit everything queued, and wait until it is committed."""
        self.submit()
        self.drain()

    def submit(self) -> None:
        """Transform everything queued and hand it to the loader thread, once the commit
        before it is done: while DuckDB writes one commit (it releases the GIL), this
        thread reads and transforms the next, so extraction and loading share the two
        cores. Commits stay in order, one at a time."""
        if not self.pending:
            return
        # polars loads with the first commit that carries rows: a run with nothing new
        # to read never pays for it.
        from agentlake.transform.transform import stream_context, transform_batch

        by_provider: dict[str, list[tuple[RowSink, str]]] = {}
        for piece, raw, _, _ in self.pending:
            if raw is not None:
                src = piece.state.source
                by_provider.setdefault(src.provider, []).append((raw, src.source_id))
        context = self.context
        data = [
            transform_batch(
                build_tagged(parts),
                provider=provider,
                context=context[1] if context and context[0] == provider else None,
            )
            for provider, parts in by_provider.items()
        ]
        last, last_raw, _, _ = self.pending[-1]
        self.context = None
        if last_raw is not None:
            src = last.state.source
            self.context = (src.provider, stream_context(last_raw.last_event(), src.source_id))
        queued = [(piece, outcome, nbytes) for piece, _, outcome, nbytes in self.pending]
        self.pending.clear()
        self.records = 0
        self.bytes = 0
        self.drain()
        pieces = [piece for piece, _, _ in queued]
        self.inflight = (
            self.loader.submit(self.writer.commit, self.import_id, pieces, data),
            queued,
        )
        if not self.overlap:
            self.drain()

    def drain(self) -> None:
        """Wait for the commit in flight, if any, and credit its sources; raises what
        the commit raised."""
        if self.inflight is None:
            return
        future, queued = self.inflight
        self.inflight = None
        waiting = time.perf_counter()
        results = future.result()
        self.waited += time.perf_counter() - waiting
        credited: set[str] = set()
        for piece, outcome, nbytes in queued:
            sid = piece.state.source.source_id
            if sid not in credited:
                credited.add(sid)
                got = results[sid]
                outcome.events += got.new_events
                outcome.usage += got.new_usage
                outcome.rejected += got.rejects
            outcome.committed_bytes += nbytes
            if nbytes:
                self.reporter.advanced(outcome.planned, nbytes)

    def close(self) -> None:
        """Wait for the commit in flight (its error, if any, is not raised: the run is
        already failing) and stop the loader thread."""
        with contextlib.suppress(Exception):  # the run's own error is the one reported
            self.drain()
        self.loader.shutdown()


class BudgetSpent(Exception):
    """The run's time budget is spent (internal: the run ends as ``partial``)."""

    def __init__(self, outcome: SourceOutcome | None) -> None:
        super().__init__("time budget spent")
        self.outcome = outcome


def _left_pending(sources: Sequence[PlannedSource]) -> list[SourceOutcome]:
    """Outcomes of the sources a run left unread: their planned bytes are pending."""
    return [
        SourceOutcome(p, "pending", pending_bytes=p.stop - p.start)
        for p in sources
        if p.action == "read"
    ]


def _extract(planned: PlannedSource, limits: ExtractLimits) -> Iterator[ExtractBatch]:
    """The batches the plan asked of ``planned``, resuming from its checkpoint's adapter
    state."""
    assert planned.source is not None
    resumed = planned.resumes
    state = planned.checkpoint.adapter_state if resumed and planned.checkpoint else None
    return extract_source(
        by_id(planned.provider), planned.source, start=planned.start, stop=planned.stop,
        limits=limits, state=state,
    )  # fmt: skip


def _run_source(
    committer: _Committer, planned: PlannedSource, batches: Iterator[ExtractBatch]
) -> SourceOutcome:
    if planned.action == "skip":
        outcome = SourceOutcome(
            planned, "superseded" if planned.continuity == "superseded" else "unchanged"
        )
        if planned.touched and planned.checkpoint is not None:
            state = _state(
                planned,
                by_id(planned.provider),
                planned.checkpoint.committed_offset,
                planned.checkpoint.prefix_digest,
            )
            committer.add(Piece(state, [], 0), None, outcome, 0)
        return outcome
    if planned.action == "refuse":
        outcome = SourceOutcome(planned, "refused", message=planned.message, code=planned.code)
        if planned.source is not None and planned.checkpoint is not None:
            cp = planned.checkpoint
            # Keep the committed data and offset; remember why it is refused.
            state = _refused_state(
                planned,
                by_id(planned.provider),
                cp.committed_offset,
                cp.prefix_digest,
                planned.message,
            )
            committer.add(Piece(state, [], 0), None, outcome, 0)
        return outcome
    spec = by_id(planned.provider)
    source = planned.source
    assert source is not None
    outcome = SourceOutcome(planned, "imported")
    offset = planned.start
    resumed = planned.resumes
    digest = planned.checkpoint.prefix_digest if resumed and planned.checkpoint else None
    adapter_state = planned.checkpoint.adapter_state if resumed and planned.checkpoint else None
    restart = planned.restart
    try:
        for batch in batches:
            digest = _digest(source, batch.end_offset)
            adapter_state = batch.state
            piece = Piece(
                _state(planned, spec, batch.end_offset, digest, adapter_state=adapter_state),
                batch.rejects,
                batch.records,
                restart,
            )
            restart = False
            outcome.records += batch.records
            outcome.bytes += batch.end_offset - offset
            room = REJECT_SAMPLES - len(outcome.reject_samples)
            if room > 0:
                outcome.reject_samples.extend(batch.rejects[:room])
            committer.add(piece, batch.rows, outcome, batch.end_offset - offset)
            offset = batch.end_offset
            if committer.should_stop():
                outcome.pending_bytes = planned.stop - offset
                committer.check_stop(outcome)
    except SourceError as exc:
        state = _refused_state(
            planned, spec, offset, digest, exc.detail, continuity_of(exc.code), adapter_state
        )
        committer.add(Piece(state, [], 0, restart), None, outcome, 0)
        outcome.status, outcome.message, outcome.code = "refused", exc.detail, exc.code
        return outcome
    if outcome.bytes == 0 and planned.start == offset:
        outcome.status = "empty" if planned.continuity == "new" else "unchanged"
        committer.add(
            Piece(
                _state(planned, spec, offset, digest, adapter_state=adapter_state), [], 0, restart
            ),
            None,
            outcome,
            0,
        )
    outcome.pending_bytes = planned.stop - offset
    if outcome.pending_bytes:
        committer.reporter.advanced(planned, outcome.pending_bytes)
    return outcome


def _refused_state(
    planned: PlannedSource,
    spec: ProviderSpec,
    offset: int,
    digest: str | None,
    message: str | None,
    continuity: Continuity | None = None,
    adapter_state: str | None = None,
) -> SourceState:
    state = _state(
        planned, spec, offset, digest, status="refused", refusal=message, continuity=continuity,
        adapter_state=adapter_state,
    )  # fmt: skip
    if planned.checkpoint is None or planned.restart:
        return state
    # A refused source keeps its old identity, stat and versions so the refusal repeats
    # until it is resolved (the file restored, or --restart-drifted).
    cp = planned.checkpoint
    assert planned.source is not None
    kept = replace(
        planned.source, device=cp.device, inode=cp.inode, size=cp.size_bytes, mtime_ns=cp.mtime_ns
    )
    return replace(
        state,
        source=kept,
        generation=cp.generation,
        adapter_version=cp.adapter_version,
        policy_version=cp.policy_version,
        adapter_state=adapter_state if adapter_state is not None else cp.adapter_state,
    )


def _digest(source: SourceFile, offset: int) -> str | None:
    """The checkpoint's digest: the window before the offset of an append-only file,
    the whole content of a document, nothing for a database."""
    if source.position_kind == "byte-offset":
        return window_digest(source.path, offset)
    if source.position_kind == "document":
        return document_digest(source.path)
    return None


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """``$HOME`` (or the user's home directory)."""
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())
