"""The CLI starts without the library: importing it, and asking for help, load typer and
the command modules only. DuckDB, Arrow and polars cost most of a command's start
(about 0.1-0.2 s each time it runs), so they load when a command runs, not before."""

from __future__ import annotations

import subprocess
import sys

import pytest

_HEAVY = ("duckdb", "pyarrow", "polars")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {_HEAVY!r} if m in sys.modules))"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return [name for name in proc.stdout.strip().split(",") if name]


def test_importing_the_cli_loads_no_library() -> None:
    assert _loaded_after("import agentlake.cli") == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["report", "--help"], ["sessions", "list", "--help"], ["doctor", "--help"]],
)
def test_help_loads_no_library(argv: list[str]) -> None:
    code = (
        "import contextlib, io\n"
        "from agentlake.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    main({argv!r})"
    )
    assert _loaded_after(code) == []
