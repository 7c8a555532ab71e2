"""The planner: discovery plus one continuity decision per source, made from stat
calls and checkpoint windows before any new transcript byte is read (DESIGN §5)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, cast

from agentlake.errors import SourceErrorCode
from agentlake.extract.jsonl import line_within
from agentlake.extract.providers import REGISTRY, ProviderSpec, resolve
from agentlake.extract.sources import RefusedPath, Root, SourceFile, walk_root
from agentlake.load.checkpoint import Checkpoint, Continuity, document_digest, window_digest
from agentlake.read.names import provider_ids
from agentlake.transform.redact import POLICY_VERSION

if TYPE_CHECKING:
    import duckdb

Action = Literal["read", "skip", "refuse"]

# Refusals that repeat from the checkpoint until --restart-drifted re-reads the source.
REFUSED: Final = frozenset({"truncated", "replaced", "rewritten", "drift"})
# Refusals whose cause may pass by itself (permissions fixed, an agent done writing its
# database): such a source is read again on every run.
# A source past a ceiling (RESOURCE_LIMIT_EXCEEDED) is one of them: each run checks it
# against the ceilings in force, so raising one lets it continue from its checkpoint.
RETRIED: Final = frozenset({"unreadable", "corrupt", "not-a-file", "over-limit"})
_CODES: Final[dict[str, SourceErrorCode]] = {
    "truncated": "SOURCE_TRUNCATED",
    "replaced": "SOURCE_REPLACED",
    "rewritten": "SOURCE_REWRITTEN",
    "drift": "SCHEMA_DRIFT",
    "outside-root": "SOURCE_OUTSIDE_ROOT",
    "unreadable": "SOURCE_UNREADABLE",
    "corrupt": "SOURCE_CORRUPT",
    "not-a-file": "NOT_A_FILE",
    "over-limit": "RESOURCE_LIMIT_EXCEEDED",
    "unauthorized": "SOURCE_NOT_AUTHORIZED",
}
_CONTINUITY: Final[dict[SourceErrorCode, Continuity]] = {
    code: cast(Continuity, continuity) for continuity, code in _CODES.items()
}


def continuity_of(code: SourceErrorCode) -> Continuity:
    """The continuity outcome a refusal code stands for (``SOURCE_CORRUPT`` →
    ``corrupt``…); the inverse of :func:`refusal_code`."""
    return _CONTINUITY[code]


def refusal_code(continuity: str | None) -> SourceErrorCode | None:
    """The refusal code of a refusing continuity outcome (``truncated`` →
    ``SOURCE_TRUNCATED``…), ``None`` for the others."""
    return _CODES.get(continuity) if continuity else None


@dataclass(frozen=True, slots=True)
class PlannedSource:
    """One source × its continuity decision × the byte range to read."""

    provider: str
    path: Path
    source_id: str
    continuity: Continuity
    action: Action
    start: int = 0
    stop: int = 0
    generation: int = 1
    restart: bool = False
    touched: bool = False  # same content, new mtime: only the checkpoint's stat moves
    message: str | None = None
    source: SourceFile | None = None
    checkpoint: Checkpoint | None = None

    @property
    def code(self) -> SourceErrorCode | None:
        """The refusal code (``SOURCE_TRUNCATED``…) when refused."""
        return refusal_code(self.continuity) if self.action == "refuse" else None

    @property
    def resumes(self) -> bool:
        """Whether the read continues from its checkpoint, with the adapter state saved
        there: an append-only file from its offset, a store from its watermark."""
        if self.checkpoint is None or self.source is None or self.restart:
            return False
        if self.source.position_kind == "byte-offset":
            return self.continuity in ("validated-append", "retry")
        return self.source.position_kind == "sqlite" and self.continuity in ("updated", "retry")

    @property
    def pending_bytes(self) -> int:
        """Bytes this plan will read."""
        return self.stop - self.start if self.action == "read" else 0


@dataclass(frozen=True, slots=True)
class Plan:
    """The whole import plan: roots searched and every source's decision."""

    workspace: str
    roots: tuple[Root, ...]
    sources: tuple[PlannedSource, ...]
    # (path, format) of each file named without --format, by the format its content
    # was recognized as.
    guesses: tuple[tuple[str, str], ...] = ()

    @property
    def bytes_to_read(self) -> int:
        """Total bytes the plan will read."""
        return sum(s.pending_bytes for s in self.sources)

    def count(self, continuity: str) -> int:
        """How many sources have this outcome."""
        return sum(1 for s in self.sources if s.continuity == continuity)

    def to_json(self) -> dict[str, Any]:
        """The document ``agentlake sources --json`` and ``import --dry-run --json``
        print: each root (whether it exists now) and each source's decision."""
        return {
            "workspace": self.workspace,
            "roots": [
                {
                    "provider": r.provider,
                    "path": str(r.path),
                    "origin": r.origin,
                    "exists": r.path.is_dir(),
                    "warning": r.warning,
                }
                for r in self.roots
            ],
            "sources": [
                {
                    "provider": s.provider,
                    "path": str(s.path),
                    "source_id": s.source_id,
                    "continuity": s.continuity,
                    "action": s.action,
                    "start": s.start,
                    "stop": s.stop,
                    "bytes": s.pending_bytes,
                    "generation": s.generation,
                    "code": s.code,
                    "message": s.message,
                }
                for s in self.sources
            ],
            "bytes_to_read": self.bytes_to_read,
            **self.guesses_json(),
        }

    def guesses_json(self) -> dict[str, Any]:
        """``guessed_formats`` of the plan and of the import's receipt: each file named
        without ``--format`` and the format its content was read as (none: no key)."""
        if not self.guesses:
            return {}
        return {"guessed_formats": [{"path": p, "format": f} for p, f in self.guesses]}


