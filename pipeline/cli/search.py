"""``agentlake search``: search the imported events by words, meaning, or both."""

from datetime import datetime
from typing import Annotated, Literal

import typer

from .boundary import guard
from .options import (
    CatalogOpt,
    DebugOpt,
    IncludeHiddenOpt,
    JsonOpt,
    ProjectPathOpt,
    ReadWaitOpt,
    TagOpt,
    WorkspaceOpt,
)


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    # A query is text: one that starts with "-" ("-flaky", "--force") is not an option.
    app.command("search", context_settings={"ignore_unknown_options": True})(search_)


def search_(
    query: Annotated[
        str,
        typer.Argument(help='Words (ANDed), "a phrase", a OR b, -word / NOT word, prefix*.'),
    ],
    limit: Annotated[int, typer.Option("--limit", min=1, max=500)] = 20,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Skip this many hits.")] = 0,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="Continue after the page that printed it.")
    ] = None,
    provider: Annotated[str | None, typer.Option("--provider")] = None,
    project: ProjectPathOpt = None,
    session: Annotated[str | None, typer.Option("--session", help="Session id or prefix.")] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="prompt, response, reasoning, tool_call, ...")
    ] = None,
    model: Annotated[str | None, typer.Option("--model")] = None,
    since: Annotated[
        datetime | None,
        typer.Option("--since", formats=["%Y-%m-%d", "%Y%m%d"], help="First day (UTC)."),
    ] = None,
    until: Annotated[
        datetime | None,
        typer.Option("--until", formats=["%Y-%m-%d", "%Y%m%d"], help="Last day (UTC)."),
    ] = None,
    tag: TagOpt = None,
    include_hidden: IncludeHiddenOpt = False,
    mode: Annotated[
        Literal["auto", "hybrid", "lexical", "semantic"],
        typer.Option(
            "--mode",
            help="hybrid: words and meaning fused; lexical: words (BM25); semantic: meaning. "
            "auto: hybrid once the events are embedded, else lexical.",
        ),
    ] = "auto",
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Search every imported event by its words (BM25), its meaning, or both fused."""
    from agentlake.read.search import SearchFilter, search_page

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        flt = SearchFilter(
            provider=provider, project=project, session=session, kind=kind, model=model,
            since=since.date() if since else None, until=until.date() if until else None,
            tag=tag, include_hidden=include_hidden,
        )  # fmt: skip
        page = search_page(
            catalog_path(catalog), workspace_name(workspace, catalog), query, limit=limit, offset=offset,
            flt=flt, cursor=cursor, mode=mode,
        )  # fmt: skip
        if json:
            print_json(page.to_json(query))
            return
        from .consoles import out
        from .render.search import render_hits

        filters = {"provider": provider, "project": project, "session": session, "kind": kind,
                   "model": model, "since": flt.since, "until": flt.until, "tag": tag,
                   "hidden": "included" if include_hidden else None}  # fmt: skip
        render_hits(
            out, page, query=query, workspace=workspace_name(workspace, catalog), filters=filters,
            continued=bool(cursor or offset),
        )  # fmt: skip

    guard(debug, action, wait=wait)
