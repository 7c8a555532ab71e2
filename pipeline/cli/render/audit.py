"""The human view of ``agentlake audit``."""

from __future__ import annotations

from rich.console import Console

from agentlake.manage.audit import AuditPage

from .tables import Column, Grid, count, say_nothing


def render_audit(console: Console, page: AuditPage) -> None:
    """One line per change, newest first, then how to fetch the next page."""
    if not page.rows:
        say_nothing(console, "audit rows", workspace=page.workspace)
        return
    grid = Grid(
        Column("#", "number"),
        Column("at", "when"),
        Column("operation", "label"),
        Column("actor", "label"),
        Column("session", "id"),
        Column("counts", "text"),
        title=f"audit of workspace '{page.workspace}'",
    )
    for row in page.rows:
        counts = ", ".join(f"{k} {count(v)}" for k, v in (row.counts or {}).items())
        grid.add_row(str(row.audit_id), row.at, row.operation, row.actor,
                     row.session_id or "—", counts or "—")  # fmt: skip
    grid.show(console)
    if page.next_cursor:
        console.print(f"more: repeat with --cursor {page.next_cursor}", highlight=False,
                      markup=False, soft_wrap=True)  # fmt: skip
