"""``agentlake export parquet DIR`` and ``export jsonl FILE``: the catalog's rows in
open formats (the export modules load only once a command runs)."""

from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

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
    _export("parquet", target, tz, since, until, provider, project, include_hidden, prices,
            force, wait, catalog, workspace, json, debug)  # fmt: skip


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
    _export("jsonl", target, tz, since, until, provider, project, include_hidden, prices,
            force, wait, catalog, workspace, json, debug)  # fmt: skip


def _export(
    fmt: Literal["parquet", "jsonl"], target: Path, tz: str, since: datetime | None,
    until: datetime | None, provider: str | None, project: str | None, include_hidden: bool,
    prices: Path | None, force: bool, wait: bool, catalog: str | None, workspace: str | None,
    json: bool, debug: bool,
) -> None:  # fmt: skip
    """One export: the library call of ``fmt``, then its JSON document or its line."""
    from agentlake.config import resolve_price_overrides

    from .output import catalog_path, print_json, workspace_name
    from .reports import report_filter

    def action() -> None:
        from agentlake.read.export_jsonl import JsonlExport, export_jsonl
        from agentlake.read.export_parquet import ParquetExport, export_parquet

        flt = report_filter(tz, since, until, provider, project=project,
                            include_hidden=include_hidden)  # fmt: skip
        export = export_parquet if fmt == "parquet" else export_jsonl
        result: ParquetExport | JsonlExport = export(
            catalog_path(catalog), workspace_name(workspace, catalog), target, flt,
            prices=resolve_price_overrides(prices), replace=force,
        )  # fmt: skip
        if json:
            print_json(result.to_json())
            return
        from .consoles import out
        from .render.export import render_export

        render_export(out, result)

    guard(debug, action, wait=wait)
