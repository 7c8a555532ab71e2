"""Token usage and cost reports: per period, session, model, project and 5-hour block.

Every report reads the calls of one workspace through the ``report_calls`` table macro
(sql/queries/report_calls.sql), so the filters mean the same thing everywhere, and
returns Arrow tables; the CLI decides between a table, JSON and CSV. A report's rows
are rolled up from its query's result by DuckDB on the same connection
(sql/queries/report_rollup.sql); only the blocks report loads polars.

The session report can fold every session's calls into the root of its tree of parent
links (``rollup``: subagents, spawned threads and forks under the session that started
them, through the ``session_rollup`` view), and lists apart the sessions without calls
whose provider's thread index records a token total (``index_only``), which no total
includes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import duckdb
import pyarrow as pa

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.load.catalog import open_priced
from agentlake.load.lake import current_snapshot
from agentlake.read.names import provider_id

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides


@dataclass(frozen=True, slots=True)
class ReportFilter:
    """Bounds shared by every report: the zone that defines days (IANA name), inclusive
    first and last day in that zone, one provider (id or alias), case-insensitive
    substrings of the model name and of the session's project path, and one session tag.
    ``None`` leaves a bound open. Hidden sessions' calls are in no report unless
    ``include_hidden``."""

    tz: str = "UTC"
    since: date | None = None
    until: date | None = None
    provider: str | None = None
    model: str | None = None
    project: str | None = None
    include_hidden: bool = False  # hidden sessions' calls too (`sessions hide`)
    tag: str | None = None  # only the calls of sessions with this tag

    def __post_init__(self) -> None:
        if self.tag is not None:
            from agentlake.read.lifecycle_filters import check_tag

            object.__setattr__(self, "tag", check_tag(self.tag))
        try:
            ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigurationError(
                f"unknown time zone {self.tz!r}; use an IANA name such as Europe/Berlin"
            ) from None
        if self.since and self.until and self.since > self.until:
            raise ConfigurationError(f"--since {self.since} is after --until {self.until}")
        if self.provider is not None:
            object.__setattr__(self, "provider", provider_id(self.provider))

    def to_json(self) -> dict[str, Any]:
        """The filter as the ``filters`` member of a report's JSON document."""
        return {f: getattr(self, f) for f in self.__slots__}

    def params(self, workspace: str) -> dict[str, object]:
        """The named parameters of every report query (``report_calls`` arguments)."""
        return {"workspace": workspace, **self.to_json()}


@contextmanager
def report_connection(
    catalog: Catalog,
    prices: PriceOverrides | None = None,
    *,
    per_session: bool = True,
    scope: tuple[str, ReportFilter] | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the catalog with the ``report_calls`` macro (the calls)
    and, with ``per_session``, the ``report_sessions`` macro (their roll-up per session
    and model) defined, and the user's ``prices`` (if any) in force for its queries. Use
    them as ``FROM report_calls($workspace, $tz, $since, $until, $provider, $model,
    $project, $include_hidden, $tag)`` with :meth:`ReportFilter.params`. (Defining a macro is a few
    milliseconds of binding: a report that does not read one does without it.)

    ``scope`` (the workspace and filter the report reads) leaves the lifecycle and tag
    conditions out of ``report_calls`` when they cannot remove a call: no tag asked for,
    and hidden sessions included or the workspace has none."""
    with open_priced(catalog, prices) as con:
        needed = scope is None or _lifecycle_needed(con, *scope)
        lifecycle = sql.query("report_lifecycle") if needed else ""
        con.execute(sql.query("report_calls").replace("/* lifecycle */", lifecycle))
        if per_session:
            con.execute(sql.query("report_sessions"))
        yield con


def _lifecycle_needed(con: duckdb.DuckDBPyConnection, workspace: str, flt: ReportFilter) -> bool:
    """Whether the lifecycle and tag conditions can remove a call of ``flt``'s report."""
    from agentlake.read.lifecycle_filters import any_hidden

    return flt.tag is not None or (not flt.include_hidden and any_hidden(con, workspace))


ReportKind = Literal["daily", "weekly", "monthly", "session", "model", "project", "blocks"]
REPORT_KINDS: Final[tuple[ReportKind, ...]] = get_args(ReportKind)
_UNITS: Final = {"daily": "day", "weekly": "week", "monthly": "month"}
# The reports whose query reads the calls summed per session (the report_sessions macro).
_PER_SESSION: Final = ("session", "project")
# The columns that identify a row of each report (the rest are measures).
_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "daily": ("period",),
    "weekly": ("period",),
    "monthly": ("period",),
    "session": ("provider", "session_id", "project_path", "title"),
    "model": ("provider", "model"),
    "project": ("project_path",),
}
# Columns of the per-model rows that say how many sessions a row holds (its extra member).
_SESSION_COUNTS: Final = ("project_sessions", "root_sessions")
# The JSON key of each report's rows (ccusage's names where it has the report).
ROWS_KEY: Final[dict[str, str]] = {
    "daily": "daily", "weekly": "weekly", "monthly": "monthly", "session": "sessions",
    "model": "models", "project": "projects", "blocks": "blocks",
}  # fmt: skip
TOKEN_COLUMNS: Final = (
    "input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cache_read_tokens",
    "output_tokens", "reasoning_tokens", "total_tokens",
)  # fmt: skip
_BREAKDOWN_KINDS: Final = ("daily", "weekly", "monthly", "session", "project")
JSON_VERSION: Final = 1
_COST_DIGITS: Final = 9


