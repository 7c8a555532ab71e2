"""The dashboard as one HTML file: the page (static/page.html and page.css), BokehJS
(from the bokeh package's own files) and the page's script inlined, and the data as
JSON. Opening it needs no network and no server; writing it loads no plotting code."""

from __future__ import annotations

import html
from datetime import datetime
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Final

import orjson

from agentlake.errors import ConfigurationError
from agentlake.read.dashboard.data import TOP, DashboardData

_STATIC: Final = Path(__file__).parent / "static"
# BokehJS's core and its plotting API, as the bokeh wheel ships them.
_BOKEH_JS: Final = ("bokeh.min.js", "bokeh-api.min.js")
# Stacks of the daily charts by model: the costliest models, then the rest as one.
MODEL_STACKS: Final = 12
# Colours of the providers (Tableau 10): the same provider keeps its colour in every chart.
_PROVIDER_COLORS: Final = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
    "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip


def page(data: DashboardData, *, generated: datetime) -> str:
    """The whole page of ``data``, as text."""
    doc = data.page_json()
    models = doc["models"]
    model_stacks = (
        models if len(models) <= MODEL_STACKS else [*models[: MODEL_STACKS - 1], "other models"]
    )
    doc.update(
        top=TOP,
        stacks={"provider": doc["providers"], "model": model_stacks},
        provider_colors=[
            _PROVIDER_COLORS[i % len(_PROVIDER_COLORS)] for i in range(len(doc["providers"]))
        ],
        # Each model's stack: its own among the costliest, else the last ("other models").
        model_stack=[min(i, len(model_stacks) - 1) for i in range(len(models))],
    )
    slots = {
        "title": html.escape(f"agentlake: {data.workspace}"),
        "heading": html.escape(f"Token usage and cost: {data.workspace}"),
        "scope": html.escape(_scope(data)),
        "providers": "".join(
            f'<option value="{i}">{html.escape(name)}</option>'
            for i, name in enumerate(doc["providers"])
        ),
        "tz": html.escape(data.filter.tz),
        "footer": html.escape(_footer(data, generated)),
        "style": _static("page.css"),
        "bokeh": "\n".join(f"<script>{_inline(js)}</script>" for js in bokeh_js()),
        "data": _inline(orjson.dumps(doc).decode()),
        "script": _inline(_static("dashboard.js")),
    }
    text = _static("page.html")
    for name, value in slots.items():
        text = text.replace(f"<!-- slot:{name} -->", value)
    return text


@cache
def bokeh_js() -> tuple[str, ...]:
    """BokehJS as the installed bokeh package ships it (the package is found, never
    imported: its Python side is not needed to draw in the page)."""
    spec = find_spec("bokeh")
    if spec is None or spec.origin is None:
        raise ConfigurationError("the dashboard needs the bokeh package; reinstall agentlake")
    folder = Path(spec.origin).parent / "server" / "static" / "js"
    return tuple((folder / name).read_text(encoding="utf-8") for name in _BOKEH_JS)


def _static(name: str) -> str:
    return (_STATIC / name).read_text(encoding="utf-8")


def _inline(text: str) -> str:
    """``text`` safe inside a ``<script>`` element: no ``</`` can end it early."""
    return text.replace("</", "<\\/")


def _scope(data: DashboardData) -> str:
    flt = data.filter
    parts = [
        f"from {flt.since}" if flt.since else "from the first call",
        f"to {flt.until}" if flt.until else "to the last",
        f"days in {flt.tz}",
    ]
    chosen: dict[str, Any] = {"provider": flt.provider, "model": flt.model,
                              "project": flt.project, "tag": flt.tag}  # fmt: skip
    parts += [f"{name} {value}" for name, value in chosen.items() if value]
    parts.append("hidden sessions included" if flt.include_hidden else "hidden sessions left out")
    return ", ".join(parts)


def _footer(data: DashboardData, generated: datetime) -> str:
    read = f"lake snapshot {data.snapshot}" if data.snapshot is not None else "the catalog"
    return (
        f"Written by agentlake from {read} at {generated.isoformat(timespec='seconds')}. "
        "Costs are the catalog's prices per call; a call whose model has no price counts "
        "its tokens but no cost."
    )
