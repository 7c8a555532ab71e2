"""Soak: many SIGKILLs at random moments across imports of a growing corpus — lines are
appended between kills, one file is truncated below its committed offset and one is
replaced by another file — and after the final run the catalog equals a clean import of
the final files, except for the two refused sources, which the catalog reports.

``AGENTLAKE_SOAK_KILLS`` sets the number of kills (9 by default: three each
before, between and after the truncation and the replacement; the acceptance run
uses 200).
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from fixtures.synth import generate_claude_corpus

from .helpers import snapshot, start_import, start_import_reporting, wait_for_commit

KILLS = int(os.environ.get("AGENTLAKE_SOAK_KILLS", "9"))
TABLES = ("events", "usage", "sessions", "rejects")


def _append(path: Path, tag: str, lines: int = 6) -> None:
    """Append copies of the file's last lines with fresh ids (new events and calls)."""
    tail = path.read_bytes().splitlines(keepends=True)[-lines:]
    fresh = [
        line.replace(b'"uuid":"', f'"uuid":"{tag}-{i}-'.encode()).replace(
            b'"id":"msg_', f'"id":"msg_{tag}{i}'.encode()
        )
        for i, line in enumerate(tail)
        if line.endswith(b"\n")
    ]
    with path.open("ab") as out:
        out.writelines(fresh)


def _without(catalog: Path, refused: set[str]) -> dict[str, list[tuple[Any, ...]]]:
    """The catalog's tables without the rows of the refused files' sessions."""
    con = duckdb.connect(str(catalog), read_only=True)
    sessions = {Path(p).stem for p in refused}
    ids = {
        r[0]
        for r in con.execute(
            "SELECT source_id FROM sources WHERE list_contains(?, path)", [sorted(refused)]
        ).fetchall()
    }
    con.close()
    snap = snapshot(catalog, TABLES, keep_paths=False, exclude=("source_id", "source_offset"))
    full = snapshot(catalog, TABLES, keep_paths=False)
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table, rows in snap.items():
        keep = []
        for row, whole in zip(rows, full[table], strict=True):
            text = repr(whole)
            if any(s in text for s in sessions) or any(i in text for i in ids):
                continue
            keep.append(row)
        out[table] = keep
    return out


@pytest.mark.slow
def test_random_kills_across_a_growing_corpus_then_resume_equals_clean_import(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    generate_claude_corpus(home, seed=21, target_lines=12_000)
    files = sorted(home.rglob("*.jsonl"))
    sessions = [p for p in files if len(p.stem) == 36]  # main transcripts, not subagents
    rng = random.Random(20261130)
    catalog = tmp_path / "soak.duckdb"
    assert start_import(home, catalog, "--memory-limit", "512MiB").wait(timeout=600) == 0
    truncated, replaced, donor = sessions[3], sessions[7], sessions[11]
    landed = attempts = 0
    truncated_done = replaced_done = False
    # Until KILLS SIGKILLs have hit a running import (a run that finished first does not
    # count), with the corpus growing between attempts.
    while landed < KILLS and attempts < 4 * KILLS:
        attempts += 1
        if attempts % 2 == 0:
            for path in rng.sample(files, 40):
                if path not in (truncated, replaced, donor):
                    _append(path, f"soak{attempts}", lines=30)
        if not truncated_done and landed >= KILLS // 3:
            truncated_done = True
            data = truncated.read_bytes()
            truncated.write_bytes(data[: len(data) // 3])
        if not replaced_done and landed >= 2 * KILLS // 3:
            replaced_done = True
            # Another session's lines under this file's session id, with fresh ids.
            content = (
                donor.read_bytes()
                .replace(donor.stem.encode(), replaced.stem.encode())
                .replace(b'"uuid":"', b'"uuid":"replaced-')
                .replace(b'"id":"msg_', b'"id":"msg_replaced')
            )
            replaced.unlink()
            replaced.write_bytes(content)
        # The kill lands once the run has planned, or has committed a random share of
        # its plan (most runs read only the lines appended since the last one).
        proc = start_import_reporting(home, catalog, "--memory-limit", "512MiB")
        if wait_for_commit(proc, rng.choice((0.0, rng.random()))):
            proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=600)
        landed += proc.returncode == -signal.SIGKILL
    print(f"soak: {landed} SIGKILLs landed while an import ran, in {attempts} attempts")
    assert landed == KILLS, f"only {landed} of {KILLS} kills landed during an import"
    assert truncated_done and replaced_done

    final = start_import(home, catalog, "--memory-limit", "512MiB")
    # Finished, with the two refused sources: exit 1 only if no earlier run that got as
    # far as its commit had reported them already.
    assert final.wait(timeout=600) in (0, 1)
    con = duckdb.connect(str(catalog), read_only=True)
    refused = {
        r[0] for r in con.execute("SELECT path FROM sources WHERE status = 'refused'").fetchall()
    }
    continuity = dict(
        con.execute("SELECT path, continuity FROM sources WHERE status = 'refused'").fetchall()
    )
    con.close()
    assert refused == {str(truncated), str(replaced)}
    assert continuity[str(truncated)] == "truncated"
    # A new file may get the freed inode back; then its changed bytes say "rewritten".
    assert continuity[str(replaced)] in ("replaced", "rewritten")

    clean = tmp_path / "clean.duckdb"
    assert start_import(home, clean, "--memory-limit", "512MiB").wait(timeout=600) == 0
    kept = _without(catalog, refused)
    assert len(kept["events"]) > 5_000 and len(kept["usage"]) > 1_000  # a real comparison
    assert kept == _without(clean, refused)
