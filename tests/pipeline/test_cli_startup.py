"""The CLI starts without the library: importing it, and asking for help, load typer and
the command modules only. DuckDB, Arrow and polars cost most of a command's start
(about 0.1-0.2 s each time it runs), so they load when a command runs, not before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def _rich_utils_loaded_after(code: str) -> list[str]:
    probe = (
        f"{code}\nimport sys\n"
        "print(','.join(m for m in ('markdown_it', 'rich.markdown', 'rich.traceback', "
        "'pygments') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return [name for name in proc.stdout.strip().split(",") if name]


@pytest.mark.parametrize("argv", [["--help"], ["report", "--help"], ["report", "dayly"]])
def test_help_and_usage_errors_load_no_markdown(argv: list[str]) -> None:
    """Help is drawn without typer's Markdown and traceback support (markdown-it,
    pygments): the CLI's help is rich markup (agentlake.cli.import_hooks)."""
    code = (
        "import contextlib, io, sys\n"
        "from agentlake.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()),"
        " contextlib.suppress(SystemExit):\n"
        f"    main({argv!r})\n"
        "assert 'typer.rich_utils' in sys.modules\n"
    )
    assert _rich_utils_loaded_after(code) == []


def test_the_deferred_names_are_the_real_ones_when_used() -> None:
    """typer's Markdown help and its tracebacks still work, with rich's own classes, and
    rich.markdown imported afterwards is the real module."""
    code = (
        "from agentlake.cli import import_hooks\n"
        "import_hooks.install()\n"
        "import typer.rich_utils as ru\n"
        "import rich.markdown, rich.traceback\n"
        "md = ru._make_rich_text(text='# Title', markup_mode='markdown')\n"
        "assert type(md) is rich.markdown.Markdown, type(md)\n"
        "assert isinstance(md, ru.Markdown)\n"
        "assert rich.markdown.__file__.endswith('markdown.py')\n"
        "try:\n"
        "    raise ValueError('x')\n"
        "except ValueError as exc:\n"
        "    from typer.models import DeveloperExceptionConfig\n"
        "    tb = ru.get_traceback(exc, DeveloperExceptionConfig(), [])\n"
        "assert type(tb) is rich.traceback.Traceback, type(tb)\n"
        "print('ok')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert proc.stdout.strip() == "ok", proc.stderr


_PARTS = [
    ["report", "daily", "--help"],
    ["report", "--help"],
    ["report", "dayly"],
    ["report", "daily", "--bogus"],
    ["report", "daily", "--since", "yesterday"],
    ["sessions", "show", "--help"],
    ["sessions", "show"],
    ["sessions", "list", "--limit", "0"],
    ["search", "--help"],
    ["search"],
    ["doctor", "--help"],
    ["sql", "--help"],
    ["prices", "list", "--help"],
    ["serch", "x"],
    ["--help"],
    [],
]


@pytest.mark.parametrize("argv", _PARTS, ids=[" ".join(a) or "no-args" for a in _PARTS])
def test_the_invoked_part_answers_as_the_whole_app(argv: list[str]) -> None:
    from typer.testing import CliRunner

    from agentlake.cli import app, invoked_part

    # No COLUMNS: the CLI's consoles, made once per process, would keep it for the tests
    # that run after this one in the same process.
    whole = CliRunner().invoke(app, argv)
    part = CliRunner().invoke(invoked_part(app, argv), argv)
    assert (part.exit_code, part.stdout, part.stderr) == (
        whole.exit_code,
        whole.stdout,
        whole.stderr,
    )


def test_the_invoked_part_builds_only_the_named_command() -> None:
    from typer.core import TyperGroup
    from typer.main import get_command

    from agentlake.cli import app, invoked_part

    root = get_command(invoked_part(app, ["report", "daily", "--json"]))
    assert isinstance(root, TyperGroup)
    assert list(root.commands) == ["report"]
    report = root.commands["report"]
    assert isinstance(report, TyperGroup)
    assert list(report.commands) == ["daily"]
    whole, helped = get_command(app), get_command(invoked_part(app, ["--help"]))
    assert isinstance(whole, TyperGroup) and isinstance(helped, TyperGroup)
    assert list(helped.commands) == list(whole.commands)


def test_command_annotations_are_objects_not_strings() -> None:
    """typer reads every command's annotations on each run; strings (``from __future__
    import annotations`` in a command module) would be evaluated each time."""
    from typer.main import get_command

    from agentlake.cli import app

    def callbacks(group: object) -> list[object]:
        found = []
        for command in getattr(group, "commands", {}).values():
            found.append(command.callback)
            found.extend(callbacks(command))
        return found

    root = get_command(app)
    stringly = [
        f"{fn.__wrapped__.__module__}.{fn.__wrapped__.__qualname__}"  # type: ignore[attr-defined]
        for fn in callbacks(root)
        if fn is not None
        and any(isinstance(a, str) for a in fn.__wrapped__.__annotations__.values())  # type: ignore[attr-defined]
    ]
    assert stringly == []


# What each read command loads besides DuckDB, the library and (for tables) rich: the
# modules it does without are named here. A search ranks and reads with DuckDB alone
# (Arrow loads with the events the index adds); a report prices without the overrides'
# module unless there are overrides; no reader loads importlib.metadata (DuckDB's version
# is read by agentlake.cli.import_hooks), importlib.resources (agentlake.sql reads its
# files directly) or the writer's hashing.
_NONE_READS: tuple[str, ...] = ("importlib.metadata", "importlib.resources", "tempfile")
_READS_WITHOUT = {
    ("search", "hello", "--json"): ("pyarrow", "polars", "agentlake.load.price_overrides"),
    ("search", "hello"): ("pyarrow", "polars"),
    ("report", "daily", "--json"): (
        "polars",
        "tomllib",
        "agentlake.load.price_overrides",
        "hashlib",
    ),
    ("sessions", "list", "--json"): ("polars", "tomllib", "agentlake.load.price_overrides"),
}


@pytest.mark.parametrize("argv", list(_READS_WITHOUT), ids=" ".join)
def test_read_commands_load_only_what_they_use(
    argv: tuple[str, ...], demo_home_catalog: tuple[Path, Path], tmp_path: Path
) -> None:
    _, catalog = demo_home_catalog
    unwanted = (*_READS_WITHOUT[argv], *_NONE_READS)
    code = (
        "import contextlib, io, os, sys\n"
        f"os.environ['AGENTLAKE_CONFIG'] = {str(tmp_path / 'none.toml')!r}\n"
        "from agentlake.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
        f"    main({[*argv, '--catalog', str(catalog)]!r})\n"
        "assert out.getvalue(), 'no output'\n"
        f"print(','.join(m for m in {unwanted!r} if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_duckdb_loads_without_importlib_metadata_and_knows_its_version() -> None:
    """DuckDB's version module reads the installed version from its METADATA without
    importlib.metadata (agentlake.cli.import_hooks); the version is the one
    importlib.metadata gives, and importlib.metadata still loads for whoever asks."""
    code = (
        "import sys\n"
        "from agentlake.cli import import_hooks\n"
        "import_hooks.install()\n"
        "import duckdb\n"
        "assert 'importlib.metadata' not in sys.modules\n"
        "import importlib.metadata\n"
        "assert importlib.metadata.version('duckdb') == duckdb.__version__, duckdb.__version__\n"
        "assert importlib.metadata.version.__module__ == 'importlib.metadata'\n"
        "assert duckdb.version() == f'{duckdb.__version__} (with duckdb {duckdb.__duckdb_version__})'\n"
        "assert import_hooks.distribution_version('typer') == importlib.metadata.version('typer')\n"
        "print('ok')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert proc.stdout.strip() == "ok", proc.stderr
