"""Where a Gemini CLI project directory points: ``.project_root``, then
``~/.gemini/projects.json`` by slug or by the SHA-256 of a listed path.
"""

from __future__ import annotations

import hashlib
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

    def resolve(self, root: Path, project_dir: str, project_hash: str | None = None) -> str | None:
        """The project path of ``root / project_dir`` (``root`` = ``~/.gemini/tmp``)."""
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
