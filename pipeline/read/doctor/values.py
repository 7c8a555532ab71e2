"""The values a diagnosis returns, and their JSON shapes (see :mod:`agentlake.read.doctor`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from agentlake.load.catalog import SCHEMA_VERSION
from agentlake.load.lake import Catalog

from .lake_health import LakeCheck

JSON_VERSION: Final = 1
RECENT_IMPORTS: Final = 5
MAX_MATCHES: Final = 10  # ambiguous prefixes list at most this many ids

Verdict = Literal["healthy", "needs-attention", "no-catalog"]
IndexKind = Literal["agentlake", "none"]
IndexState = Literal["ok", "empty", "missing", "stale", "lagging"]
SessionStatus = Literal["found", "not-found", "ambiguous", "purged"]
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

IMPORT_REMEDY = "run 'agentlake import'"


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
    """Coverage of the full-text index over this workspace's events with text. Checked
    from the index's counters, ``events_with_text``, ``missing`` and ``dangling`` are
    ``None`` (not counted): only a deep check reads every event."""

    kind: IndexKind
    state: IndexState
    events_with_text: int | None
    indexed: int
    missing: int | None
    dangling: int | None
    lag: int = 0  # events the publish step has not reached: not searchable yet

    @property
    def message(self) -> str:
        """One line on the index state."""
        if self.state == "empty":
            return "no event has text; nothing to index"
        if self.state == "missing":
            return f"no search index, but {self.events_with_text or 0:,} events have text"
        if self.state == "stale":
            parts = []
            if self.missing:
                parts.append(f"{self.missing:,} events with text are not indexed")
            if self.dangling:
                parts.append("it indexes events that no longer exist")
            return "search index is stale: " + ("; ".join(parts) or "its counters disagree")
        indexed = (
            f"{self.indexed:,} events indexed, its counters agree (--deep checks each event)"
            if self.events_with_text is None
            else f"{self.indexed:,} of {self.events_with_text:,} events with text indexed"
        )
        if self.state == "lagging":
            events = "1 event is" if self.lag == 1 else f"{self.lag:,} events are"
            return f"{indexed}; {events} not searchable yet (the index lags)"
        return indexed

    @property
    def remedy(self) -> str | None:
        """What to do when the index is missing, stale or lagging."""
        if self.state == "lagging":
            return "run 'agentlake index' to bring the index up to date"
        return f"{IMPORT_REMEDY} to bring the index up to date" if self.attention else None

    @property
    def attention(self) -> bool:
        """Whether search would miss or mis-rank events."""
        return self.state in ("missing", "stale")


VectorState = Literal["ok", "empty", "lagging", "stale", "unavailable"]


@dataclass(frozen=True, slots=True)
class VectorCheck:
    """The semantic vectors of this workspace: how many events are embedded, how many
    embeddable events the publish step has not reached (``lag``) or must embed again
    (``pending`` withdrawals), the model that made them, and why the model cannot load
    (``unavailable``: search stays lexical)."""

    state: VectorState
    embedded: int
    lag: int
    pending: int
    model: str | None
    unavailable: str | None = None

    @property
    def message(self) -> str:
        """One line on the vectors."""
        if self.state == "unavailable":
            return f"semantic search is off: {self.unavailable}"
        if self.state == "stale":
            return f"{self.embedded:,} vectors were made by another model ({self.model})"
        if self.state == "empty":
            return "no event to embed"
        line = f"{self.embedded:,} events embedded ({self.model})"
        behind = self.lag + self.pending
        if behind:
            events = "1 event is" if behind == 1 else f"{behind:,} events are"
            return f"{line}; {events} not searchable by meaning yet (embeddings lag)"
        return line

    @property
    def remedy(self) -> str | None:
        """What to do when the vectors lag or are another model's."""
        if self.state in ("lagging", "stale"):
            return "run 'agentlake index' to embed them"
        return None


@dataclass(frozen=True, slots=True)
class CatalogCheck:
    """The catalog's integrity, for one workspace (``exists`` False: nothing else)."""

    path: Catalog
    exists: bool
    schema_version: int | None = None
    tables: Mapping[str, int] = field(default_factory=dict)
    search_index: SearchIndexCheck | None = None
    orphans: Mapping[str, int] | None = None  # None: not counted (only a deep check does)
    imports: tuple[ImportReceipt, ...] = ()
    imports_by_status: Mapping[str, int] = field(default_factory=dict)
    vectors: VectorCheck | None = None
    lake: LakeCheck | None = None  # a DuckLake's metadata server, data path, snapshots

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
                f"{plural(len(live), 'refused source')}; "
                "see 'refused sources' for each reason and remedy"
            )
        index = self.catalog.search_index
        if index is not None and index.attention:
            out.append(f"{index.message}; {index.remedy}")
        orphans = sum((self.catalog.orphans or {}).values())
        if orphans:
            out.append(
                f"{orphans:,} orphan rows (events/usage whose session or source is missing); "
                "re-import their sources with 'agentlake import --restart-drifted'"
            )
        if self.catalog.imports and not self.catalog.imports[0].finished:
            last = self.catalog.imports[0]
            out.append(
                f"the last import (#{last.import_id}) did not finish; {IMPORT_REMEDY} to resume"
            )
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
                "vectors": None
                if cat.vectors is None
                else {
                    "state": cat.vectors.state,
                    "embedded": cat.vectors.embedded,
                    "lag": cat.vectors.lag,
                    "pending": cat.vectors.pending,
                    "model": cat.vectors.model,
                    "message": cat.vectors.message,
                    "remedy": cat.vectors.remedy,
                },
                "lake": None if cat.lake is None else cat.lake.to_json(),
                "orphans": None if cat.orphans is None else dict(cat.orphans),
                "imports": [receipt_json(r) for r in cat.imports],
                "imports_by_status": dict(cat.imports_by_status),
                "abandoned_imports": cat.abandoned_imports,
            },
        }


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def as_utc(value: datetime | None) -> datetime | None:
    """A naive UTC timestamp from the catalog, made aware."""
    return value.replace(tzinfo=UTC) if value is not None else None


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def receipt_json(r: ImportReceipt) -> dict[str, Any]:
    return {
        "import_id": r.import_id,
        "started_at": iso(r.started_at),
        "ended_at": iso(r.ended_at),
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
