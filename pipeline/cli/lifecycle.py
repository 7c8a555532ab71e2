"""``agentlake sessions hide|restore|tag|untag``: the lifecycle commands of the
``sessions`` group. Each builds one authorization context (actor, workspace, operation)
first and makes one library call; the library applies the workspace to every lookup."""

from typing import Annotated

import typer

from .boundary import guard
from .options import CatalogOpt, DebugOpt, JsonOpt, WorkspaceOpt

SessionArg = Annotated[
    str, typer.Argument(help="Session id, or a unique prefix of at least 4 characters.")
]
TagArg = Annotated[str, typer.Argument(help="1-64 letters, digits and - _ . : /")]
WriteWaitOpt = Annotated[
    bool, typer.Option("--wait", help="If an import is writing the catalog, wait for it.")
]


def register(group: typer.Typer) -> None:
    """Add the lifecycle commands to the ``sessions`` group."""
    group.command("hide")(sessions_hide)
    group.command("restore")(sessions_restore)
    group.command("tag")(sessions_tag)
    group.command("untag")(sessions_untag)


def _lifecycle(
    operation: str, session_id: str, catalog: CatalogOpt, workspace: WorkspaceOpt, json: bool,
    debug: bool, wait: bool,
) -> None:  # fmt: skip
    from agentlake.manage.authz import authorize
    from agentlake.manage.lifecycle import change_lifecycle

    from .output import catalog_path, print_change, workspace_name

    def action() -> None:
        auth = authorize(
            workspace_name(workspace, catalog), "hide" if operation == "hide" else "restore"
        )
        change = change_lifecycle(catalog_path(catalog), auth, session_id, wait=wait)
        print_change(change.to_dict(), change.message, json=json)

    guard(debug, action)


def sessions_hide(
    session_id: SessionArg,
    wait: WriteWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Hide a session and its subagents from every read (nothing is deleted; see restore)."""
    _lifecycle("hide", session_id, catalog, workspace, json, debug, wait)


def sessions_restore(
    session_id: SessionArg,
    wait: WriteWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Bring a hidden session back, with the sessions under it, exactly as it was."""
    _lifecycle("restore", session_id, catalog, workspace, json, debug, wait)


def _tag(
    operation: str, session_id: str, tag: str, catalog: CatalogOpt, workspace: WorkspaceOpt,
    json: bool, debug: bool, wait: bool,
) -> None:  # fmt: skip
    from agentlake.manage.authz import authorize
    from agentlake.manage.tags import tag_session

    from .output import catalog_path, print_change, workspace_name

    def action() -> None:
        auth = authorize(
            workspace_name(workspace, catalog), "tag" if operation == "tag" else "untag"
        )
        change = tag_session(catalog_path(catalog), auth, session_id, tag, wait=wait)
        print_change(change.to_dict(), change.message, json=json)

    guard(debug, action)


def sessions_tag(
    session_id: SessionArg,
    tag: TagArg,
    wait: WriteWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Give a session a tag (filter with --tag on sessions list, search and report)."""
    _tag("tag", session_id, tag, catalog, workspace, json, debug, wait)


def sessions_untag(
    session_id: SessionArg,
    tag: TagArg,
    wait: WriteWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Take a tag off a session."""
    _tag("untag", session_id, tag, catalog, workspace, json, debug, wait)
