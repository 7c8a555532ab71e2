"""Human rendering of reports: a rich table with a totals row, per-model lines under each
row with ``--breakdown``, and a footnote when some calls have no price; the sessions
known only from a thread index under a session report; the rate-limit report."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
from rich import box
from rich.console import Console
from rich.table import Table

from .reports import Report

if TYPE_CHECKING:
    from .limits import LimitsReport

# The measures every human report shows, with their headers; --json/--csv carry all columns.
_MEASURES: Final = (
    ("calls", "calls"),
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_write_tokens", "cache write"),
    ("cache_read_tokens", "cache read"),
    ("total_tokens", "total"),
    ("cost_usd", "cost (USD)"),
)
_COMPACT_HEADERS: Final = {
    "input_tokens": "in", "output_tokens": "out", "cache_write_tokens": "c.write",
    "cache_read_tokens": "c.read", "cost_usd": "USD",
}  # fmt: skip
_KEY_HEADERS: Final = {
    "period": "period", "provider": "provider", "session_id": "session",
    "project_path": "project", "title": "title", "model": "model", "block_start": "block",
}  # fmt: skip
_DATE_SUFFIX: Final = re.compile(r"[-@](20\d{6}|20\d\d-\d\d-\d\d)$")
# Below this console width, token counts of 100k and more are shown as 123k / 1.23M.
_WIDE: Final = 140
_SHOWN_KEYS: Final = {
    "session": ("provider", "session_id", "project_path"),
    "blocks": ("block_start",),
}


def render_report(console: Console, report: Report) -> None:
    """Print ``report`` as a table, in the report's order, with a totals row. On a console
    narrower than 140 columns the table keeps one key column, drops the model list and
    the call count, and shows token counts of 100k and more as ``123k``/``1.23M``. A
    rolled-up session report adds how many sessions each row holds."""
    compact = console.width < _WIDE
    keys = _SHOWN_KEYS.get(report.kind, report.keys)
    if compact:
        keys = keys[-1:] if report.kind == "model" else keys[:1]
        if report.kind == "session":
            keys = ("session_id",)
    measures = [m for m in _MEASURES if not (compact and m[0] == "calls")]
    has_models = "models" in report.rows.column_names and not compact
    table = Table(
        title=_title(report),
        show_footer=report.rows.num_rows > 1,
        box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
    )
    for i, key in enumerate(keys):
        table.add_column(
            _KEY_HEADERS[key],
            footer="Total" if i == 0 else "",
            overflow="fold",
            min_width=10 if key == "period" else 8,
            no_wrap=key == "block_start",
        )
    if report.rollup:
        table.add_column("sessions", justify="right", no_wrap=True)
    if has_models:
        table.add_column("models", overflow="fold")
    for name, header in measures:
        total = _cell(report.totals.get(name), name, compact=compact)
        header = _COMPACT_HEADERS.get(name, header) if compact else header
        table.add_column(header, justify="right", footer=total, no_wrap=True)
    nested = report.parts()
    # (the session and model reports key their rows by provider: their parts name none)
    providers = {x.get("provider") for row in nested.values() for x in row}
    for row in report.rows.to_pylist():
        cells = [_key_cell(row, key, report, compact=compact) for key in keys]
        if report.rollup:
            cells.append(_cell(row["sessions"]))
        parts = nested.get(tuple(row[k] for k in report.keys), [])
        if has_models:
            cells.append("" if parts else "\n".join(map(short_model, row["models"] or [])))
        table.add_row(*cells, *(_cell(row[n], n, compact=compact) for n, _ in measures))
        for part in parts:
            label = "└ " + short_model(part["model"])
            if len(providers) > 1 and "provider" not in report.keys and not compact:
                label += f" ({part['provider']})"
            lead = [""] * len(keys) + [label] if has_models else [label] + [""] * (len(keys) - 1)
            lead[len(keys) : len(keys)] = [""] * report.rollup
            table.add_row(
                *lead, *(_cell(part[n], n, compact=compact) for n, _ in measures), style="dim"
            )
    console.print(table)
    _footnotes(console, report)


def _title(report: Report) -> str:
    flt = report.filter
    bounds = [
        f"since {flt.since}" if flt.since else "",
        f"until {flt.until}" if flt.until else "",
        f"provider {flt.provider}" if flt.provider else "",
        f"model ~{flt.model}" if flt.model else "",
        f"project ~{flt.project}" if flt.project else "",
    ]
    extra = ", ".join(b for b in bounds if b)
    rolled = ", subagents folded into their root session" if report.rollup else ""
    return f"{report.kind} usage ({flt.tz}){rolled}" + (f", {extra}" if extra else "")


def _key_cell(row: dict[str, Any], key: str, report: Report, *, compact: bool = False) -> str:
    value = row[key]
    if report.kind == "session" and key == "session_id":
        return str(value)[:8]
    if report.kind == "session" and key == "project_path" and value:
        return PurePath(str(value)).name
    if report.kind == "blocks" and key == "block_start":
        start = f"{value:%m-%d %H:%M}" if compact else f"{value:%Y-%m-%d %H:%M}"
        span = f"{start}–{row['block_end']:%H:%M}"
        return span + (" (active)" if row.get("is_active") else "")
    if report.kind == "weekly" and isinstance(value, date):
        return f"{value:%G-W%V} ({value})"
    if report.kind == "monthly" and isinstance(value, date):
        return f"{value:%Y-%m}"
    return "—" if value is None else str(value)


def short_model(name: str) -> str:
    """A model name without its date suffix (``claude-sonnet-4-5-20250929`` →
    ``claude-sonnet-4-5``), for narrow tables."""
    return _DATE_SUFFIX.sub("", name)


def _cell(value: Any, name: str = "", *, compact: bool = False) -> str:
    if value is None:
        return "—"
    if name == "cost_usd":
        return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        if compact and name.endswith("_tokens") and abs(value) >= 100_000:
            return f"{value / 1e6:,.2f}M" if abs(value) >= 1_000_000 else f"{value / 1e3:,.0f}k"
        return f"{value:,}"
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%d %H:%M}"
    return str(value)


def _footnotes(console: Console, report: Report) -> None:
    unpriced = report.totals.get("unpriced_calls") or 0
    if unpriced:
        console.print(
            f"{unpriced:,} call(s) of models without a price are not in the cost "
            "(see: agentlake report --unpriced)",
            style="yellow",
            highlight=False,
        )
    if report.kind == "blocks":
        _active_block(console, report.rows)
    if report.index_only is not None and report.index_only.num_rows:
        _index_only(console, report.index_only)


def _index_only(console: Console, table: pa.Table) -> None:
    """The sessions without calls whose thread index records a token total."""
    view = Table(
        title="sessions without calls: token totals from the thread index (in no total above)",
        box=box.SIMPLE_HEAD,
    )
    for header in ("session", "provider", "project", "last activity"):
        view.add_column(header, no_wrap=True)
    view.add_column("index tokens", justify="right", no_wrap=True)
    for row in table.to_pylist():
        project = row["project_path"]
        view.add_row(
            str(row["session_id"])[:8],
            row["provider"],
            PurePath(str(project)).name if project else "—",
            _cell(row["last_activity"]),
            _cell(row["index_tokens"]),
        )
    console.print(view)


def _active_block(console: Console, rows: pa.Table) -> None:
    for row in rows.to_pylist():
        if not row.get("is_active"):
            continue
        console.print(
            f"active block until {row['block_end']:%H:%M}: "
            f"{_cell(row.get('tokens_per_minute'))} tokens/min, "
            f"{_cell(row.get('cost_per_hour'), 'cost_usd')}/h; projected "
            f"{_cell(row.get('projected_total_tokens'))} tokens, "
            f"{_cell(row.get('projected_cost_usd'), 'cost_usd')} by the end",
            highlight=False,
        )


def render_unpriced(console: Console, table: pa.Table) -> None:
    """Print the models without a price, most tokens first, and how to price them."""
    if table.num_rows == 0:
        console.print("every call has a price", highlight=False)
        return
    view = Table(title="models without a price (their cost is NULL)")
    view.add_column("model", overflow="fold")
    view.add_column("provider")
    for header in ("calls", "total tokens", "last call"):
        view.add_column(header, justify="right", no_wrap=True)
    for row in table.to_pylist():
        view.add_row(
            row["model"],
            row["provider"],
            _cell(row["calls"]),
            _cell(row["total_tokens"]),
            _cell(row["last_activity"]),
        )
    console.print(view)
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
    console.print(limits_table(report.rows, title, compact=console.width < _WIDE))
    if any(report.rows.column("reset_passed").to_pylist()):
        console.print(
            "reset: the window restarted after that snapshot; its percentage no longer holds",
            style="yellow",
            highlight=False,
        )


def limits_table(rows: pa.Table, title: str, *, compact: bool = False) -> Table:
    """A table of rate-limit snapshots (:data:`agentlake.limits.LIMIT_COLUMNS`); times
    without the year when ``compact``."""
    view = Table(title=title, box=box.SIMPLE_HEAD)
    for header in ("provider", "limit", "window"):
        view.add_column(header, no_wrap=True)
    for header in ("used", "resets at", "resets in", "age"):
        view.add_column(header, justify="right", no_wrap=True)
    stamp = "%m-%d %H:%M" if compact else "%Y-%m-%d %H:%M"
    for row in rows.to_pylist():
        left = row["resets_in_seconds"]
        view.add_row(
            row["provider"],
            " ".join(v for v in (row["limit_id"], row["plan_type"]) if v) or "—",
            window_label(row["window_minutes"], row["window_kind"]),
            f"{round(row['used_percent'], 1):g}%",
            "—" if row["resets_at"] is None else f"{row['resets_at']:{stamp}}",
            "—" if left is None else ("reset" if left <= 0 else span(left)),
            span(max(row["age_seconds"], 0)),
        )
    return view


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
