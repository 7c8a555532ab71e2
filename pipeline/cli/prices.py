"""``agentlake prices``: refresh and list the prices costs are computed with."""

from typing import Annotated

import typer

from .boundary import guard
from .options import CatalogOpt, CsvOpt, DebugOpt, JsonOpt, PricesOpt, ReadWaitOpt

prices_app = typer.Typer(no_args_is_help=True, help="The prices costs are computed with.")


def register(app: typer.Typer) -> None:
    """Add the ``prices`` group to ``app``."""
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
    from agentlake.read.pricing import refresh

    from .output import catalog_path, print_json

    def action() -> None:
        result = refresh(catalog_path(catalog), network=not offline, timeout=timeout, wait=wait)
        if json:
            print_json(result.to_json())
        else:
            from .consoles import err, out

            (out if result.refreshed else err).print(result.message, highlight=False)

    guard(debug, action)


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
    from agentlake.config import resolve_price_overrides
    from agentlake.read.pricing import list_prices, prices_json

    from .output import catalog_path, print_csv, print_json

    def action() -> None:
        overrides = resolve_price_overrides(prices)
        table = list_prices(catalog_path(catalog), model=model, prices=overrides)
        if json:
            print_json(prices_json(table))
        elif csv:
            print_csv(table)
        else:
            from .consoles import out
            from .render.rows import render_prices

            render_prices(out, table)

    guard(debug, action, wait=wait)
