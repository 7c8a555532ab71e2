"""``agentlake doctor``: why a session is missing, and the catalog's health."""

import os
from typing import Annotated

import typer

from .boundary import guard
from .options import CatalogOpt, DebugOpt, HomeOpt, JsonOpt, ProviderOpt, ReadWaitOpt, WorkspaceOpt


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    app.command()(doctor)


def doctor(
    session_id: Annotated[
        str | None,
        typer.Argument(
            help="Explain why this session (full id or unique prefix) is or is not in the catalog."
        ),
    ] = None,
    home: HomeOpt = None,
    provider: ProviderOpt = None,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also check every event against the search index and every row for a "
            "missing session or source (scans the whole workspace).",
        ),
    ] = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Why is a session missing? Roots, environment, continuity, refusals, rejects, imports
    and catalog integrity. Exit 0 healthy, 1 needs attention, 4 no catalog; with SESSION_ID:
    0 in this workspace, 1 in it with a refused source, 2 ambiguous prefix, 4 not in it."""
    from agentlake.config import default_home
    from agentlake.read.doctor import diagnose, explain_session

    from .output import catalog_path, print_json, workspace_name

    def action() -> int:
        root = (home or default_home()).expanduser()
        names = tuple(provider or ())
        if session_id is not None:
            diagnosis = explain_session(
                catalog_path(catalog), workspace_name(workspace, catalog), session_id,
                home=root, env=dict(os.environ), providers=names,
            )  # fmt: skip
            if json:
                print_json(diagnosis.to_json())
            else:
                from .consoles import out
                from .render.doctor import render_session

                render_session(out, diagnosis)
            return diagnosis.exit_code
        report = diagnose(
            catalog_path(catalog), workspace_name(workspace, catalog), home=root, env=dict(os.environ),
            providers=names, deep=deep,
        )  # fmt: skip
        if json:
            print_json(report.to_json())
        else:
            from .consoles import out
            from .render.doctor import render_report

            render_report(out, report)
        return report.exit_code

    raise typer.Exit(guard(debug, action, wait=wait))
