"""Extraction in worker processes, so reading and parsing transcripts (the CPU-heavy
part) overlaps with transforming and loading in the main process.

The read sources of a plan are dealt round-robin to ``workers`` processes. Each worker
extracts its sources in plan order and streams their batches through a bounded queue
(at most ``depth`` batches in flight per worker, so memory stays bounded by the batch
size); the main process consumes the sources in plan order, exactly as if it had
extracted them itself. Workers stop on their own when the main process dies.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

from agentlake.extract.extract import ExtractBatch, ExtractLimits, extract_source
from agentlake.extract.providers import by_id
from agentlake.extract.sources import SourceFile

from .errors import FatalError, SourceError

# Records per message: small enough that the importer starts early, large enough that
# inter-process latency (a GIL hand-off per message) does not dominate small sources.
SEND_RECORDS = 8192


@dataclass(frozen=True, slots=True)
class ExtractJob:
    """One source to extract: what the plan decided for it."""

    provider: str
    source: SourceFile
    start: int
    stop: int
    state: str | None


def extract_job(job: ExtractJob, limits: ExtractLimits) -> Iterator[ExtractBatch]:
    """The batches of one job, extracted in this process."""
    return extract_source(
        by_id(job.provider),
        job.source,
        start=job.start,
        stop=job.stop,
        limits=limits,
        state=job.state,
    )


def _worker(
    jobs: list[tuple[int, ExtractJob]], limits: ExtractLimits, out: Any, parent: int
) -> None:
    """Extract ``jobs`` in order, sending lists of ``(kind, index, payload)`` items.

    Items are sent in lists of about :data:`SEND_RECORDS` records: one message per
    small source would cost more in inter-process latency than its extraction."""
    pending: list[tuple[str, int, Any]] = []
    records = 0

    def flush() -> None:
        nonlocal records
        while pending:
            try:
                out.put(list(pending), timeout=1.0)
            except queue.Full:
                if os.getppid() != parent:  # the importer is gone: stop quietly
                    raise SystemExit(0) from None
                continue
            pending.clear()
        records = 0

    for index, job in jobs:
        try:
            for batch in extract_job(job, limits):
                pending.append(("batch", index, batch))
                records += batch.records
                if records >= SEND_RECORDS:
                    flush()
        except SourceError as exc:
            pending.append(("refused", index, (exc.code, exc.path, exc.detail)))
            continue
        except Exception as exc:  # noqa: BLE001 - reported to the importer as fatal
            pending.append(("fatal", index, f"{type(exc).__name__}: {exc}"))
            flush()
            return
        pending.append(("end", index, None))
    flush()


class ParallelExtractor:
    """Streams the batches of many sources extracted by worker processes."""

    def __init__(
        self, jobs: Sequence[ExtractJob], limits: ExtractLimits, *, workers: int, depth: int = 2
    ) -> None:
        ctx = mp.get_context("spawn")
        self._queues = [ctx.Queue(maxsize=depth) for _ in range(workers)]
        self._procs: list[BaseProcess] = []
        self._buffers: list[deque[tuple[str, int, Any]]] = [deque() for _ in range(workers)]
        self._next = 0
        self._workers = workers
        for k in range(workers):
            mine = [(i, job) for i, job in enumerate(jobs) if i % workers == k]
            proc = ctx.Process(
                target=_worker, args=(mine, limits, self._queues[k], os.getpid()), daemon=True
            )
            proc.start()
            self._procs.append(proc)

    def next_source(self) -> Iterator[ExtractBatch]:
        """The batches of the next source in plan order; raises its SourceError."""
        index = self._next
        self._next += 1
        k = index % self._workers
        while True:
            kind, got, payload = self._get(k)
            if got != index:
                raise FatalError(f"extraction out of order (expected source {index}, got {got})")
            if kind == "batch":
                yield payload
            elif kind == "end":
                return
            elif kind == "refused":
                code, path, detail = payload
                raise SourceError(code, path, detail)
            else:
                raise FatalError(f"extraction failed: {payload}")

    def _get(self, k: int) -> tuple[str, int, Any]:
        buffer = self._buffers[k]
        while not buffer:
            try:
                buffer.extend(self._queues[k].get(timeout=1.0))
            except queue.Empty:
                if not self._procs[k].is_alive():
                    raise FatalError(
                        "an extraction worker died; rerun the import to resume"
                    ) from None
        return buffer.popleft()

    def close(self) -> None:
        """Stop the workers (normally they have finished)."""
        for proc in self._procs:
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=5)
        for q in self._queues:
            q.close()
