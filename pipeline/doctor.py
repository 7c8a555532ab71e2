# Over 500 lines: the --json document's dataclasses and the checks filling them are one contract.
"""Diagnosis: why is a session (not) in the catalog, and is the catalog healthy?

Two entry points, neither of which prints or exits:

* :func:`diagnose` — for each provider the roots it looked at (existence, permissions,
  the environment override in force, warnings), the sources discovery sees and their
  continuity outcomes as the planner would decide now, refused sources with reason and
  remedy (from the plan and from the catalog), rejects by reason, the last imports, and
  the catalog's integrity (schema version, rows per table, full-text index coverage,
  orphan rows). Returns a :class:`DoctorReport`.
* :func:`explain_session` — whether one session (full id or unique prefix) is in this
  workspace's catalog and from which sources; when it is not, which provider-owned file
  under the roots mentions it (in its path or first 64 KiB) and why that file is not
  imported. Returns a :class:`SessionDiagnosis`.

A session of another workspace is reported exactly like an unknown id ("not found in
workspace W"): nothing of another workspace is ever read.

JSON shapes (``to_json()``, ``version`` 1; keys are stable, lists are sorted):

``DoctorReport``::

    {"version": 1, "workspace": str, "home": str, "verdict": "healthy" | "needs-attention"
     | "no-catalog", "exit_code": 0 | 1 | 4, "problems": [str],
     "providers": [{"provider": str, "env": [{"name": str, "value": str | null,
                    "in_force": bool}],
                    "roots": [{"path": str, "origin": str, "exists": bool, "readable": bool,
                               "warnings": [str]}],
                    "notes": [str], "sources": int, "continuity": {outcome: int, ...every
                    outcome...}, "refused": int, "rejects": {reason: int}}],
     "refused": [{"provider", "path", "source_id", "continuity", "code", "reason", "remedy",
                  "seen_in": "plan" | "catalog", "file_exists": bool}],
     "rejects": [{"provider", "reason", "count", "bytes"}],
     "catalog": {"path": str, "exists": bool, "schema_version": int | null,
                 "expected_schema_version": int, "tables": {table: rows},
                 "search_index": {"kind": "agentlake" | "none", "state": "ok" |
                                  "empty" | "missing" | "stale" | "lagging",
                                  "events_with_text": int, "indexed": int, "missing": int,
                                  "dangling": int, "lag": int (events not searchable
                                  yet: the publish step lags), "message": str,
                                  "remedy": str | null} | null,
                 "orphans": {"events_without_session", "usage_without_session",
                             "events_without_source", "usage_without_source"},
                 "imports": [{"import_id", "started_at", "ended_at", "status",
                              "sources_seen", "sources_imported", "sources_unchanged",
                              "sources_failed", "records", "events", "usage_rows",
                              "rejected"}], "imports_by_status": {status: int},
                 "abandoned_imports": int}}

``SessionDiagnosis``::

    {"version": 1, "workspace": str, "query": str, "status": "found" | "not-found" |
     "ambiguous", "message": str, "exit_code": 0 | 1 | 2 | 4, "catalog_exists": bool,
     "session": {"provider", "session_id", "in_sessions", "parent_session_id",
                 "project_path", "title", "started_at", "updated_at", "lifecycle"} | null,
     "rows": {"sessions": int, "events": int, "usage": int},
     "sources": [{"source_id", "provider", "path", "status", "continuity", "refusal",
                  "remedy", "records", "rejected", "events", "usage", "rejects": {reason: int}}],
     "candidates": [{"provider", "path", "matched_by": "path" | "content", "state",
                     "continuity", "reason", "remedy", "catalog_status",
                     "rejects": {reason: int}}],
     "matches": [str], "roots_searched": [str], "files_searched": int}

Exit codes: :attr:`DoctorReport.exit_code` is 0 when healthy, 1 when something needs
attention (a root warning, a refused source, a missing or stale search index, orphan
rows, a last import that did not finish), 4 when the catalog does not exist.
:attr:`SessionDiagnosis.exit_code` is 0 when the session is in the workspace, 1 when it
is but one of its sources is refused (or its rows are orphans), 2 when a prefix is
ambiguous and 4 when it is not in the workspace (unknown ids and ids of other
workspaces alike).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, get_args

import duckdb

from agentlake import sql
from agentlake.extract.providers import ProviderSpec, by_id
from agentlake.extract.sources import HEAD_BYTES, Root, head_mentions, walk_unowned
from agentlake.load.catalog import SCHEMA_VERSION, open_for_read
from agentlake.load.checkpoint import Checkpoint, Continuity, load_checkpoints

from .errors import REMEDIES, ConfigurationError
from .errors import RESTART_REMEDY as _RESTART
from .names import MIN_PREFIX
from .plan import Plan, PlannedSource, make_plan, refusal_code, select_providers

JSON_VERSION: Final = 1
RECENT_IMPORTS: Final = 5
MAX_MATCHES: Final = 10  # ambiguous prefixes list at most this many ids

Verdict = Literal["healthy", "needs-attention", "no-catalog"]
IndexKind = Literal["agentlake", "none"]
IndexState = Literal["ok", "empty", "missing", "stale", "lagging"]
SessionStatus = Literal["found", "not-found", "ambiguous"]
CandidateState = Literal[
    "not-imported",  # discovered, no checkpoint yet
    "pending",  # imported before; new data waits for the next import
    "imported",  # checkpoint current, yet no row of the session came from it
    "refused",  # truncated / replaced / rewritten / drift
    "outside-root",  # a symlink out of the provider root
    "unreadable",
    "superseded",  # another copy of the same transcript is preferred
    "look-alike",  # under a root, but no provider predicate owns it
]

_IMPORT = "run 'agentlake import'"


# -- values ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EnvSetting:
    """One environment override a provider honours, and whether it decided a root."""

    name: str
    value: str | None
    in_force: bool


@dataclass(frozen=True, slots=True)
class RootCheck:
    """One root a provider searched."""

    provider: str
    path: Path
    origin: str
    exists: bool
    readable: bool
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProviderCheck:
    """What discovery and the planner see for one provider."""

    provider: str
    env: tuple[EnvSetting, ...]
    roots: tuple[RootCheck, ...]
    notes: tuple[str, ...]
    sources: int
    continuity: Mapping[str, int]
    refused: int
    rejects: Mapping[str, int]

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every root warning of this provider."""
        return tuple(w for r in self.roots for w in r.warnings)


