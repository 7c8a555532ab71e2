"""The command-line options more than one command takes, declared once as ``Annotated``
aliases so that every command spells, documents and parses them alike."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

CatalogOpt = Annotated[
    str | None,
    typer.Option(
        "--catalog",
        help="Catalog: a DuckDB file, or a DuckLake URL (ducklake:postgres:CONNINFO, "
        "ducklake:sqlite:FILE) \\[env AGENTLAKE_CATALOG].",
    ),
]
DataPathOpt = Annotated[
    str | None,
    typer.Option(
        "--data-path",
        help="Folder of a new DuckLake's Parquet files \\[env AGENTLAKE_DATA_PATH].",
    ),
]
WorkspaceOpt = Annotated[
    str | None,
    typer.Option(
        "--workspace",
        help="Workspace \\[env AGENTLAKE_WORKSPACE; default 'default', on a lake the host name].",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a stable JSON document.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]
ReadWaitOpt = Annotated[
    bool,
    typer.Option("--wait", help="If an import is writing the catalog, wait for it to finish."),
]
HomeOpt = Annotated[
    Path | None, typer.Option("--home", help="Use DIR instead of $HOME for every provider root.")
]
ProviderOpt = Annotated[
    list[str] | None, typer.Option("--provider", help="Only this provider (repeatable).")
]
ProjectPathOpt = Annotated[
    str | None, typer.Option("--project", help="Substring of the project path.")
]
CsvOpt = Annotated[bool, typer.Option("--csv", help="Print CSV.")]
PricesOpt = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="TOML file of price overrides (replaces the config file's) \\[see README].",
    ),
]

# Report filters: days are cut in --tz.
TzOpt = Annotated[str, typer.Option("--tz", help="IANA time zone for bucketing (default UTC).")]
SinceOpt = Annotated[
    datetime | None,
    typer.Option("--since", formats=["%Y-%m-%d", "%Y%m%d"], help="First day (in --tz)."),
]
UntilOpt = Annotated[
    datetime | None,
    typer.Option("--until", formats=["%Y-%m-%d", "%Y%m%d"], help="Last day (in --tz)."),
]
ReportProviderOpt = Annotated[str | None, typer.Option("--provider", help="Only this provider.")]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="Only models whose name contains this text.")
]
ProjectOpt = Annotated[
    str | None, typer.Option("--project", help="Only projects whose path contains this text.")
]
BreakdownOpt = Annotated[
    bool, typer.Option("--breakdown", help="Per-model rows inside each period, session or project.")
]

# Lifecycle filters of the reads (`agentlake sessions hide`, `sessions tag`).
IncludeHiddenOpt = Annotated[
    bool,
    typer.Option("--include-hidden", help="Hidden sessions too ('sessions hide' hides them)."),
]
TagOpt = Annotated[
    str | None, typer.Option("--tag", help="Only sessions with this tag ('sessions tag').")
]
