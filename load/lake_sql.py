"""The catalog's SQL as DuckLake runs it.

DuckLake tables have no primary keys, unique or check constraints, indexes or sequences,
no fixed-size arrays, and no ``INSERT ... ON CONFLICT``. The same guarantees hold without
them:

* a key stays unique because every statement that adds rows anti-joins or merges on it
  (the loader's set work already does; each ``ON CONFLICT`` upsert becomes a ``MERGE`` on
  the key the migrations declared), and a lake commit that overlaps another writer's
  conflicts at COMMIT and runs again on the state the other left
  (:func:`agentlake.load.lake.retrying`), so two writers never both add one key;
* indexes only speed lookups up: a lake reads Parquet statistics instead;
* an audit id is the next after the workspace's largest, read in the same transaction.

Migrations are rewritten once per text (:func:`migration`); statements with an
``ON CONFLICT`` clause when they run on a lake (:func:`statement`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Final

from agentlake import sql

if TYPE_CHECKING:
    import duckdb

_INDEX_OR_SEQUENCE: Final = re.compile(
    r"^\s*(CREATE\s+(UNIQUE\s+)?INDEX|DROP\s+INDEX|CREATE\s+SEQUENCE|DROP\s+SEQUENCE)\b",
    re.IGNORECASE,
)
_TABLE_KEY: Final = re.compile(r",\s*PRIMARY\s+KEY\s*\([^)]*\)", re.IGNORECASE)
_COLUMN_KEY: Final = re.compile(r"\s+(PRIMARY\s+KEY|UNIQUE)\b", re.IGNORECASE)
_NEXTVAL: Final = re.compile(r"\s+DEFAULT\s+nextval\('[^']*'\)", re.IGNORECASE)
_ADD_WITH_DEFAULT: Final = re.compile(
    r"^\s*ALTER\s+TABLE\s+(?P<table>\w+)\s+ADD\s+COLUMN\s+(?P<exists>IF\s+NOT\s+EXISTS\s+)?"
    r"(?P<column>\w+)\s+(?P<type>\w+)\s+DEFAULT\s+(?P<default>.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_FIXED_ARRAY: Final = re.compile(r"\b(FLOAT|DOUBLE|INTEGER|BIGINT|VARCHAR)\[\d+\]", re.IGNORECASE)


def _split(script: str) -> list[str]:
    from agentlake.load.catalog import split_script, statement_body

    return [body for body in map(statement_body, split_script(script)) if body.strip()]


@cache
def migration(script: str) -> str:
    """A numbered migration as DuckLake runs it: without its index and sequence
    statements, key and unique constraints, sequence defaults, and with variable-size
    lists for fixed-size arrays."""
    kept = []
    for statement in _split(script):
        if _INDEX_OR_SEQUENCE.match(statement):
            continue
        statement = _TABLE_KEY.sub("", statement)
        statement = _COLUMN_KEY.sub("", statement)
        statement = _NEXTVAL.sub("", statement)
        statement = _FIXED_ARRAY.sub(lambda m: f"{m.group(1)}[]", statement)
        if added := _ADD_WITH_DEFAULT.match(statement):
            # DuckLake adds a column with a constant default only: add it bare, then set
            # its default and give the rows there are the value they would have had.
            table, column, default = added["table"], added["column"], added["default"]
            if re.fullmatch(r"-?\d+(\.\d+)?|true|false", default, re.IGNORECASE):
                default = f"'{default}'"  # a constant DuckLake takes (it casts the text)
            kept.append(
                f"ALTER TABLE {table} ADD COLUMN {added['exists'] or ''}{column} {added['type']}"
            )
            kept.append(f"ALTER TABLE {table} ALTER COLUMN {column} SET DEFAULT {default}")
            kept.append(f"UPDATE {table} SET {column} = {default} WHERE {column} IS NULL")
            continue
        kept.append(statement)
    return ";\n".join(kept) + (";\n" if kept else "")


_CREATE: Final = re.compile(
    r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\((.*)\)\s*$", re.IGNORECASE | re.DOTALL
)
_RENAME: Final = re.compile(r"ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)", re.IGNORECASE)


@cache
def table_keys() -> dict[str, tuple[str, ...]]:
    """Each table's key as the migrations declare it (``PRIMARY KEY``), following
    renames: what an ``ON CONFLICT`` without columns conflicts on."""
    keys: dict[str, tuple[str, ...]] = {}
    for _, _, script in sql.migrations():
        for statement in _split(script):
            if created := _CREATE.search(statement):
                name, body = created.group(1).lower(), created.group(2)
                if table := re.search(r"PRIMARY\s+KEY\s*\(([^)]*)\)", body, re.IGNORECASE):
                    keys[name] = tuple(c.strip().lower() for c in table.group(1).split(","))
                elif column := re.search(
                    r"^\s*(\w+)\s+[^,\n]*\bPRIMARY\s+KEY", body, re.IGNORECASE | re.MULTILINE
                ):
                    keys[name] = (column.group(1).lower(),)
            elif renamed := _RENAME.search(statement):
                old, new = renamed.group(1).lower(), renamed.group(2).lower()
                if old in keys:
                    keys[new] = keys.pop(old)
    return keys


_UPSERT: Final = re.compile(
    r"^\s*INSERT\s+(?P<ignore>OR\s+IGNORE\s+)?INTO\s+(?P<table>\w+)"
    r"(?:\s+AS\s+(?P<alias>\w+))?(?P<byname>\s+BY\s+NAME)?"
    r"(?:\s*\((?P<columns>[^()]*)\))?\s+(?P<body>.*?)"
    r"(?:\s+ON\s+CONFLICT(?:\s*\((?P<keys>[^()]*)\))?\s+DO\s+(?P<action>NOTHING|UPDATE\s+SET\s+(?P<set>.*)))?\s*$",
    re.IGNORECASE | re.DOTALL,
)


def _names(text: str) -> list[str]:
    return [name.strip().strip('"').lower() for name in text.split(",") if name.strip()]


def upsert_as_merge(statement: str, columns_of: Callable[[str], list[str]]) -> str:
    """``INSERT ... ON CONFLICT`` (or ``INSERT OR IGNORE``) as the ``MERGE`` that does
    the same on a table without a key: rows whose key exists update it (or are left
    out), the others are inserted. ``columns_of`` names the columns of tables whose
    inserts list none (positional)."""
    found = _UPSERT.match(statement)
    if found is None or not (found.group("action") or found.group("ignore")):
        return statement
    table = found.group("table").lower()
    target = found.group("alias") or table
    keys = _names(found.group("keys")) if found.group("keys") else list(table_keys()[table])
    if found.group("byname"):
        source = f"({found.group('body')}) AS excluded"
        insert = "INSERT BY NAME"
    else:
        columns = _names(found.group("columns")) if found.group("columns") else columns_of(table)
        source = f"({found.group('body')}) AS excluded({', '.join(columns)})"
        values = ", ".join(f"excluded.{c}" for c in columns)
        insert = f"INSERT ({', '.join(columns)}) VALUES ({values})"
    on = " AND ".join(f"{target}.{k} = excluded.{k}" for k in keys)
    matched = f"WHEN MATCHED THEN UPDATE SET {found.group('set')}\n" if found.group("set") else ""
    alias = f" AS {target}" if found.group("alias") else ""
    return (
        f"MERGE INTO {table}{alias} USING {source}\nON {on}\n{matched}"
        f"WHEN NOT MATCHED THEN {insert}"
    )


def needs_rewrite(statement: str) -> bool:
    """Whether ``statement`` uses what DuckLake lacks (an upsert)."""
    upper = statement.upper()
    return "ON CONFLICT" in upper or "INSERT OR IGNORE" in upper


def rewrite(con: duckdb.DuckDBPyConnection, statements: list[str]) -> list[str]:
    """``statements`` as they run on the lake ``con``: each upsert as a ``MERGE``."""

    def columns_of(table: str) -> list[str]:
        rows = con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
            "AND table_name = ? ORDER BY column_index",
            [table],
        ).fetchall()
        return [str(name) for (name,) in rows]

    return [upsert_as_merge(s, columns_of) if needs_rewrite(s) else s for s in statements]
