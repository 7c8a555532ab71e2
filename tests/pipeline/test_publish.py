"""The publish step through the CLI: `import --no-index` then `agentlake index` gives the
index of a plain import, search and the index command say how far the index lags, the
index command takes the writer lock as an import does, and a publish step SIGKILLed at
random points resumes from its watermark to the index of a clean import.

``AGENTLAKE_PUBLISH_KILLS`` sets the number of kills (3 by default).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import agentlake
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.catalog import open_for_write
from fixtures.synth import generate_claude_home
from tests.conftest import CliRunner, cli_env

from .helpers import scalar, snapshot

KILLS = int(os.environ.get("AGENTLAKE_PUBLISH_KILLS", "3"))
# The index compared by event and term, with the documents' numbers, the statistics and
# the watermark: two runs of the publish step over the same events number them alike.
INDEX = ("search_postings", "search_terms", "search_docs", "search_state", "search_watermark")


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=6, turns_per_session=8)
    return home


def test_no_index_then_index_equals_a_plain_import(run_cli: CliRunner, tmp_path: Path) -> None:
    home = _home(tmp_path)
    plain, apart = tmp_path / "plain.duckdb", tmp_path / "apart.duckdb"
    done = run_cli("import", "--home", home, "--catalog", plain, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["index"]["indexed"] > 0

    done = run_cli("import", "--home", home, "--catalog", apart, "--no-index", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["index"] is None
    events = int(scalar(apart, "SELECT count(*) FROM events"))
    assert scalar(apart, "SELECT count(*) FROM search_postings") == 0

    # search says how many events it cannot find yet: in JSON, and as one line
    found = run_cli("search", "cache", "--catalog", apart, "--json")
    assert found.returncode == 0, found.stderr
    doc = json.loads(found.stdout)
    assert doc["hits"] == [] and doc["unindexed"] == events
    human = run_cli("search", "cache", "--catalog", apart)
    lines = [line for line in human.stdout.splitlines() if "not searchable yet" in line]
    assert lines == [f"{events:,} events are not searchable yet (the search index lags); "
                     "run 'agentlake index'"]  # fmt: skip

    indexed = run_cli("index", "--catalog", apart, "--json")
    assert indexed.returncode == 0, indexed.stderr
    doc = json.loads(indexed.stdout)
    assert (doc["workspace"], doc["indexed"], doc["withdrawn"]) == ("default", events, 0)
    assert snapshot(apart, INDEX) == snapshot(plain, INDEX)
    for catalog in (plain, apart):
        found = run_cli("search", "cache", "--catalog", catalog, "--json")
        assert json.loads(found.stdout)["unindexed"] == 0
    assert run_cli("search", "cache", "--catalog", apart, "--json").stdout == found.stdout
    again = run_cli("index", "--catalog", apart)
    assert again.returncode == 0 and "indexed 0 events" in again.stdout
    human = run_cli("import", "--home", home, "--catalog", tmp_path / "h.duckdb", "--no-index")
    assert "search index was not updated (--no-index); run 'agentlake index'" in human.stdout


def test_index_takes_the_writer_lock_and_needs_a_catalog(
    run_cli: CliRunner, tmp_path: Path
) -> None:
    catalog = tmp_path / "c.duckdb"
    missing = run_cli("index", "--catalog", catalog, "--json")
    assert missing.returncode == 4 and "no catalog here" in missing.stderr
    assert not catalog.exists()
    run_import(ImportOptions(catalog=catalog, workspace="default", home=_home(tmp_path),
                             env={}, build_index=False))  # fmt: skip
    with open_for_write(catalog):  # an import is writing
        busy = run_cli("index", "--catalog", catalog)
    assert busy.returncode == 5 and "--wait" in busy.stderr
    assert run_cli("index", "--catalog", catalog, "--workspace", "other").returncode == 0
    assert scalar(catalog, "SELECT count(*) FROM search_postings") == 0  # not its events
    published = agentlake.open(catalog).index()  # the Python facade runs it too
    assert published.indexed == scalar(catalog, "SELECT count(*) FROM events") > 0


# Runs the publish step alone on argv[1], a slice of argv[2] bytes per transaction,
# printing a marker line as each slice is written and as it commits.
_PUBLISH = """
import sys
from pathlib import Path

from agentlake.ingest.run import IndexOptions, run_index


def tell(point, number):
    print(point, number, flush=True)


run_index(IndexOptions(catalog=Path(sys.argv[1]), workspace="default",
                       slice_bytes=int(sys.argv[2]), progress=tell))
print("done", flush=True)
"""


def _start_publish(catalog: Path, slice_bytes: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _PUBLISH, str(catalog), str(slice_bytes)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(), text=True,
    )  # fmt: skip


def test_sigkill_during_the_publish_step_then_resume_equals_a_clean_import(
    tmp_path: Path,
) -> None:
    """Each run is killed at a random marker: while a slice is written but not
    committed, or just after a commit. The next run resumes from the watermark, and the
    last one's index is a clean import's, with no posting of a missing event."""
    home = _home(tmp_path)
    clean, crashed = tmp_path / "clean.duckdb", tmp_path / "crashed.duckdb"
    slice_bytes = max(512, 12_288 // KILLS)  # more kills, more and smaller slices
    for catalog in (clean, crashed):
        result = run_import(ImportOptions(catalog=catalog, workspace="default", home=home,
                                          env={}, build_index=False))  # fmt: skip
        assert result.exit_code == 0
    proc = _start_publish(clean, slice_bytes)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    slices = out.count("committed")
    assert slices > 3 * KILLS, "every run must leave slices for the next"

    rng = random.Random(20261203)
    killed = 0
    for _ in range(KILLS):
        proc = _start_publish(crashed, slice_bytes)
        assert proc.stdout is not None
        # The marker to kill at: "slice n" (written, not committed) or "committed n";
        # from the second on, so that every run commits a slice first.
        target = rng.randrange(2, 7)
        for seen, _ in enumerate(proc.stdout, start=1):
            if seen == target:
                proc.send_signal(signal.SIGKILL)
                killed += 1
                break
        proc.wait(timeout=300)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    assert killed == KILLS
    assert scalar(crashed, "SELECT count(*) FROM search_postings") > 0  # some slices stayed

    proc = _start_publish(crashed, slice_bytes)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and out.endswith("done\n"), err
    assert out.count("committed") < slices  # it resumed rather than starting over
    assert snapshot(crashed, INDEX) == snapshot(clean, INDEX)
    orphans = scalar(
        crashed,
        "SELECT count(*) FROM search_postings p LEFT JOIN search_docs d USING (doc) "
        "LEFT JOIN events e USING (event_id) WHERE e.event_id IS NULL",
    )
    assert orphans == 0
