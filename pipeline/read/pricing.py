"""The prices a catalog holds: list them (with the user's overrides in force) and refresh
them from the bundled genai-prices snapshot or, when the network allows, its feed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from agentlake import sql
from agentlake.load.catalog import open_for_write, open_priced
from agentlake.load.prices import PriceRefresh, refresh_prices_from

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides


def list_prices(
    catalog: Catalog, *, model: str | None = None, prices: PriceOverrides | None = None
) -> pa.Table:
    """Every price period in force (user overrides first), optionally only for models
    whose id contains ``model``; per-million-token USD rates."""
    with open_priced(catalog, prices) as con:
        return con.execute(sql.query("prices_list"), {"model": model}).to_arrow_table()


def prices_json(table: pa.Table) -> dict[str, Any]:
    """The document ``agentlake prices list --json`` prints for :func:`list_prices`'s
    table."""
    return {"prices": table.to_pylist()}


def refresh(
    catalog: Catalog, *, network: bool, timeout: float = 10.0, wait: bool = False
) -> PriceRefresh:
    """Re-materialize the catalog's prices: from the genai-prices feed when ``network``
    (keeping the current ones, and saying so, when it cannot be reached), else from the
    installed package's bundled snapshot. Takes the writer lock."""
    with open_for_write(catalog, wait=wait) as con:
        return refresh_prices_from(con, network=network, timeout=timeout)
