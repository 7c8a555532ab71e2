"""The typer CLI: thin wiring over the library, one error boundary, rich or JSON output.

Exit codes: 0 ok, 1 finished but some sources refused, 2 usage, 4 not found,
5 catalog locked, 6 catalog unusable.

Each command group is a module whose ``register(app)`` adds its commands; :data:`app`
registers the modules of :data:`_COMMANDS` in order (``--help`` lists the commands, then
the groups, each in that order).

Importing the CLI loads typer and the command modules, nothing more: a command imports
the library (DuckDB, Arrow, polars, the renderers) when it runs, so ``--help`` and a
mistyped option answer at once (tests/pipeline/test_cli_startup.py holds this).
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

import typer

from agentlake.ingest.budget import fewer_collections

from . import doctor, imports, prices, providers, reports, search, sessions, sql

_COMMANDS = (imports, providers, search, reports, prices, sql, sessions, doctor)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="agentlake: import AI coding agents' transcripts into one DuckDB catalog.",
)
for _module in _COMMANDS:
    _module.register(app)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    # What is loaded by now (typer and the command modules) lives as long as the
    # process: the cycle collector need not walk it again (the command's own modules
    # are frozen too once loaded, by the boundary), and a command's short-lived
    # containers can pile up longer between its passes.
    gc.freeze()
    with fewer_collections():
        app(args=list(argv) if argv is not None else None, prog_name="agentlake")
