"""The executor's inner loop: each planned source read batch by batch into pieces,
grouped into commits written by a loader thread, and the per-source outcome of it all."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import pyarrow as pa

from agentlake.errors import REMEDIES, ImportStopped, SourceError, SourceErrorCode
from agentlake.extract.extract import ExtractBatch, ExtractLimits, extract_source
from agentlake.extract.jsonl import Reject
from agentlake.extract.providers import ProviderSpec, by_id
from agentlake.extract.rows import RawTables, RowSink, build_tagged
from agentlake.extract.sources import SourceFile
from agentlake.ingest.plan import PlannedSource, continuity_of
from agentlake.ingest.progress import Reporter
from agentlake.load.checkpoint import (
    Continuity,
    SourceStatus,
    document_digest,
    window_digest,
)
from agentlake.load.load import (
    CatalogWriter,
    CommitResult,
    Piece,
    SourceState,
)
from agentlake.load.refusals import Refusal
from agentlake.transform.redact import POLICY_VERSION

# What happened to a source in a run.
SourceOutcomeStatus = Literal["imported", "unchanged", "superseded", "refused", "empty", "pending"]
REJECT_SAMPLES = 20  # rejects per source reported back line by line (all are in `rejects`)


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """The checkpoint a refused source keeps: its generation, the offset the next read
    starts from and the records that generation holds (what its records ceiling counts)."""

    generation: int
    offset: int
    records: int


@dataclass(slots=True)
class SourceOutcome:
    """What happened to one source in a run."""

    planned: PlannedSource
    status: SourceOutcomeStatus
    records: int = 0
    events: int = 0
    usage: int = 0
    rejected: int = 0
    withheld: int = 0  # rows of purged sessions read and not written (agentlake.manage.purge)
    bytes: int = 0
    committed_bytes: int = 0  # of ``bytes``, those whose transaction committed
    pending_bytes: int = 0
    message: str | None = None
    code: SourceErrorCode | None = None  # the refusal code when refused
    # Refused for the first time, or for another reason than last reported (a refusal
    # that stays as it was is "still refused" and does not fail the run again).
    new_refusal: bool = False
    reject_samples: list[Reject] = field(default_factory=list)
    batches: int = 0  # batches of data queued for commit (all committed once the run ends)
    resume: ResumePoint | None = None  # when refused: the checkpoint it keeps

    def receipt(self) -> dict[str, Any] | None:
        """A refused source's failure receipt: the terminal code, the prefix this run
        committed before the refusal, the checkpoint a later run starts from and the
        remedy; ``None`` for any other outcome."""
        if self.status != "refused" or self.code is None:
            return None
        resume = self.resume
        return {
            "code": self.code,
            "generation": resume.generation if resume else None,
            "committed": {
                "batches": self.batches,
                "records": self.records,
                "events": self.events,
                "bytes": self.committed_bytes,
            },
            "checkpoint": None
            if resume is None
            else {"offset": resume.offset, "records": resume.records},
            "remedy": REMEDIES[self.code],
        }

    def reject_lines(self) -> list[str]:
        """One line per sampled reject: file, offset, reason and remedy."""
        return [
            f"{self.planned.path}:{r.offset}: {r.reason}: {r.detail} ({r.length} bytes skipped; "
            "the rest of the file was imported)"
            for r in self.reject_samples
        ]


def refusal_of(outcome: SourceOutcome) -> Refusal:
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


class Committer:
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
        # (provider, session) -> the queued sinks with rows of it, for the first
        # ``_indexed`` queued pieces (see _withdraw_queued).
        self._touching: dict[tuple[str, str], list[RowSink]] = {}
        self._indexed = 0
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
        that withdraws rows joins the queued pieces too: a commit withdraws from what
        the catalog holds before it inserts anything, so the withdrawal is applied to
        the queued pieces' rows here, as committing them first would have (the rows
        after it, its own included, are inserted after the withdrawal either way)."""
        if raw is not None and raw.retracts:
            self._withdraw_queued(piece.state.source.provider, raw)
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

    def _withdraw_queued(self, provider: str, raw: RowSink) -> None:
        """Withdraw what ``raw`` withdraws from the queued rows of its provider's
        sessions. Which sessions each queued piece touches is indexed once per piece,
        when a withdrawal first needs it (asking every queued piece at every withdrawal
        was quadratic in the pieces of a commit)."""
        index = self._touching
        for position in range(self._indexed, len(self.pending)):
            queued_piece, queued, _, _ = self.pending[position]
            if queued is not None:
                src = queued_piece.state.source.provider
                for sid in queued.sessions_touched():
                    index.setdefault((src, sid), []).append(queued)
        self._indexed = len(self.pending)
        pairs = raw.withdrawn_pairs()
        by_sink: dict[int, tuple[RowSink, set[str]]] = {}
        for sid in raw.sessions_withdrawn_from():
            for queued in index.get((provider, sid), ()):
                by_sink.setdefault(id(queued), (queued, set()))[1].add(sid)
        for queued, sessions in by_sink.values():
            queued.withdraw_emitted(sessions, {p for p in pairs if p[0] in sessions})

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
        """Hand everything queued to the loader thread, once the commit before it is
        done: while the loader transforms one commit (polars) and writes it (DuckDB),
        both releasing the GIL, this thread reads the next, so extraction and loading
        share the two cores. Commits stay in order, one at a time."""
        if not self.pending:
            return
        # polars loads with the first commit that carries rows: a run with nothing new
        # to read never pays for it.
        from agentlake.transform.transform import stream_context

        by_provider: dict[str, list[tuple[RowSink, str]]] = {}
        for piece, raw, _, _ in self.pending:
            if raw is not None:
                src = piece.state.source
                by_provider.setdefault(src.provider, []).append((raw, src.source_id))
        context = self.context
        batches = [
            (
                build_tagged(parts),
                provider,
                context[1] if context and context[0] == provider else None,
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
        self._touching.clear()
        self._indexed = 0
        self.records = 0
        self.bytes = 0
        self.drain()
        pieces = [piece for piece, _, _ in queued]
        self.inflight = (self.loader.submit(self._load, pieces, batches), queued)
        if not self.overlap:
            self.drain()

    def _load(
        self, pieces: list[Piece], batches: list[tuple[RawTables, str, pa.Table | None]]
    ) -> dict[str, CommitResult]:
        """The loader thread's part of a commit: transform each provider's rows, then
        write them with the pieces' checkpoints in one transaction."""
        from agentlake.transform.transform import transform_batch

        data = [
            transform_batch(raw, provider=provider, context=context)
            for raw, provider, context in batches
        ]
        return self.writer.commit(self.import_id, pieces, data)

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
                outcome.withheld += got.withheld
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


def left_pending(sources: Sequence[PlannedSource]) -> list[SourceOutcome]:
    """Outcomes of the sources a run left unread: their planned bytes are pending."""
    return [
        SourceOutcome(p, "pending", pending_bytes=p.stop - p.start)
        for p in sources
        if p.action == "read"
    ]


def extract_batches(planned: PlannedSource, limits: ExtractLimits) -> Iterator[ExtractBatch]:
    """The batches the plan asked of ``planned``, resuming from its checkpoint's adapter
    state."""
    assert planned.source is not None
    resumed = planned.resumes
    state = planned.checkpoint.adapter_state if resumed and planned.checkpoint else None
    return extract_source(
        by_id(planned.provider), planned.source, start=planned.start, stop=planned.stop,
        limits=limits, state=state, committed_records=_kept_records(planned),
    )  # fmt: skip


def _kept_records(planned: PlannedSource) -> int:
    """The records the source's generation holds before this read: its checkpoint's
    when the read continues from it, none when it starts over (new, restarted, re-read
    whole)."""
    return planned.checkpoint.records if planned.resumes and planned.checkpoint else 0


def run_source(
    committer: Committer, planned: PlannedSource, batches: Iterator[ExtractBatch]
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
        if planned.checkpoint is not None:
            cp = planned.checkpoint
            outcome.resume = ResumePoint(cp.generation, cp.committed_offset, cp.records)
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
            digest = _digest(source, batch.end_offset, batch.digest)
            adapter_state = batch.state
            piece = Piece(
                _state(planned, spec, batch.end_offset, digest, adapter_state=adapter_state),
                batch.rejects,
                batch.records,
                restart,
            )
            restart = False
            outcome.batches += 1
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
        prior = planned.checkpoint
        # A document re-read whole in its generation keeps its rows when the new read is
        # refused; only a new generation lets the old one go.
        same = prior is not None and prior.generation == state.generation
        committer.add(Piece(state, [], 0, restart and not same), None, outcome, 0)
        outcome.status, outcome.message, outcome.code = "refused", exc.detail, exc.code
        kept = prior.records if prior is not None and same else 0
        outcome.resume = ResumePoint(state.generation, offset, kept + outcome.records)
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


def _digest(source: SourceFile, offset: int, read: str | None = None) -> str | None:
    """The checkpoint's digest: the window before the offset of an append-only file,
    the whole content of a document, nothing for a database. ``read`` is that digest as
    the extractor took it of the bytes it read, if it could: the file is read only
    without it."""
    if read is not None:
        return read
    if source.position_kind == "byte-offset":
        return window_digest(source.path, offset)
    if source.position_kind == "document":
        return document_digest(source.path)
    return None
