"""Where a Gemini CLI project directory points: ``.project_root``, then
``~/.gemini/projects.json`` by slug or by the SHA-256 of a listed path.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Final

import orjson

from ..sources import open_regular

_HASH_DIR: Final = re.compile(r"^[0-9a-f]{64}$")
_PROJECT_ROOT_BYTES: Final = 64 * 1024
_PROJECTS_JSON_BYTES: Final = 8 * 1024 * 1024


class ProjectResolver:
    """Finds the absolute project path of a ``~/.gemini/tmp/<project>`` directory.

    In order: the directory's ``.project_root`` file; ``~/.gemini/projects.json``
    (``{"projects": {"/abs/path": "slug"}}``) by slug; a legacy SHA-256 directory (or a
    ``projectHash``) matched against the SHA-256 of the paths listed there. ``None``
    when nothing matches. ``projects.json`` is parsed once per (size, mtime).
    """

    def __init__(self) -> None:
        self._projects: dict[Path, tuple[tuple[int, int], dict[str, str], dict[str, str]]] = {}
        # (root, project dir, hash) -> (what the two files were, the answer then): a
        # directory's sessions ask one after the other, and a stat of each file tells
        # whether the answer still holds, for the cost of reading the marker again.
        self._resolved: dict[tuple[Path, str, str | None], tuple[_Stamps, str | None]] = {}

    def resolve(self, root: Path, project_dir: str, project_hash: str | None = None) -> str | None:
        """The project path of ``root / project_dir`` (``root`` = ``~/.gemini/tmp``)."""
        key = (root, project_dir, project_hash)
        stamp: _Stamps = (
            _stamp(root / project_dir / ".project_root"),
            _stamp(root.parent / "projects.json"),
        )
        cached = self._resolved.get(key)
        if cached is not None and cached[0] == stamp and None not in stamp:
            return cached[1]
        found = self._resolve(root, project_dir, project_hash)
        self._resolved[key] = (stamp, found)
        return found

    def _resolve(self, root: Path, project_dir: str, project_hash: str | None) -> str | None:
        marker = root / project_dir / ".project_root"
        path = _read_small(marker, _PROJECT_ROOT_BYTES)
        if path is not None:
            text = path.decode("utf-8", "replace").strip()
            if text.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", text):
                return text
        by_slug, by_hash = self._index(root.parent / "projects.json")
        found = by_slug.get(project_dir)
        if found is None and _HASH_DIR.match(project_dir):
            found = by_hash.get(project_dir)
        if found is None and project_hash:
            found = by_hash.get(project_hash)
        return found

    def _index(self, path: Path) -> tuple[dict[str, str], dict[str, str]]:
        try:
            st = path.stat()
        except OSError:
            return {}, {}
        key = (st.st_size, st.st_mtime_ns)
        cached = self._projects.get(path)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        by_slug: dict[str, str] = {}
        by_hash: dict[str, str] = {}
        data = _read_small(path, _PROJECTS_JSON_BYTES)
        try:
            doc = orjson.loads(data) if data is not None else None
        except orjson.JSONDecodeError:
            doc = None
        projects = doc.get("projects") if isinstance(doc, dict) else None
        if isinstance(projects, dict):
            for project, slug in projects.items():
                if isinstance(slug, str) and slug:
                    by_slug.setdefault(slug, project)
                by_hash[hashlib.sha256(project.encode()).hexdigest()] = project
        self._projects[path] = (key, by_slug, by_hash)
        return by_slug, by_hash


# A file's (inode, size, mtime_ns, ctime_ns) from its lstat, "absent" when there is
# none; ``None`` when it cannot be told (an answer is then never reused).
_Stamp = tuple[int, int, int, int] | str | None
_Stamps = tuple[_Stamp, _Stamp]  # of the directory's .project_root, of projects.json


def _stamp(path: Path) -> _Stamp:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_small(path: Path, limit: int) -> bytes | None:
    """The bytes of a small regular file (not a symlink), or ``None``."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with open_regular(path) as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None
