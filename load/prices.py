"""The ``prices`` and ``price_aliases`` tables: the genai-prices snapshot materialized in
the catalog, a refresh from the network, and user price overrides.

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

User price overrides
--------------------
A TOML file (or the ``[prices.models]`` tables of the config file) prices private or new
models and corrects snapshot prices; all prices are USD per million tokens::

    [models."my-private-model"]
    input = 1.25            # required
    output = 10.0           # required
    cache_read = 0.125      # optional; default = input
    cache_write = 1.5625    # optional; default = input  (5-minute writes)
    cache_write_1h = 2.5    # optional; default = 2 × input
    match = "exact"         # or "prefix": every model name starting with the key
    since = 2025-06-01      # optional TOML date: valid from this UTC day

    # Several periods of one model: an array of tables, one `since` each.
    [[models."gpt-9"]]
    input = 2.0
    output = 8.0
    [[models."gpt-9"]]
    input = 1.0
    output = 4.0
    since = 2026-01-01

A key matches a usage model name case-insensitively, raw or normalized as the view
normalizes it (provider prefixes, date suffixes, ...), and always wins over the snapshot,
whatever the snapshot's match. Before a model's earliest ``since`` the snapshot's price of
that name applies, if it has one. :func:`apply_price_overrides` makes overrides effective
on one connection only, in TEMP tables; the catalog file is never written.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from agentlake.errors import ConfigurationError

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
_ENTRY_KEYS: Final = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
_ENTRY_OPTIONS: Final = ("match", "since")

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


def _utc(day: date | None) -> datetime | None:
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
                    valid_from=_utc(start),
                    valid_to=_utc(end),
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
        prices=pa.Table.from_pylist(prices, schema=_price_schema()),
        aliases=pa.Table.from_pylist(alias_rows, schema=_alias_schema()),
    )


def _price_schema() -> pa.Schema:
    types: dict[str, pa.DataType] = {
        "valid_from": pa.timestamp("us", tz="UTC"),
        "valid_to": pa.timestamp("us", tz="UTC"),
        "tier_threshold": pa.int64(),
    }
    names = ("model", "provider", "provider_id", "snapshot", "snapshot_version", "snapshot_source")
    types.update(dict.fromkeys(names, pa.string()))
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


# -- the materialized snapshot --------------------------------------------------------


def _catalog_table(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """The catalog's own table ``name``, fully qualified: TEMP tables of the same name
    (price overrides) shadow even ``main.<name>``, so writes must name the database."""
    row = con.execute("SELECT current_database()").fetchone()
    assert row is not None
    database = str(row[0]).replace('"', '""')
    return f'"{database}".main.{name}'


def materialized_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The genai-prices version of the materialized snapshot, if any."""
    table = _catalog_table(con, "prices")
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


def _materialize(con: duckdb.DuckDBPyConnection, snap: Snapshot) -> None:
    """Replace the snapshot's rows of ``prices`` and all of ``price_aliases`` in one
    transaction. Rows without a ``snapshot_version`` (added by hand) are kept."""
    prices, aliases = _catalog_table(con, "prices"), _catalog_table(con, "price_aliases")
    con.register("_snapshot_prices", snap.prices)
    con.register("_snapshot_aliases", snap.aliases)
    con.execute("BEGIN")
    try:
        con.execute(f"DELETE FROM {prices} WHERE snapshot_version IS NOT NULL")
        con.execute(f"DELETE FROM {aliases}")
        cols = ", ".join(PRICE_COLUMNS)
        con.execute(f"INSERT INTO {prices} ({cols}) SELECT {cols} FROM _snapshot_prices")
        cols = ", ".join(ALIAS_COLUMNS)
        con.execute(f"INSERT INTO {aliases} ({cols}) SELECT {cols} FROM _snapshot_aliases")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("_snapshot_prices")
        con.unregister("_snapshot_aliases")


def refresh_prices(con: duckdb.DuckDBPyConnection, *, force: bool = False) -> bool:
    """Materialize the bundled snapshot when the installed package's version differs from
    the materialized one (always with ``force``), in one transaction. A fetched snapshot
    of the installed version is kept. Returns whether it refreshed."""
    if not force and materialized_version(con) == snapshot_version():
        return False
    _materialize(con, build_snapshot())
    return True


def _in_force(con: duckdb.DuckDBPyConnection, *, refreshed: bool) -> PriceRefresh:
    """The materialized snapshot as a refresh result, without a message yet."""
    table = _catalog_table(con, "prices")
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
        _materialize(con, build_snapshot())
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


