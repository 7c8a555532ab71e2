"""The typer CLI: thin wiring over the library, one error boundary, rich or JSON output.

Exit codes: 0 ok, 1 finished but some sources refused, 2 usage, 4 not found,
5 catalog locked, 6 catalog unusable.
"""

from __future__ import annotations

import csv
import gc
import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import orjson
import pyarrow as pa
import typer
from rich.console import Console

from agentlake.extract.extract import ExtractLimits
from agentlake.load.catalog import READ_WAIT, WAIT_NOTICE

from .config import (
    check_workspace,
    default_catalog,
    default_workspace,
    resolve_price_overrides,
)
from .errors import AgentlakeError, ConfigurationError
from .plan import Plan, PlannedSource
from .progress import ProgressMode
from .queries import scoped_sql
from .run import (
    ImportOptions,
    ImportResult,
    check_memory_limit,
    default_home,
    fewer_collections,
    plan_import,
    run_import,
)
from .search import SearchFilter, search_page

if TYPE_CHECKING:  # reports (and polars) load with the first report command
    import rich.progress

    from agentlake.load.search_index import PublishResult

    from .reports import ReportFilter, ReportKind

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="agentlake: import AI coding agents' transcripts into one DuckDB catalog.",
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")

CatalogOpt = Annotated[
    Path | None, typer.Option("--catalog", help="Catalog file \\[env AGENTLAKE_CATALOG].")
]
WorkspaceOpt = Annotated[
    str | None,
    typer.Option("--workspace", help="Workspace \\[env AGENTLAKE_WORKSPACE; default 'default']."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a stable JSON document.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]
HomeOpt = Annotated[
    Path | None, typer.Option("--home", help="Use DIR instead of $HOME for every provider root.")
]
ProviderOpt = Annotated[
    list[str] | None, typer.Option("--provider", help="Only this provider (repeatable).")
]
TzOpt = Annotated[str, typer.Option("--tz", help="IANA time zone for bucketing (default UTC).")]
SinceOpt = Annotated[
    datetime | None,
    typer.Option("--since", formats=["%Y-%m-%d", "%Y%m%d"], help="First day (in --tz)."),
]
UntilOpt = Annotated[
    datetime | None,
    typer.Option("--until", formats=["%Y-%m-%d", "%Y%m%d"], help="Last day (in --tz)."),
]
CsvOpt = Annotated[bool, typer.Option("--csv", help="Print CSV.")]
ReadWaitOpt = Annotated[
    bool,
    typer.Option("--wait", help="If an import is writing the catalog, wait for it to finish."),
]


def _guard(debug: bool, action: Callable[[], T], *, wait: bool = False) -> T:
    """The one error boundary: our errors become one line and an exit code. ``wait``
    makes the command's catalog reads wait for a running import."""
    token = READ_WAIT.set(wait)
    notice = WAIT_NOTICE.set(lambda text: err.print(text, highlight=False))
    try:
        return action()
    except AgentlakeError as exc:
        if debug:
            raise
        err.print(f"[red]error:[/red] {exc.message}", highlight=False)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        err.print("interrupted")
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(141) from None
    except Exception as exc:  # the CLI boundary: anything else is a bug, shown in one line
        if debug:
            raise
        err.print(
            f"[red]internal error:[/red] {type(exc).__name__}: {exc} (rerun with --debug for a traceback)",
            highlight=False,
        )
        raise typer.Exit(70) from None
    finally:
        WAIT_NOTICE.reset(notice)
        READ_WAIT.reset(token)


def _catalog(catalog: Path | None) -> Path:
    return catalog or default_catalog()


def _workspace(workspace: str | None) -> str:
    return check_workspace(workspace) if workspace else default_workspace()


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    raise TypeError


def _print_json(doc: Any) -> None:
    sys.stdout.write(
        orjson.dumps(
            doc, default=_json_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
        ).decode()
        + "\n"
    )


def _print_table(table: pa.Table, title: str | None = None) -> None:
    from .rows_view import render_rows

    render_rows(out, table, title=title)


def _print_csv(table: pa.Table) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow(
            [
                "" if v is None else (";".join(map(str, v)) if isinstance(v, list) else v)
                for v in row.values()
            ]
        )
    sys.stdout.write(buf.getvalue())


def _emit(table: pa.Table, *, as_json: bool, as_csv: bool, key: str, title: str | None) -> None:
    if as_json:
        _print_json({key: table.to_pylist()})
    elif as_csv:
        _print_csv(table)
    else:
        _print_table(table, title)


# -- import ------------------------------------------------------------------------------
class _BarReporter:
    """Progress bar over the bytes the plan will read (only on a TTY)."""

    def __init__(self, progress: rich.progress.Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("import", total=None)

    def planned(self, plan: Plan) -> None:
        self.progress.update(self.task, total=plan.bytes_to_read, description="importing")

    def advanced(self, source: PlannedSource, nbytes: int) -> None:
        self.progress.advance(self.task, nbytes)

    def phase(self, name: str) -> None:
        self.progress.update(self.task, description=name)


def _import_with_progress(options: ImportOptions, mode: ProgressMode = "auto") -> ImportResult:
    from .signals import stop_on_signals

    with stop_on_signals(lambda text: err.print(text, highlight=False)) as stop:
        return _import_reporting(replace(options, stop=stop), mode)


def _print_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _import_reporting(options: ImportOptions, mode: ProgressMode) -> ImportResult:
    if mode == "lines":
        from .progress import LineReporter

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

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as progress:
        return run_import(options, _BarReporter(progress))


def _plan_doc(plan: Plan) -> dict[str, Any]:
    return {
        "workspace": plan.workspace,
        "roots": [
            {
                "provider": r.provider,
                "path": str(r.path),
                "origin": r.origin,
                "exists": r.path.is_dir(),
                "warning": r.warning,
            }
            for r in plan.roots
        ],
        "sources": [
            {
                "provider": s.provider,
                "path": str(s.path),
                "source_id": s.source_id,
                "continuity": s.continuity,
                "action": s.action,
                "start": s.start,
                "stop": s.stop,
                "bytes": s.pending_bytes,
                "generation": s.generation,
                "code": s.code,
                "message": s.message,
            }
            for s in plan.sources
        ],
        "bytes_to_read": plan.bytes_to_read,
    }


def _warn_roots(plan: Plan) -> None:
    for root in plan.roots:
        if root.warning:
            err.print(f"warning: {root.provider}: {root.warning}", highlight=False)


def _print_plan(plan: Plan) -> None:
    from .import_view import render_plan

    render_plan(out, plan, errors=err)


def _result_doc(result: ImportResult) -> dict[str, Any]:
    return {
        "import_id": result.import_id,
        "status": result.status,
        "seconds": round(result.seconds, 3),
        "index_seconds": result.index_seconds,
        "index": None if result.index is None else _index_doc(result.index),
        "peak_rss_bytes": result.peak_rss_bytes,
        "totals": result.totals(),
        "sources": [
            {
                "provider": s.planned.provider,
                "path": str(s.planned.path),
                "continuity": s.planned.continuity,
                "status": s.status,
                "records": s.records,
                "events": s.events,
                "usage": s.usage,
                "rejected": s.rejected,
                "bytes": s.bytes,
                "pending_bytes": s.pending_bytes,
                "message": s.message,
            }
            for s in result.sources
        ],
    }


@app.command("import")
def import_(
    home: HomeOpt = None,
    provider: ProviderOpt = None,
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
    progress: Annotated[
        ProgressMode,
        typer.Option(
            "--progress",
            help="auto: a bar on a terminal; lines: a line per commit on stderr (for logs).",
        ),
    ] = "auto",
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Import every provider's transcripts into the catalog (resumable, exactly once)."""

    def action() -> int:
        from .config import parse_duration, parse_size

        check_memory_limit(memory_limit)
        if reindex and no_index:
            raise ConfigurationError("--reindex rebuilds the search index; --no-index skips it")
        limits = ExtractLimits(
            max_records_per_source=max_records_per_source,
            max_bytes_per_source=parse_size(max_bytes_per_source) if max_bytes_per_source else None,
        )
        options = ImportOptions(
            catalog=_catalog(catalog),
            workspace=_workspace(workspace),
            home=(home or default_home()).expanduser(),
            env=dict(os.environ),
            providers=tuple(provider or ()),
            restart_drifted=restart_drifted,
            memory_limit=memory_limit,
            wait=wait,
            reindex=reindex,
            build_index=not no_index,
            limits=limits,
            max_duration=parse_duration(max_duration) if max_duration else None,
        )
        if dry_run:
            plan = plan_import(options)
            _warn_roots(plan)
            _print_json(_plan_doc(plan)) if json else _print_plan(plan)
            return 0
        result = _import_with_progress(options, progress)
        _warn_roots(result.plan)
        from .import_view import render_problems, render_summary

        _print_json(_result_doc(result)) if json else render_summary(out, result)
        render_problems(err, result)
        return result.exit_code

    code = _guard(debug, action)
    raise typer.Exit(code)


@app.command()
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
    from .run import IndexOptions, run_index

    def action() -> None:
        options = IndexOptions(
            catalog=_catalog(catalog), workspace=_workspace(workspace),
            memory_limit=memory_limit, wait=wait,
        )  # fmt: skip
        published = run_index(options)
        if json:
            _print_json({"workspace": options.workspace, **_index_doc(published)})
            return
        withdrawn = f", {published.withdrawn:,} withdrawn" if published.withdrawn else ""
        out.print(
            f"indexed {published.indexed:,} events{withdrawn} in {published.seconds:.1f} s; "
            "the search index is up to date",
            highlight=False,
        )

    _guard(debug, action)


def _index_doc(published: PublishResult) -> dict[str, Any]:
    return {
        "indexed": published.indexed,
        "withdrawn": published.withdrawn,
        "slices": published.slices,
        "seconds": round(published.seconds, 3),
    }


@app.command()
def sources(
    home: HomeOpt = None,
    provider: ProviderOpt = None,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What discovery sees and what the planner would do with each source."""

    def action() -> None:
        options = ImportOptions(
            catalog=_catalog(catalog),
            workspace=_workspace(workspace),
            home=(home or default_home()).expanduser(),
            env=dict(os.environ),
            providers=tuple(provider or ()),
        )
        plan = plan_import(options)
        _warn_roots(plan)
        _print_json(_plan_doc(plan)) if json else _print_plan(plan)

    _guard(debug, action)


@app.command()
def providers(json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """The provider registry as a conformance matrix."""
    from agentlake.extract.providers import REGISTRY

    def action() -> None:
        home = default_home()
        rows = [
            {
                "id": p.id,
                "aliases": list(p.aliases),
                "env": list(p.env_overrides),
                "roots": [str(r.path) for r in p.roots(home, os.environ)],
                "formats": [{"name": f.name, "position_kind": f.position_kind} for f in p.formats],
                "capabilities": sorted(p.capabilities),
                "adapter_version": p.adapter_version,
                "fixtures": list(p.fixtures),
                "tests": list(p.tests),
            }
            for p in REGISTRY
        ]
        if json:
            _print_json({"providers": rows})
            return
        from .import_view import render_providers

        render_providers(out, REGISTRY, home=home, env=os.environ)

    _guard(debug, action)


# A query is text: one that starts with "-" ("-flaky", "--force") is not an option.
@app.command("search", context_settings={"ignore_unknown_options": True})
def search_(
    query: Annotated[
        str,
        typer.Argument(help='Words (ANDed), "a phrase", a OR b, -word / NOT word, prefix*.'),
    ],
    limit: Annotated[int, typer.Option("--limit", min=1, max=500)] = 20,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Skip this many hits.")] = 0,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="Continue after the page that printed it.")
    ] = None,
    provider: Annotated[str | None, typer.Option("--provider")] = None,
    project: Annotated[
        str | None, typer.Option("--project", help="Substring of the project path.")
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="Session id or prefix.")] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="prompt, response, reasoning, tool_call, ...")
    ] = None,
    model: Annotated[str | None, typer.Option("--model")] = None,
    since: Annotated[
        datetime | None,
        typer.Option("--since", formats=["%Y-%m-%d", "%Y%m%d"], help="First day (UTC)."),
    ] = None,
    until: Annotated[
        datetime | None,
        typer.Option("--until", formats=["%Y-%m-%d", "%Y%m%d"], help="Last day (UTC)."),
    ] = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Full-text search over every imported event, ranked by BM25."""

    def action() -> None:
        flt = SearchFilter(
            provider=provider, project=project, session=session, kind=kind, model=model,
            since=since.date() if since else None, until=until.date() if until else None,
        )  # fmt: skip
        page = search_page(
            _catalog(catalog), _workspace(workspace), query, limit=limit, offset=offset, flt=flt,
            cursor=cursor,
        )  # fmt: skip
        hits = page.hits
        if json:
            _print_json({"query": query, "hits": [
                {"session_id": h.session_id, "provider": h.provider, "kind": h.kind, "ts": h.ts,
                 "score": h.score, "snippet": h.snippet, "highlights": h.highlights,
                 "event_id": h.event_id}
                for h in hits
            ], "next_cursor": page.next_cursor, "unindexed": page.unindexed})  # fmt: skip
            return
        from .search_view import render_hits

        filters = {"provider": provider, "project": project, "session": session, "kind": kind,
                   "model": model, "since": flt.since, "until": flt.until}  # fmt: skip
        render_hits(
            out, page, query=query, workspace=_workspace(workspace), filters=filters,
            continued=bool(cursor or offset),
        )  # fmt: skip

    _guard(debug, action, wait=wait)


report_app = typer.Typer(
    help="Token usage and cost reports (and --unpriced: models without a price)."
)
app.add_typer(report_app, name="report")

ReportProviderOpt = Annotated[str | None, typer.Option("--provider", help="Only this provider.")]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="Only models whose name contains this text.")
]
ProjectOpt = Annotated[
    str | None, typer.Option("--project", help="Only projects whose path contains this text.")
]
PricesOpt = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="TOML file of price overrides (replaces the config file's) \\[see README].",
    ),
]
BreakdownOpt = Annotated[
    bool, typer.Option("--breakdown", help="Per-model rows inside each period, session or project.")
]


