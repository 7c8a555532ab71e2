"""Extraction in worker processes, and loading in a thread beside reading, give exactly
the catalog of doing each in turn."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentlake import run as run_module
from agentlake.extract.extract import ExtractLimits
from agentlake.run import ImportOptions, run_import
from fixtures.synth import generate_claude_home, generate_demo_home
from tests.conftest import FIXTURES

from .helpers import snapshot

TABLES = ("events", "usage", "sessions", "rejects", "sources")


def test_workers_produce_the_same_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_module, "PARALLEL_MIN_BYTES", 0)
    home = tmp_path / "home"
    generate_claude_home(home)
    # a drifting source and a bad-input source travel through the workers too
    shutil.copytree(
        FIXTURES / "claude" / "contract_drift" / ".claude", home / ".claude", dirs_exist_ok=True
    )
    malformed = FIXTURES / "claude" / "bad_input" / "malformed_json" / ".claude"
    shutil.copytree(malformed, home / ".claude", dirs_exist_ok=True)
    results = {}
    for workers in (0, 2):
        catalog = tmp_path / f"w{workers}.duckdb"
        results[workers] = run_import(
            ImportOptions(
                catalog=catalog,
                workspace="default",
                home=home,
                env={},
                build_index=False,
                workers=workers,
            )
        )
    assert results[0].exit_code == results[2].exit_code == 1
    assert [s.message for s in results[0].refused] == [s.message for s in results[2].refused]
    assert results[0].totals() == results[2].totals()
    assert snapshot(tmp_path / "w0.duckdb", TABLES) == snapshot(tmp_path / "w2.duckdb", TABLES)


def test_loading_beside_reading_gives_the_catalog_of_loading_in_turn(tmp_path: Path) -> None:
    """Commits written by the loader thread while the next is read (the default) give
    the rows, counts and receipts of commits written one after the other: small batches
    make many commits, Gemini's withdrawals start some of them, and a drifting and a
    malformed source are refused or rejected on the way."""
    home = tmp_path / "home"
    generate_demo_home(home)
    for fixture in ("contract_drift", "bad_input/malformed_json"):
        shutil.copytree(FIXTURES / "claude" / fixture / ".claude", home / ".claude",
                        dirs_exist_ok=True)  # fmt: skip
    results = {}
    for overlap in (False, True):
        results[overlap] = run_import(
            ImportOptions(catalog=tmp_path / f"o{overlap}.duckdb", workspace="default",
                          home=home, env={}, limits=ExtractLimits(batch_lines=300),
                          overlap_load=overlap)
        )  # fmt: skip
    assert results[True].exit_code == results[False].exit_code == 1
    assert results[True].totals() == results[False].totals()

    def outcomes(overlap: bool) -> list[tuple[object, ...]]:
        return [(s.planned.path, s.status, s.events, s.usage, s.rejected, s.committed_bytes)
                for s in results[overlap].sources]  # fmt: skip

    assert outcomes(True) == outcomes(False)
    assert sum(s.committed_bytes for s in results[True].sources) > 0
    tables = (*TABLES, "search_postings", "search_terms", "search_state")
    assert snapshot(tmp_path / "oTrue.duckdb", tables) == snapshot(
        tmp_path / "oFalse.duckdb", tables
    )
    assert results[False].load_wait_seconds > 0  # each commit is waited for
