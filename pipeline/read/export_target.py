"""Where an export is written, atomically: into a temporary sibling of the target (same
folder, so the same file system) that is renamed into place only once complete.

A killed export leaves its temporary (``.NAME.export-PID-HEX``) and never a partial
dataset or file at the target; the next export to the same target removes the
temporaries of processes that are gone. Replacing an existing target (``replace``) swaps
the two atomically where the system can (Linux ``renameat2(RENAME_EXCHANGE)``); elsewhere
the old target is first moved aside, so a kill between the two renames leaves the
target absent and the old one whole beside it, never a mix."""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Final, Literal

from agentlake.errors import ConfigurationError, NotFoundError

TargetKind = Literal["dir", "file"]
_AT_FDCWD: Final = -100
_RENAME_EXCHANGE: Final = 2


def check_target(target: Path, *, kind: TargetKind, replace: bool) -> Path:
    """``target`` made absolute, when an export may write it: its folder exists and is
    writable, and it does not exist (an empty folder counts as absent for a dataset)
    unless ``replace``."""
    target = target.expanduser().absolute()
    parent = target.parent
    if not parent.is_dir():
        raise NotFoundError(f"{parent}: no such folder; create it first or choose another path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigurationError(f"{parent}: not writable; choose a folder you can write to")
    if target.exists() or target.is_symlink():
        wrong = target.is_dir() != (kind == "dir") or target.is_symlink()
        if wrong:
            what = "a folder" if kind == "dir" else "a file"
            raise ConfigurationError(f"{target}: exists and is not {what}; choose another path")
        empty = kind == "dir" and not any(target.iterdir())
        if not (empty or replace):
            raise ConfigurationError(
                f"{target}: exists; pass --force to replace it or choose another path"
            )
    return target


@contextmanager
def staged(target: Path, *, kind: TargetKind) -> Iterator[Path]:
    """A fresh temporary path beside ``target`` to write the export into (a folder made
    for a dataset; a path to create for a file); removed if the block raises. Stale
    temporaries of the same target are removed first."""
    remove_stale(target)
    temp = target.parent / f".{target.name}.export-{os.getpid()}-{secrets.token_hex(4)}"
    if kind == "dir":
        temp.mkdir(mode=0o700)
    try:
        yield temp
    except BaseException:
        _remove(temp)
        raise


def private_file(path: Path) -> BinaryIO:
    """``path`` created for writing, readable by its owner only (0600): what an export
    holds (transcript text, titles, project paths) is as private as the catalog."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")


def spill_path(target: Path) -> Path:
    """A fresh folder name beside ``target`` for DuckDB to spill a large sort into (the
    export's own disk; a temporary like the others, removed when stale)."""
    return target.parent / f".{target.name}.export-{os.getpid()}-{secrets.token_hex(4)}-spill"


def place(temp: Path, target: Path) -> bool:
    """Rename the complete ``temp`` to ``target``; whether a previous ``target`` was
    replaced (then deleted)."""
    if temp.is_file() or not target.exists() or not any(target.iterdir()):
        existed = target.is_file()
        temp.replace(target)  # a file over a file, or a folder over an empty one
        return existed
    if _exchange(temp, target):
        _remove(temp)  # now the previous target
        return True
    aside = target.parent / f".{target.name}.export-{os.getpid()}-{secrets.token_hex(4)}-old"
    target.rename(aside)
    temp.rename(target)
    _remove(aside)
    return True


def remove_stale(target: Path) -> list[Path]:
    """Remove the temporaries that exports to ``target`` left behind (their process is
    gone); the removed paths."""
    removed: list[Path] = []
    prefix = f".{target.name}.export-"
    with contextlib.suppress(OSError):
        for entry in target.parent.iterdir():
            if not entry.name.startswith(prefix):
                continue
            pid = entry.name[len(prefix) :].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                _remove(entry)
                removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2``); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def tree_size(path: Path) -> tuple[int, int]:
    """(files, bytes) under ``path`` (a folder or one file)."""
    if path.is_file():
        return 1, path.stat().st_size
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)
