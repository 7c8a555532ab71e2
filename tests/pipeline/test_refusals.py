"""Refused sources: one code per cause everywhere it is reported, non-regular files never
opened, a refusal reported once (not every night), and source identity independent of how
the home was spelled."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.read.doctor import diagnose
from fixtures.synth import generate_claude_home
from tests.conftest import CliRunner

from .helpers import scalar


def _options(home: Path, catalog: Path) -> ImportOptions:
    return ImportOptions(catalog=catalog, workspace="default", home=home, env={})


def _receipt(catalog: Path) -> dict[str, Any]:
    detail = scalar(catalog, "SELECT detail FROM imports ORDER BY import_id DESC LIMIT 1")
    return dict(json.loads(detail))


def _one_claude_dir(home: Path) -> Path:
    return next((home / ".claude" / "projects").iterdir())


def test_a_fifo_is_refused_as_not_a_file_without_being_opened(
    cli: CliRunner, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=1)
    fifo = _one_claude_dir(home) / "5d0c8e1e-0000-4000-8000-0000000000f1.jsonl"
    os.mkfifo(fifo)
    catalog = tmp_path / "c.duckdb"
    # Opening the FIFO would block until a writer came, so a watchdog plays the writer
    # if the import is still running after a minute (the test then fails).
    finished, blocked = threading.Event(), threading.Event()

    def release() -> None:
        if not finished.wait(60):
            blocked.set()
            with fifo.open("wb"):
                pass

    threading.Thread(target=release, daemon=True).start()
    proc = cli("import", "--home", home, "--catalog", catalog)
    finished.set()
    assert not blocked.is_set(), "the import blocked on a FIFO"
    assert proc.returncode == 1
    stderr = proc.stderr
    assert f"refused: NOT_A_FILE: {fifo}: a named pipe (FIFO), not a regular file" in stderr
    assert stderr.count(str(fifo)) == 1
    assert scalar(catalog, "SELECT count(*) FROM events") > 0  # the rest was imported
    report = diagnose(catalog, "default", home=home, env={})
    [refused] = report.refused
    assert refused.code == "NOT_A_FILE" and refused.remedy and "regular files" in refused.remedy


def _corrupt_state_db(home: Path) -> Path:
    state = home / ".codex" / "state_5.sqlite"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080)  # a header, then garbage
    return state


def test_a_corrupt_database_has_one_code_everywhere(cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    state = _corrupt_state_db(home)
    catalog = tmp_path / "c.duckdb"
    proc = cli("import", "--home", home, "--catalog", catalog)
    assert proc.returncode == 1
    [line] = [line for line in proc.stderr.splitlines() if line.startswith("refused:")]
    assert line.startswith(f"refused: SOURCE_CORRUPT: {state}: not a valid SQLite database")
    assert line.count(str(state)) == 1 and "SCHEMA_DRIFT" not in line
    assert "SOURCE_UNREADABLE" not in line and "restore the file" in line
    [receipt] = _receipt(catalog)["refused"]
    assert receipt["code"] == "SOURCE_CORRUPT" and receipt["new"] is True
    assert str(state) not in receipt["message"]
    assert scalar(catalog, "SELECT continuity || ' ' || status FROM sources") == "corrupt refused"
    report = diagnose(catalog, "default", home=home, env={})
    codes = {r.code for r in report.refused}
    assert codes == {"SOURCE_CORRUPT"}
    assert all("restore the file" in (r.remedy or "") for r in report.refused)


def test_a_refusal_is_reported_once_and_counted_after(cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=1)
    outside = tmp_path / "outside.jsonl"
    outside.write_text("{}\n")
    link = _one_claude_dir(home) / "5d0c8e1e-0000-4000-8000-0000000000e1.jsonl"
    link.symlink_to(outside)
    _corrupt_state_db(home)
    catalog = tmp_path / "c.duckdb"

    first = cli("import", "--home", home, "--catalog", catalog)
    assert first.returncode == 1 and first.stderr.count("refused: ") == 2
    nightly = cli("import", "--home", home, "--catalog", catalog)
    assert nightly.returncode == 0, nightly.stderr
    assert "refused: " not in nightly.stderr
    assert "2 sources still refused as reported before — see `agentlake doctor`" in nightly.stderr
    assert [r["new"] for r in _receipt(catalog)["refused"]] == [False, False]
    assert scalar(catalog, "SELECT status FROM imports ORDER BY import_id DESC LIMIT 1") == (
        "refused"
    )

    link.unlink()  # one cause goes away; the other stays
    assert cli("import", "--home", home, "--catalog", catalog).returncode == 0
    assert scalar(catalog, "SELECT count(*) FROM refusals") == 1
    link.symlink_to(outside)  # and comes back: reported again
    again = cli("import", "--home", home, "--catalog", catalog)
    assert again.returncode == 1 and "refused: SOURCE_OUTSIDE_ROOT" in again.stderr
    assert "1 source still refused" in again.stderr


def test_a_retried_source_that_became_readable_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlake.extract import jsonl, sources

    home = tmp_path / "home"
    generate_claude_home(home, sessions=1)
    [transcript] = _one_claude_dir(home).glob("*.jsonl")
    catalog = tmp_path / "c.duckdb"
    opened = sources.open_regular

    def denied(path: Path, **kwargs: int) -> object:
        if path == transcript:
            raise PermissionError(13, "Permission denied")
        return opened(path, **kwargs)

    monkeypatch.setattr(jsonl, "open_regular", denied)  # as chmod 0 is to any user but root
    first = run_import(_options(home, catalog))
    assert first.exit_code == 1 and first.refused[0].code == "SOURCE_UNREADABLE"
    assert "Permission denied; make it readable" in (first.refused[0].message or "")
    monkeypatch.undo()  # the file is as it was (same size and mtime): only a retry reads it
    second = run_import(_options(home, catalog))
    assert second.exit_code == 0 and not second.refused
    assert {s.planned.path: s.planned.continuity for s in second.sources}[transcript] == "retry"
    assert scalar(catalog, "SELECT count(*) FROM events") > 0
    assert scalar(catalog, "SELECT count(*) FROM refusals") == 0


def test_a_corrupt_database_is_retried_and_imported_once_repaired(tmp_path: Path) -> None:
    home = tmp_path / "home"
    state = _corrupt_state_db(home)
    catalog = tmp_path / "c.duckdb"
    assert run_import(_options(home, catalog)).refused[0].code == "SOURCE_CORRUPT"
    stat = state.stat()
    state.unlink()
    con = sqlite3.connect(state)
    con.execute("CREATE TABLE threads (id TEXT)")
    con.commit()
    con.close()
    os.utime(state, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime: a retry reads it
    result = run_import(_options(home, catalog))
    assert not result.refused, [s.message for s in result.refused]
    assert scalar(catalog, "SELECT status FROM sources") == "ok"


def test_source_identity_does_not_depend_on_the_working_directory(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate_claude_home(tmp_path / "t1" / "home", sessions=2)
    catalog = tmp_path / "c.duckdb"
    monkeypatch.chdir(tmp_path)
    assert cli("import", "--home", "t1/home", "--catalog", catalog).returncode == 0
    sources = scalar(catalog, "SELECT count(*) FROM sources")
    monkeypatch.chdir(tmp_path / "t1")
    again = cli("import", "--home", "home", "--catalog", catalog, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["totals"]["sources_unchanged"] == sources
    absolute = cli("import", "--home", tmp_path / "t1" / "x" / ".." / "home", "--catalog", catalog)
    assert absolute.returncode == 0
    assert scalar(catalog, "SELECT count(*) FROM sources") == sources
    paths = scalar(catalog, "SELECT list(path ORDER BY path) FROM sources")
    assert all(p.startswith(str(tmp_path.resolve() / "t1" / "home")) for p in paths)

    # Another home at the same relative path is other sources, not a replaced file.
    other = tmp_path / "t2"
    generate_claude_home(other / "home", sessions=1, seed=3)
    monkeypatch.chdir(other)
    proc = cli("import", "--home", "home", "--catalog", catalog)
    assert proc.returncode == 0 and "SOURCE_REPLACED" not in proc.stderr
    assert scalar(catalog, "SELECT count(*) FROM sources") > sources
