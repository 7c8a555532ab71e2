"""Deterministic ids from provider-native identity (never from time or file path)."""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import blake2b

import polars as pl


def stable_ids(provider: str, *parts: Sequence[object]) -> list[str]:
    """One 128-bit hex id per row, hashing ``provider`` and the row's ``parts``.

    Nulls hash as the empty string, so an absent request id equals "none".
    """
    prefix = provider + "\x1f"
    return [
        blake2b(
            (prefix + "\x1f".join("" if v is None else str(v) for v in row)).encode(),
            digest_size=16,
        ).hexdigest()
        for row in zip(*parts, strict=True)
    ]


def with_id(frame: pl.DataFrame, name: str, provider: str, columns: Sequence[str]) -> pl.DataFrame:
    """``frame`` with a column ``name`` of :func:`stable_ids` over ``columns``."""
    ids = stable_ids(provider, *(frame.get_column(c).to_list() for c in columns))
    return frame.with_columns(pl.Series(name, ids, dtype=pl.String))
