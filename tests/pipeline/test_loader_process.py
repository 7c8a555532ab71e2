"""A bulk import's commits written by a loader process: the catalog, counts and
receipts of writing them in turn; its errors reach the importing process; it dies
with the importing process."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from agentlake import run as run_module
from agentlake.demo import generate_demo_home
from agentlake.errors import CatalogUnusable
from agentlake.extract.extract import ExtractLimits
from agentlake.load.catalog import open_for_write
from agentlake.load.load import CatalogWriter
from agentlake.loader_process import LoaderProcess
from agentlake.run import ImportOptions, ImportResult, run_import
from tests.conftest import FIXTURES

from .helpers import snapshot

TABLES = (
    "events", "usage", "sessions", "rejects", "sources",
    "search_postings", "search_terms", "search_docs", "search_state",
)  # fmt: skip


def _import(home: Path, catalog: Path, **options: object) -> ImportResult:
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      limits=ExtractLimits(batch_lines=300), **options)  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_loader_process_gives_the_catalog_of_loading_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many small commits, Gemini's withdrawals, a drifting and a malformed source: the
    rows, the search index, the counts and the sources' outcomes are those of commits
    written one after the other in this process; a second run finds nothing new."""
    home = tmp_path / "home"
    generate_demo_home(home)
    for fixture in ("contract_drift", "bad_input/malformed_json"):
        shutil.copytree(FIXTURES / "claude" / fixture / ".claude", home / ".claude",
                        dirs_exist_ok=True)  # fmt: skip
    in_turn = _import(home, tmp_path / "turn.duckdb", overlap_load=False)
    started: list[LoaderProcess] = []
    original = LoaderProcess.__init__

    def spy(self: LoaderProcess, *args: object) -> None:
        original(self, *args)  # type: ignore[arg-type]
        started.append(self)

    monkeypatch.setattr(LoaderProcess, "__init__", spy)
    monkeypatch.setattr(run_module, "LOADER_PROCESS_MIN_BYTES", 1)
    loaded = _import(home, tmp_path / "process.duckdb")
    assert len(started) == 1 and started[0].peak_rss_bytes > 0
    assert loaded.exit_code == in_turn.exit_code == 1
    assert loaded.totals() == in_turn.totals()

    def outcomes(result: ImportResult) -> list[tuple[object, ...]]:
        return [(s.planned.path, s.status, s.events, s.usage, s.rejected, s.committed_bytes)
                for s in result.sources]  # fmt: skip

    assert outcomes(loaded) == outcomes(in_turn)
    assert snapshot(tmp_path / "process.duckdb", TABLES) == snapshot(
        tmp_path / "turn.duckdb", TABLES
    )
    # the receipt counts the loader's memory too
    assert loaded.peak_rss_bytes >= started[0].peak_rss_bytes
    again = _import(home, tmp_path / "process.duckdb")
    assert again.totals()["events"] == 0 and len(started) == 1  # nothing to read: no process


def test_a_catalog_the_loader_cannot_open_fails_the_first_commit(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-catalog"
    folder.mkdir()
    loader = LoaderProcess(folder, "default", None)
    try:
        result = loader.commit(loader.prepare(1, [], []))
        with pytest.raises(CatalogUnusable, match="cannot open the catalog"):
            result()
    finally:
        loader.close()
    assert loader.peak_rss_bytes > 0  # it closed in order


def _events(rows: int) -> pa.Table:
    """Events missing most of their columns."""
    ids = pa.array([f"e{i}" for i in range(rows)])
    return pa.table({"event_id": ids, "session_id": ids})


def test_a_failing_commit_is_raised_here_and_nothing_after_it_is_written(
    tmp_path: Path,
) -> None:
    """A commit whose rows do not fit the catalog fails in the loader: its error is
    raised by whoever waits for it, and a commit told to go after it is not written."""
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        import_id = CatalogWriter(con, "default").begin_import()
    from agentlake.transform.transform import CatalogRows

    empty = pa.table({"x": pa.array([], pa.int64())})
    broken = CatalogRows(_events(3), empty, empty, empty)
    loader = LoaderProcess(catalog, "default", None)
    try:
        first = loader.commit(loader.prepare(import_id, [], [broken]))
        with pytest.raises(duckdb.Error):
            first()
        second = loader.commit(loader.prepare(import_id, [], []))
    finally:
        loader.close()
    del second  # never answered: the loader wrote nothing after the failure
    assert duckdb.connect(str(catalog), read_only=True).sql(
        "SELECT count(*) FROM events"
    ).fetchone() == (0,)


_ORPHAN = """
import os, signal, sys
from pathlib import Path
from agentlake.loader_process import LoaderProcess

if __name__ == "__main__":
    loader = LoaderProcess(Path(sys.argv[1]), "default", None)
    loader.commit(loader.prepare(1, [], []))()  # the loader is up, the catalog open
    print(loader._proc.pid, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a zombie holds no file)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_loader_dies_with_the_importing_process(tmp_path: Path) -> None:
    """A killed import leaves no loader behind holding the catalog: the next import can
    open it at once."""
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        CatalogWriter(con, "default").begin_import()
    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN)
    done = subprocess.run(
        [sys.executable, str(script), str(catalog)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid), "the loader outlived the importing process"
    with open_for_write(catalog) as con:  # DuckDB's own lock is free
        assert con.sql("SELECT count(*) FROM imports").fetchone() == (1,)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_receipts_peak_rss_is_the_process_own(tmp_path: Path) -> None:
    """The kernel's ru_maxrss of a process takes in its parent's RSS at fork and exec;
    the receipt's peak must not (here the parent holds 400 MiB more than the child)."""
    ballast = bytearray(400 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    probe = (
        "import resource; from agentlake.run import peak_rss_bytes; "
        "print(peak_rss_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    del ballast
    own, kernel = map(int, done.stdout.split())
    assert kernel > 400 << 20  # the quirk this guards against
    assert 0 < own < 300 << 20