def select_providers(names: Sequence[str]) -> tuple[ProviderSpec, ...]:
    """The registry rows named by ids or aliases (all when ``names`` is empty)."""
    if not names:
        return REGISTRY
    return tuple(resolve(name) for name in provider_ids(names))


def classify(
    source: SourceFile,
    checkpoint: Checkpoint | None,
    spec: ProviderSpec,
    *,
    restart_refused: bool = False,
) -> PlannedSource:
    """Decide what to do with one discovered source (the table of DESIGN §5)."""
    base = PlannedSource(
        source.provider, source.path, source.source_id, "new", "read",
        stop=source.size, source=source, checkpoint=checkpoint,
    )  # fmt: skip
    if checkpoint is None:
        return base
    cp = checkpoint
    if source.position_kind != "byte-offset":
        return _classify_whole(base, source, cp, spec, restart_refused)
    outcome: Continuity | None = None
    message = None
    drift = _drift_message(cp, spec)
    if drift is not None:
        outcome, message = "drift", drift
    elif (cp.device, cp.inode) != (source.device, source.inode):
        outcome, message = (
            "replaced",
            "file identity (device, inode) changed; rerun with --restart-drifted to re-import it",
        )
    elif source.size < cp.committed_offset:
        outcome = "truncated"
        message = (
            f"file shrank to {source.size} bytes below the committed offset {cp.committed_offset}; "
            "its imported data is kept; rerun with --restart-drifted to re-import it"
        )
    elif cp.status == "refused" and cp.continuity in REFUSED:
        outcome, message = cp.continuity, cp.refusal
    if outcome is None:
        retry = cp.status == "refused" and cp.continuity in RETRIED
        # Complete lines past the committed offset that a per-run ceiling or a stopped run
        # left unread must be read even when the file itself did not change.
        pending = cp.committed_offset < source.size and line_within(
            source.path, cp.committed_offset, source.size
        )
        if (
            source.size == cp.size_bytes
            and source.mtime_ns == cp.mtime_ns
            and not (pending or retry)
        ):
            # The common case of a nightly run, built directly (no copy of ``base``).
            return PlannedSource(
                source.provider, source.path, source.source_id, "unchanged", "skip",
                start=cp.committed_offset, stop=cp.committed_offset, generation=cp.generation,
                source=source, checkpoint=cp,
            )  # fmt: skip
        try:
            rewritten = bool(cp.committed_offset) and (
                window_digest(source.path, cp.committed_offset) != cp.prefix_digest
            )
        except OSError:
            retry, rewritten = True, False  # the read says why it cannot read it
        if retry:
            return replace(
                base, continuity="retry", start=cp.committed_offset, generation=cp.generation
            )
        if rewritten:
            outcome = "rewritten"
            message = (
                f"the bytes before the committed offset {cp.committed_offset} changed; "
                "rerun with --restart-drifted to re-import it"
            )
        elif source.size == cp.committed_offset or (source.size == cp.size_bytes and not pending):
            return replace(
                base,
                continuity="unchanged",
                action="skip",
                touched=True,
                start=cp.committed_offset,
                stop=cp.committed_offset,
                generation=cp.generation,
            )
        else:
            return replace(
                base,
                continuity="validated-append",
                action="read",
                start=cp.committed_offset,
                stop=source.size,
                generation=cp.generation,
            )
    if restart_refused:
        return replace(
            base,
            continuity=outcome,
            action="read",
            start=0,
            stop=source.size,
            generation=cp.generation + 1,
            restart=True,
            message=message,
        )
    return replace(
        base,
        continuity=outcome,
        action="refuse",
        message=message,
        start=cp.committed_offset,
        stop=cp.committed_offset,
        generation=cp.generation,
    )


