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

from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal

SourceErrorCode = Literal[
    "SOURCE_TRUNCATED",
    "SOURCE_REPLACED",
    "SOURCE_REWRITTEN",
    "SCHEMA_DRIFT",
    "SOURCE_OUTSIDE_ROOT",
    "SOURCE_UNREADABLE",  # cannot be opened or read (permissions, I/O error)
    "SOURCE_CORRUPT",  # opens, but is not what its format says (a damaged database)
    "NOT_A_FILE",  # a FIFO, socket or device where a transcript was expected
    "RESOURCE_LIMIT_EXCEEDED",  # past a ceiling: records, bytes, document size, join state
    "SOURCE_NOT_AUTHORIZED",  # bound to another workspace of the catalog
]


RESTART_REMEDY: Final = (
    "run 'agentlake import --restart-drifted' to re-read it from byte 0 as a new "
    "generation (its imported data is kept until then)"
)
# What to do about each refusal, the same words wherever it is reported (import, its
# receipt, doctor).
REMEDIES: Final[Mapping[str, str]] = {
    "SOURCE_TRUNCATED": RESTART_REMEDY,
    "SOURCE_REPLACED": RESTART_REMEDY,
    "SOURCE_REWRITTEN": RESTART_REMEDY,
    "SCHEMA_DRIFT": "run 'agentlake import --restart-drifted' to re-read it with this "
    "adapter and redaction policy",
    "SOURCE_OUTSIDE_ROOT": "symlinks out of a provider root are not followed: move the "
    "file into the root, or point the provider's root (its environment override) at the "
    "real location",
    "SOURCE_UNREADABLE": "make it readable by this user (agentlake only ever reads it), or "
    "wait until its agent no longer holds it locked; every import tries it again",
    "SOURCE_CORRUPT": "if its agent is still writing it, let the agent finish; otherwise "
    "restore the file from a backup or move it out of the provider root; every import "
    "tries it again",
    "NOT_A_FILE": "only regular files are read: remove it or move it out of the provider "
    "root; every import checks it again",
    "RESOURCE_LIMIT_EXCEEDED": "its imported prefix is kept; raise the ceiling named (an "
    "'agentlake import' option, or its key in the config file's [import] table) and the "
    "next import continues from its checkpoint; every import checks it again",
    "SOURCE_NOT_AUTHORIZED": "import it in the workspace it is bound to, or release it "
    "there ('agentlake sources release PATH --workspace OWNER') so that this workspace may "
    "import it",
}


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

    def __init__(self, code: SourceErrorCode, path: str, detail: str) -> None:
        super().__init__(f"{code}: {path}: {detail}")
        self.code: SourceErrorCode = code
        self.path = path
        self.detail = detail  # what is wrong and the remedy, without the code and path


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
