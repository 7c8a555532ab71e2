"""``agentlake sessions purge``: delete a session for good, after a preview."""

from typing import Annotated

import typer

from .boundary import guard
from .options import CatalogOpt, DebugOpt, JsonOpt, ReadWaitOpt, WorkspaceOpt


def register(app: typer.Typer) -> None:
    """Add ``purge`` to the ``sessions`` group (this module's own, so that other
    lifecycle commands of the group live in their modules)."""
    from .sessions import sessions_app

    register_sessions(sessions_app)


def register_sessions(sessions_app: typer.Typer) -> None:
    """Add ``purge`` to ``sessions_app``."""
    sessions_app.command("purge")(sessions_purge)


def sessions_purge(
    session_id: Annotated[
        str, typer.Argument(help="Session id, or a unique prefix of at least 4 characters.")
    ],
    confirm: Annotated[
        str | None,
        typer.Option(
            "--confirm",
            metavar="OPERATION_ID",
            help="Purge the scope the preview named by this operation id (irreversible).",
        ),
    ] = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Delete a session and its sub-agent sessions for good (preview, then --confirm).

    Without --confirm only previews the counts (events, calls, tags, search postings…)
    and an operation id; with it, deletes exactly that scope (exit 2 and a new preview if
    it changed) and prints the receipt. Later imports keep the session out unless run
    with --allow-purged."""
    from agentlake.manage.authz import authorize
    from agentlake.manage.purge import ScopeChanged, preview, purge

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        auth = authorize(workspace_name(workspace, catalog), "purge")
        path = catalog_path(catalog)
        if confirm is None:
            shown = preview(path, auth, session_id)
            if json:
                print_json(shown.to_dict())
                return
            from .consoles import out
            from .render.purge import render_preview

            render_preview(out, shown)
            return
        try:
            receipt = purge(path, auth, session_id, confirm=confirm, wait=wait)
        except ScopeChanged as changed:
            if json:
                print_json(changed.preview.to_dict())
            else:
                from .consoles import out
                from .render.purge import render_preview

                render_preview(out, changed.preview)
            raise
        if json:
            print_json(receipt.to_dict())
            return
        from .consoles import out
        from .render.purge import render_receipt

        render_receipt(out, receipt)

    guard(debug, action, wait=wait)
