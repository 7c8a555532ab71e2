"""Rendering of ``agentlake sessions list|show`` for the CLI: rich tables and timelines on
the console the CLI hands in, and the streamed JSON document of ``sessions show``.

The library (:mod:`agentlake.read.sessions`) returns values; this module only lays them out,
under the column policies of :mod:`agentlake.cli.render.tables`: ids keep at least 8 characters,
project names are elided only at a boundary, a model always comes with its provider,
and the columns that matter least (event and prompt counts) go first at 80 columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from rich.console import Console

from agentlake.read.session_detail import BucketCut, SessionDetail, TimelineCut
from agentlake.read.sessions import SessionPage

from .reports import limits_grid
from .tables import Column, Grid, count, is_wide, say_nothing, when

_PREVIEW = 48
_BUCKET_NOUNS = {"prompts": "prompts", "responses": "responses", "tools": "tool events"}


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "—"


def _one_line(text: str | None, width: int = _PREVIEW) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def render_page(
    console: Console,
    page: SessionPage,
    *,
    workspace: str,
    filters: Mapping[str, object] | None = None,
    continued: bool = False,
) -> None:
    """A listing page as a table (one line per session), then how to fetch the next
    page; an empty page is one line naming ``workspace`` and the ``filters`` given. A
    session without calls shows its thread index's token figure, marked with ``*`` and
    explained under the table."""
    if page.sessions.num_rows == 0:
        say_nothing(console, "sessions", workspace=workspace, filters=filters, continued=continued)
        return
    wide = is_wide(console)
    grid = Grid(
        Column("id", "id"),
        Column("provider", "label"),
        Column("updated", "when"),
        Column("project", "name"),
        Column("title / first prompt", "text"),
        Column("prompts", "number", drop=1),
        Column("events", "number", drop=2),
        Column("tokens", "number"),
        title=f"sessions (as of import #{page.snapshot})",
    )
    for row in page.sessions.to_pylist():
        updated = row["updated_at"]
        grid.add_row(
            row["session_id"],
            row["provider"],
            when(updated) if wide or updated is None else f"{updated:%Y-%m-%d}",
            PurePosixPath(row["project_path"]).name if row["project_path"] else "—",
            ("(hidden) " if row["lifecycle"] not in (None, "active") else "")
            + " ".join((row["title"] or row["first_prompt"] or row["preview"] or "—").split()),
            count(row["prompts"]),
            count(row["events"]),
            _tokens_cell(row["total_tokens"], row["index_tokens"], wide=wide),
        )
    grid.show(console)
    if any(not r["total_tokens"] and r["index_tokens"] for r in page.sessions.to_pylist()):
        console.print(
            "* from the provider's thread index: the session has no calls (its transcript "
            "is gone); in no report total",
            highlight=False,
        )
    if page.next_cursor:
        console.print(
            f"more: repeat with --cursor {page.next_cursor}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


def _tokens_cell(total: int | None, index: int | None, *, wide: bool) -> str:
    """A session's tokens: the sum of its calls, else the thread index's figure, marked."""
    if not total and index:
        return count(index, compact=not wide) + "*"
    return count(total or 0, compact=not wide)


def cut_lines(cut: TimelineCut | None) -> list[str]:
    """One line per bucket something was left out of (empty when nothing was)."""
    if cut is None or not cut.anything:
        return []
    lines = []
    for name, bucket in (
        ("prompts", cut.prompts),
        ("responses", cut.responses),
        ("tools", cut.tools),
    ):
        if bucket.omitted or bucket.truncated:
            lines.append(_cut_line(_BUCKET_NOUNS[name], bucket))
    return lines


def _cut_line(noun: str, b: BucketCut) -> str:
    parts = [f"{b.kept:,} of {b.items:,} {noun} shown"]
    if b.omitted:
        parts.append(f"{b.omitted:,} older left out")
    if b.truncated:
        parts.append(f"{b.truncated:,} truncated")
    return f"cut: {', '.join(parts)}; {b.omitted_bytes:,} of {b.bytes:,} bytes not shown"


def render_detail(console: Console, detail: SessionDetail) -> None:
    """Metadata, its tree and tokens (its own and its subtree's; the thread index's
    figure, marked), tokens by model, its latest rate limits, then the timeline (with
    what was cut, above and below)."""
    s = detail.session
    console.print(f"session {s.session_id} ({s.provider})", style="bold", highlight=False)
    facts = [
        ("project", s.project_path),
        ("title", s.title),
        ("first prompt", _one_line(s.first_prompt, 100) or None),
        ("git branch", s.git_branch),
        ("cli version", s.cli_version),
        ("model", s.model),
        ("started", _when(s.started_at)),
        ("updated", _when(s.updated_at)),
        ("counts", f"{s.prompts:,} prompts, {s.events:,} events, {s.tool_calls:,} tool calls"),
        ("lifecycle", "hidden (tombstoned)" if s.lifecycle != "active" else None),
        ("tags", ", ".join(s.tags) or None),
    ]
    if detail.parent:
        known = "" if detail.parent.known else " (not in the catalog)"
        facts.append(("parent", f"{detail.parent.session_id}{known} {detail.parent.title or ''}"))
    for child in detail.children:
        facts.append(("child", f"{child.session_id} {_one_line(child.title)}"))
    facts += _tree_facts(detail)
    info = Grid(Column("", "label"), Column("", "name", wrap=True), show_header=False)
    for name, value in facts:
        if value:
            info.add_row(name, value.rstrip())
    info.show(console)
    if detail.tokens.num_rows:
        _tokens(console, detail)
    if detail.rate_limits is not None and detail.rate_limits.num_rows:
        title = "rate limits (its latest snapshot, UTC)"
        limits_grid(detail.rate_limits, title, wide=is_wide(console)).show(console)
    notes = cut_lines(detail.cut)
    for line in notes:
        console.print(line, style="yellow", highlight=False, markup=False)
    for batch in detail.batches():
        for event in batch.to_pylist():
            _event(console, event)
    for line in notes:
        console.print(line, style="yellow", highlight=False, markup=False)
    if notes:
        console.print("pass --full to see every event", highlight=False)


def _tree_facts(detail: SessionDetail) -> list[tuple[str, str | None]]:
    """The session's root (when it has one above it), its own tokens, its subtree's
    (when it has descendants) and the thread index's figure."""
    s, tree = detail.session, detail.tree
    facts: list[tuple[str, str | None]] = []
    if tree is not None:
        if tree.depth:
            facts.append(("root", f"{tree.root_session_id} (depth {tree.depth})"))
        own, sub = tree.own, tree.subtree
        if own.calls or not s.index_tokens:
            facts.append(("tokens", f"{own.total_tokens:,} in {own.calls:,} calls"))
        if tree.subtree_sessions > 1:
            facts.append((
                "with subtree",
                f"{sub.total_tokens:,} in {sub.calls:,} calls of {tree.subtree_sessions:,} "
                "sessions (it and every descendant)",
            ))  # fmt: skip
    if s.index_tokens and not s.total_tokens:
        facts.append((
            "tokens",
            f"{s.index_tokens:,} from the thread index (no calls: the transcript is gone; "
            "no day, model or cost, in no report total)",
        ))  # fmt: skip
    elif s.index_tokens and s.index_tokens != s.total_tokens:
        facts.append(("thread index", f"{s.index_tokens:,} tokens (differs; the calls count)"))
    return facts


