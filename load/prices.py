"""The ``prices`` and ``price_aliases`` tables, materialized from the bundled genai-prices
snapshot (no network).

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
sql/007_price_tiers.sql).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Final

import duckdb
import pyarrow as pa

if TYPE_CHECKING:
    from genai_prices import types as gp

PACKAGE: Final = "genai-prices"
# First-party providers before resellers and aggregators for a name several list.
_FIRST_PARTY: Final = ("anthropic", "openai", "google", "x-ai", "deepseek", "mistral")
_FIELDS: Final = ("input", "output", "cache_write", "cache_write_1h", "cache_read")

PRICE_COLUMNS: Final = (
    "model", "provider", "provider_id", "valid_from", "valid_to",
    "input_per_mtok", "output_per_mtok", "cache_write_per_mtok", "cache_write_1h_per_mtok",
    "cache_read_per_mtok", "tier_threshold", "input_above_per_mtok", "output_above_per_mtok",
    "cache_write_above_per_mtok", "cache_write_1h_above_per_mtok", "cache_read_above_per_mtok",
    "snapshot", "snapshot_version",
)  # fmt: skip
ALIAS_COLUMNS: Final = ("alias", "kind", "provider_id", "model", "priority")


def snapshot_version() -> str:
    """The installed genai-prices version (cheap: reads package metadata only)."""
    return importlib.metadata.version(PACKAGE)


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: str
    prices: pa.Table
    aliases: pa.Table


def _num(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


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


def _utc(day: date | None) -> datetime | None:
    return None if day is None else datetime(day.year, day.month, day.day, tzinfo=UTC)


def build_snapshot() -> Snapshot:
    """The bundled snapshot as Arrow tables shaped like ``prices`` and ``price_aliases``."""
    from genai_prices.data import providers

    version = snapshot_version()
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
                    valid_from=_utc(start),
                    valid_to=_utc(end),
                    snapshot=f"{PACKAGE} {version}",
                    snapshot_version=version,
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
        prices=pa.Table.from_pylist(prices, schema=_price_schema()),
        aliases=pa.Table.from_pylist(alias_rows, schema=_alias_schema()),
    )


def _price_schema() -> pa.Schema:
    types: dict[str, pa.DataType] = {
        "valid_from": pa.timestamp("us", tz="UTC"),
        "valid_to": pa.timestamp("us", tz="UTC"),
        "tier_threshold": pa.int64(),
    }
    for name in ("model", "provider", "provider_id", "snapshot", "snapshot_version"):
        types[name] = pa.string()
    return pa.schema([(c, types.get(c, pa.float64())) for c in PRICE_COLUMNS])


def _alias_schema() -> pa.Schema:
    return pa.schema(
        [
            ("alias", pa.string()),
            ("kind", pa.string()),
            ("provider_id", pa.string()),
            ("model", pa.string()),
            ("priority", pa.int32()),
        ]
    )


def materialized_version(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute("SELECT max(snapshot_version) FROM prices").fetchone()
    return None if row is None or row[0] is None else str(row[0])


def refresh_prices(con: duckdb.DuckDBPyConnection, *, force: bool = False) -> bool:
    """Replace the snapshot's rows of ``prices`` and all of ``price_aliases`` when the
    installed package's version differs from the materialized one, in one transaction.
    Rows without a ``snapshot_version`` (added by hand) are kept. Returns whether it
    refreshed."""
    if not force and materialized_version(con) == snapshot_version():
        return False
    snap = build_snapshot()
    con.execute("BEGIN")
    try:
        con.execute("DELETE FROM prices WHERE snapshot_version IS NOT NULL")
        con.execute("DELETE FROM price_aliases")
        con.register("_snapshot_prices", snap.prices)
        con.register("_snapshot_aliases", snap.aliases)
        cols = ", ".join(PRICE_COLUMNS)
        con.execute(f"INSERT INTO prices ({cols}) SELECT {cols} FROM _snapshot_prices")
        cols = ", ".join(ALIAS_COLUMNS)
        con.execute(f"INSERT INTO price_aliases ({cols}) SELECT {cols} FROM _snapshot_aliases")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("_snapshot_prices")
        con.unregister("_snapshot_aliases")
    return True
