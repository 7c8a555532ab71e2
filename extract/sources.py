"""Source files, provider roots and path-owned discovery.

Discovery only admits files under a provider's own root that match its predicate, and
never follows a symlink out of that root (``SOURCE_OUTSIDE_ROOT``).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path
from typing import BinaryIO, Final, Literal, Protocol

from agentlake.errors import REMEDIES

PositionKind = Literal["byte-offset", "document", "sqlite"]
RelParts = tuple[str, ...]  # the parts of a path relative to its provider root


class OwnedFormat(Protocol):
    """What discovery needs of a format: its name, position kind and file predicate."""

    @property
    def name(self) -> str:
        """The format's name, e.g. ``claude-jsonl``."""
        ...

    @property
    def position_kind(self) -> PositionKind:
        """How progress in such a file is tracked."""
        ...

    def owns(self, rel: RelParts) -> bool:
        """Whether a file (the parts of its path relative to its root) is in this format."""
        ...


@dataclass(frozen=True, slots=True)
class Root:
    """A directory a provider owns, and why it is searched.

    ``formats`` restricts which of the provider's formats are looked for here (all when
    ``None``); ``max_depth`` bounds the walk (1 = files directly in the root).
    """

    provider: str
    path: Path
    origin: str  # e.g. "default" or "CLAUDE_CONFIG_DIR"
    formats: tuple[str, ...] | None = None
    max_depth: int | None = None
    warning: str | None = None  # e.g. an environment override that was ignored, and why


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One provider-owned file as seen by discovery (a stat, never its content)."""

    provider: str
    path: Path
    root: Path
    position_kind: PositionKind
    format: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    # Stable id of this file within a catalog: provider + absolute path (computed once;
    # planning and committing read it several times per file).
    source_id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "source_id", source_id_for(self.provider, self.path))

    def known_as(self, source_id: str) -> SourceFile:
        """This file under the id its checkpoint already has: a relocated source keeps
        the id it was first imported under (``agentlake sources relocate``)."""
        copy = replace(self)
        object.__setattr__(copy, "source_id", source_id)
        return copy


@dataclass(frozen=True, slots=True)
class RefusedPath:
    """A path discovery saw but refused to admit."""

    provider: str
    path: Path
    root: Path
    code: Literal["SOURCE_OUTSIDE_ROOT", "SOURCE_UNREADABLE", "NOT_A_FILE"]
    message: str

    @property
    def source_id(self) -> str:
        """Stable id of the refused path."""
        return source_id_for(self.provider, self.path)


def rel_parts(source: SourceFile) -> RelParts:
    """The parts of ``source``'s path below its root. Discovery builds a source's path
    by joining names onto its root's, so they are cut from the string (``relative_to``
    cost more than the rest of locating a small file's session)."""
    path, root = str(source.path), str(source.root)
    if path.startswith(root) and path[len(root) : len(root) + 1] == os.sep:
        return tuple(path[len(root) + 1 :].split(os.sep))  # noqa: PTH206 (strings, not Path)
    return source.path.relative_to(source.root).parts


def source_id_for(provider: str, path: Path) -> str:
    """Deterministic id of a source file."""
    return hashlib.blake2b(f"{provider}\0{path}".encode(), digest_size=10).hexdigest()


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


