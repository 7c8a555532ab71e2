"""Moving and releasing sources: ``agentlake sources relocate OLD NEW`` and ``agentlake
sources release PATH``.

A relocated source keeps its id, checkpoint, rows and sessions: only the path (and the
file identity) its checkpoint names changes, so the next import finds each file unchanged
where it now is and reads nothing. The planner finds a checkpoint by its path when the
path no longer hashes to its id (:class:`agentlake.ingest.plan.SourceIds`). A relocation
is all or nothing: every moved file must hold the bytes its checkpoint vouches for.

A source is bound to the workspace that first imported it; releasing it lets another
workspace import it, while the releasing one keeps what it imported.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import pyarrow as pa

from agentlake import sql
from agentlake.errors import ConfigurationError, NotFoundError
from agentlake.extract.sources import NotARegularFile, open_regular
from agentlake.load.bindings import CatalogBindings
from agentlake.load.catalog import catalog_exists, open_for_read, run_script
from agentlake.load.checkpoint import document_digest, window_digest
from agentlake.load.lake import Catalog

from .audit import record
from .authz import Authorization
from .writes import mutation

SQLITE_HEADER: Final = b"SQLite format 3\x00"


@dataclass(frozen=True, slots=True)
class SourceMove:
    """One source moved (or to be moved) from ``old_path`` to ``new_path``."""

    source_id: str
    provider: str
    position_kind: str
    old_path: str
    new_path: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_id": self.source_id, "provider": self.provider,
            "position_kind": self.position_kind, "old_path": self.old_path,
            "new_path": self.new_path,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Relocation:
    """What ``relocate`` did (or, with ``dry_run``, would do)."""

    workspace: str
    old: str
    new: str
    moves: tuple[SourceMove, ...]
    dry_run: bool
    audit_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "old": self.old,
            "new": self.new,
            "dry_run": self.dry_run,
            "sources_moved": 0 if self.dry_run else len(self.moves),
            "moves": [m.to_dict() for m in self.moves],
            "audit_id": self.audit_id,
        }


@dataclass(frozen=True, slots=True)
class ReleasedSource:
    """One source a workspace released."""

    source_id: str
    provider: str
    path: str

    def to_dict(self) -> dict[str, Any]:
        return {"source_id": self.source_id, "provider": self.provider, "path": self.path}


@dataclass(frozen=True, slots=True)
class Release:
    """What ``release`` did (or, with ``dry_run``, would do): the sources released now,
    and how many at the path were released before."""

    workspace: str
    path: str
    released: tuple[ReleasedSource, ...]
    already_released: int
    dry_run: bool
    audit_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "path": self.path,
            "dry_run": self.dry_run,
            "sources_released": 0 if self.dry_run else len(self.released),
            "already_released": self.already_released,
            "sources": [s.to_dict() for s in self.released],
            "audit_id": self.audit_id,
        }


@dataclass(frozen=True, slots=True)
class _Held:
    """A source row of the workspace, as relocating and releasing read it."""

    source_id: str
    provider: str
    path: str
    position_kind: str
    device: int | None
    inode: int | None
    size_bytes: int | None
    mtime_ns: int | None
    committed_offset: int
    prefix_digest: str | None
    released: bool


def _absolute(path: Path) -> str:
    """``path`` as the catalog spells source paths: absolute and canonical (a moved-away
    path no longer exists; what of it does is resolved)."""
    return os.path.realpath(path.expanduser())


def _held(con: duckdb.DuckDBPyConnection, workspace: str, path: str) -> list[_Held]:
    """The workspace's sources at ``path`` or under it; none is exactly what another
    workspace's sources look like from here (:class:`NotFoundError`)."""
    under = path.rstrip(os.sep) + os.sep
    rows = con.execute(
        sql.query("sources_under"), {"workspace": workspace, "path": path, "under": under}
    ).fetchall()
    if not rows:
        raise NotFoundError(f"no source of workspace {workspace!r} is at or under {path}")
    return [_Held(*r) for r in rows]


