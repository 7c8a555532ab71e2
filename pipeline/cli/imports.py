"""``agentlake import`` and ``index``: the commands that plan, import and publish (the
writer's side); ``agentlake sources`` (cli/sources.py) prints the plan as they do."""

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentlake.ingest.progress import ProgressMode

from .boundary import guard
from .options import CatalogOpt, DataPathOpt, DebugOpt, HomeOpt, JsonOpt, ProviderOpt, WorkspaceOpt

if TYPE_CHECKING:
    import rich.progress

    from agentlake.ingest.plan import Plan, PlannedSource
    from agentlake.ingest.run import ImportOptions, ImportResult


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("import")(import_)
    app.command()(index)


class _BarReporter:
    """Progress bar over the bytes the plan will read (only on a TTY)."""

    def __init__(self, progress: "rich.progress.Progress") -> None:
        self.progress = progress
        self.task = progress.add_task("import", total=None)

    def planned(self, plan: "Plan") -> None:
        self.progress.update(self.task, total=plan.bytes_to_read, description="importing")

    def advanced(self, source: "PlannedSource", nbytes: int) -> None:
        self.progress.advance(self.task, nbytes)

    def phase(self, name: str) -> None:
        self.progress.update(self.task, description=name)


def _import_with_progress(options: "ImportOptions", mode: ProgressMode = "auto") -> "ImportResult":
    from agentlake.ingest.signals import stop_on_signals

    from .consoles import err

    with stop_on_signals(lambda text: err.print(text, highlight=False)) as stop:
        return _import_reporting(replace(options, stop=stop), mode)