@dataclass(frozen=True, slots=True)
class RefusedSource:
    """A source refused now (by the plan) or recorded as refused in the catalog."""

    provider: str
    path: Path
    source_id: str
    continuity: str | None
    code: str | None
    reason: str | None
    remedy: str | None
    seen_in: Literal["plan", "catalog"]
    file_exists: bool = True


@dataclass(frozen=True, slots=True)
class RejectCount:
    """Rejected spans of one provider for one reason."""

    provider: str
    reason: str
    count: int
    bytes: int


@dataclass(frozen=True, slots=True)
class ImportReceipt:
    """One row of ``imports``."""

    import_id: int
    started_at: datetime | None
    ended_at: datetime | None
    status: str
    sources_seen: int
    sources_imported: int
    sources_unchanged: int
    sources_failed: int
    records: int
    events: int
    usage_rows: int
    rejected: int

    @property
    def finished(self) -> bool:
        """Whether the run ended (a ``running`` receipt seen under the read lock, or an
        ``abandoned`` one, is a run that was killed)."""
        return self.status in ("ok", "refused")


@dataclass(frozen=True, slots=True)
class SearchIndexCheck:
    """Coverage of the full-text index over this workspace's events with text."""

    kind: IndexKind
    state: IndexState
    events_with_text: int
    indexed: int
    missing: int
    dangling: int
    lag: int = 0  # events the publish step has not reached: not searchable yet

    @property
    def message(self) -> str:
        """One line on the index state."""
        if self.state == "empty":
            return "no event has text; nothing to index"
        if self.state == "missing":
            return f"no search index, but {self.events_with_text:,} events have text"
        if self.state == "stale":
            parts = []
            if self.missing:
                parts.append(f"{self.missing:,} events with text are not indexed")
            if self.dangling:
                parts.append("it indexes events that no longer exist")
            return "search index is stale: " + ("; ".join(parts) or "its counters disagree")
        indexed = f"{self.indexed:,} of {self.events_with_text:,} events with text indexed"
        if self.state == "lagging":
            events = "1 event is" if self.lag == 1 else f"{self.lag:,} events are"
            return f"{indexed}; {events} not searchable yet (the index lags)"
        return indexed

    @property
    def remedy(self) -> str | None:
        """What to do when the index is missing, stale or lagging."""
        if self.state == "lagging":
            return "run 'agentlake index' to bring the index up to date"
        return f"{_IMPORT} to bring the index up to date" if self.attention else None

    @property
    def attention(self) -> bool:
        """Whether search would miss or mis-rank events."""
        return self.state in ("missing", "stale")


