"""``agentlake providers``: the provider registry as a conformance matrix."""

from __future__ import annotations

import os

import typer

from agentlake.ingest.run import default_home

from .boundary import guard
from .options import DebugOpt, JsonOpt
from .output import out, print_json


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    app.command()(providers)


def providers(json: JsonOpt = False, debug: DebugOpt = False) -> None:
    """The provider registry as a conformance matrix."""
    from agentlake.extract.providers import REGISTRY
    from agentlake.read.names import providers_json

    def action() -> None:
        home = default_home()
        if json:
            print_json(providers_json(home, os.environ))
            return
        from .render.imports import render_providers

        render_providers(out, REGISTRY, home=home, env=os.environ)

    guard(debug, action)
