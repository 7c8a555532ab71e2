"""``agentlake providers``: the provider registry as a conformance matrix."""

import os

import typer

from .boundary import guard
from .options import DebugOpt, JsonOpt


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    app.command()(providers)


def providers(json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """The provider registry as a conformance matrix."""
    from agentlake.config import default_home
    from agentlake.extract.providers import REGISTRY
    from agentlake.read.names import providers_json

    from .output import print_json

    def action() -> None:
        home = default_home()
        if json:
            print_json(providers_json(home, os.environ))
            return
        from .consoles import out
        from .render.imports import render_providers

        render_providers(out, REGISTRY, home=home, env=os.environ)

    guard(debug, action)
