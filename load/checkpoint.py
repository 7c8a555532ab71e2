"""Persisted per-source checkpoints (DESIGN §5); their digests are computed by
:mod:`agentlake.extract.digests`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import duckdb

# Re-exported: the planner and the committer know them as checkpoint functions.
from agentlake.extract.digests import WINDOW_BYTES as WINDOW_BYTES
from agentlake.extract.digests import document_digest as document_digest
from agentlake.extract.digests import window_digest as window_digest

CHECKPOINT_VERSION: Final = 1


#: The planner's decision for a source against its checkpoint (DESIGN §5), as stored.
Continuity = Literal[
    "new",
    "unchanged",
    "validated-append",
    "truncated",
    "replaced",
    "rewritten",
    "drift",
    "updated",  # a document or database whose content changed: re-read whole
    "retry",  # refused last time for a cause that may have passed (unreadable, corrupt)
    "superseded",  # another copy of the same transcript is preferred (left out)
    "outside-root",
    "unreadable",
    "corrupt",  # opens, but is not a valid file of its format (a damaged database)
    "not-a-file",  # a FIFO, socket or device: never opened
    "over-limit",  # past a ceiling (records, bytes, document size, join state)
    "unauthorized",  # bound to another workspace of the catalog: never opened
]
#: What a source's checkpoint says of it: read up to its offset, or refused (its data kept).
SourceStatus = Literal["ok", "refused"]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What the catalog knows of one source: how far it is committed and what the file
    looked like then. ``size_bytes``/``mtime_ns`` are as last observed (which may be past
    ``committed_offset`` when a torn tail is pending)."""

    source_id: str
    provider: str
    path: str
    device: int
    inode: int
    size_bytes: int
    mtime_ns: int
    committed_offset: int
    prefix_digest: str | None
    generation: int
    adapter_version: str
    policy_version: int
    status: SourceStatus
    continuity: Continuity | None
    refusal: str | None
    adapter_state: str | None = None
    version: int = CHECKPOINT_VERSION
    records: int = 0  # records committed in this generation (the records ceiling's count)


def load_checkpoints(con: duckdb.DuckDBPyConnection, workspace: str) -> dict[str, Checkpoint]:
    """Every source checkpoint of ``workspace``, by source id."""
    rows = con.execute(
        """SELECT source_id, provider, path, device, inode, size_bytes, mtime_ns, committed_offset,
                  prefix_digest, generation, adapter_version, policy_version, status, continuity,
                  refusal, adapter_state, checkpoint_version, records
           FROM sources WHERE workspace = ?""",
        [workspace],
    ).fetchall()
    return {r[0]: Checkpoint(*r) for r in rows}