def _filter(
    tz: str,
    since: datetime | None,
    until: datetime | None,
    provider: str | None,
    model: str | None = None,
    project: str | None = None,
) -> ReportFilter:
    from .reports import ReportFilter

    return ReportFilter(
        tz=tz,
        since=since.date() if since else None,
        until=until.date() if until else None,
        provider=provider,
        model=model,
        project=project,
    )


@report_app.callback(invoke_without_command=True)
def report_unpriced(
    ctx: typer.Context,
    unpriced_: Annotated[
        bool, typer.Option("--unpriced", help="List the models without a price, with their tokens.")
    ] = False,
    tz: TzOpt = "UTC",
    since: SinceOpt = None,
    until: UntilOpt = None,
    provider: ReportProviderOpt = None,
    prices: PricesOpt = None,
    csv: CsvOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Token usage and cost reports; `agentlake report --unpriced` lists the models whose
    calls cost NULL because no price is known for them."""
    if ctx.invoked_subcommand is not None:
        return
    if not unpriced_:
        out.print(ctx.get_help())
        raise typer.Exit(2)

    def action() -> None:
        from .reports import unpriced
        from .reports_view import render_unpriced

        table = unpriced(
            _catalog(catalog),
            _workspace(workspace),
            _filter(tz, since, until, provider),
            prices=resolve_price_overrides(prices),
        )
        if json:
            _print_json({"version": 1, "unpriced": table.to_pylist()})
        elif csv:
            _print_csv(table)
        else:
            render_unpriced(out, table)

    _guard(debug, action, wait=wait)


_REPORT_HELP: dict[ReportKind, str] = {
    "daily": "Token usage and cost per day.",
    "weekly": "Token usage and cost per week (Monday to Sunday).",
    "monthly": "Token usage and cost per month.",
    "session": "Token usage and cost per session, most recent first.",
    "model": "Token usage and cost per provider and model, most expensive first.",
    "project": "Token usage and cost per project, most expensive first.",
    "blocks": "Token usage and cost per 5-hour billing window (Claude plans).",
}


def _report_command(kind: ReportKind) -> Callable[..., None]:
    def command(
        tz: TzOpt = "UTC",
        since: SinceOpt = None,
        until: UntilOpt = None,
        provider: ReportProviderOpt = None,
        model: ModelOpt = None,
        project: ProjectOpt = None,
        breakdown: BreakdownOpt = False,
        # Offered by the session report only (elsewhere hidden, and refused by the library).
        rollup: bool = typer.Option(
            False,
            "--rollup",
            help="One row per root session, its subagents' and spawned threads' calls folded in.",
            hidden=kind != "session",
        ),
        prices: PricesOpt = None,
        csv: CsvOpt = False,
        wait: ReadWaitOpt = False,
        catalog: CatalogOpt = None,
        workspace: WorkspaceOpt = None,
        json: JsonOpt = False,
        debug: DebugOpt = False,
    ) -> None:
        def action() -> None:
            from .reports import report
            from .reports_view import render_report

            flt = _filter(tz, since, until, provider, model, project)
            result = report(
                _catalog(catalog),
                _workspace(workspace),
                kind,
                flt,
                breakdown=breakdown,
                rollup=rollup,
                prices=resolve_price_overrides(prices),
            )
            if json:
                _print_json(result.to_json())
            elif csv:
                _print_csv(result.breakdown if result.breakdown is not None else result.rows)
            else:
                render_report(out, result, workspace=_workspace(workspace))

        _guard(debug, action, wait=wait)

    command.__doc__ = _REPORT_HELP[kind]
    return command


for _kind, _help in _REPORT_HELP.items():
    report_app.command(_kind, help=_help)(_report_command(_kind))


@report_app.command("limits")
def report_limits(
    tz: TzOpt = "UTC",
    provider: ReportProviderOpt = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """How close each plan is to its rate limits: the latest snapshot per provider and
    window (used %, window length, reset time in --tz, and how old the snapshot is)."""

    def action() -> None:
        from .limits import limits_report
        from .reports_view import render_limits

        result = limits_report(_catalog(catalog), _workspace(workspace), tz=tz, provider=provider)
        _print_json(result.to_json()) if json else render_limits(out, result)

    _guard(debug, action, wait=wait)


prices_app = typer.Typer(no_args_is_help=True, help="The prices costs are computed with.")
app.add_typer(prices_app, name="prices")


@prices_app.command("refresh")
def prices_refresh(
    offline: Annotated[
        bool, typer.Option("--offline", help="Use the installed package's bundled snapshot.")
    ] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request.")] = 10.0,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for a running import.")] = False,
    catalog: CatalogOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Fetch the latest genai-prices data (or, offline or unreachable, keep the bundled
    snapshot) into the catalog's prices."""
    from .pricing import refresh

    def action() -> None:
        result = refresh(_catalog(catalog), network=not offline, timeout=timeout, wait=wait)
        if json:
            _print_json(
                {"version": 1, "source": result.source, "label": result.label,
                 "package_version": result.package_version, "models": result.models,
                 "rows": result.rows, "refreshed": result.refreshed, "message": result.message}
            )  # fmt: skip
        else:
            (out if result.refreshed else err).print(result.message, highlight=False)

    _guard(debug, action)


@prices_app.command("list")
def prices_list(
    model: Annotated[
        str | None, typer.Option("--model", help="Only models whose id contains this text.")
    ] = None,
    prices: PricesOpt = None,
    csv: CsvOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """The prices in force, USD per million tokens (user overrides first)."""
    from .pricing import list_prices

    def action() -> None:
        overrides = resolve_price_overrides(prices)
        table = list_prices(_catalog(catalog), model=model, prices=overrides)
        if json or csv:
            _emit(table, as_json=json, as_csv=csv, key="prices", title=None)
            return
        from .rows_view import render_prices

        render_prices(out, table)

    _guard(debug, action, wait=wait)


@app.command("sql")
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
    csv: CsvOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Run one read-only query over the workspace's views (sources, sessions, events,
    usage, imports, rejects, usage_costed, usage_daily) and the price tables; no file
    is read or written."""

    def action() -> None:
        if all_workspaces and workspace is not None:
            raise ConfigurationError("pass either --workspace or --all-workspaces, not both")
        table = scoped_sql(
            _catalog(catalog),
            _workspace(workspace),
            statement,
            prices=resolve_price_overrides(prices),
            all_workspaces=all_workspaces,
        )
        _emit(table, as_json=json, as_csv=csv, key="rows", title=None)

    _guard(debug, action, wait=wait)


sessions_app = typer.Typer(no_args_is_help=True, help="List sessions and show one.")
app.add_typer(sessions_app, name="sessions")


@sessions_app.command("list")
def sessions_list(
    provider: ProviderOpt = None,
    project: Annotated[
        str | None, typer.Option("--project", help="Substring of the project path.")
    ] = None,
    since: Annotated[
        datetime | None,
        typer.Option(
            "--since",
            formats=["%Y-%m-%d", "%Y%m%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"],
            help="Updated at or after this day or time (UTC).",
        ),
    ] = None,
    max_age: Annotated[
        str | None, typer.Option("--max-age", help="Updated within this long: 30m, 12h, 7d, 2w.")
    ] = None,
    text: Annotated[
        str | None,
        typer.Option("--text", help="Case-insensitive substring of the title or first prompt."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="Rows per page.")] = 25,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="Next page of a listing (same filters).")
    ] = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Sessions, newest first; page with --cursor (pages stay stable while imports run)."""
    from .sessions import list_sessions
    from .sessions_view import render_page

    def action() -> None:
        page = list_sessions(
            _catalog(catalog), _workspace(workspace), provider=provider, project=project,
            since=since, max_age=max_age, text=text, limit=limit, cursor=cursor,
        )  # fmt: skip
        if json:
            _print_json(page.to_dict())
            return
        filters = {"provider": provider, "project": project, "since": since,
                   "max age": max_age, "text": text}  # fmt: skip
        render_page(
            out, page, workspace=_workspace(workspace), filters=filters, continued=bool(cursor)
        )

    _guard(debug, action, wait=wait)


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[
        str, typer.Argument(help="Session id, or a unique prefix of at least 4 characters.")
    ],
    full: Annotated[
        bool, typer.Option("--full", help="Every event, without bounds (streamed).")
    ] = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """One session: metadata, tokens by model, and its timeline (the newest 1,000 prompts,
    2,000 responses and 2,000 tool events within 2 MiB / 1 MiB of text unless --full)."""
    from .sessions import DEFAULT_BOUNDS, show_session
    from .sessions_view import render_detail, write_detail_json

    def action() -> None:
        detail = show_session(
            _catalog(catalog), _workspace(workspace), session_id,
            bounds=None if full else DEFAULT_BOUNDS,
        )  # fmt: skip
        write_detail_json(sys.stdout.write, detail) if json else render_detail(out, detail)

    _guard(debug, action, wait=wait)


@app.command()
def doctor(
    session_id: Annotated[
        str | None,
        typer.Argument(
            help="Explain why this session (full id or unique prefix) is or is not in the catalog."
        ),
    ] = None,
    home: HomeOpt = None,
    provider: ProviderOpt = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Why is a session missing? Roots, environment, continuity, refusals, rejects, imports
    and catalog integrity. Exit 0 healthy, 1 needs attention, 4 no catalog; with SESSION_ID:
    0 in this workspace, 1 in it with a refused source, 2 ambiguous prefix, 4 not in it."""
    from .doctor import diagnose, explain_session
    from .doctor_view import render_report, render_session

    def action() -> int:
        root = (home or default_home()).expanduser()
        names = tuple(provider or ())
        if session_id is not None:
            diagnosis = explain_session(
                _catalog(catalog), _workspace(workspace), session_id,
                home=root, env=dict(os.environ), providers=names,
            )  # fmt: skip
            _print_json(diagnosis.to_json()) if json else render_session(out, diagnosis)
            return diagnosis.exit_code
        report = diagnose(
            _catalog(catalog), _workspace(workspace), home=root, env=dict(os.environ),
            providers=names,
        )  # fmt: skip
        _print_json(report.to_json()) if json else render_report(out, report)
        return report.exit_code

    raise typer.Exit(_guard(debug, action, wait=wait))


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    # What is loaded by now (the modules of agentlake, DuckDB, Arrow, typer and rich)
    # lives as long as the process: the cycle collector need not walk it again, and a
    # command's own short-lived containers can pile up longer between its passes.
    gc.freeze()
    with fewer_collections():
        app(args=list(argv) if argv is not None else None, prog_name="agentlake")
