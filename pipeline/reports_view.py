"""Human rendering of reports: a rich table with a totals row, per-model lines under each
row with ``--breakdown``, and a footnote when some calls have no price."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import PurePath
from typing import Any, Final

import pyarrow as pa
from rich import box
from rich.console import Console
from rich.table import Table

from .reports import Report

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
    the call count, and shows token counts of 100k and more as ``123k``/``1.23M``."""
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
    if has_models:
        table.add_column("models", overflow="fold")
    for name, header in measures:
        total = _cell(report.totals.get(name), name, compact=compact)
        header = _COMPACT_HEADERS.get(name, header) if compact else header
        table.add_column(header, justify="right", footer=total, no_wrap=True)
    nested = report.parts()
    providers = {p for row in nested.values() for p in (x["provider"] for x in row)}
    for row in report.rows.to_pylist():
        cells = [_key_cell(row, key, report, compact=compact) for key in keys]
        parts = nested.get(tuple(row[k] for k in report.keys), [])
        if has_models:
            cells.append("" if parts else "\n".join(map(short_model, row["models"] or [])))
        table.add_row(*cells, *(_cell(row[n], n, compact=compact) for n, _ in measures))
        for part in parts:
            label = "└ " + short_model(part["model"])
            if len(providers) > 1 and "provider" not in report.keys and not compact:
                label += f" ({part['provider']})"
            lead = [""] * len(keys) + [label] if has_models else [label] + [""] * (len(keys) - 1)
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
    return f"{report.kind} usage ({flt.tz})" + (f", {extra}" if extra else "")


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
