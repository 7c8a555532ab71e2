"""The authorization context every lifecycle operation is built with, before anything is
read or changed: who acts (the actor), on which workspace, doing what. The workspace is
applied to every lookup, so a session of another workspace is exactly an unknown id."""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from agentlake.config import check_workspace

# The operations that change a catalog (each writes an audit row), and reading the audit.
Operation = Literal[
    "hide", "restore", "purge", "tag", "untag", "relocate", "release", "audit"
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Authorization:
    """One operation's context: the actor, the workspace it is confined to, and what it
    does."""

    actor: str
    workspace: str
    operation: Operation


def actor_name(env: Mapping[str, str] | None = None) -> str:
    """``$AGENTLAKE_ACTOR``, else the login name of the process's user."""
    env = os.environ if env is None else env
    named = env.get("AGENTLAKE_ACTOR", "").strip()
    if named:
        return named[:128]
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container's arbitrary uid)
        return f"uid:{os.getuid()}"


def authorize(
    workspace: str, operation: Operation, *, env: Mapping[str, str] | None = None
) -> Authorization:
    """The context of ``operation`` on ``workspace`` (a valid workspace name, else a
    usage error) by the current actor."""
    return Authorization(actor_name(env), check_workspace(workspace), operation)
