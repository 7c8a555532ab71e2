"""What `agentlake doctor SESSION` returns: the session, its sources and candidate files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from agentlake.errors import REMEDIES
from agentlake.errors import RESTART_REMEDY as _RESTART
from agentlake.ingest.plan import PlannedSource, refusal_code

from .values import (
    IMPORT_REMEDY,
    JSON_VERSION,
    CandidateState,
    SessionStatus,
    iso,
)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """The session as the catalog holds it (``in_sessions`` False: only events/usage)."""

    provider: str
    session_id: str
    in_sessions: bool
    parent_session_id: str | None = None
    project_path: str | None = None
    title: str | None = None
    started_at: datetime | None = None
    updated_at: datetime | None = None
    lifecycle: str | None = None


@dataclass(frozen=True, slots=True)
class SessionSource:
    """A source that contributed rows to a session."""

    source_id: str
    provider: str | None
    path: str | None
    status: str | None
    continuity: str | None
    refusal: str | None
    records: int
    rejected: int
    events: int
    usage: int
    rejects: Mapping[str, int]
    now: PlannedSource | None = None  # the planner's decision now (None: not discovered)

    @property
    def refused(self) -> bool:
        """Whether the catalog records it as refused, or the planner would refuse it now."""
        return self.status == "refused" or (self.now is not None and self.now.action == "refuse")

    @property
    def remedy(self) -> str | None:
        """What to do about a refused source, or one with data not imported yet."""
        if self.now is not None and self.now.action == "refuse":
            return REMEDIES.get(self.now.code or "", _RESTART)
        if self.status == "refused":
            return REMEDIES.get(refusal_code(self.continuity) or "", _RESTART)
        if self.now is not None and self.now.action == "read":
            return f"{IMPORT_REMEDY} to import its {self.now.pending_bytes:,} new bytes"
        return None


@dataclass(frozen=True, slots=True)
class FileCandidate:
    """A file under a provider root that mentions the session, and why it is not in
    the catalog."""

    provider: str
    path: Path
    matched_by: Literal["path", "content"]
    state: CandidateState
    continuity: str | None
    reason: str
    remedy: str | None
    catalog_status: str | None = None
    rejects: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SessionDiagnosis:
    """Why a session is, or is not, in this workspace's catalog."""

    workspace: str
    query: str
    status: SessionStatus
    message: str
    catalog_exists: bool
    session: SessionRecord | None = None
    rows: Mapping[str, int] = field(
        default_factory=lambda: {"sessions": 0, "events": 0, "usage": 0}
    )
    sources: tuple[SessionSource, ...] = ()
    candidates: tuple[FileCandidate, ...] = ()
    matches: tuple[str, ...] = ()
    roots_searched: tuple[Path, ...] = ()
    files_searched: int = 0

    @property
    def exit_code(self) -> int:
        """0 in the workspace, 1 in it but a source is refused or its rows are orphans,
        2 ambiguous prefix, 4 not in the workspace (never imported, or purged)."""
        if self.status == "ambiguous":
            return 2
        if self.status in ("not-found", "purged"):
            return 4
        refused = any(s.refused for s in self.sources)
        orphan = self.session is not None and not self.session.in_sessions
        return 1 if refused or orphan else 0

    def to_json(self) -> dict[str, Any]:
        """The stable JSON document (see the module docstring)."""
        s = self.session
        return {
            "version": JSON_VERSION,
            "workspace": self.workspace,
            "query": self.query,
            "status": self.status,
            "message": self.message,
            "exit_code": self.exit_code,
            "catalog_exists": self.catalog_exists,
            "session": None
            if s is None
            else {
                "provider": s.provider,
                "session_id": s.session_id,
                "in_sessions": s.in_sessions,
                "parent_session_id": s.parent_session_id,
                "project_path": s.project_path,
                "title": s.title,
                "started_at": iso(s.started_at),
                "updated_at": iso(s.updated_at),
                "lifecycle": s.lifecycle,
            },
            "rows": dict(self.rows),
            "sources": [
                {
                    "source_id": src.source_id,
                    "provider": src.provider,
                    "path": src.path,
                    "status": src.status,
                    "continuity": src.continuity,
                    "refusal": src.refusal,
                    "remedy": src.remedy,
                    "records": src.records,
                    "rejected": src.rejected,
                    "events": src.events,
                    "usage": src.usage,
                    "rejects": dict(src.rejects),
                    "now": None
                    if src.now is None
                    else {
                        "continuity": src.now.continuity,
                        "action": src.now.action,
                        "code": src.now.code,
                        "message": src.now.message,
                        "pending_bytes": src.now.pending_bytes,
                    },
                }
                for src in self.sources
            ],
            "candidates": [
                {
                    "provider": c.provider,
                    "path": str(c.path),
                    "matched_by": c.matched_by,
                    "state": c.state,
                    "continuity": c.continuity,
                    "reason": c.reason,
                    "remedy": c.remedy,
                    "catalog_status": c.catalog_status,
                    "rejects": dict(c.rejects),
                }
                for c in self.candidates
            ],
            "matches": list(self.matches),
            "roots_searched": [str(p) for p in self.roots_searched],
            "files_searched": self.files_searched,
        }
