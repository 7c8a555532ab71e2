"""Asked to stop (SIGINT/SIGTERM), an import stops at the next batch boundary: what was
read is committed with its checkpoints, the receipt says ``interrupted`` and lists the
committed prefix per source, and the next run resumes to the same catalog as a clean
import."""

from __future__ import annotations

import json
import signal
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from agentlake.errors import ImportStopped
from agentlake.extract.extract import ExtractLimits
from agentlake.extract.sources import SourceFile
from agentlake.ingest.plan import Plan, PlannedSource
from agentlake.ingest.run import ImportOptions, run_import
from fixtures.synth import generate_claude_corpus
from tests.conftest import CliRunner

from .helpers import scalar, snapshot, start_import, start_import_reporting, wait_for_commit

TABLES = ("events", "usage", "sessions", "rejects")


class StopAfter:
    """A progress reporter that requests a stop once ``bytes_`` bytes are committed."""

    def __init__(self, stop: threading.Event, bytes_: int) -> None:
        self.stop, self.left = stop, bytes_

    def planned(self, plan: Plan) -> None:
        pass

    def advanced(self, source: PlannedSource, nbytes: int) -> None:
        self.left -= nbytes
        if self.left <= 0:
            self.stop.set()

    def phase(self, name: str) -> None:
        pass


def _options(home: Path, catalog: Path, stop: threading.Event | None = None) -> ImportOptions:
    return ImportOptions(
        catalog=catalog, workspace="default", home=home, env={}, build_index=False,
        limits=ExtractLimits(batch_lines=500), stop=stop,
    )  # fmt: skip


