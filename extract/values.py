"""Field-value helpers every adapter shares (one definition, not one per provider)."""

from __future__ import annotations

import math
from typing import Any, Final

import orjson

from .adapter import InvalidRecord

MAX_TOKENS: Final = 2**53 - 1  # no count reaches this; above it JSON writers lose digits


def token_count(value: Any) -> int:
    """A token count as written: non-negative finite numbers only (truncated), else 0.
    Booleans, strings, NaN, infinities and negative numbers count as 0. A count above
    :data:`MAX_TOKENS` cannot be real and makes the record invalid (it is rejected with a
    receipt rather than stored as a wrong number or overflowing the int64 column)."""
    if type(value) is int:
        count = value if value > 0 else 0
    elif type(value) is float and math.isfinite(value) and value > 0:
        count = int(value)
    else:
        return 0
    if count > MAX_TOKENS:
        raise InvalidRecord(f"token count {value!r} out of range")
    return count


def json_text(value: Any) -> str:
    """``value`` as compact JSON text (how tool inputs are stored)."""
    return orjson.dumps(value).decode()


def version_major(value: Any) -> int | None:
    """The major of a version written as an integer or ``"X[.Y[.Z]]"``; ``None`` if
    it is neither."""
    if type(value) is int:
        return value
    if type(value) is str:
        head = value.split(".", 1)[0]
        if head.isascii() and head.isdigit():
            return int(head)
    return None