@dataclass(frozen=True, slots=True)
class CatalogCheck:
    """The catalog's integrity, for one workspace (``exists`` False: nothing else)."""

    path: Path
    exists: bool
    schema_version: int | None = None
    tables: Mapping[str, int] = field(default_factory=dict)
    search_index: SearchIndexCheck | None = None
    orphans: Mapping[str, int] = field(default_factory=dict)
    imports: tuple[ImportReceipt, ...] = ()
    imports_by_status: Mapping[str, int] = field(default_factory=dict)

    @property
    def abandoned_imports(self) -> int:
        """Runs that never finished (killed); the next import marks them abandoned."""
        return sum(n for s, n in self.imports_by_status.items() if s in ("running", "abandoned"))


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Everything :func:`diagnose` found."""

    workspace: str
    home: Path
    providers: tuple[ProviderCheck, ...]
    refused: tuple[RefusedSource, ...]
    rejects: tuple[RejectCount, ...]
    catalog: CatalogCheck

    @property
    def problems(self) -> tuple[str, ...]:
        """One line (with its remedy) per thing that needs attention."""
        out = [f"{p.provider}: {w}" for p in self.providers for w in p.warnings]
        live = [r for r in self.refused if r.file_exists]
        if live:
            out.append(
                f"{_plural(len(live), 'refused source')}; "
                "see 'refused sources' for each reason and remedy"
            )
        index = self.catalog.search_index
        if index is not None and index.attention:
            out.append(f"{index.message}; {index.remedy}")
        orphans = sum(self.catalog.orphans.values())
        if orphans:
            out.append(
                f"{orphans:,} orphan rows (events/usage whose session or source is missing); "
                "re-import their sources with 'agentlake import --restart-drifted'"
            )
        if self.catalog.imports and not self.catalog.imports[0].finished:
            last = self.catalog.imports[0]
            out.append(f"the last import (#{last.import_id}) did not finish; {_IMPORT} to resume")
        return tuple(out)

    @property
    def verdict(self) -> Verdict:
        """``no-catalog``, ``needs-attention`` or ``healthy``."""
        if not self.catalog.exists:
            return "no-catalog"
        return "needs-attention" if self.problems else "healthy"

    @property
    def exit_code(self) -> int:
        """0 healthy, 1 needs attention, 4 no catalog."""
        return {"healthy": 0, "needs-attention": 1, "no-catalog": 4}[self.verdict]

    @property
    def summary(self) -> str:
        """The one-line verdict."""
        if self.verdict == "no-catalog":
            return (
                f"no catalog at {self.catalog.path}; run 'agentlake import' first "
                "(or pass --catalog)"
            )
        if self.verdict == "needs-attention":
            return "needs attention: " + "; ".join(self.problems)
        tables = self.catalog.tables
        return (
            f"healthy: {sum(p.sources for p in self.providers):,} sources, "
            f"{tables.get('sessions', 0):,} sessions, {tables.get('events', 0):,} events, "
            f"{tables.get('usage', 0):,} model calls in workspace {self.workspace!r}"
        )

    def to_json(self) -> dict[str, Any]:
        """The stable JSON document (see the module docstring)."""
        cat = self.catalog
        index = cat.search_index
        return {
            "version": JSON_VERSION,
            "workspace": self.workspace,
            "home": str(self.home),
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "problems": list(self.problems),
            "providers": [
                {
                    "provider": p.provider,
                    "env": [
                        {"name": e.name, "value": e.value, "in_force": e.in_force} for e in p.env
                    ],
                    "roots": [
                        {
                            "path": str(r.path),
                            "origin": r.origin,
                            "exists": r.exists,
                            "readable": r.readable,
                            "warnings": list(r.warnings),
                        }
                        for r in p.roots
                    ],
                    "notes": list(p.notes),
                    "sources": p.sources,
                    "continuity": dict(p.continuity),
                    "refused": p.refused,
                    "rejects": dict(p.rejects),
                }
                for p in self.providers
            ],
            "refused": [
                {
                    "provider": r.provider,
                    "path": str(r.path),
                    "source_id": r.source_id,
                    "continuity": r.continuity,
                    "code": r.code,
                    "reason": r.reason,
                    "remedy": r.remedy,
                    "seen_in": r.seen_in,
                    "file_exists": r.file_exists,
                }
                for r in self.refused
            ],
            "rejects": [
                {"provider": r.provider, "reason": r.reason, "count": r.count, "bytes": r.bytes}
                for r in self.rejects
            ],
            "catalog": {
                "path": str(cat.path),
                "exists": cat.exists,
                "schema_version": cat.schema_version,
                "expected_schema_version": SCHEMA_VERSION,
                "tables": dict(cat.tables),
                "search_index": None
                if index is None
                else {
                    "kind": index.kind,
                    "state": index.state,
                    "events_with_text": index.events_with_text,
                    "indexed": index.indexed,
                    "missing": index.missing,
                    "dangling": index.dangling,
                    "lag": index.lag,
                    "message": index.message,
                    "remedy": index.remedy,
                },
                "orphans": dict(cat.orphans),
                "imports": [_receipt_json(r) for r in cat.imports],
                "imports_by_status": dict(cat.imports_by_status),
                "abandoned_imports": cat.abandoned_imports,
            },
        }


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
            return f"{_IMPORT} to import its {self.now.pending_bytes:,} new bytes"
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
        2 ambiguous prefix, 4 not in the workspace."""
        if self.status == "ambiguous":
            return 2
        if self.status == "not-found":
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
                "started_at": _iso(s.started_at),
                "updated_at": _iso(s.updated_at),
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


