"""The ``prices`` and ``price_aliases`` tables: the genai-prices snapshot materialized in
the catalog, and its refresh from the network.

Snapshot
--------
``prices``: one row per (provider, model, price period). A model's ``ConditionalPrice``
list with ``StartDateConstraint``s becomes consecutive periods ``[valid_from, valid_to)``
chosen by the package's own rule (the last active price wins; before every start date the
first one applies); time-of-day prices (off-peak discounts) and request-context variants
(batch, priority) are not materialized. One threshold tier is kept (the lowest; the few
models with two tiers keep only the first). A model without an explicit 1-hour cache-write
price gets 2× its input price (Anthropic's rule, as ccusage prices it).

``price_aliases``: lowercase names that select a model — its id and ``equals`` clauses
(exact), its ``starts_with`` clauses, also inside ``and`` clauses (prefix). ``contains``,
``ends_with`` and regex clauses are not derived; the view normalizes names instead (see
sql/007_price_tiers.sql and sql/008_price_overrides.sql).

The snapshot is the one bundled with the installed package (:func:`refresh_prices`, run
on every write-open when the installed version differs from ``snapshot_version``) or the
latest one fetched from the genai-prices feed (:func:`refresh_prices_from` with
``network=True``). A fetched snapshot keeps ``snapshot_version`` = the installed package
version, so the automatic refresh leaves it alone until the package itself changes; the
``snapshot`` label and ``snapshot_source`` column say which one is materialized.

User price overrides live in :mod:`agentlake.load.price_overrides`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

import duckdb
import pyarrow as pa

from .transaction import transaction

if TYPE_CHECKING:
    from genai_prices import types as gp

PACKAGE: Final = "genai-prices"
# First-party providers before resellers and aggregators for a name several list.
_FIRST_PARTY: Final = ("anthropic", "openai", "google", "x-ai", "deepseek", "mistral")
_FIELDS: Final = ("input", "output", "cache_write", "cache_write_1h", "cache_read")

PriceSource = Literal["bundled", "fetched"]
MatchKind = Literal["exact", "prefix"]

# User overrides: their own provider, and a negative alias priority that pins them ahead
# of every snapshot alias (sql/008_price_overrides.sql).
USER_PROVIDER: Final = "user"
USER_PRIORITY: Final = -1

PRICE_COLUMNS: Final = (
    "model", "provider", "provider_id", "valid_from", "valid_to",
    "input_per_mtok", "output_per_mtok", "cache_write_per_mtok", "cache_write_1h_per_mtok",
    "cache_read_per_mtok", "tier_threshold", "input_above_per_mtok", "output_above_per_mtok",
    "cache_write_above_per_mtok", "cache_write_1h_above_per_mtok", "cache_read_above_per_mtok",
    "snapshot", "snapshot_version", "snapshot_source",
)  # fmt: skip
ALIAS_COLUMNS: Final = ("alias", "kind", "provider_id", "model", "priority")


def snapshot_version() -> str:
    """The installed genai-prices version (cheap: reads package metadata only)."""
    return importlib.metadata.version(PACKAGE)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A price snapshot as Arrow tables shaped like ``prices`` and ``price_aliases``."""

    version: str
    source: PriceSource
    label: str
    prices: pa.Table
    aliases: pa.Table


def _split(price: object) -> tuple[float | None, int | None, float | None]:
    """(base, threshold, price above threshold) of a flat or tiered price."""
    from genai_prices.types import TieredPrices

    if isinstance(price, TieredPrices):
        if not price.tiers:
            return float(price.base), None, None
        tier = price.tiers[0]
        return float(price.base), int(tier.start), float(tier.price)
    if isinstance(price, Decimal):
        return float(price), None, None
    return None, None, None


