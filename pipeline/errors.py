"""The one error tree of agentlake.

Errors are classified by what the caller must do, never by message text:

* :class:`ConfigurationError` — bad options or environment, raised before any work (exit 2).
* :class:`NotFoundError` — an id, file or catalog that does not exist in this workspace (exit 4).
* :class:`CatalogLocked` — another process holds the catalog (exit 5).
* :class:`CatalogUnusable` — unknown schema version or a corrupt catalog (exit 6).
* :class:`SourceError` — refuse one source and continue the run (exit 1 at the end).
* :class:`FatalError` — stop the run; nothing half-written (exit 1).
* :class:`ImportStopped` — a stop was requested (SIGINT/SIGTERM): the run ended at a batch
  boundary with everything before it committed (exit 130); the next run resumes.

Record-level problems are not exceptions: they become rows in ``rejects``.
Every message is one line that names the problem and the remedy.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

SourceErrorCode = Literal[
    "SOURCE_TRUNCATED",
    "SOURCE_REPLACED",
    "SOURCE_REWRITTEN",
    "SCHEMA_DRIFT",
    "SOURCE_OUTSIDE_ROOT",
    "SOURCE_UNREADABLE",
]


class AgentlakeError(Exception):
    """Root of every error agentlake raises on purpose."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigurationError(AgentlakeError):
    """Invalid options or environment, detected before any work starts."""

    exit_code = 2


class NotFoundError(AgentlakeError):
    """Something asked for does not exist (in this workspace)."""

    exit_code = 4


class CatalogLocked(AgentlakeError):
    """Another process is writing the catalog."""

    exit_code = 5


class CatalogUnusable(AgentlakeError):
    """The catalog has an unknown schema version or cannot be opened."""

    exit_code = 6


class SourceError(AgentlakeError):
    """One source cannot be imported; the run continues with the others."""

    def __init__(self, code: SourceErrorCode, path: str, message: str) -> None:
        super().__init__(f"{code}: {path}: {message}")
        self.code: SourceErrorCode = code
        self.path = path


class FatalError(AgentlakeError):
    """The run must stop; committed batches stay, nothing half-written."""


class ImportStopped(AgentlakeError):
    """The import was asked to stop and did so at a batch boundary: every batch before it
    is committed with its checkpoint, the receipt says ``interrupted``, and the next run
    resumes where this one stopped."""

    exit_code = 130

    def __init__(self, message: str, outcome: Any = None) -> None:
        super().__init__(message)
        self.outcome = outcome  # the run's record of the source in progress, if any
