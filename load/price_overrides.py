"""User price overrides: TOML prices for private or new models, or corrections of the
snapshot's, made effective on one connection without writing the catalog.

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
import json
import math
import tomllib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Final

import duckdb
import pyarrow as pa

from agentlake.errors import ConfigurationError

# Re-exported: readers open a priced catalog through the catalog module, which loads
# this one only when there are overrides.
from .catalog import open_priced as open_priced
from .prices import (
    PRICE_COLUMNS,
    USER_PRIORITY,
    USER_PROVIDER,
    MatchKind,
    alias_schema,
    catalog_table,
    price_schema,
    utc_day,
)
from .transaction import transaction

_ENTRY_KEYS: Final = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
_ENTRY_OPTIONS: Final = ("match", "since")


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
        import pyarrow.compute as pc  # loads in ~30 ms; only a merge of overrides needs it

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
                valid_from=utc_day(since),
                valid_to=utc_day(until),
                snapshot=f"{USER_PROVIDER} prices {path}",
                snapshot_source=USER_PROVIDER,
            )
            prices.append(row)
    price_table = pa.Table.from_pylist(prices, schema=price_schema())
    alias_table = pa.Table.from_pylist(aliases, schema=alias_schema())
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
    prices, aliases = catalog_table(con, "prices"), catalog_table(con, "price_aliases")
    with transaction(con, _override_prices=overrides.prices, _override_aliases=overrides.aliases):
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