def _price_row(mp: gp.ModelPrice) -> dict[str, object]:
    row: dict[str, object] = {"tier_threshold": None}
    for field in _FIELDS:
        base, threshold, above = _split(getattr(mp, f"{field}_mtok", None))
        row[f"{field}_per_mtok"] = base
        row[f"{field}_above_per_mtok"] = above
        if threshold is not None and row["tier_threshold"] is None:
            row["tier_threshold"] = threshold
    if row["cache_write_1h_per_mtok"] is None and row["input_per_mtok"] is not None:
        row["cache_write_1h_per_mtok"] = 2 * float(row["input_per_mtok"])  # type: ignore[arg-type]
        if row["input_above_per_mtok"] is not None:
            row["cache_write_1h_above_per_mtok"] = 2 * float(row["input_above_per_mtok"])  # type: ignore[arg-type]
    return row


def _periods(
    model: gp.ModelInfo,
) -> Iterator[tuple[date | None, date | None, gp.ModelPrice]]:
    """Consecutive ``[start, end)`` periods of a model's price, by start date."""
    from genai_prices.types import ModelPrice, StartDateConstraint

    if isinstance(model.prices, ModelPrice):
        yield None, None, model.prices
        return
    conditional = model.prices
    starts = sorted(
        {
            c.constraint.start_date
            for c in conditional
            if isinstance(c.constraint, StartDateConstraint)
        }
    )

    def active_at(day: date | None) -> gp.ModelPrice:
        # The package's rule: the last active conditional price wins, else the first.
        for c in reversed(conditional):
            if c.constraint is None:
                return c.prices
            if (
                isinstance(c.constraint, StartDateConstraint)
                and day
                and c.constraint.start_date <= day
            ):
                return c.prices
        return conditional[0].prices

    bounds: list[date | None] = [None, *starts]
    for i, start in enumerate(bounds):
        end = bounds[i + 1] if i + 1 < len(bounds) else None
        yield start, end, active_at(start)


def _match_aliases(clause: object) -> Iterator[tuple[str, str]]:
    from genai_prices.types import ClauseAnd, ClauseEquals, ClauseOr, ClauseStartsWith

    if isinstance(clause, ClauseEquals):
        yield clause.equals.lower(), "exact"
    elif isinstance(clause, ClauseStartsWith):
        yield clause.starts_with.lower(), "prefix"
    elif isinstance(clause, ClauseOr):
        for sub in clause.or_:
            yield from _match_aliases(sub)
    elif isinstance(clause, ClauseAnd):
        # Only the prefixes: the other clauses of an `and` narrow them (e.g. exclude -tts).
        for sub in clause.and_:
            if isinstance(sub, ClauseStartsWith):
                yield sub.starts_with.lower(), "prefix"


def utc_day(day: date | None) -> datetime | None:
    """Midnight UTC of ``day`` (None stays None)."""
    return None if day is None else datetime(day.year, day.month, day.day, tzinfo=UTC)


def build_snapshot(
    providers: Sequence[gp.Provider] | None = None,
    *,
    source: PriceSource = "bundled",
    fetched_on: date | None = None,
) -> Snapshot:
    """``providers`` (default: the installed package's bundled ones) as Arrow tables shaped
    like ``prices`` and ``price_aliases``. A ``fetched`` snapshot is labelled with the UTC
    day it was fetched (``fetched_on``, default today); its ``snapshot_version`` stays the
    installed package version."""
    if providers is None:
        from genai_prices.data import providers as bundled

        providers = bundled
    version = snapshot_version()
    label = f"{PACKAGE} {version}"
    if source == "fetched":
        label += f" (fetched {(fetched_on or datetime.now(UTC).date()).isoformat()})"
    prices: list[dict[str, object]] = []
    aliases: dict[tuple[str, str, str, str], int] = {}
    for index, provider in enumerate(providers):
        priority = _FIRST_PARTY.index(provider.id) if provider.id in _FIRST_PARTY else 100 + index
        for model in provider.models:
            for start, end, mp in _periods(model):
                row = _price_row(mp)
                if row["input_per_mtok"] is None and row["output_per_mtok"] is None:
                    continue
                row.update(
                    model=model.id,
                    provider=provider.name,
                    provider_id=provider.id,
                    valid_from=utc_day(start),
                    valid_to=utc_day(end),
                    snapshot=label,
                    snapshot_version=version,
                    snapshot_source=source,
                )
                prices.append(row)
            for alias, kind in [(model.id.lower(), "exact"), *_match_aliases(model.match)]:
                aliases.setdefault((alias, kind, provider.id, model.id), priority)
    priced = {(str(r["provider_id"]), str(r["model"])) for r in prices}
    alias_rows = [
        {"alias": a, "kind": k, "provider_id": p, "model": m, "priority": prio}
        for (a, k, p, m), prio in aliases.items()
        if (p, m) in priced
    ]
    return Snapshot(
        version=version,
        source=source,
        label=label,
        prices=pa.Table.from_pylist(prices, schema=price_schema()),
        aliases=pa.Table.from_pylist(alias_rows, schema=alias_schema()),
    )


