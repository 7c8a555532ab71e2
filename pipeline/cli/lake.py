"""``agentlake lake``: operations of a DuckLake catalog (compaction, copying a DuckDB
catalog into one)."""

from pathlib import Path
from typing import Annotated

import typer

from .boundary import guard
from .options import CatalogOpt, DataPathOpt, DebugOpt, JsonOpt

lake_app = typer.Typer(no_args_is_help=True, help="Operate a DuckLake catalog.")

WaitOpt = Annotated[
    bool, typer.Option("--wait", help="Wait for the lake's writers instead of failing.")
]


def register(app: typer.Typer) -> None:
    """Add the ``lake`` group to ``app``."""
    app.add_typer(lake_app, name="lake")


@lake_app.command("compact")
def lake_compact(
    keep: Annotated[
        str,
        typer.Option(
            "--keep", help="Keep the snapshots of this long (e.g. 7d, 12h; 0s: the last only)."
        ),
    ] = "7d",
    wait: WaitOpt = False,
    catalog: CatalogOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Merge the lake's small Parquet files, expire snapshots older than --keep and
    delete the files only they needed (readers and imports go on meanwhile)."""
    from datetime import timedelta

    from agentlake.config import parse_duration
    from agentlake.load.lake_ops import compact

    from .output import lake_catalog, print_json

    def action() -> None:
        result = compact(
            lake_catalog(catalog),
            keep=timedelta(seconds=parse_duration(keep, zero=True)),
            wait=wait,
        )
        if json:
            print_json(result.to_json())
            return
        from .consoles import out

        before, after = result.before, result.after
        out.print(
            f"{result.lake}: {before.data_files:,} data files → {after.data_files:,}, "
            f"{before.snapshots:,} snapshots → {after.snapshots:,}, "
            f"{result.deleted_files:,} files deleted ({result.seconds:.1f} s)",
            highlight=False,
        )

    guard(debug, action)


@lake_app.command("migrate")
def lake_migrate(
    source: Annotated[Path, typer.Argument(help="The DuckDB catalog file to copy.")],
    wait: WaitOpt = False,
    catalog: CatalogOpt = None,
    data_path: DataPathOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Copy a DuckDB catalog into the lake --catalog names, in one transaction,
    verified by row counts and token totals per workspace."""
    from agentlake.load.lake_ops import migrate_file

    from .output import lake_catalog, print_json

    def action() -> None:
        result = migrate_file(source.expanduser(), lake_catalog(catalog, data_path), wait=wait)
        if json:
            print_json(result.to_json())
            return
        from .consoles import out

        events = result.rows.get("events", 0)
        calls = sum(t["calls"] for t in result.totals.values())
        out.print(
            f"copied {result.source} into {result.lake}: workspaces "
            f"{', '.join(result.workspaces) or '(none)'}, {events:,} events, {calls:,} model "
            f"calls; verified: every table's rows and the token totals read back equal "
            f"({result.seconds:.1f} s)",
            highlight=False,
        )

    guard(debug, action)
