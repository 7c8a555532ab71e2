"""A DuckLake catalog written by several importers at once (one workspace per machine)
while a reader queries it; one importer is SIGKILLed and resumed. Each workspace ends
with exactly what a local import of its home gives."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agentlake.errors import CatalogUnusable, NotFoundError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.lake import LakeCatalog
from fixtures.postgres import PostgresServer
from fixtures.synth import generate_demo_home
from tests.conftest import cli_env
from tests.lakes import Backend, catalog_of, lake_url, read_connection

from .helpers import wait_for_commit

MACHINES = ("laptop-a", "laptop-b", "desktop-c")
# What must be equal, per workspace: token totals per day, provider and model, and the
# rows of every public table.
TOTALS = """
SELECT strftime(ts, '%Y-%m-%d') AS day, provider, coalesce(model, '') AS model, count(*) AS calls,
       sum(input_tokens), sum(cache_write_tokens), sum(cache_read_tokens),
       sum(output_tokens), sum(reasoning_tokens), sum(total_tokens)
FROM usage WHERE workspace = ? GROUP BY ALL ORDER BY ALL
"""
COUNTS = """
SELECT (SELECT count(*) FROM events WHERE workspace = $ws),
       (SELECT count(DISTINCT event_id) FROM events WHERE workspace = $ws),
       (SELECT count(*) FROM sessions WHERE workspace = $ws),
       (SELECT count(*) FROM usage WHERE workspace = $ws),
       (SELECT count(DISTINCT call_id) FROM usage WHERE workspace = $ws),
       (SELECT count(*) FROM sources WHERE workspace = $ws)
"""


def _state(catalog: Path | LakeCatalog, workspace: str) -> tuple[Any, ...]:
    con = read_connection(catalog)
    try:
        totals = con.execute(TOTALS, [workspace]).fetchall()
        counts = con.execute(COUNTS, {"ws": workspace}).fetchone()
        return totals, counts
    finally:
        con.close()


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, tuple[Any, ...]]]:
    """Each machine's home (four agents, its own seed) and the state a local DuckDB
    import of it gives (the reference)."""
    root = tmp_path_factory.mktemp("machines")
    out = {}
    for seed, machine in enumerate(MACHINES, start=21):
        home = root / machine
        generate_demo_home(home, seed=seed)
        local = root / f"{machine}.duckdb"
        result = run_import(
            ImportOptions(catalog=local, workspace=machine, home=home, env={}, build_index=False)
        )
        assert result.exit_code == 0
        out[machine] = (home, _state(local, machine))
    return out


def _importer(
    home: Path, url: str, data: Path, workspace: str, *options: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentlake", "import", "--home", str(home), "--catalog", url,
         "--data-path", str(data), "--workspace", workspace, "--progress", "lines", *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=cli_env(), text=True,
    )  # fmt: skip


class Reader(threading.Thread):
    """Reads the lake over and over (report, search, session list, SQL) until told to
    stop, keeping every error and the snapshots it read."""

    def __init__(self, url: str, data: Path, workspaces: tuple[str, ...]) -> None:
        super().__init__(daemon=True)
        self.url, self.data, self.workspaces = url, data, workspaces
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.reads = 0
        self.snapshots: list[int] = []

    def run(self) -> None:
        import agentlake

        while not self.stop.is_set():
            for machine in self.workspaces:
                try:
                    lake = agentlake.open(self.url, workspace=machine)
                    report = lake.report_full("daily")
                    lake.search("cache", limit=5)
                    lake.sessions(limit=10)
                    lake.sql("SELECT count(*) FROM usage")
                    if report.snapshot is not None:
                        self.snapshots.append(report.snapshot)
                    self.reads += 1
                except (NotFoundError, CatalogUnusable) as exc:
                    # Before the first importer has made and migrated the lake; from the
                    # first read on, none may fail.
                    if self.reads:
                        self.errors.append(exc)
                except BaseException as exc:  # noqa: BLE001 - kept for the assertion
                    self.errors.append(exc)


@pytest.mark.parametrize(
    ("backend", "racing", "kill", "options"),
    [
        # A team: three machines, one killed and resumed, each publishing its index (the
        # search index numbers terms and documents across workspaces).
        ("postgres", MACHINES, True, ()),
        ("sqlite", MACHINES[1:], False, ("--no-index",)),  # one machine: two processes
    ],
)
def test_importers_race_while_a_reader_reads_and_one_is_killed(
    backend: Backend,
    racing: tuple[str, ...],
    kill: bool,
    options: tuple[str, ...],
    machines: dict[str, tuple[Path, tuple[Any, ...]]],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    server: PostgresServer | None = (
        request.getfixturevalue("postgres") if backend == "postgres" else None
    )
    url, data = lake_url(backend, tmp_path, server), tmp_path / "data"
    reader = Reader(url, data, racing)
    reader.start()
    procs = {m: _importer(machines[m][0], url, data, m, *options) for m in racing}
    if kill:
        killed = racing[0]
        assert wait_for_commit(procs[killed], 0.3), "the kill must land while the import runs"
        procs[killed].send_signal(signal.SIGKILL)
        assert procs[killed].wait(timeout=300) == -signal.SIGKILL
        procs[killed] = _importer(machines[killed][0], url, data, killed, *options)  # resumes
    for machine, proc in procs.items():
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{machine}: {err}"
    reader.stop.set()
    reader.join(timeout=120)

    assert reader.errors == []
    assert reader.reads > 0
    assert reader.snapshots == sorted(reader.snapshots) or len(set(reader.snapshots)) > 1
    catalog = catalog_of(url, tmp_path)
    for machine in racing:
        assert _state(catalog, machine) == machines[machine][1], machine
    # The publish steps raced too: the numbers they give across workspaces stay unique.
    con = read_connection(catalog)
    try:
        for table, number in (("search_terms", "term_id"), ("search_docs", "doc")):
            row = con.execute(f"SELECT count(*), count(DISTINCT {number}) FROM {table}").fetchone()
            assert row is not None and row[0] == row[1], table
    finally:
        con.close()
