"""The human view of ``agentlake sessions purge``."""

from __future__ import annotations

from rich.console import Console

from agentlake.manage.purge import PurgePreview, PurgeReceipt

from .tables import Column, Grid, count


def _counts(console: Console, counts: dict[str, int], title: str) -> None:
    grid = Grid(Column("table", "label"), Column("rows", "number"), title=title)
    for table, n in counts.items():
        grid.add_row(table, count(n))
    grid.show(console)


def render_preview(console: Console, preview: PurgePreview) -> None:
    """What the purge would delete, and the command that does it."""
    children = f" and its {len(preview.children)} sub-agent sessions" if preview.children else ""
    console.print(
        f"purging {preview.provider} session {preview.session_id}{children} would delete "
        "(irreversible; later imports keep it out):",
        highlight=False, markup=False, soft_wrap=True,
    )  # fmt: skip
    for child in preview.children:
        console.print(f"  sub-agent session {child}", highlight=False, markup=False)
    _counts(console, dict(preview.counts), f"purge preview, workspace '{preview.workspace}'")
    console.print(
        f"operation {preview.operation_id}; to purge: agentlake sessions purge "
        f"{preview.session_id} --confirm {preview.operation_id}",
        highlight=False, markup=False, soft_wrap=True,
    )  # fmt: skip


def render_receipt(console: Console, receipt: PurgeReceipt) -> None:
    """The purge's receipt."""
    what = "was purged" if receipt.repeated else "purged"
    console.print(
        f"{receipt.provider} session {receipt.session_id} {what} on "
        f"{receipt.purged_at:%Y-%m-%d %H:%M:%S} UTC by {receipt.actor} "
        f"(operation {receipt.operation_id}, {len(receipt.session_ids)} sessions)",
        highlight=False, markup=False, soft_wrap=True,
    )  # fmt: skip
    _counts(console, dict(receipt.counts), "rows deleted")
