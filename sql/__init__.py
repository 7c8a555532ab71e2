"""Schema migrations and named queries, shipped as package data and loaded by name.

The files are read next to this module (the package is always installed as files, never
zipped): importlib.resources would load tempfile and random with it, a few milliseconds
of every command that reads the catalog."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Final

# Characters of each event the search index reads: a 4 MiB tool output would otherwise
# become hundreds of thousands of tokens at once (agentlake.load.terms has the rule).
INDEXED_CHARS: Final = 262_144
# Words the search index leaves out (agentlake.load.terms applies the list).
STOP_WORDS: Final = (
    "the", "and", "for", "that", "this", "with", "are", "was", "but", "not", "you",
    "have", "has", "had", "its", "from", "they", "will", "would", "there", "their",
    "what", "which", "when", "can", "all", "were", "been", "into", "than", "then",
    "them", "these", "our", "out",
)  # fmt: skip


_HERE: Final = Path(__file__).parent


@cache
def query(name: str) -> str:
    """The text of ``queries/<name>.sql``."""
    return (_HERE / "queries" / f"{name}.sql").read_text(encoding="utf-8")


def latest_migration() -> int:
    """The number of the last migration: the schema version this package writes and
    reads (its file names only, no file is read)."""
    return max(
        int(entry.name[:3])
        for entry in _HERE.iterdir()
        if entry.name.endswith(".sql") and entry.name[:3].isdigit()
    )


def migrations() -> list[tuple[int, str, str]]:
    """Every numbered migration as ``(version, file name, sql)``, in order."""
    out = []
    for entry in _HERE.iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            out.append((int(name[:3]), name, entry.read_text(encoding="utf-8")))
    return sorted(out)


#: The public views, in the order they are created (a view may read those before it).
VIEWS: Final = ("usage_costed", "usage_daily", "session_rollup")


def views() -> list[tuple[str, str]]:
    """Every public view as ``(name, sql)`` from ``views/<name>.sql``, in creation order."""
    return [
        (name, (_HERE / "views" / f"{name}.sql").read_text(encoding="utf-8"))
        for name in VIEWS
    ]


def literals(values: Iterable[str | int | None]) -> str:
    """``values`` as the body of an SQL ``IN (...)`` list of constants (``NULL``,
    which matches nothing, when there is none). DuckDB prunes a scan by a list of
    constants, and binds a constant for a fraction of a parameter's cost; a bound list
    or a subquery is probed row by row instead."""
    return ", ".join(constant(value) for value in values if value is not None) or "NULL"


_PARAMETER: Final = re.compile(r"\$([A-Za-z_]\w*)")


def constant(value: object) -> str:
    """``value`` as an SQL constant of the type DuckDB binds the same Python value as a
    parameter to: a float as the DOUBLE its shortest exact spelling parses back to, a
    list as a list, a naive datetime as a TIMESTAMP."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"'{value!r}'::DOUBLE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, datetime) and value.tzinfo is None:
        return f"'{value.isoformat()}'::TIMESTAMP"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(constant(v) for v in value) + "]"
    raise TypeError(f"no SQL constant for {type(value).__name__}")


def inline(statement: str, params: Mapping[str, object]) -> str:
    """``statement`` with every ``$name`` replaced by :func:`constant` of
    ``params[name]``. A statement without parameters skips DuckDB's prepare-and-bind
    (about 0.5 ms, and more per parameter), and its constants fold: ``NULL IS NULL``
    filters vanish, a constant regex compiles once."""
    return _PARAMETER.sub(lambda m: constant(params[m.group(1)]), statement)