@dataclass(frozen=True, slots=True)
class Report:
    """One report: ``rows`` (one per period, session, model, project or block, in the
    report's order), ``breakdown`` (one row per row key × provider × model, when asked
    for) and ``totals`` over all rows (``cost_usd`` sums the priced calls; it is ``None``
    when no call is priced). A session report ``rollup`` has one row per root session,
    whose ``sessions`` counts the sessions its calls come from; ``index_only`` lists the
    sessions without calls whose thread index records a token total (in no total)."""

    kind: ReportKind
    filter: ReportFilter
    rows: pa.Table
    breakdown: pa.Table | None
    totals: dict[str, Any]
    rollup: bool = False
    index_only: pa.Table | None = None
    # Providers among the rows whose usage rows are session totals, not calls.
    per_session: tuple[str, ...] = ()
    # The lake snapshot the report read (None: a DuckDB file, read under its lock).
    snapshot: int | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        """The columns that identify a row."""
        return _KEYS.get(self.kind, ("block_start",))

    def parts(self) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
        """The breakdown rows (without their key columns) grouped by the key of the row
        they belong to; empty without a breakdown."""
        nested: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for item in [] if self.breakdown is None else self.breakdown.to_pylist():
            key = tuple(item.pop(k) for k in self.keys)
            nested.setdefault(key, []).append(item)
        return nested

    def to_json(self) -> dict[str, Any]:
        """The stable ``--json`` document (shape documented in README "Reports")."""
        rows = self.rows.to_pylist()
        if self.breakdown is not None:
            nested = self.parts()
            for row in rows:
                row["breakdown"] = nested.get(tuple(row[k] for k in self.keys), [])
        doc: dict[str, Any] = {
            "version": JSON_VERSION,
            "report": self.kind,
            "filters": self.filter.to_json(),
        }
        if self.rollup:
            doc["rollup"] = True
        doc[ROWS_KEY[self.kind]] = rows
        if self.index_only is not None and self.index_only.num_rows:
            doc["index_only"] = self.index_only.to_pylist()
        if self.per_session:
            doc["per_session_providers"] = list(self.per_session)
        doc["totals"] = self.totals
        if self.snapshot is not None:
            doc["snapshot"] = self.snapshot
        return doc


def report(
    catalog: Catalog,
    workspace: str,
    kind: ReportKind,
    flt: ReportFilter,
    *,
    breakdown: bool = False,
    rollup: bool = False,
    now: datetime | None = None,
    prices: PriceOverrides | None = None,
) -> Report:
    """Token usage and cost of this workspace's calls inside ``flt``, per ``kind``:
    ``daily``/``weekly``/``monthly`` (periods in ``flt.tz``, oldest first), ``session``
    (most recent first), ``model`` and ``project`` (most expensive first) or ``blocks``
    (5-hour billing windows, oldest first; ``now`` decides which one is active).
    ``breakdown`` adds per-model rows inside each period, session or project; ``rollup``
    (session report only) folds each session's calls into the root of its tree of
    parent links; ``prices`` (user price overrides) take precedence over the catalog's
    prices."""
    if breakdown and kind not in _BREAKDOWN_KINDS:
        raise ConfigurationError(
            f"--breakdown applies to the {', '.join(_BREAKDOWN_KINDS)} reports, not {kind}"
        )
    if rollup and kind != "session":
        raise ConfigurationError(f"--rollup applies to the session report, not {kind}")
    if kind == "blocks":
        from agentlake.read.blocks import blocks_report

        blocks = _settle(blocks_report(catalog, workspace, flt, now=now, prices=prices))
        return Report(kind, flt, blocks, None, _totals(blocks))
    params = flt.params(workspace)
    if kind in _UNITS:
        query, params["unit"] = sql.query("report_period"), _UNITS[kind]
        params["cell_s"] = 86_400 if _always_utc(flt.tz) else 900
    else:
        query = sql.query("report_session_rollup" if rollup else f"report_{kind}")
    index_only = None
    parts = None
    by_session = kind in _PER_SESSION
    with report_connection(catalog, prices, per_session=by_session, scope=(workspace, flt)) as con:
        snapshot = current_snapshot(con)
        try:
            con.execute(sql.query("report_detail").replace("/* query */", query), params)
            per_session = tuple(
                str(p) for (p,) in con.execute(
                    sql.query("report_per_session"), {"workspace": workspace}
                ).fetchall()
            )  # fmt: skip
            if kind == "model":
                rows = _settled(con, order="arrival")
                return Report(
                    kind, flt, rows, None, _totals(rows), per_session=per_session,
                    snapshot=snapshot,
                )  # fmt: skip
            rows = _rolled_up(con, _KEYS[kind], order=_ROW_ORDER.get(kind, "min(arrival)"))
            if breakdown:
                order = "provider, session_id, model" if kind == "session" else "arrival"
                parts = _settled(con, order=order, drop=_SESSION_COUNTS)
            if kind == "session":
                index_only = con.execute(
                    sql.query("report_index_only"), flt.params(workspace)
                ).to_arrow_table()
        finally:
            con.execute("DROP TABLE IF EXISTS temp.report_detail")
    return Report(kind, flt, rows, parts, _totals(rows), rollup=rollup, index_only=index_only,
                  per_session=per_session, snapshot=snapshot)  # fmt: skip