# -- diagnose --------------------------------------------------------------------------
def diagnose(
    catalog: Path,
    workspace: str,
    *,
    home: Path,
    env: Mapping[str, str],
    providers: Sequence[str] = (),
    recent_imports: int = RECENT_IMPORTS,
) -> DoctorReport:
    """Check discovery, the plan and the catalog of ``workspace``. A missing catalog is
    part of the report (verdict ``no-catalog``); a locked or unusable one raises
    :class:`~agentlake.errors.CatalogLocked` / :class:`~agentlake.errors.CatalogUnusable`."""
    specs = select_providers(providers)
    wanted = [s.id for s in specs] if providers else None
    if not catalog.is_file():
        plan = make_plan({}, workspace=workspace, home=home, env=env, providers=specs)
        return _report(workspace, home, env, specs, plan, (), (), CatalogCheck(catalog, False))
    with open_for_read(catalog) as con:
        checkpoints = load_checkpoints(con, workspace)
        plan = make_plan(checkpoints, workspace=workspace, home=home, env=env, providers=specs)
        params = {"workspace": workspace, "providers": wanted}
        catalog_refused = con.execute(sql.query("doctor_refused_sources"), params).fetchall()
        rejects = tuple(
            RejectCount(str(p), str(r), int(n), int(b or 0))
            for p, r, n, b in con.execute(sql.query("doctor_rejects"), params).fetchall()
        )
        check = _catalog_check(con, catalog, workspace, recent_imports)
    return _report(workspace, home, env, specs, plan, catalog_refused, rejects, check)


