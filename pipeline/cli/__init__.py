"""The typer CLI: thin wiring over the library, one error boundary, rich or JSON output.

Exit codes: 0 ok, 1 finished but some sources refused, 2 usage, 4 not found,
5 catalog locked, 6 catalog unusable.

Each command group is a module whose ``register(app)`` adds its commands; :data:`app`
registers the modules of :data:`_COMMANDS` in order (``--help`` lists the commands, then
the groups, each in that order).

Importing the CLI loads typer and the command modules, nothing more: a command imports
the library (DuckDB, Arrow, polars, the renderers) when it runs, so ``--help`` and a
mistyped option answer at once (tests/pipeline/test_cli_startup.py holds this).

typer turns every command of an app into a click command on each run, reading the
parameters of each command function (a millisecond or more apiece). :func:`main` hands
typer only the command the arguments name (:func:`invoked_part`), or the whole app when
they name none (``--help``, a mistyped command: their output lists every command).
The command modules do without ``from __future__ import annotations`` for the same
reason: typer reads their parameters' annotations, and evaluating them from strings took
half of that time. Help is drawn without typer's Markdown support loaded, and DuckDB
loads without importlib.metadata (:mod:`.import_hooks`).
"""

from __future__ import annotations

import copy
import gc
import sys
from collections.abc import Sequence

import typer
from typer.main import get_command_name

from agentlake.ingest.budget import fewer_collections

from . import (
    audit,
    doctor,
    export,
    import_hooks,
    imports,
    lake,
    prices,
    providers,
    purge,
    reports,
    search,
    sessions,
    sources,
    sql,
)

_COMMANDS = (
    imports,
    sources,
    providers,
    search,
    reports,
    export,
    prices,
    sql,
    sessions,
    purge,
    doctor,
    audit,
    lake,
)

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
    import_hooks.install()
    args = list(argv) if argv is not None else sys.argv[1:]
    with fewer_collections():
        invoked_part(app, args)(args=args, prog_name="agentlake")


def invoked_part(group: typer.Typer, args: Sequence[str]) -> typer.Typer:
    """``group`` with only the command or subgroup that ``args[0]`` names (a subgroup
    likewise cut down by ``args[1]``), so that typer builds no other command; ``group``
    itself when ``args[0]`` names none of them (an option, a mistyped name: then the
    help or the error lists every command). Nothing else changes: the part parses,
    runs, helps and fails as the whole app does for the same ``args``."""
    if not args:
        return group
    name = args[0]
    commands = [
        info
        for info in group.registered_commands
        if info.callback is not None
        and (info.name or get_command_name(info.callback.__name__)) == name
    ]
    groups = [info for info in group.registered_groups if info.name == name]
    if len(commands) + len(groups) != 1:
        return group
    part = copy.copy(group)
    part.registered_commands = commands
    part.registered_groups = []
    for info in groups:
        sub = copy.copy(info)
        assert info.typer_instance is not None
        sub.typer_instance = invoked_part(info.typer_instance, args[1:])
        part.registered_groups.append(sub)
    if commands and not (part.registered_callback or part.info.callback):
        # typer runs an app of one command and no callback as that command alone (its
        # name would be read as its first argument): a callback keeps the part a group.
        part.callback()(_no_group_options)
    return part


def _no_group_options() -> None:
    """The callback of a part of one command (:func:`invoked_part`): no options."""