def _target(source_path: str, old: str, new: str) -> str:
    """Where a source at ``source_path`` under ``old`` is under ``new``."""
    return new + source_path[len(old) :]


def _mismatch(held: _Held, new_path: str) -> tuple[str, os.stat_result | None]:
    """Why the file at ``new_path`` is not the source ``held`` (empty: it is), and its
    stat. Only a window of bytes is read for append-only files; a document is read whole
    (as the planner does to tell it unchanged); a database's header only."""
    path = Path(new_path)
    try:
        with open_regular(path) as fh:
            st = os.fstat(fh.fileno())
            head = fh.read(len(SQLITE_HEADER)) if held.position_kind == "sqlite" else b""
    except FileNotFoundError:
        return "no such file", None
    except NotARegularFile as exc:
        return str(exc), None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})", None
    offset = held.committed_offset
    if held.position_kind == "byte-offset":
        if st.st_size < offset:
            return f"holds {st.st_size} bytes, fewer than the {offset} already imported", st
        if offset and window_digest(path, offset) != held.prefix_digest:
            return f"its bytes before offset {offset} differ from the imported ones", st
        return "", st
    if held.position_kind == "document":
        if held.prefix_digest is not None:
            same = document_digest(path) == held.prefix_digest
        else:  # no digest kept (never read whole): its size and time must agree
            same = (st.st_size, st.st_mtime_ns) == (held.size_bytes, held.mtime_ns)
        return ("" if same else "its content differs from the imported document"), st
    # A database has no digest of what was read: it must be a SQLite file and either the
    # same file (device, inode: a move within a file system) or a copy with the same size
    # and modification time (mv across file systems, cp -p, rsync -a).
    if head != SQLITE_HEADER:
        return "not a SQLite database", st
    same_file = (st.st_dev, st.st_ino) == (held.device, held.inode)
    same_copy = (st.st_size, st.st_mtime_ns) == (held.size_bytes, held.mtime_ns)
    if not (same_file or same_copy):
        return "neither the same file nor a copy with the same size and time", st
    return "", st


def relocate(
    catalog: Catalog, auth: Authorization, old: Path, new: Path, *, dry_run: bool = False
) -> Relocation:
    """Point the sources of ``auth.workspace`` at or under ``old`` (a moved directory or
    one file) at the corresponding paths under ``new``, keeping their ids, checkpoints
    and rows. Every file under ``new`` must match its checkpoint (the window digest
    before the committed offset, a document's digest, a database's identity) and no
    other source may already be at its new path; otherwise nothing changes and
    :class:`ConfigurationError` names the first file that does not. ``dry_run`` checks
    the same and changes nothing."""
    old_s, new_s = _absolute(old), _absolute(new)
    if old_s == new_s:
        raise ConfigurationError(f"{old} and {new} are the same path; nothing to relocate")
    if not catalog_exists(catalog):
        raise NotFoundError(
            f"{catalog}: no catalog here; run 'agentlake import' first or pass --catalog"
        )
    if dry_run:
        with open_for_read(catalog) as con:
            moves, _ = _plan_moves(con, auth.workspace, old_s, new_s)
        return Relocation(auth.workspace, old_s, new_s, tuple(moves), True)
    with mutation(catalog, workspace=auth.workspace) as con:
        moves, stats = _plan_moves(con, auth.workspace, old_s, new_s)
        table = pa.table({
            "source_id": [m.source_id for m in moves],
            "new_path": [m.new_path for m in moves],
            "device": pa.array([s.st_dev for s in stats], pa.uint64()),
            "inode": pa.array([s.st_ino for s in stats], pa.uint64()),
            "mtime_ns": pa.array([s.st_mtime_ns for s in stats], pa.int64()),
        })  # fmt: skip
        con.register("moves", table)
        try:
            params = {"workspace": auth.workspace}
            con.execute(sql.query("relocate_sources"), params)
            con.execute(sql.query("relocate_refusals"), params)
        finally:
            con.unregister("moves")
        audit_id = record(
            con, auth, counts={"sources": len(moves)}, digest=_scope([m.source_id for m in moves])
        )
    return Relocation(auth.workspace, old_s, new_s, tuple(moves), False, audit_id)


