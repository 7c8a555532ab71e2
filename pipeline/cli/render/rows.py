"""Rendering of plain result tables for the CLI: ``agentlake sql`` results and
``agentlake prices list``.

Column policy (:mod:`agentlake.cli.render.tables`): a column's kind follows its Arrow type and
name (numbers, times, ``*_id`` ids, model names, paths, labels such as ``provider``,
free text otherwise). When a result has more columns than the width holds, the
rightmost go first and a line under the table names them: nothing is left out
silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

import pyarrow as pa
from rich.console import Console

from .tables import Column, ColumnKind, Grid

_LABELS: Final = frozenset(
    {"provider", "provider_id", "kind", "role", "status", "continuity", "action", "workspace",
     "lifecycle", "source", "reason", "position_kind", "tool_name"}
)  # fmt: skip
_PATHS: Final = frozenset({"path", "project_path", "root", "cwd"})


def kind_of(field: pa.Field) -> ColumnKind:
    """The column policy of a result column, from its type and name."""
    t, name = field.type, field.name
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "number"
    if pa.types.is_temporal(t) or pa.types.is_boolean(t):
        return "when" if pa.types.is_temporal(t) else "label"
    if name == "id" or (name.endswith("_id") and name not in _LABELS):
        return "id"
    if name == "model" or name in _PATHS:
        return "name"
    return "label" if name in _LABELS else "text"


def cell(value: Any) -> str:
    """A result value as text: counts with thousands separators, fractions to four
    decimals, lists joined, ``—`` for NULL."""
    if value is None:
        return "—"
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return f"{int(value):,}"  # sums of integer columns arrive as DECIMAL(38,0)
    if isinstance(value, (float, Decimal)):
        return f"{value:,.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def render_rows(
    console: Console,
    table: pa.Table,
    *,
    title: str | None = None,
    columns: Mapping[str, Column] | None = None,
    cells: Mapping[str, Callable[[Any], str]] | None = None,
) -> None:
    """``table`` as a grid: every column that fits at the console's width, the
    rightmost left out first (and named under the table). ``columns`` replaces the
    policy inferred for a column (:func:`column_for`); ``cells`` gives a column its
    own formatter."""
    chosen = [
        (columns or {}).get(f.name) or column_for(f, drop=i) for i, f in enumerate(table.schema)
    ]
    if not chosen:
        return
    grid = Grid(*chosen, title=title)
    formats = [(cells or {}).get(name, cell) for name in table.column_names]
    for row in table.to_pylist():
        grid.add_row(*(f(v) for f, v in zip(formats, row.values(), strict=True)))
    dropped = grid.show(console)
    if table.num_rows == 0:
        console.print("0 rows", highlight=False)
    if dropped:
        names = ", ".join(c.header for c in dropped)
        console.print(
            f"{len(dropped)} more column{'s' if len(dropped) > 1 else ''} than the width "
            f"holds: {names} (--json or --csv print them all)",
            highlight=False,
            markup=False,
        )


def column_for(field: pa.Field, *, drop: int = 0) -> Column:
    """The column of a result field: its :func:`kind_of`, wrapping when it holds text,
    names or paths (a long value takes more lines rather than pushing other columns
    out)."""
    kind = kind_of(field)
    return Column(field.name, kind, drop=drop, wrap=kind in ("text", "name"))


def _rate(value: float | None) -> str:
    """USD per million tokens: two decimals, up to four when the price needs them."""
    if value is None:
        return "—"
    text = f"{value:,.4f}".rstrip("0")
    return text + "0" * max(0, 2 - len(text.partition(".")[2]))


def _since(value: datetime | None) -> str:
    if value is None:
        return "—"
    return (
        f"{value:%Y-%m-%d}" if (value.hour, value.minute) == (0, 0) else f"{value:%Y-%m-%d %H:%M}"
    )


def render_prices(console: Console, table: pa.Table) -> None:
    """The prices in force, USD per million tokens. Model ids wrap at boundaries; below
    120 columns the one-hour cache write goes first, then the validity start."""
    rates = {
        "input_per_mtok": "input", "output_per_mtok": "output",
        "cache_read_per_mtok": "cache read", "cache_write_per_mtok": "cache write",
        "cache_write_1h_per_mtok": "1h write",
    }  # fmt: skip
    columns = {
        "provider_id": Column("provider", "label"),
        "model": Column("model", "name", wrap=True, floor=24),
        "valid_from": Column("from", "when", drop=1),
        **{k: Column(v, "number", drop=2 if k.endswith("1h_per_mtok") else 0)
           for k, v in rates.items()},
    }  # fmt: skip
    render_rows(
        console,
        table.select(list(columns)),
        title="prices in force, USD per million tokens",
        columns=columns,
        cells={**dict.fromkeys(rates, _rate), "valid_from": _since},
    )
