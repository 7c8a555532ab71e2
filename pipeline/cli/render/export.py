"""Rendering of ``agentlake export``: one line saying what was written where."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from agentlake.read.export_jsonl import JsonlExport
    from agentlake.read.export_parquet import ParquetExport


def _size(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):,.1f} MiB" if nbytes >= 1 << 20 else f"{nbytes:,} bytes"


def render_parquet(console: Console, result: ParquetExport) -> None:
    """``exported N events, N calls, N sessions, N rejects to DIR (size, time)``."""
    rows = {t.table: t.rows for t in result.tables}
    console.print(
        f"exported {rows['events']:,} events, {rows['usage']:,} calls, "
        f"{rows['sessions']:,} sessions, {rows['rejects']:,} rejects to {result.path} "
        f"({_size(result.bytes)}{', replaced' if result.replaced else ''}, "
        f"{result.seconds:.1f} s)",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def render_jsonl(console: Console, result: JsonlExport) -> None:
    """``exported N sessions, N events, N calls to FILE (size, time)``."""
    console.print(
        f"exported {result.sessions:,} sessions, {result.events:,} events, "
        f"{result.calls:,} calls to {result.path} ({result.lines:,} lines, "
        f"{_size(result.bytes)}{', replaced' if result.replaced else ''}, "
        f"{result.seconds:.1f} s)",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def render_export(console: Console, result: ParquetExport | JsonlExport) -> None:
    """The line of either export."""
    from agentlake.read.export_parquet import ParquetExport

    if isinstance(result, ParquetExport):
        render_parquet(console, result)
    else:
        render_jsonl(console, result)
