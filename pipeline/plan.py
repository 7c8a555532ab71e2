"""The planner: discovery plus one continuity decision per source, made from stat
calls and checkpoint windows before any new transcript byte is read (DESIGN §5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Literal

from agentlake.extract.providers import REGISTRY, ProviderSpec, resolve
from agentlake.extract.sources import RefusedPath, Root, SourceFile, walk_root
from agentlake.load.checkpoint import Checkpoint, document_digest, window_digest
from agentlake.transform.redact import POLICY_VERSION

from .errors import ConfigurationError

Continuity = Literal[
    "new",
    "unchanged",
    "validated-append",
    "truncated",
    "replaced",
    "rewritten",
    "drift",
    "updated",  # a document or database whose content changed: re-read whole
    "superseded",  # another copy of the same transcript is preferred (left out)
    "outside-root",
    "unreadable",
]
Action = Literal["read", "skip", "refuse"]

REFUSED: Final = frozenset({"truncated", "replaced", "rewritten", "drift"})
_CODES: Final = {
    "truncated": "SOURCE_TRUNCATED",
    "replaced": "SOURCE_REPLACED",
    "rewritten": "SOURCE_REWRITTEN",
    "drift": "SCHEMA_DRIFT",
    "outside-root": "SOURCE_OUTSIDE_ROOT",
    "unreadable": "SOURCE_UNREADABLE",
}


def refusal_code(continuity: str | None) -> str | None:
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
    def code(self) -> str | None:
        """The refusal code (``SOURCE_TRUNCATED``…) when refused."""
        return refusal_code(self.continuity) if self.action == "refuse" else None

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

    @property
    def bytes_to_read(self) -> int:
        """Total bytes the plan will read."""
        return sum(s.pending_bytes for s in self.sources)

    def count(self, continuity: str) -> int:
        """How many sources have this outcome."""
        return sum(1 for s in self.sources if s.continuity == continuity)


def select_providers(names: Sequence[str]) -> tuple[ProviderSpec, ...]:
    """The registry rows named by ids or aliases (all when ``names`` is empty)."""
    if not names:
        return REGISTRY
    chosen: list[ProviderSpec] = []
    for name in names:
        try:
            spec = resolve(name)
        except KeyError:
            known = ", ".join(s.id for s in REGISTRY)
            raise ConfigurationError(f"unknown provider {name!r}; known: {known}") from None
        if spec not in chosen:
            chosen.append(spec)
    return tuple(chosen)


def _newline_after(path: Path, start: int, stop: int, chunk: int = 64 * 1024) -> bool:
    """Whether ``path`` holds a newline in ``[start, stop)`` (a complete line to read)."""
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            while start < stop:
                data = handle.read(min(chunk, stop - start))
                if not data:
                    return False
                if b"\n" in data:
                    return True
                start += len(data)
    except OSError:
        return False  # unreadable now: the read itself will say so
    return False


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
        outcome, message = cp.continuity, cp.refusal  # type: ignore[assignment]
    if outcome is None:
        # Complete lines past the committed offset that a per-run ceiling or a stopped run
        # left unread must be read even when the file itself did not change.
        pending = cp.committed_offset < source.size and _newline_after(
            source.path, cp.committed_offset, source.size
        )
        if source.size == cp.size_bytes and source.mtime_ns == cp.mtime_ns and not pending:
            # The common case of a nightly run, built directly (no copy of ``base``).
            return PlannedSource(
                source.provider, source.path, source.source_id, "unchanged", "skip",
                start=cp.committed_offset, stop=cp.committed_offset, generation=cp.generation,
                source=source, checkpoint=cp,
            )  # fmt: skip
        if (
            cp.committed_offset
            and window_digest(source.path, cp.committed_offset) != cp.prefix_digest
        ):
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
    drift = _drift_message(cp, spec)
    if drift is None and cp.status == "refused" and cp.continuity == "drift":
        drift = cp.refusal
    if drift is not None:
        if restart_refused:
            return replace(
                base, continuity="drift", generation=cp.generation + 1, restart=True, message=drift
            )
        return replace(
            base, continuity="drift", action="refuse", message=drift, generation=cp.generation
        )
    if source.size == cp.size_bytes and source.mtime_ns == cp.mtime_ns:
        return replace(base, continuity="unchanged", action="skip", start=cp.committed_offset,
                       stop=cp.committed_offset, generation=cp.generation)  # fmt: skip
    if source.position_kind == "document" and document_digest(source.path) == cp.prefix_digest:
        return replace(base, continuity="unchanged", action="skip", touched=True,
                       start=cp.committed_offset, stop=cp.committed_offset, generation=cp.generation)  # fmt: skip
    return replace(base, continuity="updated", generation=cp.generation,
                   restart=source.position_kind == "document")  # fmt: skip


def make_plan(
    checkpoints: Mapping[str, Checkpoint],
    *,
    workspace: str,
    home: Path,
    env: Mapping[str, str],
    providers: Sequence[ProviderSpec] = REGISTRY,
    restart_refused: bool = False,
) -> Plan:
    """Discover every provider's sources and classify each against its checkpoint."""
    roots: list[Root] = []
    planned: list[PlannedSource] = []
    seen: set[str] = set()
    for spec in providers:
        found: list[SourceFile] = []
        for root in spec.roots(home, env):
            roots.append(root)
            for item in walk_root(root, spec.formats):
                if item.source_id in seen:
                    continue
                seen.add(item.source_id)
                if isinstance(item, RefusedPath):
                    continuity: Continuity = (
                        "outside-root" if item.code == "SOURCE_OUTSIDE_ROOT" else "unreadable"
                    )
                    planned.append(
                        PlannedSource(
                            spec.id,
                            item.path,
                            item.source_id,
                            continuity,
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
                cp = checkpoints.get(item.source_id)
                planned.append(classify(item, cp, spec, restart_refused=restart_refused))
    return Plan(workspace, tuple(roots), tuple(planned))
