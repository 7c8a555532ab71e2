"""Crash safety: a real `agentlake import` on a ≥ 50 MB corpus is SIGKILLed at several
moments and re-run each time; the final catalog equals a clean import table by table."""

from __future__ import annotations

import random
import signal
from pathlib import Path

import pytest

from fixtures.synth import generate_claude_corpus

from .helpers import snapshot, start_import, start_import_reporting, wait_for_commit

TABLES = ("events", "usage", "sessions", "rejects")


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_equals_clean_import(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stats = generate_claude_corpus(home, seed=11, target_lines=64_000)
    assert stats.bytes >= 50 * 1024 * 1024

    clean = tmp_path / "clean.duckdb"
    proc = start_import(home, clean)
    assert proc.wait(timeout=600) == 0, proc.stderr.read() if proc.stderr else ""

    # Each kill lands once the run has committed a random share of what it planned
    # (0: planned, nothing committed yet), give or take the next batch's work.
    crashed = tmp_path / "crashed.duckdb"
    rng = random.Random(20261129)
    for fraction in [0.0, *sorted(rng.uniform(0.05, 0.8) for _ in range(3))]:
        proc = start_import_reporting(home, crashed)
        assert wait_for_commit(proc, fraction), "the kill must land while the import runs"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=600)
        assert proc.returncode == -signal.SIGKILL

    proc = start_import(home, crashed)
    assert proc.wait(timeout=600) == 0, proc.stderr.read() if proc.stderr else ""
    assert snapshot(crashed, TABLES) == snapshot(clean, TABLES)
    # Checkpoints match too, except the continuity label (a resumed source says
    # validated-append where the clean run said new).
    assert snapshot(crashed, ("sources",), exclude=("continuity",)) == snapshot(
        clean, ("sources",), exclude=("continuity",)
    )
