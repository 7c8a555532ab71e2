"""The import orchestration: plan, then extract → transform → load per source.

Stages are connected by iterators. Consecutive batches are grouped into commits, each
written with its sources' checkpoints in one transaction; a refused source is recorded
and the run goes on. The calling thread reads and transforms one commit while a loader
thread writes the one before (DuckDB releases the GIL), so two commits are in flight at
most. After the last commit the publish step (agentlake.load.publish) brings the
search index up to date, unless told not to. The library returns an
:class:`ImportResult`; it never prints or exits.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentlake.errors import ImportStopped
from agentlake.extract.extract import ExtractBatch, ExtractLimits
from agentlake.ingest.files import NamedFile, plan_files
from agentlake.ingest.plan import (
    Plan,
    SourceBindings,
    make_plan,
    purged_sources,
    restart_sources,
    select_providers,
)
from agentlake.ingest.progress import NullReporter, Reporter
from agentlake.load.bindings import CatalogBindings
from agentlake.load.catalog import catalog_exists, open_for_read, open_for_write
from agentlake.load.checkpoint import (
    Checkpoint,
    load_checkpoints,
)
from agentlake.load.lake import Catalog
from agentlake.load.load import (
    CatalogWriter,
    FaultHook,
)
from agentlake.load.refusals import record_refusals
from agentlake.manage.authz import actor_name

from .budget import (
    check_memory_limit,
    fewer_collections,
    memory_budget,
    peak_rss_bytes,
)
from .committer import (
    BudgetSpent,
    Committer,
    SourceOutcome,
    extract_batches,
    left_pending,
    refusal_of,
    run_source,
)

if TYPE_CHECKING:
    from agentlake.load.publish import Progress, PublishResult

# From this many bytes to read, the largest indexes are dropped during the run and built
# again at its end (CatalogWriter.drop_bulk_indexes says why).
BULK_MIN_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """Everything an import run needs to know."""

    catalog: Catalog
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
    # Exported files named by the user (import --file): these are the run's sources,
    # instead of what discovery finds under the home.
    files: tuple[NamedFile, ...] = ()
    # Import purged sessions again (agentlake.manage.purge): their sources are re-read
    # from byte 0 as a new generation, nothing is withheld, and the sessions written are
    # no longer revoked. Without it, rows of purged sessions are withheld and counted.
    allow_purged: bool = False


#: What a run did with a source: read it (``imported``; ``empty`` when a new source held
#: nothing), found it ``unchanged``, left it out for a preferred copy (``superseded``),
#: ``refused`` it, or left its bytes ``pending`` for a later run.


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
            "withheld": sum(s.withheld for s in self.sources),
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
            **self.plan.guesses_json(),
            "sources": [
                {
                    "provider": s.planned.provider,
                    "path": str(s.planned.path),
                    "format": s.planned.source.format if s.planned.source else None,
                    "continuity": s.planned.continuity,
                    "status": s.status,
                    "records": s.records,
                    "events": s.events,
                    "usage": s.usage,
                    "rejected": s.rejected,
                    "withheld": s.withheld,
                    "bytes": s.bytes,
                    "pending_bytes": s.pending_bytes,
                    "message": s.message,
                    "code": s.code,
                    "receipt": s.receipt(),
                }
                for s in self.sources
            ],
        }


def plan_import(options: ImportOptions) -> Plan:
    """The plan an import would execute, without writing anything."""
    if catalog_exists(options.catalog):
        with open_for_read(options.catalog, wait=options.wait) as con:
            checkpoints = load_checkpoints(con, options.workspace)
            purged = purged_sources(con, options.workspace) if options.allow_purged else frozenset()
            return _plan(options, checkpoints, CatalogBindings(con, options.workspace), purged)
    return _plan(options, {}, None)


def _plan(
    options: ImportOptions,
    checkpoints: Mapping[str, Checkpoint],
    bindings: SourceBindings | None,
    purged: frozenset[str] = frozenset(),
) -> Plan:
    """The named files' plan, or discovery's under the home; a source another workspace
    holds is refused (``bindings``: none without a catalog); with ``purged`` (the sources
    of purged sessions, when the run allows them back) re-read from byte 0."""
    return restart_sources(_discovered_plan(options, checkpoints, bindings), purged)


def _discovered_plan(
    options: ImportOptions,
    checkpoints: Mapping[str, Checkpoint],
    bindings: SourceBindings | None,
) -> Plan:
    if options.files:
        return plan_files(
            checkpoints,
            workspace=options.workspace,
            files=options.files,
            restart_refused=options.restart_drifted,
            bindings=bindings,
        )
    return make_plan(
        checkpoints,
        workspace=options.workspace,
        home=options.home,
        env=options.env,
        providers=select_providers(options.providers),
        restart_refused=options.restart_drifted,
        bindings=bindings,
    )


def run_import(options: ImportOptions, reporter: Reporter | None = None) -> ImportResult:
    """Plan and execute an import; returns its receipt."""
    with fewer_collections():
        return _run_import(options, reporter)


def _run_import(options: ImportOptions, reporter: Reporter | None) -> ImportResult:
    reporter = reporter or NullReporter()
    started = time.perf_counter()
    memory_warning = check_memory_limit(options.memory_limit)
    duckdb_limit, limits = memory_budget(options.memory_limit, options.limits)
    with open_for_write(
        options.catalog, workspace=options.workspace, wait=options.wait, memory_limit=duckdb_limit
    ) as con:
        writer = CatalogWriter(
            con, options.workspace, faults=options.faults, allow_purged=options.allow_purged,
            actor=actor_name(options.env) if options.allow_purged else "",
        )  # fmt: skip
        purged = purged_sources(con, options.workspace) if options.allow_purged else frozenset()
        plan = _plan(
            options,
            load_checkpoints(con, options.workspace),
            CatalogBindings(con, options.workspace),
            purged,
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
        committer = Committer(
            writer, import_id, reporter, limits.batch_lines, options.stop, deadline,
            max_bytes=limits.batch_bytes, overlap=options.overlap_load,
        )  # fmt: skip
        try:
            for index, planned in enumerate(plan.sources):
                batches: Iterator[ExtractBatch] = (
                    extract_batches(planned, limits) if planned.action == "read" else iter(())
                )
                try:
                    committer.check_stop()
                    result.sources.append(run_source(committer, planned, batches))
                except BudgetSpent as spent:
                    result.budget_spent = True
                    if spent.outcome is not None:
                        result.sources.append(spent.outcome)
                    result.sources.extend(left_pending(plan.sources[index + 1 :]))
                    if spent.outcome is None:
                        result.sources.extend(left_pending([planned]))
                    break
            committer.flush()
            con.execute("RESET threads")
            if options.reindex or options.build_index:
                from agentlake.load.publish import publish, rebuild

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
            con, options.workspace, import_id, [refusal_of(s) for s in result.refused],
            # A run of named files planned no provider's whole set of sources.
            providers=[] if options.files else [s.id for s in select_providers(options.providers)],
            complete=not result.budget_spent,
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
                    "receipt": s.receipt(),
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

    catalog: Catalog
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
    from agentlake.load.publish import publish

    if not catalog_exists(options.catalog):
        raise NotFoundError(
            f"{options.catalog}: no catalog here; run 'agentlake import' first or pass --catalog"
        )
    check_memory_limit(options.memory_limit)
    duckdb_limit, _ = memory_budget(options.memory_limit, ExtractLimits())
    with open_for_write(
        options.catalog, workspace=options.workspace, wait=options.wait, memory_limit=duckdb_limit
    ) as con:
        published = publish(
            con, options.workspace, slice_bytes=options.slice_bytes,
            progress=options.progress, faults=options.faults,
        )  # fmt: skip
        CatalogWriter(con, options.workspace).ensure_bulk_indexes()
    return published