def _print_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _import_reporting(options: "ImportOptions", mode: ProgressMode) -> "ImportResult":
    from agentlake.ingest.run import run_import

    if mode == "lines":
        from agentlake.ingest.progress import LineReporter

        return run_import(options, LineReporter(_print_line))
    if mode == "none" or not sys.stderr.isatty():
        return run_import(options)
    from rich.progress import (  # only a terminal shows a bar
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from .consoles import err

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as progress:
        return run_import(options, _BarReporter(progress))


def warn_roots(plan: "Plan") -> None:
    from .consoles import err

    for root in plan.roots:
        if root.warning:
            err.print(f"warning: {root.provider}: {root.warning}", highlight=False)
    for path, fmt in plan.guesses:
        err.print(f"note: {path}: read as {fmt}, recognized from its content "
                  "(--format names it)", highlight=False)  # fmt: skip


def print_plan(plan: "Plan") -> None:
    from .consoles import err, out
    from .render.imports import render_plan

    render_plan(out, plan, errors=err)


def import_(
    home: HomeOpt = None,
    provider: ProviderOpt = None,
    file: Annotated[
        list[Path] | None,
        typer.Option(
            "--file",
            help="Import this exported file instead of discovering the home (repeatable).",
        ),
    ] = None,
    format_: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="The export format of the --file files (guessed from content when omitted; "
            "'agentlake providers' lists them).",
        ),
    ] = None,
    memory_limit: Annotated[
        str,
        typer.Option(
            "--memory-limit",
            help="Memory ceiling of the run, at least 384MiB (DuckDB gets a fifth, at least "
            "128 MiB; commits shrink to fit the rest).",
        ),
    ] = "1GiB",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; write nothing.")
    ] = False,
    restart_drifted: Annotated[
        bool,
        typer.Option(
            "--restart-drifted", help="Re-read refused sources from 0 as a new generation."
        ),
    ] = False,
    allow_purged: Annotated[
        bool,
        typer.Option(
            "--allow-purged",
            help="Import purged sessions again: re-read their sources from 0 and keep "
            "their rows (without it, rows of purged sessions are withheld and counted).",
        ),
    ] = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for another import to finish instead of failing.")
    ] = False,
    reindex: Annotated[
        bool,
        typer.Option("--reindex", help="Rebuild the workspace's search index from its events."),
    ] = False,
    no_index: Annotated[
        bool,
        typer.Option(
            "--no-index",
            help="Skip the publish step: events are imported but not searchable until "
            "'agentlake index' runs.",
        ),
    ] = False,
    max_duration: Annotated[
        str | None,
        typer.Option(
            "--max-duration",
            help="Time budget (90s, 10m, 1h): stop at the next batch boundary once spent; "
            "the next run resumes.",
        ),
    ] = None,
    max_records_per_source: Annotated[
        int | None,
        typer.Option("--max-records-per-source", min=1, help="Read at most N records per source."),
    ] = None,
    max_bytes_per_source: Annotated[
        str | None,
        typer.Option("--max-bytes-per-source", help="Read at most this much per source (64MiB)."),
    ] = None,
    source_records_ceiling: Annotated[
        int | None,
        typer.Option(
            "--source-records-ceiling",
            min=1,
            help="Refuse a source past N records in its generation (default 1000000; the "
            "committed prefix is kept).",
        ),
    ] = None,
    source_bytes_ceiling: Annotated[
        str | None,
        typer.Option(
            "--source-bytes-ceiling",
            help="Refuse a source past this many bytes in its generation (default 1GiB).",
        ),
    ] = None,
    max_document_bytes: Annotated[
        str | None,
        typer.Option(
            "--max-document-bytes",
            help="Refuse a JSON document larger than this, unparsed (default 64MiB).",
        ),
    ] = None,
    max_open_ids: Annotated[
        int | None,
        typer.Option(
            "--max-open-ids",
            min=1,
            help="Refuse a source whose adapter must remember more open ids (default 10000).",
        ),
    ] = None,
    progress: Annotated[
        ProgressMode,
        typer.Option(
            "--progress",
            help="auto: a bar on a terminal; lines: a line per commit on stderr (for logs).",
        ),
    ] = "auto",
    catalog: CatalogOpt = None,
    data_path: DataPathOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Import every provider's transcripts, or the exported files named with --file, into
    the catalog (resumable, exactly once)."""
    from agentlake.config import (
        default_home,
        import_ceilings_from_config,
        parse_duration,
        parse_size,
    )
    from agentlake.errors import ConfigurationError
    from agentlake.extract.extract import ExtractLimits
    from agentlake.ingest.budget import check_memory_limit
    from agentlake.ingest.files import NamedFile
    from agentlake.ingest.run import ImportOptions, plan_import

    from .output import catalog_path, print_json, workspace_name

    def action() -> int:
        check_memory_limit(memory_limit)
        if reindex and no_index:
            raise ConfigurationError("--reindex rebuilds the search index; --no-index skips it")
        if format_ is not None and not file:
            raise ConfigurationError("--format names the format of --file files; give --file")
        if file and (provider or home is not None):
            raise ConfigurationError(
                "--file imports the files named; --home and --provider choose what discovery "
                "reads: give one or the other"
            )
        # The ceilings: an option wins over the config file's [import] key.
        ceilings = import_ceilings_from_config()
        given = {
            "source_records": source_records_ceiling,
            "source_bytes": parse_size(source_bytes_ceiling) if source_bytes_ceiling else None,
            "max_document_bytes": parse_size(max_document_bytes) if max_document_bytes else None,
            "max_open_ids": max_open_ids,
        }
        ceilings.update({k: v for k, v in given.items() if v is not None})
        limits = ExtractLimits(
            max_records_per_source=max_records_per_source,
            max_bytes_per_source=parse_size(max_bytes_per_source) if max_bytes_per_source else None,
            **ceilings,  # type: ignore[arg-type]
        )
        options = ImportOptions(
            catalog=catalog_path(catalog, data_path),
            workspace=workspace_name(workspace, catalog),
            home=(home or default_home()).expanduser(),
            env=dict(os.environ),
            providers=tuple(provider or ()),
            restart_drifted=restart_drifted,
            allow_purged=allow_purged,
            memory_limit=memory_limit,
            wait=wait,
            reindex=reindex,
            build_index=not no_index,
            limits=limits,
            max_duration=parse_duration(max_duration) if max_duration else None,
            files=tuple(NamedFile(path, format_) for path in file or ()),
        )
        if dry_run:
            plan = plan_import(options)
            warn_roots(plan)
            print_json(plan.to_json()) if json else print_plan(plan)
            return 0
        result = _import_with_progress(options, progress)
        warn_roots(result.plan)
        from .consoles import err, out
        from .render.imports import render_problems, render_summary

        print_json(result.to_json()) if json else render_summary(out, result)
        render_problems(err, result)
        return result.exit_code

    code = guard(debug, action)
    raise typer.Exit(code)


def index(
    memory_limit: Annotated[
        str,
        typer.Option("--memory-limit", help="Memory ceiling of the run, at least 384MiB."),
    ] = "1GiB",
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for a running import instead of failing.")
    ] = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Bring the search index up to date with the imported events (the publish step an
    import runs unless --no-index); resumes where a killed run stopped."""
    from agentlake.ingest.run import IndexOptions, run_index

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        options = IndexOptions(
            catalog=catalog_path(catalog), workspace=workspace_name(workspace, catalog),
            memory_limit=memory_limit, wait=wait,
        )  # fmt: skip
        published = run_index(options)
        if json:
            print_json(published.to_json(workspace=options.workspace))
            return
        from .consoles import out

        withdrawn = f", {published.withdrawn:,} withdrawn" if published.withdrawn else ""
        vectors = published.vectors
        embedded = (
            f"; semantic search is off: {vectors.skipped}"
            if vectors.skipped
            else f"; embedded {vectors.embedded:,} events for search by meaning"
        )
        out.print(
            f"indexed {published.indexed:,} events{withdrawn} in {published.seconds:.1f} s"
            f"{embedded}; the search index is up to date",
            highlight=False,
        )

    guard(debug, action)
