"""Lifecycle changes are written like an import's commits: under the catalog's writer
lock, each in one transaction with its audit row."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from agentlake.errors import CatalogLocked, NotFoundError
from agentlake.load.catalog import catalog_exists, open_for_write
from agentlake.load.lake import Catalog
from agentlake.load.lease import renew
from agentlake.load.transaction import transaction


@contextmanager
def mutation(
    catalog: Catalog, *, workspace: str, wait: bool = False
) -> Iterator[duckdb.DuckDBPyConnection]:
    """``catalog`` opened for one change of ``workspace`` under its writer's hold (the
    file lock, or on a lake the workspace's lease), inside one transaction (committed
    when the block ends, rolled back when it raises). A missing catalog is
    :class:`NotFoundError`: a lifecycle command never creates one."""
    if not catalog_exists(catalog):
        raise NotFoundError(
            f"{catalog}: no catalog here; run 'agentlake import' first or pass --catalog"
        )
    with open_for_write(catalog, workspace=workspace, wait=wait) as con:
        try:
            with transaction(con):
                renew(con)
                yield con
        except duckdb.TransactionException:
            # Only a lake's commit conflicts (another workspace's writer committed
            # meanwhile); the change is rolled back whole.
            raise CatalogLocked(
                f"{catalog}: another writer committed while this change ran; nothing was "
                "changed, run it again"
            ) from None