def _drift_message(cp: Checkpoint, spec: ProviderSpec) -> str | None:
    if (
        int(cp.adapter_version.split(".")[0]) == spec.adapter_major
        and cp.policy_version == POLICY_VERSION
    ):
        return None
    return (
        f"imported with adapter {cp.adapter_version} / redaction policy {cp.policy_version}, "
        f"now {spec.adapter_version} / {POLICY_VERSION}; rerun with --restart-drifted to re-import"
    )


def _classify_whole(
    base: PlannedSource,
    source: SourceFile,
    cp: Checkpoint,
    spec: ProviderSpec,
    restart_refused: bool,
) -> PlannedSource:
    """Documents and databases are re-read whole when they change. A document is keyed by
    its content digest and replaced atomically; a database's rows merge by identity."""
    outcome: Continuity | None = None
    message = _drift_message(cp, spec)
    if message is not None:
        outcome = "drift"
    elif cp.status == "refused" and cp.continuity in REFUSED:
        outcome, message = cp.continuity, cp.refusal  # a store gone backwards, a drift
    if outcome is not None:
        if restart_refused:
            return replace(
                base, continuity=outcome, generation=cp.generation + 1, restart=True,
                message=message,
            )  # fmt: skip
        return replace(
            base, continuity=outcome, action="refuse", message=message, generation=cp.generation
        )
    if cp.status == "refused" and cp.continuity in RETRIED:
        return replace(base, continuity="retry", generation=cp.generation,
                       restart=source.position_kind == "document")  # fmt: skip
    if source.size == cp.size_bytes and source.mtime_ns == cp.mtime_ns:
        return replace(base, continuity="unchanged", action="skip", start=cp.committed_offset,
                       stop=cp.committed_offset, generation=cp.generation)  # fmt: skip
    if source.position_kind == "document" and _digest_of(source.path) == cp.prefix_digest:
        return replace(base, continuity="unchanged", action="skip", touched=True,
                       start=cp.committed_offset, stop=cp.committed_offset, generation=cp.generation)  # fmt: skip
    return replace(base, continuity="updated", generation=cp.generation,
                   restart=source.position_kind == "document")  # fmt: skip


