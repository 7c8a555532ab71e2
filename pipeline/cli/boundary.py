"""The CLI's one error boundary: every command runs its action through :func:`guard`.

Every command module imports this one, so it loads the catalog and the consoles only
when a command runs (``--help`` needs neither)."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from typing import TypeVar

import typer

from agentlake.errors import AgentlakeError

T = TypeVar("T")


def guard(debug: bool, action: Callable[[], T], *, wait: bool = False) -> T:
    """The one error boundary: our errors become one line and an exit code. ``wait``
    makes the command's catalog reads wait for a running import."""
    from agentlake.load.catalog import READ_WAIT, WAIT_NOTICE

    if gc.get_freeze_count():
        # The entry point froze what it had loaded (agentlake.cli.main); what the
        # command has loaded since (DuckDB, Arrow, the library) lives as long, so the
        # collector need not walk it again either.
        gc.freeze()
    token = READ_WAIT.set(wait)
    notice = WAIT_NOTICE.set(_say)
    try:
        return action()
    except AgentlakeError as exc:
        if debug:
            raise
        _say(f"[red]error:[/red] {exc.message}")
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        _say("interrupted")
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(141) from None
    except Exception as exc:  # the CLI boundary: anything else is a bug, shown in one line
        if debug:
            raise
        _say(
            f"[red]internal error:[/red] {type(exc).__name__}: {exc} (rerun with --debug for a traceback)"
        )
        raise typer.Exit(70) from None
    finally:
        WAIT_NOTICE.reset(notice)
        READ_WAIT.reset(token)


def _say(text: str) -> None:
    """One line on stderr (rich markup); rich loads only when there is something to say."""
    from .consoles import err

    err.print(text, highlight=False)
