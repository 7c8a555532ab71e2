"""One writer per workspace of a lake: the lease row of ``writer_leases``.

A DuckDB file has one writer, held by a file lock. A lake is written from many machines,
each in its own workspace; two writers of one workspace (two imports racing on the same
sources) would both plan from the same checkpoints. A writer takes its workspace's lease
before it plans and keeps it until it ends; taking it is a transaction like any other,
so of two processes that take it at once one conflicts at COMMIT, runs again and finds
the other holding it. A lease whose holder is gone (killed: same machine, its process is
not running; another machine: no commit renewed it for :data:`STALE_AFTER`) is taken over.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final, TypeVar

import duckdb

from agentlake.errors import CatalogLocked, FatalError

from .lake import retrying
from .transaction import transaction

_T = TypeVar("_T")
# How long a lease of another machine lasts without a commit renewing it.
STALE_AFTER: Final = timedelta(minutes=30)
POLL_SECONDS: Final = 1.0  # how often a writer told to wait looks again


@dataclass(frozen=True, slots=True)
class Holder:
    """A process that holds (or asks for) a lease."""

    holder: str
    host: str
    pid: int
    started: str | None

    @classmethod
    def this_process(cls) -> Holder:
        """This process, with a token no other process shares."""
        pid = os.getpid()
        return cls(f"{uuid.uuid4().hex[:12]}", socket.gethostname(), pid, _started(pid))


def _started(pid: int) -> str | None:
    """When process ``pid`` started (Linux: its start time in clock ticks since boot), to
    tell it from a later process given the same id; ``None`` where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _alive(host: str, pid: int, started: str | None, renewed_at: datetime) -> bool:
    if host != socket.gethostname():
        return datetime.now(UTC) - renewed_at < STALE_AFTER
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running
        return True
    return started is None or _started(pid) in (None, started)


_HELD: Final = (
    "SELECT host, pid, started, renewed_at::TIMESTAMP, holder FROM writer_leases "
    "WHERE workspace = ?"
)


def _take(con: duckdb.DuckDBPyConnection, workspace: str, me: Holder) -> tuple[str, int] | None:
    """Take the lease in one transaction; the other holder's (host, pid) if it holds it."""
    with transaction(con):
        for host, pid, started, renewed, holder in con.execute(_HELD, [workspace]).fetchall():
            if holder != me.holder and _alive(host, pid, started, renewed.replace(tzinfo=UTC)):
                return str(host), int(pid)
        con.execute("DELETE FROM writer_leases WHERE workspace = ?", [workspace])
        con.execute(
            "INSERT INTO writer_leases VALUES (?, ?, ?, ?, ?, now(), now())",
            [workspace, me.holder, me.host, me.pid, me.started],
        )
    return None


@contextmanager
def workspace_lease(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    *,
    wait: bool,
    what: str,
    notice: Callable[[str], None] | None = None,
) -> Iterator[Holder]:
    """Hold ``workspace``'s lease for the block (``what`` names the lake in messages).
    When another live process holds it: :class:`CatalogLocked`, or with ``wait`` wait
    for it (``notice`` is told once)."""
    me = Holder.this_process()
    told = False
    while (other := retrying(con, lambda: _take(con, workspace, me))) is not None:
        host, pid = other
        message = f"{what}: workspace {workspace!r} is being written by process {pid} on {host}"
        if not wait:
            raise CatalogLocked(f"{message}; retry when it finishes or pass --wait")
        if notice is not None and not told:
            notice(f"{message}; waiting for it to finish")
            told = True
        time.sleep(POLL_SECONDS)
    _HOLDERS[id(con)] = (workspace, me)
    try:
        yield me
    finally:
        _HOLDERS.pop(id(con), None)
        release = "DELETE FROM writer_leases WHERE workspace = ? AND holder = ?"
        retrying(con, lambda: _in_transaction(con, release, [workspace, me.holder]))


def _in_transaction(con: duckdb.DuckDBPyConnection, statement: str, params: list[object]) -> None:
    with transaction(con):
        con.execute(statement, params)


# Connection id -> the lease its writer holds (only while the lease block runs).
_HOLDERS: dict[int, tuple[str, Holder]] = {}


def renew(con: duckdb.DuckDBPyConnection) -> None:
    """Renew the lease ``con``'s writer holds, inside the caller's transaction (a lake
    commit): :class:`FatalError` if another process has taken it over meanwhile. Nothing
    happens on a connection without a lease (a DuckDB file).

    Every lake commit renews, so every two commits that overlap in time both update the
    leases' table, and DuckLake makes one of them conflict (it detects conflicts per
    table): lake commits are serialized as the DuckDB file's single writer serializes
    them. What numbers rows across workspaces (the search index's documents and terms)
    relies on it."""
    held = _HOLDERS.get(id(con))
    if held is None:
        return
    workspace, me = held
    row = con.execute(
        "SELECT count(*) FROM writer_leases WHERE workspace = ? AND holder = ?",
        [workspace, me.holder],
    ).fetchone()
    if row != (1,):
        raise FatalError(
            f"workspace {workspace!r}: another process took over this writer's lease "
            "(no commit renewed it in time); run the import again"
        )
    con.execute(
        "UPDATE writer_leases SET renewed_at = now() WHERE workspace = ? AND holder = ?",
        [workspace, me.holder],
    )


def committed(con: duckdb.DuckDBPyConnection, body: Callable[[], _T], **tables: object) -> _T:
    """``body()`` in one write transaction (``tables`` registered for it) that renews
    the writer's lease, run again from the start while its COMMIT conflicts with another
    writer's (:func:`agentlake.load.lake.retrying`)."""

    def attempt() -> _T:
        with transaction(con, **tables):
            renew(con)
            return body()

    return retrying(con, attempt)
