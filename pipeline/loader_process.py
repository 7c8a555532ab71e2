"""Writing a bulk import's commits in a process of its own.

DuckDB's Python client releases the GIL while a statement runs, but takes it back
between the statement's tasks; beside a thread that runs Python without pause (the
import's reading thread) every such hand-back waits out the interpreter's switch
interval. On the development machine fifty 0.5 ms queries took 24 ms alone and 2.7 s
beside a Python loop, a 50 ms aggregation 255 ms. A bulk import therefore hands the
catalog to a loader process: the importing process reads and transforms, the loader
tokenizes each commit (on a thread of its own, as :mod:`agentlake.load.terms` says)
and writes it, and neither waits for the other's interpreter.

The importing process keeps the writer lock (``<catalog>.lock``) throughout; it closes
its DuckDB connection before the loader opens the file and opens it again once the
loader has closed it. Messages travel pickled over one pipe, in order:

* to the loader: ``("rows", seq, import_id, pieces, data)`` starts tokenizing commit
  ``seq`` while the one before it is written; ``("go", seq)`` writes it (sent once the
  one before it is done; a commit after one that failed is never written); ``("close",)``
  finishes the commit in flight, drops rows not told to go, and closes the catalog.
* from the loader: ``(seq, "ok", results)`` or ``(seq, "error", error)`` per commit,
  then ``("closed", peak_rss_bytes)``; if the catalog did not open, the first commit
  told to go is answered with why.

The loader dies with the importing process (``PR_SET_PDEATHSIG`` on Linux; elsewhere
when the pipe closes): a killed import leaves what a killed in-process import leaves,
committed commits and nothing half-written.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import FatalError

if TYPE_CHECKING:
    from agentlake.load.load import CommitResult, Piece
    from agentlake.load.terms import BatchTerms
    from agentlake.transform.transform import CatalogRows

__all__ = ["LoaderProcess"]

_PR_SET_PDEATHSIG = 1


class LoaderProcess:
    """The loader process of one import (see the module docstring)."""

    def __init__(self, catalog: Path, workspace: str, memory_limit: str | None) -> None:
        ctx = mp.get_context("spawn")  # never fork a process that holds DuckDB threads
        self._conn, theirs = ctx.Pipe()
        self._proc = ctx.Process(
            target=_serve,
            args=(theirs, str(catalog), workspace, memory_limit, os.getpid()),
            name="agentlake-loader",
            daemon=True,
        )
        self._proc.start()
        theirs.close()
        self._seq = 0
        self._closed = False
        self.peak_rss_bytes = 0  # the loader's own peak, once closed

    def prepare(self, import_id: int, pieces: list[Piece], data: list[CatalogRows]) -> int:
        """Send a commit's rows (the loader starts tokenizing them); returns its number."""
        self._seq += 1
        self._send(("rows", self._seq, import_id, pieces, data))
        return self._seq

    def commit(self, seq: int) -> Callable[[], dict[str, CommitResult]]:
        """Write commit ``seq`` (the one before it is done); returns what waits for its
        result and raises its error."""
        self._send(("go", seq))

        def result() -> dict[str, CommitResult]:
            got, status, payload = self._receive()
            if status == "error":
                raise payload
            if got != seq:
                raise FatalError(f"the loader answered commit {got} for commit {seq}")
            results: dict[str, CommitResult] = payload
            return results

        return result

    def close(self) -> None:
        """Let the loader finish the commit in flight, close the catalog and exit; waits
        for it. Errors of commits nobody waited for are not raised (the run already
        failed, or is ending)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError, EOFError):
            self._conn.send(("close",))
            while True:
                message = self._conn.recv()
                if message[0] == "closed":
                    self.peak_rss_bytes = int(message[1])
                    break
        self._proc.join()
        self._conn.close()

    def _send(self, message: tuple[Any, ...]) -> None:
        try:
            self._conn.send(message)
        except OSError:
            raise self._died() from None

    def _receive(self) -> tuple[int, str, Any]:
        try:
            message: tuple[int, str, Any] = self._conn.recv()
        except (EOFError, OSError):
            raise self._died() from None
        return message

    def _died(self) -> FatalError:
        self._proc.join(timeout=5)
        return FatalError(
            f"the loader process ended unexpectedly (exit code {self._proc.exitcode}); "
            "committed batches are kept: rerun the import to resume"
        )


def _die_with_parent(parent: int) -> None:
    """Ask the kernel to kill this process when its parent dies (Linux), and leave now if
    the parent is already gone."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:
        os._exit(0)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a :class:`FatalError` with its text."""
    try:
        copy: BaseException = pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any unpicklable error is reported as text
        return FatalError(f"{type(exc).__name__}: {exc}"[:500])
    return copy


def _serve(
    conn: Connection, catalog: str, workspace: str, memory_limit: str | None, parent: int
) -> None:
    """The loader process: tokenizes and writes commits as told (module docstring)."""
    _die_with_parent(parent)
    # Ctrl-C reaches the whole process group: the importing process decides when to
    # stop, and tells this one to close.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from agentlake.load.catalog import connect_writer
    from agentlake.load.load import CatalogWriter, batch_events
    from agentlake.load.terms import BatchTokenizer

    con: Any = None
    tokenizer: BatchTokenizer | None = None
    refused: BaseException | None = None  # why the catalog did not open
    try:
        con = connect_writer(Path(catalog), memory_limit=memory_limit)
        # The loader's and the tokenizer's threads keep the loader's core busy; a second
        # DuckDB worker per connection only contended with them.
        con.execute("SET threads = 1")
        writer = CatalogWriter(con, workspace)
        tokenizer = BatchTokenizer(memory_limit)
    except BaseException as exc:  # noqa: BLE001 - reported to the importing process
        refused = _portable(exc)
    tokenizing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentlake-terms")
    loading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentlake-load")
    waiting: dict[
        int, tuple[int, list[Piece], list[CatalogRows], Future[BatchTerms | None] | None]
    ] = {}
    failed = threading.Event()

    def write(seq: int) -> None:
        import_id, pieces, data, terms = waiting.pop(seq)
        if failed.is_set():
            return
        try:
            results = writer.commit(
                import_id, pieces, data, None if terms is None else terms.result
            )
        except BaseException as exc:  # noqa: BLE001 - reported to the importing process
            failed.set()
            conn.send((seq, "error", _portable(exc)))
            return
        conn.send((seq, "ok", results))

    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return  # the importing process is gone
            if message[0] == "close":
                break
            if refused is not None:  # answer the first commit told to go with why
                if message[0] == "go":
                    conn.send((message[1], "error", refused))
                continue
            if message[0] == "rows":
                _, seq, import_id, pieces, data = message
                assert tokenizer is not None
                terms = tokenizing.submit(tokenizer.terms, batch_events(data)) if data else None
                waiting[seq] = (import_id, pieces, data, terms)
            else:
                loading.submit(write, message[1])
    finally:
        loading.shutdown(wait=True)
        tokenizing.shutdown(wait=True)
        if tokenizer is not None:
            tokenizer.close()
        if con is not None:
            con.close()
    _closing(conn)


def _closing(conn: Connection) -> None:
    """Tell the importing process this one is done, with its peak RSS."""
    from .run import peak_rss_bytes

    peak = peak_rss_bytes()
    with contextlib.suppress(OSError):
        conn.send(("closed", peak))
    conn.close()
