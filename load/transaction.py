"""Transactions on a catalog connection, with the Arrow tables their statements read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import duckdb


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection, **tables: object) -> Iterator[None]:
    """One transaction on ``con``: committed when the block ends, rolled back when it
    raises. ``tables`` (name=Arrow table) are registered for the block's statements and
    unregistered after it, whatever happened. A COMMIT that fails (a lake commit that
    conflicts with another writer's) has rolled the transaction back and raises."""
    for name, table in tables.items():
        con.register(name, table)
    try:
        con.execute("BEGIN")
        try:
            yield
        except BaseException:
            con.execute("ROLLBACK")
            raise
        try:
            con.execute("COMMIT")
        except duckdb.Error:
            with suppress(duckdb.TransactionException):  # rolled back already
                con.execute("ROLLBACK")
            raise
    finally:
        for name in tables:
            con.unregister(name)