def _report(
    workspace: str,
    home: Path,
    env: Mapping[str, str],
    specs: Sequence[ProviderSpec],
    plan: Plan,
    catalog_refused: Iterable[tuple[Any, ...]],
    rejects: tuple[RejectCount, ...],
    catalog: CatalogCheck,
) -> DoctorReport:
    refused = [
        RefusedSource(
            s.provider,
            s.path,
            s.source_id,
            s.continuity,
            s.code,
            s.message,
            REMEDIES.get(s.code or ""),
            "plan",
        )
        for s in plan.sources
        if s.action == "refuse"
    ]
    seen = {r.source_id for r in refused}
    for source_id, provider, path, continuity, refusal in catalog_refused:
        if source_id in seen:
            continue
        code = refusal_code(continuity)
        exists = Path(path).exists()
        remedy = (
            REMEDIES.get(code or "", _RESTART)
            if exists
            else "the file no longer exists; its imported data is kept"
        )
        refused.append(
            RefusedSource(
                provider,
                Path(path),
                source_id,
                continuity,
                code,
                refusal,
                remedy,
                "catalog",
                exists,
            )
        )
    refused.sort(key=lambda r: (r.provider, str(r.path)))
    checks = []
    for spec in specs:
        mine = [s for s in plan.sources if s.provider == spec.id]
        counts = Counter(s.continuity for s in mine)
        checks.append(
            ProviderCheck(
                provider=spec.id,
                env=_env_settings(spec, plan.roots, env),
                roots=tuple(_root_check(spec, r, env) for r in plan.roots if r.provider == spec.id),
                notes=_notes(spec, plan.roots, home, env),
                sources=len(mine),
                continuity={c: counts.get(c, 0) for c in get_args(Continuity)},
                refused=sum(1 for r in refused if r.provider == spec.id and r.file_exists),
                rejects={r.reason: r.count for r in rejects if r.provider == spec.id},
            )
        )
    return DoctorReport(workspace, home, tuple(checks), tuple(refused), rejects, catalog)


def _env_settings(
    spec: ProviderSpec, roots: Sequence[Root], env: Mapping[str, str]
) -> tuple[EnvSetting, ...]:
    return tuple(
        EnvSetting(
            name,
            env.get(name) or None,
            any(r.provider == spec.id and r.origin == name for r in roots),
        )
        for name in spec.env_overrides
    )


def _root_check(spec: ProviderSpec, root: Root, env: Mapping[str, str]) -> RootCheck:
    path = root.path
    exists = path.is_dir()
    readable = exists and os.access(path, os.R_OK | os.X_OK)
    warnings = [root.warning] if root.warning else []
    if root.origin in spec.env_overrides:
        name = root.origin
        if not path.is_absolute():
            warnings.append(
                f"{name}={env.get(name, '')!r} is relative, so {path} resolves against the "
                f"current directory ({Path.cwd()}); set an absolute path"
            )
        if path.parent.name == path.name:
            warnings.append(
                f"{name} seems to name the {path.name}/ directory itself ({path}); it should "
                f"name the directory that contains {path.name}/"
            )
        elif not exists:
            warnings.append(f"{name} is set but {path} does not exist; nothing is discovered there")
    if exists and not readable:
        warnings.append(f"{path} is not readable by this user; fix its permissions")
    return RootCheck(root.provider, path, root.origin, exists, readable, tuple(warnings))


def _notes(
    spec: ProviderSpec, roots: Sequence[Root], home: Path, env: Mapping[str, str]
) -> tuple[str, ...]:
    mine = [r for r in roots if r.provider == spec.id]
    notes = []
    if not any(r.path.is_dir() for r in mine):
        notes.append("none of its roots exists (not installed here, or never used)")
    in_force = [r.origin for r in mine if r.origin in spec.env_overrides]
    if in_force:
        defaults = spec.roots(home, {k: v for k, v in env.items() if k not in spec.env_overrides})
        used = {r.path for r in mine}
        for d in defaults:
            if d.path not in used and d.path.is_dir():
                notes.append(f"{d.path} exists but is not searched because {in_force[0]} is set")
    return tuple(dict.fromkeys(notes))


