"""``agentlake export parquet DIR`` and ``export jsonl FILE``: the catalog's rows in
open formats (the export modules load only once a command runs)."""

from pathlib import Path
from typing import Annotated

import typer

from .boundary import guard
from .options import (
    CatalogOpt,
    DebugOpt,
    IncludeHiddenOpt,
    JsonOpt,
    PricesOpt,
    ProjectOpt,
    ReadWaitOpt,
    ReportProviderOpt,
    SinceOpt,
    TzOpt,
    UntilOpt,
    WorkspaceOpt,
)

export_app = typer.Typer(
    no_args_is_help=True, help="Export the catalog as Parquet or as interchange JSONL."
)

ForceOpt = Annotated[
    bool, typer.Option("--force", help="Replace DIR/FILE if it exists (atomically).")
]


def register(app: typer.Typer) -> None:
    """Add the ``export`` group to ``app``."""
    app.add_typer(export_app, name="export")


@export_app.command("parquet")
def export_parquet_command(
    target: Annotated[Path, typer.Argument(metavar="DIR", help="Folder to create.")],
    tz: TzOpt = "UTC",
    since: SinceOpt = None,
    until: UntilOpt = None,
    provider: ReportProviderOpt = None,
    project: ProjectOpt = None,
    include_hidden: IncludeHiddenOpt = False,
    prices: PricesOpt = None,
    force: ForceOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Write events, usage (with cost), sessions and rejects as Parquet under DIR,
    partitioned by workspace/provider/month; DIR appears only once complete."""
    from agentlake.config import resolve_price_overrides
    from agentlake.read.export_parquet import export_parquet

    from .output import catalog_path, print_json, workspace_name
    from .reports import report_filter

    def action() -> None:
        result = export_parquet(
            catalog_path(catalog),
            workspace_name(workspace, catalog),
            target,
            report_filter(tz, since, until, provider, project=project, include_hidden=include_hidden),
            prices=resolve_price_overrides(prices),
            replace=force,
        )
        if json:
            print_json(result.to_json())
            return
        from .consoles import out
        from .render.export import render_parquet

        render_parquet(out, result)

    guard(debug, action, wait=wait)


@export_app.command("jsonl")
def export_jsonl_command(
    target: Annotated[Path, typer.Argument(metavar="FILE", help="File to create.")],
    tz: TzOpt = "UTC",
    since: SinceOpt = None,
    until: UntilOpt = None,
    provider: ReportProviderOpt = None,
    project: ProjectOpt = None,
    include_hidden: IncludeHiddenOpt = False,
    prices: PricesOpt = None,
    force: ForceOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Write sessions, events and calls as one session-interchange JSONL file, which
    'agentlake import --file FILE --format generic' reads back into the same rows."""
    from agentlake.config import resolve_price_overrides
    from agentlake.read.export_jsonl import export_jsonl

    from .output import catalog_path, print_json, workspace_name
    from .reports import report_filter

    def action() -> None:
        result = export_jsonl(
            catalog_path(catalog),
            workspace_name(workspace, catalog),
            target,
            report_filter(tz, since, until, provider, project=project, include_hidden=include_hidden),
            prices=resolve_price_overrides(prices),
            replace=force,
        )
        if json:
            print_json(result.to_json())
            return
        from .consoles import out
        from .render.export import render_jsonl

        render_jsonl(out, result)

    guard(debug, action, wait=wait)
