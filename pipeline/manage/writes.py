"""Lifecycle changes are written like an import's commits: under the catalog's writer
lock, each in one transaction with its audit row."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from agentlake.errors import NotFoundError
from agentlake.load.catalog import open_for_write
from agentlake.load.transaction import transaction


@contextmanager
def mutation(catalog: Path, *, wait: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """``catalog`` opened for one change under the writer lock, inside one transaction
    (committed when the block ends, rolled back when it raises). A missing catalog is
    :class:`NotFoundError`: a lifecycle command never creates one."""
    if not catalog.is_file():
        raise NotFoundError(
            f"{catalog}: no catalog here; run 'agentlake import' first or pass --catalog"
        )
    with open_for_write(catalog, wait=wait) as con, transaction(con):
        yield con
