"""``agentlake report``: token usage and cost reports, ``--unpriced`` and ``limits``.
The reports module (and polars with it) loads only once a report runs."""

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .boundary import guard
from .options import (
    BreakdownOpt,
    CatalogOpt,
    CsvOpt,
    DebugOpt,
    IncludeHiddenOpt,
    JsonOpt,
    ModelOpt,
    PricesOpt,
    ProjectOpt,
    ReadWaitOpt,
    ReportProviderOpt,
    SinceOpt,
    TagOpt,
    TzOpt,
    UntilOpt,
    WorkspaceOpt,
)

if TYPE_CHECKING:
    from agentlake.read.reports import ReportFilter, ReportKind

report_app = typer.Typer(
    help="Token usage and cost reports (and --unpriced: models without a price)."
)


def register(app: typer.Typer) -> None:
    """Add the ``report`` group to ``app``."""
    app.add_typer(report_app, name="report")


def report_filter(
    tz: str,
    since: datetime | None,
    until: datetime | None,
    provider: str | None,
    model: str | None = None,
    project: str | None = None,
    tag: str | None = None,
    include_hidden: bool = False,
) -> "ReportFilter":
    """The filters of the report options (shared by the reports, the dashboard and the
    exports, so that a filter means the same everywhere)."""
    from agentlake.read.reports import ReportFilter

    return ReportFilter(
        tz=tz,
        since=since.date() if since else None,
        until=until.date() if until else None,
        provider=provider,
        model=model,
        project=project,
        tag=tag,
        include_hidden=include_hidden,
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
    tag: TagOpt = None,
    include_hidden: IncludeHiddenOpt = False,
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
        from .consoles import out

        out.print(ctx.get_help())
        raise typer.Exit(2)
    from agentlake.config import resolve_price_overrides
    from agentlake.read.reports import unpriced, unpriced_json

    from .output import catalog_path, print_csv, print_json, workspace_name

    def action() -> None:
        table = unpriced(
            catalog_path(catalog),
            workspace_name(workspace, catalog),
            report_filter(tz, since, until, provider, tag=tag, include_hidden=include_hidden),
            prices=resolve_price_overrides(prices),
        )
        if json:
            print_json(unpriced_json(table))
        elif csv:
            print_csv(table)
        else:
            from .consoles import out
            from .render.reports import render_unpriced

            render_unpriced(out, table)

    guard(debug, action, wait=wait)


_REPORT_HELP: "dict[ReportKind, str]" = {
    "daily": "Token usage and cost per day.",
    "weekly": "Token usage and cost per week (Monday to Sunday).",
    "monthly": "Token usage and cost per month.",
    "session": "Token usage and cost per session, most recent first.",
    "model": "Token usage and cost per provider and model, most expensive first.",
    "project": "Token usage and cost per project, most expensive first.",
    "blocks": "Token usage and cost per 5-hour billing window (Claude plans).",
}


def _report_command(kind: "ReportKind") -> Callable[..., None]:
    def command(
        tz: TzOpt = "UTC",
        since: SinceOpt = None,
        until: UntilOpt = None,
        provider: ReportProviderOpt = None,
        model: ModelOpt = None,
        project: ProjectOpt = None,
        tag: TagOpt = None,
        include_hidden: IncludeHiddenOpt = False,
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
        from agentlake.config import resolve_price_overrides
        from agentlake.read.reports import report

        from .output import catalog_path, print_csv, print_json, workspace_name

        def action() -> None:
            flt = report_filter(tz, since, until, provider, model, project, tag, include_hidden)
            result = report(
                catalog_path(catalog),
                workspace_name(workspace, catalog),
                kind,
                flt,
                breakdown=breakdown,
                rollup=rollup,
                prices=resolve_price_overrides(prices),
            )
            if json:
                print_json(result.to_json())
            elif csv:
                print_csv(result.breakdown if result.breakdown is not None else result.rows)
            else:
                from .consoles import out
                from .render.reports import render_report

                render_report(out, result, workspace=workspace_name(workspace, catalog))

        guard(debug, action, wait=wait)

    command.__doc__ = _REPORT_HELP[kind]
    return command


for _kind, _help in _REPORT_HELP.items():
    report_app.command(_kind, help=_help)(_report_command(_kind))


@report_app.command("limits")
def report_limits(
    tz: TzOpt = "UTC",
    provider: ReportProviderOpt = None,
    include_hidden: IncludeHiddenOpt = False,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """How close each plan is to its rate limits: the latest snapshot per provider and
    window (used %, window length, reset time in --tz, and how old the snapshot is)."""
    from agentlake.read.limits import limits_report

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        result = limits_report(
            catalog_path(catalog), workspace_name(workspace, catalog), tz=tz, provider=provider,
            include_hidden=include_hidden,
        )  # fmt: skip
        if json:
            print_json(result.to_json())
            return
        from .consoles import out
        from .render.reports import render_limits

        render_limits(out, result)

    guard(debug, action, wait=wait)


@report_app.command("html")
def report_html(
    out_file: Annotated[
        Path, typer.Argument(metavar="OUT.html", help="The file to write (replaced whole).")
    ],
    tz: TzOpt = "UTC",
    since: SinceOpt = None,
    until: UntilOpt = None,
    provider: ReportProviderOpt = None,
    model: ModelOpt = None,
    project: ProjectOpt = None,
    tag: TagOpt = None,
    include_hidden: IncludeHiddenOpt = False,
    prices: PricesOpt = None,
    wait: ReadWaitOpt = False,
    catalog: CatalogOpt = None,
    workspace: WorkspaceOpt = None,
    json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """A dashboard as one self-contained HTML file (no network when opened): daily
    tokens and cost by provider or model, what the prompt cache saves, the top projects
    and sessions, and when the work happens; a provider filter in the page."""
    from agentlake.config import resolve_price_overrides
    from agentlake.read.dashboard import write_dashboard

    from .output import catalog_path, print_json, workspace_name

    def action() -> None:
        flt = report_filter(tz, since, until, provider, model, project, tag, include_hidden)
        written = write_dashboard(
            catalog_path(catalog), workspace_name(workspace, catalog), flt, out_file,
            prices=resolve_price_overrides(prices),
        )  # fmt: skip
        if json:
            print_json(written.to_json())
            return
        from .consoles import out
        from .render.reports import render_dashboard

        render_dashboard(out, written)

    guard(debug, action, wait=wait)
