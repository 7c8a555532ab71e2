"""Field readers of the Copilot CLI's event records, shared by :mod:`.copilot` and
:mod:`.copilot_vscode` (provider-formats-more §1)."""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord
from ..values import json_text, token_count

KNOWN_FORMAT_MAJORS: Final = frozenset({1})

# Internal suffixes of model names in shutdown metrics, stripped before pricing.
_MODEL_SUFFIXES: Final = ("-1m-internal", "-internal", "-1m")
_MAJOR: Final = re.compile(r"^\s*v?(\d{1,9})")

#: One model's shutdown totals: (model as written, uncached input, cache write,
#: cache read, output, reasoning).
ShutdownTotals = tuple[str, int, int, int, int, int]


def text_or_none(value: Any) -> str | None:
    """``value`` if it is text, else ``None``."""
    return value if type(value) is str else None


def nonempty(value: Any) -> str | None:
    """``value`` if it is non-empty text, else ``None``."""
    return value if type(value) is str and value else None


def pricing_model(name: str) -> str:
    """A shutdown metrics model name without Copilot's internal suffixes."""
    for suffix in _MODEL_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def check_version(value: Any) -> None:
    """Refuse an unknown major ``session.start`` format version (absent is accepted)."""
    if value is None:
        return
    if type(value) is int:
        major = value
    elif type(value) is str and (match := _MAJOR.match(value)):
        major = int(match[1])
    else:
        raise InvalidRecord("'data.version' is neither a number nor a version string")
    if major not in KNOWN_FORMAT_MAJORS:
        raise FormatDrift(
            f"Copilot CLI session format version {value!r} has an unknown major version "
            f"(known: {', '.join(map(str, sorted(KNOWN_FORMAT_MAJORS)))})"
        )


def tool_input(arguments: Any) -> str | None:
    """Tool arguments as JSON text: an object as written, a JSON string parsed first
    (CLI 1.0.77 writes a string), any other string kept as a JSON string."""
    if arguments is None:
        return None
    if type(arguments) is str:
        try:
            return json_text(orjson.loads(arguments))
        except orjson.JSONDecodeError:
            return json_text(arguments)
    return json_text(arguments)


def result_text(result: Any) -> str | None:
    """``result.content`` as text (a non-text value as JSON)."""
    if type(result) is not dict:
        return text_or_none(result)
    content = result.get("content")
    if content is None or type(content) is str:
        return content
    return json_text(content)


def shutdown_totals(metrics: Any) -> list[ShutdownTotals]:
    """The per-model totals of a ``session.shutdown``'s ``modelMetrics``: ``input =
    inputTokens − cacheReadTokens − cacheWriteTokens`` (``inputTokens`` includes both),
    ``reasoning`` (already inside ``output``) at most ``output``. A model without
    ``usage`` (older builds count requests only) has no totals. Raises
    :class:`InvalidRecord` for impossible field types, before anything is emitted."""
    if metrics is not None and type(metrics) is not dict:
        raise InvalidRecord("'data.modelMetrics' is not an object")
    rows: list[ShutdownTotals] = []
    for name, entry in (metrics or {}).items():
        if type(entry) is not dict:
            raise InvalidRecord("a 'modelMetrics' entry is not an object")
        usage = entry.get("usage")
        if usage is None:
            continue  # older builds keep only request counts
        if type(usage) is not dict:
            raise InvalidRecord("'modelMetrics.<model>.usage' is not an object")
        read = token_count(usage.get("cacheReadTokens"))
        write = token_count(usage.get("cacheWriteTokens"))
        uncached = max(token_count(usage.get("inputTokens")) - read - write, 0)
        output = token_count(usage.get("outputTokens"))
        reasoning = min(token_count(usage.get("reasoningTokens")), output)
        rows.append((name, uncached, write, read, output, reasoning))
    return rows
