"""Shared test helpers: running the real CLI in a subprocess, fresh catalogs, homes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
CONFORMANCE = REPO.parent / "shared" / "conformance"

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def cli_env(**extra: str) -> dict[str, str]:
    """A clean environment for the CLI: no provider env overrides leak in."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "AGENTLAKE_CATALOG", "AGENTLAKE_WORKSPACE")
    }
    env.update(extra)
    return env


@pytest.fixture
def run_cli() -> CliRunner:
    """Run ``agentlake ARGS`` as a real subprocess; returns the completed process."""

    def run(
        *args: str | Path, env: dict[str, str] | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agentlake", *map(str, args)],
            capture_output=True,
            text=True,
            env=env or cli_env(),
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """A path for a fresh catalog."""
    return tmp_path / "catalog.duckdb"


@pytest.fixture(autouse=True)
def _no_user_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The developer's own agentlake config file (price overrides) never leaks into a test."""
    monkeypatch.setenv("AGENTLAKE_CONFIG", str(tmp_path_factory.getbasetemp() / "no-config.toml"))
