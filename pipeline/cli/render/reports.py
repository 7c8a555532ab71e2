"""Human rendering of reports: a table with a totals row, per-model lines under each row
with ``--breakdown``, and a footnote when some calls have no price; the sessions known
only from a thread index under a session report; the rate-limit report.

Column policy (:mod:`agentlake.cli.render.tables`): from :data:`~agentlake.cli.render.tables.WIDE` columns on,
every measure is shown with exact counts; below, cache writes and reads are merged into
one ``cache`` column, the call count is left out and counts of 100k and more read
``123k`` / ``1.23M``. A model name always comes with its provider (``gpt-5`` is sold by
more than one). Session ids keep at least 8 characters; project and title columns go
first when the width runs out.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
from rich.console import Console

from agentlake.read.reports import Report, ReportFilter

from .tables import Cell, Column, Grid, Id, Name, count, id_width, is_wide, say_nothing, usd, when

if TYPE_CHECKING:
    from agentlake.read.dashboard import DashboardWritten
    from agentlake.read.limits import LimitsReport

Row = dict[str, Any]
# (source column, header): the measures shown at full width, and below it.
_FULL: Final = (
    ("calls", "calls"),
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_write_tokens", "cache write"),
    ("cache_read_tokens", "cache read"),
    ("total_tokens", "total"),
    ("cost_usd", "cost"),
)
_NARROW: Final = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_tokens", "cache"),  # cache writes + reads
    ("total_tokens", "total"),
    ("cost_usd", "cost"),
)
_PERIOD_HEADERS: Final = {"daily": "day", "weekly": "week", "monthly": "month"}
_PART: Final = "└ "


def render_report(console: Console, report: Report, *, workspace: str) -> None:
    """Print ``report`` as a table in the report's order with a totals row, or one line
    when it has no rows (naming ``workspace`` and the report's filters)."""
    if report.rows.num_rows == 0:
        say_nothing(console, "model calls", workspace=workspace, filters=_filters(report.filter))
        return
    wide = is_wide(console)
    keys = _keys(report, wide=wide)
    if report.rollup:  # how many sessions each root's row holds
        folded = sum(report.rows.column("sessions").to_pylist())
        keys.append((Column("sessions", "number", footer=count(folded)), _sessions, _blank))
    measures = _FULL if wide else _NARROW
    footers = [_measure(report.totals, name, wide=wide) for name, _ in measures]
    grid = Grid(
        *(col for col, _, _ in keys),
        *(
            Column(header, "number", footer=f)
            for (_, header), f in zip(measures, footers, strict=True)
        ),
        title=_title(report),
    )
    nested = report.parts()
    for row in report.rows.to_pylist():
        grid.add_row(*(cell(row) for _, cell, _ in keys), *_measures(row, measures, wide))
        for part in nested.get(tuple(row[k] for k in report.keys), []):
            grid.add_row(
                *(cell(part) for _, _, cell in keys),
                *_measures(part, measures, wide),
                style="dim",
            )
    grid.show(console)
    _footnotes(console, report)
    if report.index_only is not None and report.index_only.num_rows:
        _index_only(console, report.index_only)


def _sessions(row: Row) -> str:
    return count(row["sessions"])


def _blank(_: Row) -> str:
    return ""


def _index_only(console: Console, table: pa.Table) -> None:
    """The sessions without calls whose thread index records a token total."""
    grid = Grid(
        Column("session", "id"),
        Column("provider", "label"),
        Column("project", "name", drop=1),
        Column("last activity", "when"),
        Column("index tokens", "number"),
        title="sessions without calls: token totals from the thread index (in no total above)",
    )
    for row in table.to_pylist():
        project = row["project_path"]
        grid.add_row(
            str(row["session_id"]),
            row["provider"],
            PurePath(str(project)).name if project else "—",
            when(row["last_activity"]),
            count(row["index_tokens"]),
        )
    grid.show(console)


KeyCell = Callable[[Row], Cell]
KeySpec = tuple[Column, KeyCell, KeyCell]  # the column, its cell in a row, in a part


def _keys(report: Report, *, wide: bool) -> list[KeySpec]:
    """The columns that name a row, with how a row and a breakdown part fill them. A
    part's model goes under its row's key, its provider in a column of its own."""
    kind, parts = report.kind, report.breakdown is not None

    def blank(_: Row) -> str:
        return ""

    def model(part: Row) -> Name:
        return Name(_PART + part["model"])

    def provider(row: Row) -> str:
        return str(row["provider"])

    by_provider = [(Column("provider", "label"), blank, provider)] if parts else []
    if kind in _PERIOD_HEADERS:
        label = _PERIOD_HEADERS[kind]

        def period(row: Row) -> str:
            return _period(kind, row["period"])

        key = Column(label, "name" if parts else "label", footer="Total")
        return [(key, period, model), *by_provider]
    if kind == "project":

        def project(row: Row) -> str:
            return row["project_path"] or "—"

        key = Column("project", "name", elide="start", footer="Total")
        return [(key, project, model), *by_provider]
    if kind == "model":
        return [
            (Column("model", "name", footer="Total"), lambda row: row["model"] or "—", blank),
            (Column("provider", "label"), provider, blank),
        ]
    if kind == "session":
        ids = report.rows.column("session_id").to_pylist()
        short = id_width(ids)
        session: KeySpec = (
            (
                Column("session", "name", footer="Total"),
                lambda row: Id(row["session_id"], short),
                model,
            )
            if parts
            else (Column("session", "id", footer="Total"), lambda row: row["session_id"], blank)
        )
        return [
            session,
            (Column("provider", "label"), provider, blank),
            (Column("project", "name", drop=1), _project_name, blank),
            (Column("title", "text", drop=2, floor=20), lambda row: row["title"] or "—", blank),
        ]
    # blocks: the window, to the minute (the year only at full width)
    return [(Column("block", "label", footer="Total"), lambda row: _block(row, wide=wide), blank)]


def _period(kind: str, value: date) -> str:
    if kind == "weekly":
        return f"{value:%G-W%V} ({value})"
    if kind == "monthly":
        return f"{value:%Y-%m}"
    return str(value)


def _block(row: Row, *, wide: bool) -> str:
    start = f"{row['block_start']:%Y-%m-%d %H:%M}" if wide else f"{row['block_start']:%m-%d %H:%M}"
    span = f"{start}–{row['block_end']:%H:%M}"
    return span + (" (active)" if row.get("is_active") else "")


def _project_name(row: Row) -> str:
    return PurePath(row["project_path"]).name if row["project_path"] else "—"


def _measures(row: Row, measures: tuple[tuple[str, str], ...], wide: bool) -> list[str]:
    return [_measure(row, name, wide=wide) for name, _ in measures]


def _measure(row: Row, name: str, *, wide: bool) -> str:
    if name == "cost_usd":
        return usd(row.get("cost_usd"))
    if name == "cache_tokens":
        value = (row.get("cache_write_tokens") or 0) + (row.get("cache_read_tokens") or 0)
        return count(value, compact=not wide)
    return count(row.get(name), compact=not wide and name.endswith("_tokens"))


def _filters(flt: ReportFilter) -> dict[str, object]:
    return {
        "since": flt.since,
        "until": flt.until,
        "provider": flt.provider,
        "model": f"~{flt.model}" if flt.model else None,
        "project": f"~{flt.project}" if flt.project else None,
    }


def _title(report: Report) -> str:
    bounds = [f"{k} {v}" for k, v in _filters(report.filter).items() if v]
    extra = ", ".join(bounds)
    rolled = ", subagents folded into their root session" if report.rollup else ""
    return f"{report.kind} usage ({report.filter.tz}){rolled}" + (f", {extra}" if extra else "")


def _footnotes(console: Console, report: Report) -> None:
    unpriced = report.totals.get("unpriced_calls") or 0
    if unpriced:
        console.print(
            f"{unpriced:,} call(s) of models without a price are not in the cost "
            "(see: agentlake report --unpriced)",
            style="yellow",
            highlight=False,
        )
    if report.per_session:
        console.print(
            f"{', '.join(report.per_session)}: tokens are per-session totals (the agent "
            "records no per-call counts), one row per session and model, not calls",
            highlight=False,
        )
    if report.kind == "blocks":
        _active_block(console, report.rows)
    if report.snapshot is not None:
        console.print(
            f"read at lake snapshot {report.snapshot} (imports committed after it are not "
            "in this report)",
            style="dim",
            highlight=False,
        )


def _active_block(console: Console, rows: pa.Table) -> None:
    for row in rows.to_pylist():
        if not row.get("is_active"):
            continue
        console.print(
            f"active block until {row['block_end']:%H:%M}: "
            f"{_rate(row.get('tokens_per_minute'))} tokens/min, "
            f"{usd(row.get('cost_per_hour'))}/h; projected "
            f"{count(row.get('projected_total_tokens'))} tokens, "
            f"{usd(row.get('projected_cost_usd'))} by the end",
            highlight=False,
        )


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.2f}"