# The order of the rows of the reports that do not list them as their keys first appear.
_ROW_ORDER: Final = {
    "project": "cost_usd DESC NULLS LAST, total_tokens DESC, project_path",
    "session": "last_activity DESC, provider, session_id",
}


def _rolled_up(con: duckdb.DuckDBPyConnection, keys: tuple[str, ...], *, order: str) -> pa.Table:
    """One row per key of temp table ``report_detail`` (report_rollup.sql)."""
    columns = set(con.table("report_detail").columns)
    names = ", ".join(f'"{k}"' for k in keys)
    providers = (
        "" if "provider" in keys else ("list_sort(list_distinct(list(provider))) AS providers,")
    )
    sessions = "".join(
        f"first({count} ORDER BY arrival) AS sessions,"
        for count in _SESSION_COUNTS
        if count in columns
    )
    statement = (
        sql.query("report_rollup")
        .replace("/* keys */", names)
        .replace("/* providers */", providers)
        .replace("/* sessions */", sessions)
        .replace("/* order */", order)
    )
    return con.execute(statement).to_arrow_table()


def _settled(con: duckdb.DuckDBPyConnection, *, order: str, drop: tuple[str, ...] = ()) -> pa.Table:
    """Temp table ``report_detail`` as it is, costs rounded (report_settle.sql)."""
    present = [name for name in drop if name in con.table("report_detail").columns]
    statement = (
        sql.query("report_settle")
        .replace("/* drop */", "".join(f", {name}" for name in present))
        .replace("/* order */", order)
    )
    return con.execute(statement).to_arrow_table()


def _settle(table: pa.Table) -> pa.Table:
    """The blocks report with its costs rounded to 1e-9 USD, as report_rollup.sql rounds
    the others' (the blocks report is computed with polars already)."""
    import polars as pl

    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    money = [c for c in frame.columns if c == "cost_usd" or c.endswith(("_cost_usd", "per_hour"))]
    return frame.with_columns(pl.col(money).round(_COST_DIGITS)).to_arrow()


def _always_utc(tz: str) -> bool:
    """Whether the zone keeps offset 0 in winter and summer of the years agents ran in
    (UTC, Etc/UTC, GMT, Africa/Abidjan, ...): then whole UTC days are whole local days."""
    zone = ZoneInfo(tz)
    return all(
        zone.utcoffset(datetime(year, month, 15)) == timedelta(0)
        for year in (2023, 2025, 2027)
        for month in (1, 7)
    )


def _totals(rows: pa.Table) -> dict[str, Any]:
    """Sums over every row of a report (its cost: of the priced rows, rounded as theirs
    are; ``None`` when none is priced)."""
    items = rows.select(["calls", *TOKEN_COLUMNS, "cost_usd", "unpriced_calls"]).to_pylist()
    totals: dict[str, Any] = {
        name: sum(int(item[name] or 0) for item in items) for name in ("calls", *TOKEN_COLUMNS)
    }
    costs = [float(item["cost_usd"]) for item in items if item["cost_usd"] is not None]
    totals["cost_usd"] = round(math.fsum(costs), _COST_DIGITS) if costs else None
    totals["unpriced_calls"] = sum(int(item["unpriced_calls"] or 0) for item in items)
    return totals


def unpriced_json(table: pa.Table) -> dict[str, Any]:
    """The document ``agentlake report --unpriced --json`` prints for :func:`unpriced`'s
    table."""
    return {"version": 1, "unpriced": table.to_pylist()}


def unpriced(
    catalog: Catalog, workspace: str, flt: ReportFilter, *, prices: PriceOverrides | None = None
) -> pa.Table:
    """Models of the calls inside ``flt`` that have no price (their cost is NULL), with
    their calls and token volume, most tokens first."""
    with report_connection(catalog, prices, per_session=False, scope=(workspace, flt)) as con:
        return con.execute(sql.query("report_unpriced"), flt.params(workspace)).to_arrow_table()
