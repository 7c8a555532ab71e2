"""``agentlake providers``: the provider registry as a conformance matrix."""

from __future__ import annotations

import os

import typer

from agentlake.run import default_home

from .boundary import guard
from .options import DebugOpt, JsonOpt
from .output import out, print_json


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    app.command()(providers)


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
            print_json({"providers": rows})
            return
        from .render.imports import render_providers

        render_providers(out, REGISTRY, home=home, env=os.environ)

    guard(debug, action)