def _plan_moves(
    con: duckdb.DuckDBPyConnection, workspace: str, old: str, new: str
) -> tuple[list[SourceMove], list[os.stat_result]]:
    """Each source's move and its new file's stat, every one checked."""
    held = _held(con, workspace, old)
    moves: list[SourceMove] = []
    stats: list[os.stat_result] = []
    for h in held:
        target = _target(h.path, old, new)
        why, st = _mismatch(h, target)
        if why:
            raise ConfigurationError(
                f"{target}: {why}; it is not the file imported from {h.path}, so nothing was "
                "relocated (move the original files there, or import the new location as "
                "new sources)"
            )
        assert st is not None
        moves.append(SourceMove(h.source_id, h.provider, h.position_kind, h.path, target))
        stats.append(st)
    _check_targets_free(con, workspace, moves)
    return moves, stats


def _check_targets_free(
    con: duckdb.DuckDBPyConnection, workspace: str, moves: Sequence[SourceMove]
) -> None:
    """No other source of this workspace, and none another workspace holds, may be at a
    new path already: two checkpoints of one file would each claim it."""
    paths = [m.new_path for m in moves]
    taken = con.execute(
        sql.query("sources_at_paths"),
        {"workspace": workspace, "paths": paths, "moving": [m.source_id for m in moves]},
    ).fetchone()
    if taken is not None:
        raise ConfigurationError(
            f"{taken[2]}: already imported as a source of its own in workspace "
            f"{workspace!r}; nothing was relocated"
        )
    owners = CatalogBindings(con, workspace).owners([(m.provider, m.new_path) for m in moves])
    for m in moves:
        owner = owners.get((m.provider, m.new_path))
        if owner is not None:
            raise ConfigurationError(
                f"{m.new_path}: bound to workspace {owner!r}, which imported it first; "
                "nothing was relocated"
            )


def release(catalog: Catalog, auth: Authorization, path: Path, *, dry_run: bool = False) -> Release:
    """Release the sources of ``auth.workspace`` at or under ``path``: another workspace
    may import them from now on. The workspace keeps the rows it imported (and may read
    the files on until another workspace imports them). A path where the workspace holds
    no source is :class:`NotFoundError`, whether or not another workspace holds one."""
    where = _absolute(path)
    if not catalog_exists(catalog):
        raise NotFoundError(
            f"{catalog}: no catalog here; run 'agentlake import' first or pass --catalog"
        )
    if dry_run:
        with open_for_read(catalog) as con:
            held = _held(con, auth.workspace, where)
        fresh = _releasable(held)
        return Release(auth.workspace, where, fresh, len(held) - len(fresh), True)
    with mutation(catalog, workspace=auth.workspace) as con:
        held = _held(con, auth.workspace, where)
        fresh = _releasable(held)
        audit_id = None
        if fresh:
            table = pa.table({
                "source_id": [s.source_id for s in fresh],
                "provider": [s.provider for s in fresh],
                "path": [s.path for s in fresh],
            })  # fmt: skip
            con.register("releasing", table)
            try:
                run_script(con, sql.query("release_sources"), {"workspace": auth.workspace})
            finally:
                con.unregister("releasing")
            audit_id = record(
                con, auth, counts={"sources": len(fresh)},
                digest=_scope([s.source_id for s in fresh]),
            )  # fmt: skip
    return Release(auth.workspace, where, fresh, len(held) - len(fresh), False, audit_id)


def _releasable(held: Sequence[_Held]) -> tuple[ReleasedSource, ...]:
    return tuple(ReleasedSource(h.source_id, h.provider, h.path) for h in held if not h.released)


def _scope(source_ids: Sequence[str]) -> str:
    """A content-free digest of the sources an operation touched (their ids, sorted)."""
    return hashlib.blake2b("\0".join(sorted(source_ids)).encode(), digest_size=16).hexdigest()