class SourceBindings(Protocol):
    """Which workspace of the catalog each source path is bound to, as one workspace's
    plan needs it. A source is bound to the workspace that first imported it; another
    workspace may import it only once that one released it (``agentlake sources
    release``)."""

    def released(self) -> AbstractSet[str]:
        """Ids of the sources the planning workspace released."""
        ...

    def owners(self, keys: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], str]:
        """For ``(provider, path)`` keys: the other workspace each is bound to (absent
        when none holds it)."""
        ...


class SourceIds:
    """Finds a discovered file's checkpoint. A source's id is the hash of its provider
    and path when first imported, and stays its id when the file is relocated (its rows
    keep their ``source_id``): a file at a relocated path is found by path, and a new
    file where a relocated one used to be gets an id of its own."""

    def __init__(self, checkpoints: Mapping[str, Checkpoint]) -> None:
        self.checkpoints = checkpoints
        self._by_path: dict[tuple[str, str], str] | None = None

    def resolve(self, item: SourceFile) -> tuple[SourceFile, Checkpoint | None]:
        """``item`` under its catalog id, and that id's checkpoint (``None``: new)."""
        cp = self.checkpoints.get(item.source_id)
        path = str(item.path)
        if cp is not None and cp.path == path:
            return item, cp  # the common case: a source where it was first imported
        if self._by_path is None:
            self._by_path = {(c.provider, c.path): sid for sid, c in self.checkpoints.items()}
        known = self._by_path.get((item.provider, path))
        if known is not None:
            return item.known_as(known), self.checkpoints[known]
        if cp is None:
            return item, None
        # The path's own id belongs to a source relocated elsewhere: derive another,
        # the same on every run (a derived id whose source moved on derives again).
        sid = item.source_id
        while sid in self.checkpoints:
            sid = hashlib.blake2b(
                f"{sid}\0{item.provider}\0{path}".encode(), digest_size=10
            ).hexdigest()
        return item.known_as(sid), None


# A source waiting for the workspace check: its index in the plan, its spec, the file
# under its catalog id and its checkpoint.
Unbound = tuple[int, ProviderSpec, SourceFile, "Checkpoint | None"]


def needs_binding(
    bindings: SourceBindings | None, released: AbstractSet[str], item: SourceFile,
    cp: Checkpoint | None,
) -> bool:  # fmt: skip
    """Whether ``item`` must be checked against the other workspaces before its plan:
    a source the workspace holds (imported and not released) is its own."""
    return bindings is not None and (cp is None or item.source_id in released)


def bind_planned(
    planned: list[PlannedSource | None],
    unbound: Sequence[Unbound],
    bindings: SourceBindings | None,
    restart_refused: bool,
) -> tuple[PlannedSource, ...]:
    """Classify the sources waiting for the workspace check (one lookup for all): a
    source bound to another workspace is refused before any byte of it is read."""
    if unbound:
        assert bindings is not None
        owners = bindings.owners([(item.provider, str(item.path)) for _, _, item, _ in unbound])
        for index, spec, item, cp in unbound:
            owner = owners.get((item.provider, str(item.path)))
            planned[index] = (
                classify(item, cp, spec, restart_refused=restart_refused)
                if owner is None
                else unauthorized(item, owner)
            )
    assert all(p is not None for p in planned)
    return tuple(cast(list[PlannedSource], planned))


def unauthorized(item: SourceFile, owner: str) -> PlannedSource:
    """The refusal of a source bound to the workspace ``owner``: never opened, no
    checkpoint written in this workspace."""
    return PlannedSource(
        item.provider, item.path, item.source_id, "unauthorized", "refuse",
        message=(
            f"bound to workspace {owner!r}, which imported it first; never opened in this "
            f"workspace; release it there ('agentlake sources release PATH --workspace "
            f"{owner}') to import it here"
        ),
        source=item,
    )  # fmt: skip