def test_a_stop_request_ends_the_run_at_a_batch_boundary_and_the_next_run_resumes(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    stats = generate_claude_corpus(home, seed=5, target_lines=6_000)
    clean = tmp_path / "clean.duckdb"
    assert run_import(_options(home, clean)).exit_code == 0

    stopped = tmp_path / "stopped.duckdb"
    stop = threading.Event()
    with pytest.raises(ImportStopped, match="run the import again to resume"):
        run_import(_options(home, stopped, stop), StopAfter(stop, stats.bytes // 3))
    assert scalar(stopped, "SELECT status FROM imports") == "interrupted"
    detail = json.loads(
        scalar(stopped, "SELECT detail FROM imports ORDER BY import_id DESC LIMIT 1")
    )
    committed = sum(s["bytes"] for s in detail["committed"])
    assert 0 < committed < stats.bytes
    assert scalar(stopped, "SELECT sum(committed_offset) FROM sources") == committed
    assert scalar(stopped, "SELECT count(*) FROM events") < scalar(
        clean, "SELECT count(*) FROM events"
    )

    assert run_import(_options(home, stopped)).exit_code == 0
    assert snapshot(stopped, TABLES) == snapshot(clean, TABLES)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_cli_stops_gracefully_on_a_signal(tmp_path: Path, signum: signal.Signals) -> None:
    home = tmp_path / "home"
    generate_claude_corpus(home, seed=7, target_lines=20_000)
    clean = tmp_path / "clean.duckdb"
    assert run_import(_options(home, clean)).exit_code == 0

    stopped = tmp_path / "stopped.duckdb"
    proc = start_import_reporting(home, stopped, "--memory-limit", "384MiB")
    assert wait_for_commit(proc, 0.3), "the signal must land while the import runs"
    proc.send_signal(signum)
    stderr = "".join(proc.stderr or ())
    assert proc.wait(timeout=600) == 130
    assert f"{signum.name}: stopping at the next batch boundary" in stderr
    assert "Traceback" not in stderr
    assert scalar(stopped, "SELECT status FROM imports") == "interrupted"

    proc = start_import(home, stopped)
    assert proc.wait(timeout=600) == 0, proc.stderr.read() if proc.stderr else ""
    assert snapshot(stopped, TABLES) == snapshot(clean, TABLES)


def test_a_spent_time_budget_ends_the_run_as_partial_and_the_next_run_resumes(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    generate_claude_corpus(home, seed=6, target_lines=800)  # a run per file, about 18
    clean = tmp_path / "clean.duckdb"
    assert run_import(_options(home, clean)).exit_code == 0

    partial = tmp_path / "partial.duckdb"
    budget = replace(_options(home, partial), max_duration=1e-9)  # spent after one batch
    result = run_import(budget)
    assert result.status == "partial" and result.exit_code == 0
    assert result.totals()["pending_bytes"] > 0
    assert scalar(partial, "SELECT status FROM imports") == "partial"
    assert scalar(partial, "SELECT count(*) FROM events") < scalar(
        clean, "SELECT count(*) FROM events"
    )
    rounds = 1
    while run_import(budget).status == "partial":  # each run reads at least one batch
        rounds += 1
        assert rounds < 200
    assert snapshot(partial, TABLES) == snapshot(clean, TABLES)


def test_per_source_ceilings_leave_the_rest_pending(tmp_path: Path) -> None:
    home = tmp_path / "home"
    generate_claude_corpus(home, seed=8, target_lines=3_000)
    clean = tmp_path / "clean.duckdb"
    assert run_import(_options(home, clean)).exit_code == 0
    capped = tmp_path / "capped.duckdb"
    options = replace(
        _options(home, capped),
        limits=ExtractLimits(
            batch_lines=500, max_records_per_source=40, max_bytes_per_source=64 * 1024
        ),
    )
    first = run_import(options)
    assert first.totals()["pending_bytes"] > 0
    assert all(s.records <= 40 for s in first.sources)
    runs = 1
    while run_import(options).totals()["pending_bytes"]:
        runs += 1
        assert runs < 100
    assert snapshot(capped, TABLES) == snapshot(clean, TABLES)


def test_an_abort_while_a_commit_is_written_keeps_the_receipt_true(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second signal raises KeyboardInterrupt in the reading thread, mid-source, while
    the loader thread may be writing the commit before: that commit finishes, the
    receipt's committed bytes are exactly the checkpoints', and the next run resumes."""
    from agentlake.ingest import committer as running

    home = tmp_path / "home"
    stats = generate_claude_corpus(home, seed=5, target_lines=6_000)
    clean = tmp_path / "clean.duckdb"
    assert run_import(_options(home, clean)).exit_code == 0
    digest, calls = running._digest, [0]

    def abort_on_the_40th_batch(source: SourceFile, offset: int, read: str | None) -> str | None:
        calls[0] += 1
        if calls[0] == 40:
            raise KeyboardInterrupt
        return digest(source, offset, read)

    monkeypatch.setattr(running, "_digest", abort_on_the_40th_batch)
    aborted = tmp_path / "aborted.duckdb"
    with pytest.raises(KeyboardInterrupt):
        run_import(_options(home, aborted))
    monkeypatch.undo()
    assert scalar(aborted, "SELECT status FROM imports") == "interrupted"
    detail = json.loads(scalar(aborted, "SELECT detail FROM imports"))
    committed = sum(s["bytes"] for s in detail["committed"])
    assert 0 < committed < stats.bytes
    assert scalar(aborted, "SELECT sum(committed_offset) FROM sources") == committed
    assert run_import(_options(home, aborted)).exit_code == 0
    assert snapshot(aborted, TABLES) == snapshot(clean, TABLES)


def test_progress_lines_count_committed_bytes_up_to_the_plan(
    cli: CliRunner, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    stats = generate_claude_corpus(home, seed=9, target_lines=600)
    catalog = tmp_path / "c.duckdb"
    proc = cli("import", "--home", home, "--catalog", catalog, "--progress", "lines")
    assert proc.returncode == 0, proc.stderr
    lines = [line.split() for line in proc.stderr.splitlines() if line.startswith("progress: ")]
    assert lines[0][1] == "planned" and 0 < int(lines[0][2]) <= stats.bytes
    planned = lines[0][2]
    done = [int(words[2]) for words in lines if words[1] == "committed"]
    assert len(done) > 1 and done == sorted(done) and done[-1] == int(planned)
    assert all(words[4] == planned for words in lines if words[1] == "committed")
    quiet = cli("import", "--home", home, "--catalog", tmp_path / "q.duckdb", "--progress", "none")
    assert quiet.returncode == 0 and "progress:" not in quiet.stderr
