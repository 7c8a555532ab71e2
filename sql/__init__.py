"""Schema migrations and named queries, shipped as package data and loaded by name."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib.resources import files


@cache
def query(name: str) -> str:
    """The text of ``queries/<name>.sql``."""
    return files(__name__).joinpath("queries", f"{name}.sql").read_text(encoding="utf-8")


def migrations() -> list[tuple[int, str, str]]:
    """Every numbered migration as ``(version, file name, sql)``, in order."""
    out = []
    for entry in files(__name__).iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:3].isdigit():
            out.append((int(name[:3]), name, entry.read_text(encoding="utf-8")))
    return sorted(out)


def literals(values: Iterable[str | None]) -> str:
    """``values`` as the body of an SQL ``IN (...)`` list of string constants (``NULL``,
    which matches nothing, when there is none). DuckDB prunes a scan by a list of
    constants, and binds a constant for a fraction of a parameter's cost; a bound list
    or a subquery is probed row by row instead."""
    quoted = ["'" + value.replace("'", "''") + "'" for value in values if value is not None]
    return ", ".join(quoted) or "NULL"