# -- user price overrides ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PriceOverrides:
    """User prices as Arrow tables shaped like ``prices`` and ``price_aliases`` (provider
    ``user``, pinned aliases), the file that defined them (``files``: every file that
    contributed, lowest precedence first) and a digest of their content."""

    path: Path
    files: tuple[Path, ...]
    digest: str
    prices: pa.Table
    aliases: pa.Table

    @property
    def models(self) -> tuple[str, ...]:
        """The overridden model keys (lowercase), sorted."""
        return tuple(sorted(set(self.aliases.column("model").to_pylist())))

    def merged(self, other: PriceOverrides) -> PriceOverrides:
        """These overrides and ``other``'s; ``other`` wins on the same key."""
        keys = pa.array(other.models, type=pa.string())
        kept_prices = self.prices.filter(pc.invert(pc.is_in(self.prices["model"], keys)))
        kept_aliases = self.aliases.filter(pc.invert(pc.is_in(self.aliases["model"], keys)))
        prices = pa.concat_tables([kept_prices, other.prices])
        aliases = pa.concat_tables([kept_aliases, other.aliases])
        files = tuple(dict.fromkeys((*self.files, *other.files)))
        return PriceOverrides(other.path, files, _digest(prices, aliases), prices, aliases)


def read_toml(path: Path, *, what: str) -> dict[str, object]:
    """The TOML document at ``path``; ``what`` names it in errors ("price file")."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: invalid TOML in the {what}: {exc}; fix it") from None
    except UnicodeDecodeError:
        raise ConfigurationError(
            f"{path}: the {what} is not UTF-8 text; save it as UTF-8"
        ) from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigurationError(
            f"{path}: cannot read the {what} ({reason}); check the path and its permissions"
        ) from None


def load_price_overrides(path: Path) -> PriceOverrides:
    """The user prices of the TOML file at ``path`` (format: this module's docstring).
    Raises :class:`ConfigurationError` with a one-line message naming the file, the model
    key and the remedy on any invalid input."""
    doc = read_toml(path, what="price file")
    for key in doc:
        if key != "models":
            raise ConfigurationError(
                f"{path}: unknown key {key!r}; a price file holds only "
                '[models."<model name>"] tables'
            )
    return parse_price_models(doc.get("models", {}), path=path)


def parse_price_models(models: object, *, path: Path, table: str = "models") -> PriceOverrides:
    """The user prices of a parsed ``[models."name"]`` table (``table`` is its dotted TOML
    name, for messages), read from ``path``."""
    if not isinstance(models, dict):
        raise ConfigurationError(
            f'{path}: {table} must be a table; write [{table}."<model name>"] tables'
        )
    prices: list[dict[str, object]] = []
    aliases: list[dict[str, object]] = []
    seen: dict[str, str] = {}
    for name, value in models.items():
        where = f"{table}.{json.dumps(name)}"
        key = name.strip().lower()
        if not key:
            raise ConfigurationError(f"{path}: {where}: empty model name; name the model")
        if key in seen:
            raise ConfigurationError(
                f"{path}: {where}: the same model as {seen[key]} (names are "
                "case-insensitive); keep one of them"
            )
        seen[key] = where
        entries = value if isinstance(value, list) else [value]
        kind, periods = _parse_entries(entries, path=path, where=where)
        aliases.append(
            dict(alias=key, kind=kind, provider_id=USER_PROVIDER, model=key, priority=USER_PRIORITY)
        )
        for i, (since, rates) in enumerate(periods):
            until = periods[i + 1][0] if i + 1 < len(periods) else None
            row: dict[str, object] = dict.fromkeys(PRICE_COLUMNS)
            row.update(
                {f"{field}_per_mtok": rate for field, rate in rates.items()},
                model=key,
                provider=USER_PROVIDER,
                provider_id=USER_PROVIDER,
                valid_from=_utc(since),
                valid_to=_utc(until),
                snapshot=f"{USER_PROVIDER} prices {path}",
                snapshot_source=USER_PROVIDER,
            )
            prices.append(row)
    price_table = pa.Table.from_pylist(prices, schema=_price_schema())
    alias_table = pa.Table.from_pylist(aliases, schema=_alias_schema())
    return PriceOverrides(
        path, (path,), _digest(price_table, alias_table), price_table, alias_table
    )


def _parse_entries(
    entries: list[object], *, path: Path, where: str
) -> tuple[MatchKind, list[tuple[date | None, dict[str, float]]]]:
    """The match kind and the periods (by start day) of one model's entries."""
    kinds: set[MatchKind] = set()
    periods: dict[date | None, dict[str, float]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise ConfigurationError(
                f"{path}: {where}: expected a table with input and output; "
                f"write [{where}] followed by input = ... and output = ..."
            )
        for name in entry:
            if name not in _ENTRY_KEYS + _ENTRY_OPTIONS:
                raise ConfigurationError(
                    f"{path}: {where}: unknown key {name!r}; use input, output, cache_read, "
                    "cache_write, cache_write_1h, match or since"
                )
        rates = {
            field: _rate(entry[field], field, path=path, where=where)
            for field in _ENTRY_KEYS
            if field in entry
        }
        for field in ("input", "output"):
            if field not in rates:
                raise ConfigurationError(
                    f"{path}: {where}: missing {field}; give input and output in USD per "
                    "million tokens"
                )
        rates.setdefault("cache_read", rates["input"])
        rates.setdefault("cache_write", rates["input"])
        rates.setdefault("cache_write_1h", 2 * rates["input"])
        match = entry.get("match", "exact")
        if match not in ("exact", "prefix"):
            raise ConfigurationError(
                f"{path}: {where}: match = {_show(match)} is unknown; "
                'write match = "exact" or match = "prefix"'
            )
        kinds.add("prefix" if match == "prefix" else "exact")
        since = entry.get("since")
        if since is not None and (not isinstance(since, date) or isinstance(since, datetime)):
            raise ConfigurationError(
                f"{path}: {where}: since = {_show(since)} is not a date; write a TOML "
                "date without quotes or time, e.g. since = 2025-06-01"
            )
        if since in periods:
            what = f"since = {since.isoformat()}" if since else "no since"
            raise ConfigurationError(
                f"{path}: {where}: two entries with {what}; give each entry its own since"
            )
        periods[since] = rates
    if len(kinds) > 1:
        raise ConfigurationError(
            f"{path}: {where}: its entries mix match kinds; use one match for all of them"
        )
    ordered = sorted(periods.items(), key=lambda item: (item[0] is not None, item[0] or date.min))
    return kinds.pop(), ordered


def _rate(value: object, field: str, *, path: Path, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ConfigurationError(
            f"{path}: {where}: {field} = {_show(value)} is not a price; write a "
            f"non-negative number of USD per million tokens, e.g. {field} = 1.25"
        )
    return float(value)


def _show(value: object) -> str:
    """A bad value as TOML would spell it, short and on one line, for messages."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, date):
        text = value.isoformat()
    elif isinstance(value, str):
        text = json.dumps(value)
    else:
        text = " ".join(repr(value).split())
    return text if len(text) <= 40 else text[:37] + "..."


def _digest(prices: pa.Table, aliases: pa.Table) -> str:
    """A stable digest of the overrides' content (not of the file's bytes)."""
    content = prices.drop_columns(["snapshot"])  # the label names the file
    rows = {
        "prices": sorted(json.dumps(r, sort_keys=True, default=str) for r in content.to_pylist()),
        "aliases": sorted(json.dumps(r, sort_keys=True) for r in aliases.to_pylist()),
    }
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def apply_price_overrides(con: duckdb.DuckDBPyConnection, overrides: PriceOverrides) -> None:
    """Make ``overrides`` effective for every later query on ``con`` (also a read-only
    one), without writing the catalog: TEMP tables ``prices`` and ``price_aliases`` hold
    the catalog's rows plus the user's, replacing catalog rows of the same provider and
    model, and shadow the catalog's tables, inside the views too. Applying again replaces
    the previous overrides."""
    prices, aliases = _catalog_table(con, "prices"), _catalog_table(con, "price_aliases")
    con.register("_override_prices", overrides.prices)
    con.register("_override_aliases", overrides.aliases)
    con.execute("BEGIN")
    try:
        for table, source, user in (
            ("prices", prices, "_override_prices"),
            ("price_aliases", aliases, "_override_aliases"),
        ):
            con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")
            con.execute(
                f"CREATE TEMP TABLE {table} AS SELECT * FROM {source} c WHERE NOT EXISTS "
                f"(SELECT 1 FROM {user} o WHERE o.provider_id = c.provider_id "
                "AND o.model = c.model)"
            )
            con.execute(f"INSERT INTO temp.main.{table} BY NAME SELECT * FROM {user}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("_override_prices")
        con.unregister("_override_aliases")
