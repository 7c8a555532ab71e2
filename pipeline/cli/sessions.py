"""``agentlake sessions``: list sessions and show one."""

import sys
from datetime import datetime
from typing import Annotated

import typer

from . import lifecycle
from .boundary import guard
from .options import (
    CatalogOpt,
    DebugOpt,
    IncludeHiddenOpt,
    JsonOpt,
    ProjectPathOpt,
    ProviderOpt,
    ReadWaitOpt,
    TagOpt,
    WorkspaceOpt,
)

sessions_app = typer.Typer(
    no_args_is_help=True, help="List sessions and show one; hide, restore and tag them."
)


def register(app: typer.Typer) -> None:
    """Add the ``sessions`` group to ``app``."""
    app.add_typer(sessions_app, name="sessions")


@sessions_app.command("list")
def sessions_list(
    provider: ProviderOpt = None,
    project: ProjectPathOpt = None,
    since: Annotated[
        datetime | None,
        typer.Option(
            "--since",
            formats=["%Y-%m-%d", "%Y%m%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"],
            help="Updated at or after this day or time (UTC).",
        ),
    ] = None,
    max_age: Annotated[
        str | None, typer.Option("--max-age", help="Updated within this long: 30m, 12h, 7d, 2w.")
    ] = None,
    text: Annotated[
        str | None,
        typer.Option("--text", help="Case-insensitive substring of the title or first prompt."),
    ] = None,
    tag: TagOpt = None,
    include_hidden: IncludeHiddenOpt = False,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="Rows per page.")] = 25,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="Next page of a listing (same filters).")
    ] = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Sessions, newest first; page with --cursor (pages stay stable while imports run)."""
    from agentlake.read.sessions import list_sessions

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        page = list_sessions(
            catalog_path(catalog), workspace_name(workspace, catalog), provider=provider, project=project,
            since=since, max_age=max_age, text=text, tag=tag, include_hidden=include_hidden,
            limit=limit, cursor=cursor,
        )  # fmt: skip
        if json:
            print_json(page.to_dict())
            return
        from .consoles import out
        from .render.sessions import render_page

        filters = {"provider": provider, "project": project, "since": since,
                   "max age": max_age, "text": text, "tag": tag,
                   "hidden": "included" if include_hidden else None}  # fmt: skip
        render_page(
            out,
            page,
            workspace=workspace_name(workspace, catalog),
            filters=filters,
            continued=bool(cursor),
        )

    guard(debug, action, wait=wait)


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[
        str, typer.Argument(help="Session id, or a unique prefix of at least 4 characters.")
    ],
    full: Annotated[
        bool, typer.Option("--full", help="Every event, without bounds (streamed).")
    ] = False,
    include_hidden: IncludeHiddenOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """One session: metadata, tokens by model, and its timeline (the newest 1,000 prompts,
    2,000 responses and 2,000 tool events within 2 MiB / 1 MiB of text unless --full).
    A hidden session is not found unless --include-hidden (then it is shown, marked)."""
    from agentlake.read.sessions import DEFAULT_BOUNDS, show_session

    from .output import catalog_path, workspace_name

    def action() -> None:
        detail = show_session(
            catalog_path(catalog), workspace_name(workspace, catalog), session_id,
            bounds=None if full else DEFAULT_BOUNDS, include_hidden=include_hidden,
        )  # fmt: skip
        if json:
            detail.write_json(sys.stdout.write)
            return
        from .consoles import out
        from .render.sessions import render_detail

        render_detail(out, detail)

    guard(debug, action, wait=wait)


lifecycle.register(sessions_app)