def _catalog_check(
    con: duckdb.DuckDBPyConnection, path: Path, workspace: str, recent: int
) -> CatalogCheck:
    params = {"workspace": workspace}
    row = con.execute(sql.query("doctor_schema_version")).fetchone()
    version = int(row[0]) if row and row[0] is not None else None
    tables = {
        str(n): int(c) for n, c in con.execute(sql.query("doctor_table_counts"), params).fetchall()
    }
    orphan_cursor = con.execute(sql.query("doctor_orphans"), params)
    names = [d[0] for d in orphan_cursor.description or ()]
    orphan_row = orphan_cursor.fetchone() or ()
    orphans = {n: int(v or 0) for n, v in zip(names, orphan_row, strict=True)}
    imports = tuple(
        ImportReceipt(int(r[0]), _utc(r[1]), _utc(r[2]), str(r[3]), *(int(v or 0) for v in r[4:]))
        for r in con.execute(
            sql.query("doctor_imports"), {"workspace": workspace, "limit": recent}
        ).fetchall()
    )
    by_status = {
        str(s): int(n) for s, n in con.execute(sql.query("doctor_import_status"), params).fetchall()
    }
    return CatalogCheck(
        path, True, version, tables, _index_check(con, workspace), orphans, imports, by_status
    )


def _index_check(con: duckdb.DuckDBPyConnection, workspace: str) -> SearchIndexCheck:
    present = {
        f"{s}.{t}" for s, t in con.execute(sql.query("doctor_search_index_tables")).fetchall()
    }
    params = {"workspace": workspace}
    kind: IndexKind
    if {"main.search_postings", "main.search_state"} <= present:
        kind = "agentlake"
    else:
        row = con.execute(sql.query("doctor_events_with_text"), params).fetchone()
        with_text = int(row[0]) if row else 0
        state: IndexState = "missing" if with_text else "empty"
        return SearchIndexCheck("none", state, with_text, 0, with_text, 0)
    row = con.execute(sql.query("doctor_search_index_own"), params).fetchone()
    assert row is not None
    with_text, indexed, missing, dangling = (int(v or 0) for v in row[:4])
    counters_agree = row[4] is None or row[4] == row[5]
    behind = int(row[6] or 0) if len(row) > 6 else 0
    if missing and not indexed:
        state = "missing"
    elif missing or dangling or not counters_agree:
        state = "stale"
    elif behind:
        state = "lagging"
    else:
        state = "ok" if with_text else "empty"
    return SearchIndexCheck(kind, state, with_text, indexed, missing, dangling, behind)


# -- explain_session -------------------------------------------------------------------
def explain_session(
    catalog: Path,
    workspace: str,
    session_id: str,
    *,
    home: Path,
    env: Mapping[str, str],
    providers: Sequence[str] = (),
) -> SessionDiagnosis:
    """Why the session ``session_id`` (full id or unique prefix) is or is not in this
    workspace's catalog. When it is not, provider-owned files under the roots whose path
    or first 64 KiB mention it are reported with the reason they are not imported, and
    look-alike files (under a root, owned by no predicate) whose path mentions it."""
    needle = session_id.strip()
    if len(needle) < MIN_PREFIX:
        raise ConfigurationError(
            f"session id prefix {session_id!r} is too short; give at least {MIN_PREFIX} characters"
        )
    specs = select_providers(providers)
    wanted = [s.id for s in specs] if providers else None
    if not catalog.is_file():
        plan = make_plan({}, workspace=workspace, home=home, env=env, providers=specs)
        return _not_found(workspace, needle, False, specs, plan, _mentions(plan, needle), {}, {})
    with open_for_read(catalog) as con:
        rows = con.execute(
            sql.query("doctor_session_match"),
            {
                "workspace": workspace,
                "prefix": needle,
                "providers": wanted,
                "limit": MAX_MATCHES + 1,
            },
        ).fetchall()
        exact = [r for r in rows if r[1] == needle]
        chosen = exact if exact else rows
        if len(chosen) == 1:
            provider, sid, in_sessions = chosen[0]
            plan = make_plan(
                load_checkpoints(con, workspace),
                workspace=workspace, home=home, env=env, providers=[by_id(str(provider))],
            )  # fmt: skip
            return _found(
                con, workspace, needle, str(provider), str(sid), bool(in_sessions), plan
            )  # fmt: skip
        if chosen:
            ids = tuple(
                f"{p}:{s}" if len({r[0] for r in chosen}) > 1 else str(s)
                for p, s, _ in chosen[:MAX_MATCHES]
            )
            more = " (and more)" if len(chosen) > MAX_MATCHES else ""
            return SessionDiagnosis(
                workspace,
                needle,
                "ambiguous",
                f"{needle!r} matches several sessions in workspace {workspace!r}{more}; "
                "give more characters of the id",
                True,
                matches=ids,
            )
        checkpoints = load_checkpoints(con, workspace)
        plan = make_plan(checkpoints, workspace=workspace, home=home, env=env, providers=specs)
        mentioned = _mentions(plan, needle)
        rejects = _source_rejects(
            con, workspace, [s.source_id for s, _ in mentioned if s.source_id in checkpoints]
        )
    return _not_found(workspace, needle, True, specs, plan, mentioned, checkpoints, rejects)