_KINDS: Final = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def file_kind(mode: int) -> str | None:
    """What a non-regular file of ``mode`` is ("a named pipe (FIFO)"…); ``None`` for a
    regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


class NotARegularFile(OSError):
    """A source path that is not a regular file (a FIFO, socket or device)."""


def open_regular(path: Path, *, buffering: int = -1) -> BinaryIO:
    """``path`` opened read-only, only if it is a regular file. The open never blocks (a
    FIFO put in a source's place since discovery would block ``open`` forever) and the
    check is made on the open descriptor; raises :class:`NotARegularFile`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotARegularFile(f"{kind}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def _stat(entry: os.DirEntry[str], kind: PositionKind) -> tuple[int, int, int, int, int]:
    """(mode, device, inode, size, mtime_ns) of ``entry`` (symlinks followed); a SQLite
    database's size and mtime include its write-ahead log, where recent transactions live
    until a checkpoint."""
    st = entry.stat()
    size, mtime = st.st_size, st.st_mtime_ns
    if kind == "sqlite":
        wal = Path(entry.path + "-wal")
        if wal.is_file():
            wst = wal.stat()
            size, mtime = size + wst.st_size, max(mtime, wst.st_mtime_ns)
    return st.st_mode, st.st_dev, st.st_ino, size, mtime


def walk_root(root: Root, formats: Sequence[OwnedFormat]) -> Iterator[SourceFile | RefusedPath]:
    """Yield every file under ``root`` owned by one of ``formats`` (the first that
    claims it, given the path relative to the root), in sorted path order; symlinks
    whose target escapes the root are refused. Symlinked directories are never entered.

    One ``scandir`` per directory and one ``stat`` per owned file, with paths kept as
    strings until a file is owned: a nightly run over tens of thousands of unchanged
    transcripts spends its time here."""
    base = root.path
    if not base.is_dir():
        return
    if root.formats is not None:
        formats = [f for f in formats if f.name in root.formats]
    real_root = base.resolve()
    # Depth first, each directory's files before its subdirectories, both by name: a
    # stack of (path, parts below the root, depth) rather than nested generators, whose
    # every item would pass through each level above it.
    stack: list[tuple[str, RelParts, int]] = [(str(base), (), 1)]
    while stack:
        here, rel_here, depth = stack.pop()
        try:
            with os.scandir(here) as listing:
                entries = sorted(listing, key=_name)
        except OSError:
            continue  # a directory that vanished or cannot be listed holds nothing to read
        dirs: list[os.DirEntry[str]] = []
        files: list[os.DirEntry[str]] = []
        for entry in entries:
            (dirs if _is_dir(entry) else files).append(entry)
        descend = root.max_depth is None or depth < root.max_depth
        if descend:
            for entry in dirs:
                if entry.is_symlink() and (escape := _escape(root, Path(entry.path), real_root)):
                    yield escape
        here_path = Path(here)
        for entry in files:
            rel = (*rel_here, entry.name)
            fmt = next((f for f in formats if f.owns(rel)), None)
            if fmt is not None:
                yield _admit(root, fmt, entry, here_path / entry.name, real_root)
        if descend:
            stack.extend(
                (entry.path, (*rel_here, entry.name), depth + 1)
                for entry in reversed(dirs)
                if not entry.is_symlink()
            )


_name: Final = attrgetter("name")


def _admit(
    root: Root, fmt: OwnedFormat, entry: os.DirEntry[str], path: Path, real_root: Path
) -> SourceFile | RefusedPath:
    """The owned file ``entry`` (at ``path``) as a source, or why it is refused."""
    if entry.is_symlink() and (escape := _escape(root, path, real_root)):
        return escape
    try:
        mode, device, inode, size, mtime = _stat(entry, fmt.position_kind)
    except OSError as exc:
        return RefusedPath(
            root.provider, path, root.path, "SOURCE_UNREADABLE", f"cannot stat: {exc.strerror}"
        )
    if (kind := file_kind(mode)) is not None:
        # Only regular files are read: opening a FIFO blocks until a writer comes.
        return RefusedPath(
            root.provider, path, root.path, "NOT_A_FILE",
            f"{kind}, not a regular file, never opened; {REMEDIES['NOT_A_FILE']}",
        )  # fmt: skip
    return SourceFile(
        root.provider, path, root.path, fmt.position_kind, fmt.name, device, inode, size, mtime
    )


def _escape(root: Root, link: Path, real_root: Path) -> RefusedPath | None:
    """The refusal of symlink ``link`` when its target lies outside the root."""
    if _inside(link.resolve(), real_root):
        return None
    what = ("symlinked directory", "not followed") if link.is_dir() else ("symlink", "refused")
    return RefusedPath(
        root.provider, link, root.path, "SOURCE_OUTSIDE_ROOT",
        f"{what[0]} points outside the provider root, {what[1]}; "
        f"{REMEDIES['SOURCE_OUTSIDE_ROOT']}",
    )  # fmt: skip


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a directory (following symlinks, as ``os.walk`` sorts them)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def walk_unowned(root: Root, formats: Sequence[OwnedFormat]) -> Iterator[Path]:
    """Yield every file under ``root`` that none of ``formats`` owns (the look-alikes
    discovery skips), in sorted path order, within the root's depth bound; symlinked
    directories are not entered and no file is opened."""
    base = root.path
    if not base.is_dir():
        return
    if root.formats is not None:
        formats = [f for f in formats if f.name in root.formats]
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        here = Path(dirpath)
        if root.max_depth is not None and len(here.relative_to(base).parts) + 1 >= root.max_depth:
            dirnames.clear()
        dirnames.sort()
        for name in sorted(filenames):
            path = here / name
            if not any(f.owns(path.relative_to(base).parts) for f in formats):
                yield path


HEAD_BYTES = 64 * 1024


def head_mentions(path: Path, needle: bytes, limit: int = HEAD_BYTES) -> bool:
    """Whether the first ``limit`` bytes of ``path`` contain ``needle`` (the file is
    opened read-only; a file that cannot be read mentions nothing)."""
    try:
        with open_regular(path) as fh:
            return needle in fh.read(limit)
    except OSError:
        return False
