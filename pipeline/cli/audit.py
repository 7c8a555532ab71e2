"""``agentlake audit``: the workspace's lifecycle changes, newest first."""

from typing import Annotated

import typer

from .boundary import guard
from .options import CatalogOpt, DebugOpt, JsonOpt, ReadWaitOpt, WorkspaceOpt


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    app.command("audit")(audit)


def audit(
    operation: Annotated[
        str | None, typer.Option("--operation", help="Only this operation (hide, purge, …).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="Rows per page.")] = 50,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="Next page of a listing (same filters).")
    ] = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Who changed what in the workspace's catalog (hide, restore, tag, purge, relocate):
    one content-free row per change, newest first; page with --cursor."""
    from agentlake.manage.audit import audit_page
    from agentlake.manage.authz import authorize

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        auth = authorize(workspace_name(workspace, catalog), "audit")
        page = audit_page(
            catalog_path(catalog), auth, operation=operation, limit=limit, cursor=cursor
        )
        if json:
            print_json(page.to_dict())
            return
        from .consoles import out
        from .render.audit import render_audit

        render_audit(out, page)

    guard(debug, action, wait=wait)
