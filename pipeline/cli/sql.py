"""``agentlake sql``: one read-only query over the workspace's views."""

from typing import Annotated

import typer

from .boundary import guard
from .options import (
    CatalogOpt,
    CsvOpt,
    DebugOpt,
    IncludeHiddenOpt,
    JsonOpt,
    PricesOpt,
    ReadWaitOpt,
    WorkspaceOpt,
)


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    app.command("sql")(sql_)


def sql_(
    statement: Annotated[
        str, typer.Argument(help="One query; its tables are the workspace's views.")
    ],
    prices: PricesOpt = None,
    all_workspaces: Annotated[
        bool,
        typer.Option(
            "--all-workspaces", help="Read every workspace's rows (each has a workspace column)."
        ),
    ] = False,
    include_hidden: IncludeHiddenOpt = False,
    csv: CsvOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Run one read-only query over the workspace's views (sources, sessions, events,
    usage, imports, rejects, usage_costed, usage_daily) and the price tables; no file
    is read or written. Hidden sessions' rows are left out unless --include-hidden."""
    from agentlake.config import resolve_price_overrides
    from agentlake.errors import ConfigurationError
    from agentlake.read.queries import rows_json, scoped_sql

    from .output import catalog_path, print_csv, print_json, print_table, workspace_name

    def action() -> None:
        if all_workspaces and workspace is not None:
            raise ConfigurationError("pass either --workspace or --all-workspaces, not both")
        table = scoped_sql(
            catalog_path(catalog),
            workspace_name(workspace, catalog),
            statement,
            prices=resolve_price_overrides(prices),
            all_workspaces=all_workspaces,
            include_hidden=include_hidden,
        )
        if json:
            print_json(rows_json(table))
        elif csv:
            print_csv(table)
        else:
            print_table(table)

    guard(debug, action, wait=wait)
