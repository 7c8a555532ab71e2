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
                                  "events_with_text": int | null, "indexed": int,
                                  "missing": int | null, "dangling": int | null, "lag":
                                  int (events not searchable yet: the publish step
                                  lags), "message": str, "remedy": str | null} | null,
                 "vectors": {"state": "ok" | "empty" | "lagging" | "stale" |
                             "unavailable", "embedded": int, "lag": int (embeddable
                             events above the vector watermark), "pending": int
                             (withdrawals to apply), "model": str | null, "message": str,
                             "remedy": str | null} | null,
                 "orphans": {"events_without_session", "usage_without_session",
                             "events_without_source", "usage_without_source"} | null,
                 "imports": [{"import_id", "started_at", "ended_at", "status",
                              "sources_seen", "sources_imported", "sources_unchanged",
                              "sources_failed", "records", "events", "usage_rows",
                              "rejected"}], "imports_by_status": {status: int},
                 "abandoned_imports": int}}

``SessionDiagnosis``::

    {"version": 1, "workspace": str, "query": str, "status": "found" | "not-found" |
     "ambiguous" | "purged", "message": str, "exit_code": 0 | 1 | 2 | 4, "catalog_exists": bool,
     "session": {"provider", "session_id", "in_sessions", "parent_session_id",
                 "project_path", "title", "started_at", "updated_at", "lifecycle"} | null,
     "rows": {"sessions": int, "events": int, "usage": int},
     "sources": [{"source_id", "provider", "path", "status", "continuity", "refusal",
                  "remedy", "records", "rejected", "events", "usage", "rejects": {reason: int}}],
     "candidates": [{"provider", "path", "matched_by": "path" | "content", "state",
                     "continuity", "reason", "remedy", "catalog_status",
                     "rejects": {reason: int}}],
     "matches": [str], "roots_searched": [str], "files_searched": int}

The catalog's checks read its counters, not its rows, and take the same time on any
catalog; ``events_with_text``, ``missing``, ``dangling`` and ``orphans`` are ``null``
then (not counted). ``doctor --deep`` (``diagnose(deep=True)``) also checks every event
against the search index and every row for a missing session or source: scans of the
whole workspace, seconds on a catalog of a million events.

Exit codes: :attr:`DoctorReport.exit_code` is 0 when healthy, 1 when something needs
attention (a root warning, a refused source, a missing or stale search index, orphan
rows, a last import that did not finish), 4 when the catalog does not exist.
:attr:`SessionDiagnosis.exit_code` is 0 when the session is in the workspace, 1 when it
is but one of its sources is refused (or its rows are orphans), 2 when a prefix is
ambiguous and 4 when it is not in the workspace (unknown ids and ids of other
workspaces alike; ``purged`` when a purge deleted it, its message saying when, by whom,
by which operation and whether imports still withhold it, the other fields as for
``not-found``).
"""

from .catalog_health import diagnose
from .session import explain_session
from .session_values import FileCandidate, SessionDiagnosis, SessionRecord, SessionSource
from .values import (
    CatalogCheck,
    DoctorReport,
    ImportReceipt,
    RefusedSource,
    RejectCount,
    RootCheck,
    SearchIndexCheck,
)

__all__ = [
    "CatalogCheck",
    "DoctorReport",
    "FileCandidate",
    "ImportReceipt",
    "RefusedSource",
    "RejectCount",
    "RootCheck",
    "SearchIndexCheck",
    "SessionDiagnosis",
    "SessionRecord",
    "SessionSource",
    "diagnose",
    "explain_session",
]