def render_unpriced(console: Console, table: pa.Table) -> None:
    """Print the models without a price, most tokens first, and how to price them."""
    if table.num_rows == 0:
        console.print("every call has a price", highlight=False)
        return
    grid = Grid(
        Column("model", "name"),
        Column("provider", "label"),
        Column("calls", "number"),
        Column("total tokens", "number"),
        Column("last call", "when", drop=1),
        title="models without a price (their cost is NULL)",
    )
    for row in table.to_pylist():
        grid.add_row(
            row["model"],
            row["provider"],
            count(row["calls"]),
            count(row["total_tokens"]),
            when(row["last_activity"]),
        )
    grid.show(console)
    console.print(
        "price them with a TOML file: agentlake report … --prices FILE (see README, Prices)",
        highlight=False,
    )


def render_limits(console: Console, report: LimitsReport) -> None:
    """The latest rate-limit snapshot of each provider, limit and window: how much of
    the window is used, when it resets, and how old the snapshot is."""
    if report.rows.num_rows == 0:
        console.print(
            "no rate-limit snapshots in this workspace (Codex writes them with its token counts)",
            highlight=False,
        )
        return
    title = f"rate limits, as last reported ({report.tz})"
    limits_grid(report.rows, title, wide=is_wide(console)).show(console)
    if any(report.rows.column("reset_passed").to_pylist()):
        console.print(
            "reset: the window restarted after that snapshot; its percentage no longer holds",
            style="yellow",
            highlight=False,
        )


