"""``agentlake sources``: what discovery sees and what the planner would do (the group's
own command), and the lifecycle of sources: ``relocate`` (a moved project or home keeps
its sources) and ``release`` (another workspace may import them)."""

import os
from pathlib import Path
from typing import Annotated

import typer

from .boundary import guard
from .options import CatalogOpt, DebugOpt, HomeOpt, JsonOpt, ProviderOpt, WorkspaceOpt

sources_app = typer.Typer(
    invoke_without_command=True,
    help="What discovery sees and what the planner would do; relocate or release sources.",
)

DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Check and show what would change; change nothing.")
]


def register(app: typer.Typer) -> None:
    """Add the ``sources`` group to ``app``."""
    app.add_typer(sources_app, name="sources")


@sources_app.callback()
def sources(
    ctx: typer.Context,
    home: HomeOpt = None,
    provider: ProviderOpt = None,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What discovery sees and what the planner would do with each source."""
    if ctx.invoked_subcommand is not None:
        return
    from agentlake.config import default_home
    from agentlake.ingest.run import ImportOptions, plan_import

    from .imports import print_plan, warn_roots
    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        options = ImportOptions(
            catalog=catalog_path(catalog),
            workspace=workspace_name(workspace, catalog),
            home=(home or default_home()).expanduser(),
            env=dict(os.environ),
            providers=tuple(provider or ()),
        )
        plan = plan_import(options)
        warn_roots(plan)
        print_json(plan.to_json()) if json else print_plan(plan)

    guard(debug, action)


@sources_app.command("relocate")
def sources_relocate(
    old: Annotated[Path, typer.Argument(help="Where the sources were: a directory or a file.")],
    new: Annotated[Path, typer.Argument(help="Where they are now.")],
    dry_run: DryRunOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """A project or home moved on disk: its sources keep their ids, checkpoints and
    sessions, and nothing is re-read. Refused (nothing changes) when a file under NEW does
    not hold the bytes imported from OLD."""
    from agentlake.manage.authz import authorize
    from agentlake.manage.relocate import relocate

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        auth = authorize(workspace_name(workspace, catalog), "relocate")
        moved = relocate(catalog_path(catalog), auth, old, new, dry_run=dry_run)
        if json:
            print_json(moved.to_dict())
            return
        from .consoles import out
        from .render.sources import render_relocation

        render_relocation(out, moved)

    guard(debug, action)


@sources_app.command("release")
def sources_release(
    path: Annotated[Path, typer.Argument(help="A source file, or a directory of sources.")],
    dry_run: DryRunOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Release this workspace's sources at or under PATH, so that another workspace may
    import them; this one keeps what it imported."""
    from agentlake.manage.authz import authorize
    from agentlake.manage.relocate import release

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        auth = authorize(workspace_name(workspace, catalog), "release")
        released = release(catalog_path(catalog), auth, path, dry_run=dry_run)
        if json:
            print_json(released.to_dict())
            return
        from .consoles import out
        from .render.sources import render_release

        render_release(out, released)

    guard(debug, action)
