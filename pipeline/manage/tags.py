"""Session tags: ``agentlake sessions tag ID TAG`` and ``untag``, and the one rule a tag
must follow (:func:`check_tag`, kept with the read filters in
:mod:`agentlake.read.lifecycle_filters` so that reads load no write code) wherever it is
named — on the commands that set it and on the ``--tag`` filters of ``sessions list``,
``search`` and ``report``.

A tag is 1 to 64 characters of ASCII letters, digits and ``- _ . : /`` (so ``ci``,
``team/infra``, ``ticket:AB-12`` and ``v1.2`` are tags, and a tag never needs quoting or
escaping anywhere it is printed). Tags are kept as given (case-sensitive), in
``session_tags`` (migration 17), one row per session and tag. Tagging a session that has
the tag, or untagging one that has not, changes nothing, writes no audit row and says so.

JSON shape (``sessions tag|untag … --json``; stable, new keys may be added)::

    {"operation": "tag" | "untag", "workspace", "provider", "session_id", "tag",
     "changed": bool, "tags": [str, …], "audit_id": int | null}
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from agentlake import sql
from agentlake.load.catalog import run_script
from agentlake.load.lake import Catalog
from agentlake.read.lifecycle_filters import MAX_TAG, check_tag, tags_of
from agentlake.read.names import session_named

from .audit import record
from .authz import Authorization
from .writes import mutation


@dataclass(frozen=True, slots=True)
class TagChange:
    """What ``tag``/``untag`` did to one session: whether anything ``changed``, the
    session's tags after it, and the audit row written (``None`` when nothing changed)."""

    operation: str
    workspace: str
    provider: str
    session_id: str
    tag: str
    changed: bool
    tags: tuple[str, ...]
    audit_id: int | None

    @property
    def message(self) -> str:
        """One line saying what happened."""
        if self.operation == "tag":
            done = "tagged" if self.changed else "already has tag"
        else:
            done = "untagged" if self.changed else "does not have tag"
        subject = f"session {self.session_id} ({self.provider})"
        if self.changed:
            return f"{subject} {done} {self.tag!r}; nothing else changed"
        return f"{subject} {done} {self.tag!r}; nothing to do"

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape (module docstring)."""
        return {
            "operation": self.operation, "workspace": self.workspace,
            "provider": self.provider, "session_id": self.session_id, "tag": self.tag,
            "changed": self.changed, "tags": list(self.tags), "audit_id": self.audit_id,
        }  # fmt: skip


def tag_session(
    catalog: Catalog, auth: Authorization, ident: str, tag: str, *, wait: bool = False
) -> TagChange:
    """Give the session ``ident`` (id or unique prefix, hidden or not) of
    ``auth.workspace`` the tag ``tag``; ``auth.operation`` is ``tag`` or ``untag``
    (which takes it off instead). A session of another workspace is an unknown id.
    ``wait``: wait for a running import instead of failing (exit 5)."""
    if auth.operation not in ("tag", "untag"):
        raise ValueError(f"tag_session needs a tag or untag authorization, not {auth.operation}")
    check_tag(tag)
    with mutation(catalog, workspace=auth.workspace, wait=wait) as con:
        provider, session_id = session_named(con, auth.workspace, ident, include_hidden=True)
        key = {"workspace": auth.workspace, "provider": provider, "session_id": session_id}
        had = tag in tags_of(con, auth.workspace, provider, session_id)
        changed = had != (auth.operation == "tag")
        if changed:
            query = "tags_add" if auth.operation == "tag" else "tags_remove"
            run_script(con, sql.query(query), {**key, "tag": tag})
        audit_id = None
        if changed:
            digest = hashlib.sha256(f"{provider}\0{session_id}\0{tag}".encode()).hexdigest()
            audit_id = record(
                con, auth, provider=provider, session_id=session_id,
                counts={"tags": 1}, digest=digest,
            )  # fmt: skip
        tags = tags_of(con, auth.workspace, provider, session_id)
    return TagChange(
        auth.operation, auth.workspace, provider, session_id, tag, changed, tags, audit_id
    )


__all__ = ["MAX_TAG", "TagChange", "check_tag", "tag_session", "tags_of"]