def _source_rejects(
    con: duckdb.DuckDBPyConnection, workspace: str, source_ids: list[str]
) -> dict[str, dict[str, int]]:
    """Rejected spans per source and reason."""
    out: dict[str, dict[str, int]] = {}
    for sid, reason, n in con.execute(
        sql.query("doctor_source_rejects"), {"workspace": workspace, "source_ids": source_ids}
    ).fetchall():
        out.setdefault(str(sid), {})[str(reason)] = int(n)
    return out


def _found(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    needle: str,
    provider: str,
    session_id: str,
    in_sessions: bool,
    plan: Plan,
) -> SessionDiagnosis:
    now = {p.source_id: p for p in plan.sources}
    params = {"workspace": workspace, "provider": provider, "session_id": session_id}
    detail = con.execute(sql.query("doctor_session_detail"), params).fetchone()
    assert detail is not None
    rows = {"sessions": int(detail[0]), "events": int(detail[1]), "usage": int(detail[2])}
    parent, project, title, started, updated, lifecycle = detail[3:]
    record = SessionRecord(
        provider,
        session_id,
        in_sessions,
        parent,
        project,
        title,
        _utc(started),
        _utc(updated),
        lifecycle,
    )
    found = con.execute(sql.query("doctor_session_sources"), params).fetchall()
    rejects = _source_rejects(con, workspace, [str(r[0]) for r in found])
    sources = tuple(
        SessionSource(
            str(r[0]),
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            int(r[6] or 0),
            int(r[7] or 0),
            int(r[8] or 0),
            int(r[9] or 0),
            rejects.get(str(r[0]), {}),
            now.get(str(r[0])),
        )
        for r in found
    )
    message = (
        f"session {session_id} ({provider}) is in workspace {workspace!r}: "
        f"{rows['events']:,} events and {rows['usage']:,} model calls from "
        f"{_plural(len(sources), 'source')}"
    )
    refused = sum(1 for s in sources if s.refused)
    if refused:
        message += (
            f"; {refused} of them refused, so their newer lines are not imported "
            "(see its sources for reason and remedy)"
        )
    pending = sum(1 for s in sources if s.now is not None and s.now.action == "read")
    if pending:
        message += f"; {_plural(pending, 'source')} with new data not imported yet ({_IMPORT})"
    if not in_sessions:
        message += "; but it has no row in sessions (orphan rows)"
    return SessionDiagnosis(workspace, needle, "found", message, True, record, rows, sources)


def _mentions(plan: Plan, needle: str) -> list[tuple[PlannedSource, Literal["path", "content"]]]:
    """Planned sources whose path, or (for admitted files only) first 64 KiB, mention
    ``needle``. Refused paths (symlinks out of a root, unreadable files) are matched by
    path only: they are never opened."""
    raw = needle.encode()
    out: list[tuple[PlannedSource, Literal["path", "content"]]] = []
    for planned in plan.sources:
        if needle in str(planned.path):
            out.append((planned, "path"))
        elif planned.source is not None and head_mentions(planned.path, raw, HEAD_BYTES):
            out.append((planned, "content"))
    return out


