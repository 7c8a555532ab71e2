"""Crash safety: a real `agentlake import` on a ≥ 50 MB corpus is SIGKILLed at several
moments and re-run each time; the final catalog equals a clean import table by table."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest

from fixtures.synth import generate_claude_corpus

from .helpers import snapshot, start_import

TABLES = ("events", "usage", "sessions", "rejects")


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_equals_clean_import(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stats = generate_claude_corpus(home, seed=11, target_lines=64_000)
    assert stats.bytes >= 50 * 1024 * 1024

    clean = tmp_path / "clean.duckdb"
    started = time.monotonic()
    proc = start_import(home, clean)
    assert proc.wait(timeout=600) == 0, proc.stderr.read() if proc.stderr else ""
    duration = time.monotonic() - started

    crashed = tmp_path / "crashed.duckdb"
    rng = random.Random(20261129)
    interrupted = 0
    for fraction in sorted(rng.uniform(0.05, 0.95) for _ in range(5)):
        proc = start_import(home, crashed)
        time.sleep(fraction * duration * 0.6)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            interrupted += 1
        proc.wait(timeout=600)
    assert interrupted >= 3, "the kills must land while the import runs"

    proc = start_import(home, crashed)
    assert proc.wait(timeout=600) == 0, proc.stderr.read() if proc.stderr else ""
    assert snapshot(crashed, TABLES) == snapshot(clean, TABLES)
    # Checkpoints match too, except the continuity label (a resumed source says
    # validated-append where the clean run said new).
    assert snapshot(crashed, ("sources",), exclude=("continuity",)) == snapshot(
        clean, ("sources",), exclude=("continuity",)
    )