def price_schema() -> pa.Schema:
    """The Arrow schema of `prices` rows."""
    types: dict[str, pa.DataType] = {
        "valid_from": pa.timestamp("us", tz="UTC"),
        "valid_to": pa.timestamp("us", tz="UTC"),
        "tier_threshold": pa.int64(),
    }
    names = ("model", "provider", "provider_id", "snapshot", "snapshot_version", "snapshot_source")
    types.update(dict.fromkeys(names, pa.string()))
    return pa.schema([(c, types.get(c, pa.float64())) for c in PRICE_COLUMNS])


def alias_schema() -> pa.Schema:
    """The Arrow schema of `price_aliases` rows."""
    return pa.schema(
        [
            ("alias", pa.string()),
            ("kind", pa.string()),
            ("provider_id", pa.string()),
            ("model", pa.string()),
            ("priority", pa.int32()),
        ]
    )


# -- the materialized snapshot --------------------------------------------------------


def catalog_table(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """The catalog's own table ``name``, fully qualified: TEMP tables of the same name
    (price overrides) shadow even ``main.<name>``, so writes must name the database."""
    row = con.execute("SELECT current_database()").fetchone()
    assert row is not None
    database = str(row[0]).replace('"', '""')
    return f'"{database}".main.{name}'


def materialized_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The genai-prices version of the materialized snapshot, if any."""
    table = catalog_table(con, "prices")
    row = con.execute(f"SELECT max(snapshot_version) FROM {table}").fetchone()
    return None if row is None or row[0] is None else str(row[0])


@dataclass(frozen=True, slots=True)
class PriceRefresh:
    """What a price refresh left in force: the snapshot's source and label, the installed
    package version, how many models and price rows it has, whether this call replaced
    the tables, and a one-line message for people."""

    source: PriceSource
    package_version: str
    label: str
    models: int
    rows: int
    refreshed: bool
    message: str

    def to_json(self) -> dict[str, Any]:
        """The refresh as ``agentlake prices refresh --json`` prints it."""
        return {
            "version": 1,
            "source": self.source,
            "label": self.label,
            "package_version": self.package_version,
            "models": self.models,
            "rows": self.rows,
            "refreshed": self.refreshed,
            "message": self.message,
        }


def _materialize(con: duckdb.DuckDBPyConnection, snap: Snapshot) -> None:
    """Replace the snapshot's rows of ``prices`` and all of ``price_aliases`` in one
    transaction. Rows without a ``snapshot_version`` (added by hand) are kept."""
    prices, aliases = catalog_table(con, "prices"), catalog_table(con, "price_aliases")
    with transaction(con, _snapshot_prices=snap.prices, _snapshot_aliases=snap.aliases):
        con.execute(f"DELETE FROM {prices} WHERE snapshot_version IS NOT NULL")
        con.execute(f"DELETE FROM {aliases}")
        cols = ", ".join(PRICE_COLUMNS)
        con.execute(f"INSERT INTO {prices} ({cols}) SELECT {cols} FROM _snapshot_prices")
        cols = ", ".join(ALIAS_COLUMNS)
        con.execute(f"INSERT INTO {aliases} ({cols}) SELECT {cols} FROM _snapshot_aliases")


def refresh_prices(con: duckdb.DuckDBPyConnection, *, force: bool = False) -> bool:
    """Materialize the bundled snapshot when the installed package's version differs from
    the materialized one (always with ``force``), in one transaction. A fetched snapshot
    of the installed version is kept. Returns whether it refreshed."""
    if not force and materialized_version(con) == snapshot_version():
        return False
    _materialize(con, bundled_snapshot())
    return True


@cache
def bundled_snapshot() -> Snapshot:
    """:func:`build_snapshot` of the installed package's bundled prices, built once per
    process (the package's data cannot change under it; every new catalog takes it)."""
    return build_snapshot()


def _in_force(con: duckdb.DuckDBPyConnection, *, refreshed: bool) -> PriceRefresh:
    """The materialized snapshot as a refresh result, without a message yet."""
    table = catalog_table(con, "prices")
    row = con.execute(
        "SELECT max(snapshot_source), max(snapshot), "
        "count(DISTINCT (provider_id, model)), count(*) "
        f"FROM {table} WHERE snapshot_version IS NOT NULL"
    ).fetchone()
    assert row is not None
    return PriceRefresh(
        source="fetched" if row[0] == "fetched" else "bundled",
        package_version=snapshot_version(),
        label=str(row[1] or "no snapshot"),
        models=int(row[2]),
        rows=int(row[3]),
        refreshed=refreshed,
        message="",
    )


def refresh_prices_from(
    con: duckdb.DuckDBPyConnection,
    *,
    network: bool,
    timeout: float = 10.0,
    url: str | None = None,
) -> PriceRefresh:
    """Re-materialize the price snapshot: the bundled one, or with ``network`` the latest
    one from the genai-prices feed (``url``, default the package's own), waiting at most
    ``timeout`` seconds per request. When the feed cannot be reached or read, the tables
    stay as they are and the message says which snapshot stays in force; nothing is
    raised for a network failure."""
    if not network:
        _materialize(con, bundled_snapshot())
        done = _in_force(con, refreshed=True)
        return replace(
            done,
            message=f"materialized the bundled {PACKAGE} snapshot (version "
            f"{done.package_version}): {done.models} models, {done.rows} price rows",
        )
    from genai_prices.update_prices import DEFAULT_UPDATE_URL

    feed = url or DEFAULT_UPDATE_URL
    providers, problem = _fetch_providers(feed, timeout)
    if providers is None:
        kept = _in_force(con, refreshed=False)
        what = (
            f"the bundled {PACKAGE} snapshot (version {kept.package_version}) stays in force"
            if kept.source == "bundled"
            else f"the {kept.label} prices stay in force"
        )
        return replace(kept, message=f"{problem}; {what}")
    _materialize(con, build_snapshot(providers, source="fetched"))
    done = _in_force(con, refreshed=True)
    return replace(
        done,
        message=f"materialized {done.models} models ({done.rows} price rows) fetched "
        f"from {feed} as {done.label}",
    )


def _fetch_providers(url: str, timeout: float) -> tuple[list[gp.Provider] | None, str]:
    """The providers of the feed at ``url``, or None and why they could not be had."""
    import httpx2
    from genai_prices.update_prices import UpdatePrices

    updater = UpdatePrices(
        url=url, request_timeout=httpx2.Timeout(timeout, connect=min(timeout, 5.0))
    )
    try:
        snapshot = updater.fetch()
    except (httpx2.RequestError, httpx2.InvalidURL, OSError) as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        return None, f"the network was unreachable ({type(exc).__name__}: {detail})"
    except httpx2.HTTPStatusError as exc:
        return None, f"the price feed answered HTTP {exc.response.status_code}"
    except ValueError as exc:
        return None, f"the price feed sent data {PACKAGE} cannot read ({type(exc).__name__})"
    if snapshot is None or not snapshot.providers:
        return None, "the price feed sent no providers"
    return list(snapshot.providers), ""
