"""Field-value helpers every adapter shares (one definition, not one per provider)."""

from __future__ import annotations

import math
from typing import Any

import orjson


def token_count(value: Any) -> int:
    """A token count as written: non-negative finite numbers only (truncated), else 0.
    Booleans, strings, NaN, infinities and negative numbers count as 0."""
    if type(value) is int:
        return value if value > 0 else 0
    if type(value) is float and math.isfinite(value) and value > 0:
        return int(value)
    return 0


def json_text(value: Any) -> str:
    """``value`` as compact JSON text (how tool inputs are stored)."""
    return orjson.dumps(value).decode()