def limits_grid(rows: pa.Table, title: str, *, wide: bool = True) -> Grid:
    """A table of rate-limit snapshots (:data:`agentlake.read.limits.LIMIT_COLUMNS`); times
    without the year unless ``wide``."""
    grid = Grid(
        Column("provider", "label"),
        Column("limit", "name", drop=1),
        Column("window", "label"),
        Column("used", "number"),
        Column("resets at", "when"),
        Column("resets in", "number"),
        Column("age", "number", drop=2),
        title=title,
    )
    stamp = "%Y-%m-%d %H:%M" if wide else "%m-%d %H:%M"
    for row in rows.to_pylist():
        left = row["resets_in_seconds"]
        grid.add_row(
            row["provider"],
            " ".join(v for v in (row["limit_id"], row["plan_type"]) if v) or "—",
            window_label(row["window_minutes"], row["window_kind"]),
            f"{round(row['used_percent'], 1):g}%",
            "—" if row["resets_at"] is None else f"{row['resets_at']:{stamp}}",
            "—" if left is None else ("reset" if left <= 0 else span(left)),
            span(max(row["age_seconds"], 0)),
        )
    return grid


def window_label(minutes: int | None, kind: str) -> str:
    """A window's length as people say it (``5h``, ``7d``), else its slot."""
    if not minutes:
        return kind
    for unit, size in (("d", 1440), ("h", 60)):
        if minutes % size == 0:
            return f"{minutes // size}{unit}"
    return f"{minutes}m"


def span(seconds: int) -> str:
    """A duration in its two largest units: ``45s``, ``12m``, ``3h 05m``, ``2d 4h``."""
    minutes, hours = seconds // 60, seconds // 3600
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{minutes}m"
    if seconds < 86400:
        return f"{hours}h {minutes % 60:02d}m"
    return f"{seconds // 86400}d {hours % 24}h"


def render_dashboard(console: Console, written: DashboardWritten) -> None:
    """One line: where the dashboard went, its size and what it charts."""
    providers = ", ".join(written.providers) or "no provider"
    console.print(
        f"wrote {written.path} ({written.bytes / 1_048_576:.1f} MiB): "
        f"{written.calls:,} calls of {providers}, in {written.seconds:.2f}s",
        highlight=False, soft_wrap=True,
    )  # fmt: skip