def _tokens(console: Console, detail: SessionDetail) -> None:
    """Tokens by model and provider: every measure at full width, below it cache writes
    and reads in one column; the reasoning and call counts go first when a long model
    name needs their room."""
    wide = is_wide(console)
    measures = (
        ("calls", "input", "output", "cache write", "cache read", "reasoning", "total")
        if wide
        else ("calls", "input", "output", "cache", "total")
    )
    grid = Grid(
        Column("model", "name"),
        Column("provider", "label"),
        *(Column(m, "number", drop={"calls": 1, "reasoning": 2}.get(m, 0)) for m in measures),
        title="tokens by model",
    )
    for row in detail.tokens.to_pylist():
        cache = row["cache_write_tokens"] + row["cache_read_tokens"]
        values = {
            "calls": row["calls"], "input": row["input_tokens"], "output": row["output_tokens"],
            "cache write": row["cache_write_tokens"], "cache read": row["cache_read_tokens"],
            "cache": cache, "reasoning": row["reasoning_tokens"], "total": row["total_tokens"],
        }  # fmt: skip
        provider = row.get("provider") or detail.session.provider
        grid.add_row(row["model"], provider, *(count(values[m]) for m in measures))
    grid.show(console)


def _event(console: Console, e: dict[str, Any]) -> None:
    head = f"{_when(e['ts'])}  {e['kind']}"
    if e["tool_name"]:
        head += f" {e['tool_name']}"
    if e["is_error"]:
        head += " (error)"
    body = "\n".join(part for part in (e["text"], e["tool_input"]) if part)
    if e["truncated"]:
        body += f" … [{e['bytes'] - e['shown_bytes']:,} more bytes]"
    indented = body.replace("\n", "\n" + " " * 4)
    console.print(f"{head}\n    {indented}" if body else head, highlight=False, markup=False)
