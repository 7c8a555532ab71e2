"""The human view of ``agentlake sources relocate`` and ``agentlake sources release``."""

from __future__ import annotations

from rich.console import Console

from agentlake.manage.relocate import Release, Relocation

from .tables import Column, Grid, count


def render_relocation(console: Console, moved: Relocation) -> None:
    """Each source's old and new path, then what was done."""
    grid = Grid(
        Column("provider", "label"),
        Column("from", "text"),
        Column("to", "text"),
        title=f"sources of workspace '{moved.workspace}'",
    )
    for m in moved.moves:
        grid.add_row(m.provider, m.old_path, m.new_path)
    grid.show(console)
    n = count(len(moved.moves))
    noun = "source" if len(moved.moves) == 1 else "sources"
    line = (
        f"dry run: {n} {noun} would move from {moved.old} to {moved.new}; nothing changed"
        if moved.dry_run
        else f"{n} {noun} moved from {moved.old} to {moved.new}; nothing will be re-read"
    )
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def render_release(console: Console, released: Release) -> None:
    """The sources released, then what was done."""
    if released.released:
        grid = Grid(
            Column("provider", "label"),
            Column("path", "text"),
            title=f"sources released by workspace '{released.workspace}'",
        )
        for s in released.released:
            grid.add_row(s.provider, s.path)
        grid.show(console)
    n = len(released.released)
    noun = "source" if n == 1 else "sources"
    before = (
        f" ({count(released.already_released)} released before)"
        if released.already_released
        else ""
    )
    verb = "would be released" if released.dry_run else "released"
    line = f"{count(n)} {noun} at {released.path} {verb}{before}"
    if released.dry_run:
        line += "; nothing changed"
    elif n:
        line += "; another workspace may import them now, this one keeps its rows"
    console.print(line, highlight=False, markup=False, soft_wrap=True)
