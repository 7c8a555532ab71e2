"""Hiding and restoring sessions: ``agentlake sessions hide ID`` and ``restore ID``.

Hiding sets ``sessions.lifecycle`` to ``'tombstoned'``; nothing is deleted. Every read
then leaves the session out — ``sessions list`` and ``show``, ``search``, every
``report`` (its calls leave the totals), the workspace's views in ``agentlake sql`` —
unless it is given ``--include-hidden``. Restoring sets it back to ``'active'`` and the
session comes back whole: its events, calls and tags were never touched, so every read
gives what it gave before the session was hidden.

**Subagents.** A session is hidden with its whole subtree: every session under it in
its tree of parent links (Claude Code and Cursor subagent transcripts, Codex spawned
threads and forks; ``session_rollup``), since they are parts of the work the user sees
as one session and a report rolls their calls up into it. Restoring a session restores
its whole subtree in the same way. Hiding or restoring a subagent alone changes only it
and what is under it. A hidden session stays hidden when later imports add
to it (imports never write ``lifecycle``); a subagent first imported after its parent
was hidden is visible until the parent is hidden again, which then changes only it.

**Idempotent.** Hiding a session whose subtree is hidden already (or restoring one
whose subtree is active) changes nothing, writes no audit row and says so (exit 0).

Each change is one transaction under the writer lock with its content-free audit row
(:func:`agentlake.manage.audit.record`): the counts of sessions, events and usage rows
it hid or restored, and a digest of the sessions' ids.

JSON shape (``sessions hide|restore … --json``; stable, new keys may be added)::

    {"operation": "hide" | "restore", "workspace", "provider", "session_id",
     "lifecycle": "tombstoned" | "active", "changed": bool,
     "sessions": [str, …],            (the ids whose lifecycle changed, sorted)
     "counts": {"sessions", "events", "usage"}, "audit_id": int | null}
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final, Literal

from agentlake import sql
from agentlake.load.lake import Catalog
from agentlake.read.names import session_named

from .audit import record
from .authz import Authorization
from .writes import mutation

Lifecycle = Literal["active", "tombstoned"]
# The lifecycle each operation leaves a session in.
TARGET: Final[dict[str, Lifecycle]] = {"hide": "tombstoned", "restore": "active"}


@dataclass(frozen=True, slots=True)
class LifecycleChange:
    """What ``hide``/``restore`` did: the sessions whose lifecycle changed (the named
    session and those of its subtree that were not in the target state already), their
    events and usage rows, and the audit row (``None`` when nothing changed)."""

    operation: str
    workspace: str
    provider: str
    session_id: str
    sessions: tuple[str, ...]
    events: int
    usage: int
    audit_id: int | None

    @property
    def lifecycle(self) -> Lifecycle:
        """The lifecycle the sessions are in now."""
        return TARGET[self.operation]

    @property
    def changed(self) -> bool:
        """Whether any session changed."""
        return bool(self.sessions)

    @property
    def counts(self) -> dict[str, int]:
        """The counts the audit row records."""
        return {"sessions": len(self.sessions), "events": self.events, "usage": self.usage}

    @property
    def message(self) -> str:
        """One line saying what happened."""
        subject = f"session {self.session_id} ({self.provider})"
        state = "hidden" if self.operation == "hide" else "active"
        if not self.changed:
            return f"{subject} is {state} already; nothing to do"
        others = len(self.sessions) - (self.session_id in self.sessions)
        with_sub = f" with {others} session(s) under it" if others else ""
        verb = "hidden" if self.operation == "hide" else "restored"
        tail = (
            "; reads leave it out unless --include-hidden ('agentlake sessions restore' brings it back)"
            if self.operation == "hide"
            else "; every read shows it again"
        )
        return (
            f"{subject}{with_sub} {verb}: {self.events:,} events and {self.usage:,} "
            f"model calls{tail}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape (module docstring)."""
        return {
            "operation": self.operation, "workspace": self.workspace,
            "provider": self.provider, "session_id": self.session_id,
            "lifecycle": self.lifecycle, "changed": self.changed,
            "sessions": list(self.sessions), "counts": self.counts, "audit_id": self.audit_id,
        }  # fmt: skip


def change_lifecycle(
    catalog: Catalog, auth: Authorization, ident: str, *, wait: bool = False
) -> LifecycleChange:
    """Hide (``auth.operation`` ``hide``) or restore (``restore``) the session ``ident``
    (an id or unique prefix, hidden or not) of ``auth.workspace`` with its subtree, in
    one transaction with its audit row. A session of another workspace is exactly an
    unknown id (:class:`~agentlake.errors.NotFoundError`, exit 4). ``wait``: wait for a
    running import instead of failing (exit 5)."""
    if auth.operation not in TARGET:
        raise ValueError(
            f"change_lifecycle needs a hide or restore authorization, not {auth.operation}"
        )
    target = TARGET[auth.operation]
    with mutation(catalog, workspace=auth.workspace, wait=wait) as con:
        provider, session_id = session_named(con, auth.workspace, ident, include_hidden=True)
        key = {"workspace": auth.workspace, "provider": provider}
        subtree = con.execute(
            sql.query("lifecycle_subtree"), {**key, "session_id": session_id}
        ).fetchall()
        moving = [r for r in subtree if r[1] != target]
        ids = [str(r[0]) for r in moving]
        events, usage = sum(int(r[2]) for r in moving), sum(int(r[3]) for r in moving)
        audit_id = None
        if ids:
            params = {**key, "ids": ids, "lifecycle": target}
            con.execute(sql.query("lifecycle_set"), params)
            con.execute(sql.query("lifecycle_set_versions"), params)
            digest = hashlib.sha256("\0".join([provider, *ids]).encode()).hexdigest()
            audit_id = record(
                con, auth, provider=provider, session_id=session_id,
                counts={"sessions": len(ids), "events": events, "usage": usage}, digest=digest,
            )  # fmt: skip
    return LifecycleChange(
        auth.operation, auth.workspace, provider, session_id, tuple(ids), events, usage, audit_id
    )
