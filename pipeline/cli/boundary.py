"""The CLI's one error boundary: every command runs its action through :func:`guard`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TypeVar

import typer

from agentlake.errors import AgentlakeError
from agentlake.load.catalog import READ_WAIT, WAIT_NOTICE

from .output import err

T = TypeVar("T")


def guard(debug: bool, action: Callable[[], T], *, wait: bool = False) -> T:
    """The one error boundary: our errors become one line and an exit code. ``wait``
    makes the command's catalog reads wait for a running import."""
    token = READ_WAIT.set(wait)
    notice = WAIT_NOTICE.set(lambda text: err.print(text, highlight=False))
    try:
        return action()
    except AgentlakeError as exc:
        if debug:
            raise
        err.print(f"[red]error:[/red] {exc.message}", highlight=False)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        err.print("interrupted")
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(141) from None
    except Exception as exc:  # the CLI boundary: anything else is a bug, shown in one line
        if debug:
            raise
        err.print(
            f"[red]internal error:[/red] {type(exc).__name__}: {exc} (rerun with --debug for a traceback)",
            highlight=False,
        )
        raise typer.Exit(70) from None
    finally:
        WAIT_NOTICE.reset(notice)
        READ_WAIT.reset(token)
