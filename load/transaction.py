"""Transactions on a catalog connection, with the Arrow tables their statements read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection, **tables: object) -> Iterator[None]:
    """One transaction on ``con``: committed when the block ends, rolled back when it
    raises. ``tables`` (name=Arrow table) are registered for the block's statements and
    unregistered after it, whatever happened."""
    for name, table in tables.items():
        con.register(name, table)
    try:
        con.execute("BEGIN")
        try:
            yield
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        for name in tables:
            con.unregister(name)
