"""Shared test helpers: running the real CLI in a subprocess, fresh catalogs, homes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from agentlake.load.lake import LakeCatalog
from fixtures.postgres import PostgresServer, stop_postgres
from tests.lakes import BACKENDS, Backend, catalog_of, lake_url, postgres_for_tests

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
CONFORMANCE = REPO.parent / "shared" / "conformance"

CliRunner = Callable[..., subprocess.CompletedProcess[str]]
# Provider and catalog overrides of the developer's environment never reach a test.
_PROVIDER_ENV = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "COPILOT_HOME",
    "XDG_DATA_HOME",  # OpenCode's data directory
    "OPENHUMAN_WORKSPACE",
    "AGENTLAKE_CATALOG",
    "AGENTLAKE_WORKSPACE",
    "AGENTLAKE_DATA_PATH",
)


def cli_env(**extra: str) -> dict[str, str]:
    """A clean environment for the CLI: no provider env overrides leak in."""
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    env.update(extra)
    return env


def pytest_configure(config: pytest.Config) -> None:
    """CI (``AGENTLAKE_REQUIRE_CONFORMANCE=1``, set by .ci/run) fails when the shared
    conformance corpus is absent, where a user's clone skips the tests that read it."""
    # pytest-xdist exports its terminal's width to the workers; the CLI's consoles would
    # keep it for the whole session, where each test sets the width it renders at.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.pop("COLUMNS", None)
    # Created now, before any in-process run sets COLUMNS: rich fixes a console's width to
    # $COLUMNS when it is created, and every in-process run shares the CLI's consoles.
    import agentlake.cli.consoles  # noqa: F401

    if os.environ.get("AGENTLAKE_REQUIRE_CONFORMANCE") == "1" and not CONFORMANCE.is_dir():
        raise pytest.UsageError(
            f"{CONFORMANCE} is missing: the conformance corpus must be present in CI"
        )


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
def cli() -> CliRunner:
    """Run ``agentlake ARGS`` in this process (typer's test runner, stdout and stderr
    apart), with the result shape of :func:`run_cli`: for tests where the process
    boundary is not the point (a new interpreter costs about half a second)."""
    from typer.testing import CliRunner as TyperRunner

    from agentlake.cli import app

    def run(
        *args: str | Path, env: Mapping[str, str | None] | None = None
    ) -> subprocess.CompletedProcess[str]:
        overrides: dict[str, str | None] = dict.fromkeys(_PROVIDER_ENV)
        overrides.update(env or {})
        result = TyperRunner().invoke(app, [str(a) for a in args], env=overrides)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return subprocess.CompletedProcess(
            [str(a) for a in args], result.exit_code, result.stdout, result.stderr
        )

    return run


@pytest.fixture
def lexical_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every library search of the test ranks by words alone (``mode="lexical"``),
    whatever vectors its catalog holds: for tests of BM25 and the lexical index."""
    import agentlake.read.search as searching

    for function in (searching.search, searching.search_page):
        assert function.__kwdefaults__ is not None
        monkeypatch.setitem(function.__kwdefaults__, "mode", "lexical")


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """A path for a fresh catalog."""
    return tmp_path / "catalog.duckdb"


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the test process (started on first use, stopped at the
    end)."""
    server = postgres_for_tests()
    try:
        yield server
    finally:
        stop_postgres(server)


@pytest.fixture(params=BACKENDS)
def any_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Path | LakeCatalog:
    """A fresh catalog of each backend in turn: a DuckDB file, a DuckLake on SQLite and
    one on PostgreSQL (for tests about data, not about the file)."""
    backend: Backend = request.param
    server = request.getfixturevalue("postgres") if backend == "postgres" else None
    return catalog_of(lake_url(backend, tmp_path, server), tmp_path)


@pytest.fixture(params=["duckdb", "postgres"])
def file_or_lake(request: pytest.FixtureRequest, tmp_path: Path) -> Path | LakeCatalog:
    """A fresh DuckDB file, then a fresh DuckLake on PostgreSQL: for the many data tests
    whose third backend (SQLite metadata) adds nothing but time."""
    backend: Backend = request.param
    server = request.getfixturevalue("postgres") if backend == "postgres" else None
    return catalog_of(lake_url(backend, tmp_path, server), tmp_path)


@pytest.fixture(autouse=True)
def _no_user_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The developer's own agentlake config file (price overrides) never leaks into a test."""
    monkeypatch.setenv("AGENTLAKE_CONFIG", str(tmp_path_factory.getbasetemp() / "no-config.toml"))


@pytest.fixture(scope="session")
def demo_home_catalog(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The four-provider demo home and its catalog, imported once per test process: for
    tests that only read them (never write to either)."""
    from agentlake.ingest.run import ImportOptions, run_import
    from fixtures.synth import generate_demo_home

    root = tmp_path_factory.mktemp("demo")
    home, catalog = root / "home", root / "catalog.duckdb"
    generate_demo_home(home)
    result = run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    assert result.exit_code == 0
    return home, catalog


# The longest modules start first: with two workers taking modules in turn, one long
# module started last keeps a worker busy after the other has finished.
_LONGEST_FIRST: tuple[str, ...] = (
    "tests/test_benchmarks.py",
    "tests/pipeline/test_crash.py",
    "tests/extract/test_gemini.py",
    "tests/pipeline/test_soak.py",
    "tests/pipeline/test_memory.py",
    "tests/test_cli_latency.py",
    "tests/pipeline/test_interrupt.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the collected tests so that the longest modules come first (the order
    within a module is kept)."""
    rank = {module: n for n, module in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