def canonical_root(root: Root) -> Root:
    """``root`` at its absolute, canonical path (symlinks and ``..`` resolved): a source's
    identity is computed from its path, so ``--home home``, ``--home ./x/../home`` and the
    absolute spelling of one directory must name the same sources."""
    real = Path(os.path.realpath(root.path))
    return root if real == root.path else replace(root, path=real)


def _digest_of(path: Path) -> str | None:
    """The document's digest, or ``None`` when it cannot be read (the read says why)."""
    try:
        return document_digest(path)
    except OSError:
        return None


def make_plan(
    checkpoints: Mapping[str, Checkpoint],
    *,
    workspace: str,
    home: Path,
    env: Mapping[str, str],
    providers: Sequence[ProviderSpec] = REGISTRY,
    restart_refused: bool = False,
    bindings: SourceBindings | None = None,
) -> Plan:
    """Discover every provider's sources and classify each against its checkpoint. With
    ``bindings``, a source another workspace holds is refused (``SOURCE_NOT_AUTHORIZED``)
    unless this workspace holds it too."""
    roots: list[Root] = []
    planned: list[PlannedSource | None] = []
    unbound: list[Unbound] = []
    ids = SourceIds(checkpoints)
    released = bindings.released() if bindings is not None else frozenset()
    seen: set[str] = set()
    for spec in providers:
        found: list[SourceFile] = []
        for root in map(canonical_root, spec.roots(home, env)):
            roots.append(root)
            for item in walk_root(root, spec.formats):
                if item.source_id in seen:
                    continue
                seen.add(item.source_id)
                if isinstance(item, RefusedPath):
                    planned.append(
                        PlannedSource(
                            spec.id,
                            item.path,
                            item.source_id,
                            continuity_of(item.code),
                            "refuse",
                            message=item.message,
                        )
                    )
                else:
                    found.append(item)
        left_out = spec.superseded(found) if spec.superseded else {}
        for item in found:
            if item.source_id in left_out:
                planned.append(
                    PlannedSource(
                        spec.id,
                        item.path,
                        item.source_id,
                        "superseded",
                        "skip",
                        message=left_out[item.source_id],
                        source=item,
                    )
                )
            else:
                item, cp = ids.resolve(item)
                if needs_binding(bindings, released, item, cp):
                    unbound.append((len(planned), spec, item, cp))
                    planned.append(None)
                else:
                    planned.append(classify(item, cp, spec, restart_refused=restart_refused))
    return Plan(workspace, tuple(roots), bind_planned(planned, unbound, bindings, restart_refused))


def purged_sources(con: duckdb.DuckDBPyConnection, workspace: str) -> frozenset[str]:
    """The ids of the sources that held rows of ``workspace``'s purged sessions
    (``purge_revocations``): what ``import --allow-purged`` reads again."""
    rows = con.execute(
        "SELECT DISTINCT unnest(source_ids) FROM purge_revocations WHERE workspace = ?",
        [workspace],
    ).fetchall()
    return frozenset(str(r[0]) for r in rows)


def restart_sources(plan: Plan, source_ids: frozenset[str]) -> Plan:
    """``plan`` with the sources ``source_ids`` that it would read or skip and that have
    a checkpoint re-read from byte 0 as a new generation (their earlier rows forgotten
    first, as ``--restart-drifted`` does for a refused source)."""
    if not source_ids:
        return plan
    sources = []
    for s in plan.sources:
        if (
            s.source_id in source_ids
            and s.source is not None
            and s.checkpoint is not None
            and s.action in ("read", "skip")
            and s.continuity != "superseded"
        ):
            s = replace(
                s, action="read", start=0, stop=s.source.size, restart=True, touched=False,
                generation=s.checkpoint.generation + 1,
            )  # fmt: skip
        sources.append(s)
    return replace(plan, sources=tuple(sources))