def _not_found(
    workspace: str,
    needle: str,
    catalog_exists: bool,
    specs: Sequence[ProviderSpec],
    plan: Plan,
    mentioned: list[tuple[PlannedSource, Literal["path", "content"]]],
    checkpoints: Mapping[str, Checkpoint],
    rejects: Mapping[str, Mapping[str, int]],
) -> SessionDiagnosis:
    candidates = [
        _candidate(
            p, how, checkpoints.get(p.source_id), rejects.get(p.source_id, {}), catalog_exists
        )
        for p, how in mentioned
    ]
    by_id = {s.id: s for s in specs}
    for root in plan.roots:
        spec = by_id[root.provider]
        for path in walk_unowned(root, spec.formats):
            if needle in str(path.relative_to(root.path)):
                candidates.append(
                    FileCandidate(
                        root.provider,
                        path,
                        "path",
                        "look-alike",
                        None,
                        f"a look-alike: no {root.provider} file predicate owns it, so "
                        "agentlake never reads it",
                        None,
                    )
                )
    candidates.sort(key=lambda c: (c.matched_by != "path", c.provider, str(c.path)))
    where = f"workspace {workspace!r}" if catalog_exists else "the catalog (there is none yet)"
    message = f"session {needle} not found in {where}"
    if candidates:
        message += (
            f"; {_plural(len(candidates), 'file')} under the provider roots "
            f"mention{'s' if len(candidates) == 1 else ''} it (see why each is not imported)"
        )
    else:
        message += "; no provider-owned file under the searched roots mentions it"
    return SessionDiagnosis(
        workspace,
        needle,
        "not-found",
        message,
        catalog_exists,
        candidates=tuple(candidates),
        roots_searched=tuple(dict.fromkeys(r.path for r in plan.roots)),
        files_searched=sum(1 for p in plan.sources if p.source is not None),
    )


def _candidate(
    planned: PlannedSource,
    how: Literal["path", "content"],
    checkpoint: Checkpoint | None,
    rejects: Mapping[str, int],
    catalog_exists: bool,
) -> FileCandidate:
    status = checkpoint.status if checkpoint else None
    state: CandidateState
    remedy: str | None
    code = planned.code
    if planned.continuity == "outside-root":
        state, reason = "outside-root", planned.message or "symlink points outside the root"
        remedy = REMEDIES["SOURCE_OUTSIDE_ROOT"]
    elif planned.continuity in ("unreadable", "not-a-file"):
        state, reason = "unreadable", planned.message or "cannot be read"
        remedy = REMEDIES.get(code or "SOURCE_UNREADABLE")
    elif planned.action == "refuse":
        state, reason = "refused", f"refused ({code}): {planned.message}"
        remedy = REMEDIES.get(code or "", _RESTART)
    elif planned.continuity == "superseded":
        state = "superseded"
        reason = planned.message or "another copy of the same transcript is preferred"
        remedy = None
    elif planned.continuity == "new":
        state = "not-imported"
        reason = "not imported yet" + ("" if catalog_exists else " (no catalog yet)")
        remedy = _IMPORT
    elif planned.action == "read":
        state = "pending"
        reason = f"{planned.pending_bytes:,} bytes ({planned.continuity}) not imported yet"
        remedy = _IMPORT
    else:
        state, remedy = "imported", None
        reason = "imported up to its checkpoint, yet no row of this session came from it" + (
            " (it only mentions the id in its content)" if how == "content" else ""
        )
        if rejects:
            reason += f"; {sum(rejects.values()):,} of its spans were rejected (see rejects)"
        if checkpoint and planned.source and planned.source.size > checkpoint.committed_offset:
            pending = planned.source.size - checkpoint.committed_offset
            reason += (
                f"; {pending:,} bytes after its committed offset wait for a final newline "
                "(a line still being written)"
            )
    return FileCandidate(
        planned.provider,
        planned.path,
        how,
        state,
        planned.continuity,
        reason,
        remedy,
        status,
        dict(rejects),
    )


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _utc(value: datetime | None) -> datetime | None:
    """A naive UTC timestamp from the catalog, made aware."""
    return value.replace(tzinfo=UTC) if value is not None else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _receipt_json(r: ImportReceipt) -> dict[str, Any]:
    return {
        "import_id": r.import_id,
        "started_at": _iso(r.started_at),
        "ended_at": _iso(r.ended_at),
        "status": r.status,
        "sources_seen": r.sources_seen,
        "sources_imported": r.sources_imported,
        "sources_unchanged": r.sources_unchanged,
        "sources_failed": r.sources_failed,
        "records": r.records,
        "events": r.events,
        "usage_rows": r.usage_rows,
        "rejected": r.rejected,
    }
