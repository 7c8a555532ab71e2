"""Rendering of ``agentlake search`` results for the CLI: one row per hit, its snippet
with the query's words highlighted, then how to fetch the next page.

Column policy (:mod:`agentlake.cli.render.tables`): the snippet keeps at least 40 characters; the
score goes first when the width runs out, then the provider (needed only when two
providers share a session id), then the time (a date below 120 columns). Session ids
keep at least 8 characters and are shown whole when the width allows.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.text import Text

from agentlake.read.search import SearchHit, SearchPage

from .tables import Column, Grid, is_wide, say_nothing, when


def render_hits(
    console: Console,
    page: SearchPage,
    *,
    query: str,
    workspace: str,
    filters: Mapping[str, object] | None = None,
    continued: bool = False,
) -> None:
    """The page's hits as a table, or one line when there are none (naming the query,
    ``workspace`` and the ``filters`` given); then the cursor of the next page, and one
    line when the index lags behind the events."""
    if not page.hits:
        say_nothing(
            console,
            f"hits for {query!r}",
            workspace=workspace,
            filters=filters,
            continued=continued,
        )
        _lag_line(console, page)
        return
    grid = Grid(
        Column("score", "number", drop=3),
        Column("session", "id"),
        Column("provider", "label", drop=2),
        Column("kind", "label"),
        Column("when", "when", drop=1),
        Column("snippet", "text", wrap=True, floor=40),
        title=f"search: {query}" if page.mode == "lexical" else f"search ({page.mode}): {query}",
    )
    wide = is_wide(console)
    # Fused scores are sums of 1 / (60 + rank): they differ in the third decimal.
    digits = 2 if page.mode == "lexical" else 4
    for h in page.hits:
        at = when(h.ts) if wide or h.ts is None else f"{h.ts:%Y-%m-%d}"
        grid.add_row(f"{h.score:.{digits}f}", h.session_id, h.provider, h.kind, at, highlighted(h))
    grid.show(console)
    if page.mode == "hybrid" and all(h.lexical_rank is None for h in page.hits):
        console.print(
            "no event holds these words: these are the nearest by meaning "
            "(--mode lexical finds words only)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if page.next_cursor:
        console.print(
            f"more: --cursor {page.next_cursor}", highlight=False, markup=False, soft_wrap=True
        )
    _lag_line(console, page)


def lag_line(unindexed: int) -> str:
    """What a search says when ``unindexed`` events are not searchable yet."""
    events = "1 event is" if unindexed == 1 else f"{unindexed:,} events are"
    return f"{events} not searchable yet (the search index lags); run 'agentlake index'"


def _lag_line(console: Console, page: SearchPage) -> None:
    if page.unindexed:
        console.print(lag_line(page.unindexed), highlight=False, markup=False, soft_wrap=True)


def highlighted(hit: SearchHit) -> Text:
    """The hit's snippet with the query's words in bold yellow."""
    text = Text(hit.snippet)
    for start, end in hit.highlights:
        text.stylize("bold yellow", start, end)
    return text
