"""One SIGTERM or SIGINT ends a real import process within two seconds, whatever it is
blocked on, and the next run resumes to the catalog a clean import gives."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.ingest.signals import STOP_SECONDS
from fixtures.synth import generate_claude_home

from .helpers import scalar, snapshot, start_import

TABLES = ("events", "usage", "sessions", "rejects", "sources")


def _codex_index(home: Path) -> Path:
    """A Codex thread index in SQLite's rollback-journal mode, in which a writer's
    exclusive lock keeps every reader waiting."""
    path = home / ".codex" / "state_5.sqlite"
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT)")
    con.execute("INSERT INTO threads VALUES ('019a0000-0000-7000-8000-000000000001', 'demo')")
    con.commit()
    con.close()
    return path


@contextmanager
def _locked(database: Path) -> Iterator[None]:
    """Another process holds ``database`` under an exclusive lock for the block, as an
    agent in the middle of a write does: a reader's SQLite waits for it (five seconds)."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys\n"
         f"con = sqlite3.connect({str(database)!r}, isolation_level=None)\n"
         "con.execute('BEGIN EXCLUSIVE')\n"
         "print('locked', flush=True)\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def _wait_until_open(pid: int, path: Path, timeout: float = 120) -> None:
    """Wait until process ``pid`` has ``path`` open (its read of that file began)."""
    fds = Path(f"/proc/{pid}/fd")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(fd.readlink() == path for fd in fds.iterdir()):
                return
        except OSError:
            pass  # an fd closed while listed, or the process ended
        time.sleep(0.005)
    pytest.fail(f"process {pid} never opened {path}")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see open files")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_one_signal_ends_an_import_blocked_in_a_read(
    tmp_path: Path, signum: signal.Signals
) -> None:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=3)
    database = _codex_index(home)
    # A FIFO among the transcripts: never opened, so it blocks nothing.
    os.mkfifo(
        next((home / ".claude" / "projects").iterdir())
        / "5d0c8e1e-0000-4000-8000-0000000000f1.jsonl"
    )
    clean = tmp_path / "clean.duckdb"
    run_import(ImportOptions(catalog=clean, workspace="default", home=home, env={}))

    catalog = tmp_path / "c.duckdb"
    with _locked(database):
        proc = start_import(home, catalog)
        _wait_until_open(proc.pid, database)  # blocked in SQLite's wait for the lock
        asked = time.monotonic()
        proc.send_signal(signum)
        status = proc.wait(timeout=30)
        took = time.monotonic() - asked
        stderr = proc.stderr.read() if proc.stderr else ""
    assert status == 130, stderr
    assert took < 2.0, f"{took:.2f} s after the signal (limit {STOP_SECONDS} s + exit)"
    assert f"{signum.name}: stopping at the next batch boundary" in stderr
    assert "Traceback" not in stderr

    resumed = start_import(home, catalog)
    assert resumed.wait(timeout=120) == 1  # the FIFO is refused, the rest imports
    assert snapshot(catalog, TABLES) == snapshot(clean, TABLES)
    assert scalar(catalog, "SELECT count(*) FROM sources WHERE status = 'refused'") == 0
