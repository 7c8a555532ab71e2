"""Extraction in worker processes gives exactly the catalog of in-process extraction."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentlake import run as run_module
from agentlake.demo import generate_claude_home
from agentlake.run import ImportOptions, run_import
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
